// The seeded generator of math word problems: multi-step arithmetic and algebra with exact
// answers (integers, fractions, terminating decimals, percentages). Deterministic by seed; no
// I/O, no Math.random. Each problem also carries `formula`, an arithmetic expression over the
// numbers in the question whose value is the answer (computed independently of the generator's
// own arithmetic), so tests can check every generated answer against it.
//
// Canonical answer forms (envs/answers reads all of them):
//   integer   "-12"
//   fraction  "7/3" (lowest terms, sign on the numerator; an integer when the value is one)
//   decimal   "1157.625" (exact, no trailing zeros; an integer when the value is one)
//   percent   "12.5%" (a decimal followed by %)
//   number    a terminating value as a decimal, any other as a fraction
import { add, div, formatDecimal, formatRational, mul, rational, toFloat, type Num } from '../answers/num.js';
import { mulberry32, randomInt } from '../shared/rng.js';
import type { MathProblem } from './types.js';

export type AnswerFormat = 'integer' | 'fraction' | 'decimal' | 'percent' | 'number';

export interface GeneratedProblem extends MathProblem {
  template: string;
  /** An expression over the question's numbers whose value is the answer. */
  formula: string;
  format: AnswerFormat;
}

interface Draft {
  question: string;
  value: Num;
  formula: string;
}

type Rng = () => number;
type Template = { name: string; format: AnswerFormat; make: (r: Rng) => Draft | null };

const between = (r: Rng, lo: number, hi: number) => lo + randomInt(r, hi - lo + 1);
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[randomInt(r, xs.length)];
const q = (n: number, d = 1) => rational(BigInt(n), BigInt(d));
const p = (n: number) => (n < 0 ? `(${n})` : String(n));

const NAMES = ['Ava', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemi', 'Liam', 'Maya', 'Noor', 'Omar', 'Priya'];
const ITEMS = ['jacket', 'lamp', 'bicycle', 'backpack', 'guitar', 'printer', 'chair', 'kettle'];

/** "3x + 5", "-x - 2", "7x": a linear expression in x with integer coefficients. */
function linear(a: number, b: number): string {
  const ax = a === 1 ? 'x' : a === -1 ? '-x' : `${a}x`;
  if (b === 0) return ax;
  return `${ax} ${b < 0 ? '-' : '+'} ${Math.abs(b)}`;
}

/** Terminating decimals only (denominator 2^a 5^b). */
const terminates = (v: Num) => formatDecimal(v) !== null;

const TEMPLATES: readonly Template[] = [
  {
    name: 'linear_equation',
    format: 'fraction',
    make(r) {
      const a = between(r, 2, 12);
      const c = between(r, -9, 9);
      const b = between(r, -30, 30);
      const d = between(r, -30, 30);
      if (a === c || c === 0) return null;
      return {
        question: `Solve for x: ${linear(a, b)} = ${linear(c, d)}.`,
        value: div(q(d - b), q(a - c)),
        formula: `(${p(d)} - ${p(b)})/(${a} - ${p(c)})`,
      };
    },
  },
  {
    name: 'work_rate',
    format: 'fraction',
    make(r) {
      const [A, B] = [pick(r, NAMES), pick(r, NAMES)];
      const a = between(r, 2, 12);
      const b = between(r, 2, 15);
      if (A === B || a === b) return null;
      return {
        question: `${A} can paint a fence alone in ${a} hours, and ${B} can paint the same fence alone in ${b} hours. Working together at these rates, how many hours does it take them to paint the fence?`,
        value: div(q(a * b), q(a + b)),
        formula: `1/(1/${a} + 1/${b})`,
      };
    },
  },
  {
    name: 'average_speed',
    format: 'number',
    make(r) {
      const s1 = between(r, 3, 30) * 2;
      const s2 = between(r, 3, 30) * 2;
      const t1 = between(r, 1, 4);
      const t2 = between(r, 1, 4);
      if (s1 === s2) return null;
      const d1 = s1 * t1;
      const d2 = s2 * t2;
      return {
        question: `A cyclist rides ${d1} km at a constant ${s1} km/h, then rides another ${d2} km at a constant ${s2} km/h. What is the cyclist's average speed for the whole trip, in km/h?`,
        value: div(q(d1 + d2), q(t1 + t2)),
        formula: `(${d1} + ${d2})/(${d1}/${s1} + ${d2}/${s2})`,
      };
    },
  },
  {
    name: 'arithmetic_sum',
    format: 'integer',
    make(r) {
      const a = between(r, -20, 40);
      const d = between(r, -7, 9);
      const n = between(r, 8, 60);
      if (d === 0) return null;
      let sum = 0;
      for (let i = 0; i < n; i++) sum += a + i * d;
      return {
        question: `The first term of an arithmetic sequence is ${a} and its common difference is ${d}. What is the sum of the first ${n} terms of the sequence?`,
        value: q(sum),
        formula: `${n}*(2*${p(a)} + (${n} - 1)*${p(d)})/2`,
      };
    },
  },
  {
    name: 'geometric_sum',
    format: 'fraction',
    make(r) {
      const a = between(r, 1, 12);
      const ratio = pick(r, [q(2), q(3), q(-2), q(1, 2), q(1, 3), q(-1, 2), q(2, 3), q(3, 2)]);
      const n = between(r, 4, 8);
      let term = q(a);
      let sum = q(0);
      const shown: string[] = [];
      for (let i = 0; i < n; i++) {
        sum = add(sum, term);
        if (i < 3) shown.push(formatRational(term));
        term = mul(term, ratio);
      }
      const rs = formatRational(ratio);
      return {
        question: `A geometric sequence begins ${shown.join(', ')}, ... (each term is ${rs} times the previous one). What is the sum of its first ${n} terms? Give the exact value.`,
        value: sum,
        formula: `${a}*(1 - (${rs})^${n})/(1 - (${rs}))`,
      };
    },
  },
  {
    name: 'percent_change',
    format: 'percent',
    make(r) {
      const item = pick(r, ITEMS);
      const before = between(r, 4, 80) * 5;
      const after = between(r, 2, 100) * 5;
      if (before === after) return null;
      const value = mul(div(q(after - before), q(before)), q(100));
      if (!terminates(value)) return null;
      const rose = after > before;
      return {
        question: `The price of a ${item} ${rose ? 'rose' : 'fell'} from $${before} to $${after}. By what percent did the price ${rose ? 'increase' : 'decrease'}?`,
        value: rose ? value : mul(value, q(-1)),
        formula: rose ? `(${after} - ${before})/${before}*100` : `(${before} - ${after})/${before}*100`,
      };
    },
  },
  {
    name: 'discount_tax',
    format: 'decimal',
    make(r) {
      const item = pick(r, ITEMS);
      const price = between(r, 8, 400);
      const discount = pick(r, [5, 10, 15, 20, 25, 30, 40, 50]);
      const tax = pick(r, [4, 5, 6, 8, 10, 12]);
      const value = mul(mul(q(price), q(100 - discount, 100)), q(100 + tax, 100));
      return {
        question: `A ${item} is priced at $${price}. It is discounted by ${discount}%, and then a sales tax of ${tax}% is added to the discounted price. What is the final price, in dollars?`,
        value,
        formula: `${price}*(1 - ${discount}/100)*(1 + ${tax}/100)`,
      };
    },
  },
  {
    name: 'linear_system',
    format: 'integer',
    make(r) {
      const x = between(r, -12, 15);
      const y = between(r, -12, 15);
      const a = between(r, 2, 7);
      const b = between(r, 1, 6);
      const s = x + y;
      const c = a * x - b * y;
      return {
        question: `Real numbers x and y satisfy x + y = ${s} and ${a}x - ${b === 1 ? '' : b}y = ${c}. What is the value of xy?`,
        value: q(x * y),
        formula: `((${p(c)} + ${b}*${p(s)})/(${a} + ${b}))*(${p(s)} - (${p(c)} + ${b}*${p(s)})/(${a} + ${b}))`,
      };
    },
  },
  {
    name: 'mixture',
    format: 'percent',
    make(r) {
      const a = between(r, 1, 12);
      const b = between(r, 1, 12);
      const pa = between(r, 1, 19) * 5;
      const pb = between(r, 1, 19) * 5;
      if (pa === pb) return null;
      const value = div(q(a * pa + b * pb), q(a + b));
      if (!terminates(value)) return null;
      return {
        question: `${a} liters of a ${pa}% salt solution are mixed with ${b} liters of a ${pb}% salt solution. What percent of the mixture is salt?`,
        value,
        formula: `(${a}*${pa}/100 + ${b}*${pb}/100)/(${a} + ${b})*100`,
      };
    },
  },
  {
    name: 'compound_interest',
    format: 'decimal',
    make(r) {
      const principal = between(r, 1, 40) * 100;
      const rate = pick(r, [2, 3, 4, 5, 6, 8, 10, 12]);
      const years = between(r, 2, 3);
      let value = q(principal);
      for (let i = 0; i < years; i++) value = mul(value, q(100 + rate, 100));
      return {
        question: `$${principal} is deposited in an account that pays ${rate}% interest per year, compounded annually. No other deposits or withdrawals are made. How many dollars are in the account after ${years} years? Give the exact amount.`,
        value,
        formula: `${principal}*(1 + ${rate}/100)^${years}`,
      };
    },
  },
  {
    name: 'quadratic_roots',
    format: 'integer',
    make(r) {
      const a = between(r, 1, 3);
      const r1 = between(r, -9, 9);
      const r2 = between(r, -9, 9);
      const b = -a * (r1 + r2);
      const c = a * r1 * r2;
      const poly = `${a === 1 ? '' : a}x^2${b === 0 ? '' : ` ${b < 0 ? '-' : '+'} ${Math.abs(b) === 1 ? '' : Math.abs(b)}x`}${c === 0 ? '' : ` ${c < 0 ? '-' : '+'} ${Math.abs(c)}`}`;
      return {
        question: `Let r and s be the roots of ${poly} = 0 (if the roots are equal, r = s). What is r^2 + s^2?`,
        value: q(r1 * r1 + r2 * r2),
        formula: `(${p(b)}^2 - 2*${a}*${p(c)})/${a}^2`,
      };
    },
  },
  {
    name: 'ages',
    format: 'integer',
    make(r) {
      const [A, B] = [pick(r, NAMES), pick(r, NAMES)];
      const young = between(r, 2, 15);
      const k = between(r, 3, 6);
      const m = between(r, 2, k - 1);
      if (A === B || (young * (k - m)) % (m - 1) !== 0) return null;
      const n = (young * (k - m)) / (m - 1);
      if (n < 1 || n > 60) return null;
      return {
        question: `${A} is ${k} times as old as ${B}. In ${n} years, ${A} will be ${m} times as old as ${B}. How old is ${B} now, in years?`,
        value: q(young),
        formula: `${n}*(${m} - 1)/(${k} - ${m})`,
      };
    },
  },
  {
    name: 'fraction_remaining',
    format: 'integer',
    make(r) {
      const who = pick(r, NAMES);
      const a = between(r, 2, 6);
      const b = between(r, 2, 6);
      const start = a * b * between(r, 2, 30);
      const left = (start * (a - 1) * (b - 1)) / (a * b);
      return {
        question: `${who} spent 1/${a} of the money in a wallet on books, and then 1/${b} of what remained on lunch. After that, $${left} was left in the wallet. How many dollars were in the wallet at the start?`,
        value: q(start),
        formula: `${left}/((1 - 1/${a})*(1 - 1/${b}))`,
      };
    },
  },
  {
    name: 'work_proportion',
    format: 'number',
    make(r) {
      const w1 = between(r, 2, 12);
      const n1 = between(r, 2, 9);
      const d1 = between(r, 2, 20);
      const w2 = between(r, 2, 12);
      const n2 = between(r, 2, 18);
      if (w1 === w2 && n1 === n2) return null;
      return {
        question: `${w1} workers build ${n1} identical walls in ${d1} days. Working at the same rate, how many days do ${w2} workers need to build ${n2} such walls?`,
        value: div(q(d1 * n2 * w1), q(n1 * w2)),
        formula: `${d1}*(${n2}/${n1})*(${w1}/${w2})`,
      };
    },
  },
  {
    name: 'consecutive_integers',
    format: 'integer',
    make(r) {
      const k = between(r, 3, 12);
      const first = between(r, -30, 60);
      const sum = k * first + (k * (k - 1)) / 2;
      return {
        question: `The sum of ${k} consecutive integers is ${sum}. What is the largest of these integers?`,
        value: q(first + k - 1),
        formula: `(${p(sum)} - ${k}*(${k} - 1)/2)/${k} + ${k} - 1`,
      };
    },
  },
];

/** The generator's template names. */
export const GENERATOR_TEMPLATES: readonly string[] = TEMPLATES.map((t) => t.name);

/** The canonical text of a value in a format (see the module comment). */
export function formatAnswer(value: Num, format: AnswerFormat): string {
  const decimal = formatDecimal(value);
  switch (format) {
    case 'integer':
    case 'fraction':
      return formatRational(value);
    case 'decimal':
      return decimal ?? formatRational(value);
    case 'percent':
      return `${decimal ?? formatRational(value)}%`;
    case 'number':
      return decimal ?? formatRational(value);
  }
}

/**
 * The problem of a seed: a template drawn by the seed (among `templates`, default all; unknown
 * names are ignored, and none known means all), then its numbers. Deterministic; never throws.
 */
export function generateProblem(seed: number, templates?: readonly string[]): GeneratedProblem {
  const allowed = TEMPLATES.filter((t) => !templates || templates.includes(t.name));
  const pool = allowed.length > 0 ? allowed : TEMPLATES;
  const rng = mulberry32(Number.isFinite(seed) ? Math.trunc(seed) : 0);
  const template = pool[randomInt(rng, pool.length)];
  // Drafts that do not fit (e.g. a non-terminating percentage) are redrawn from the same stream.
  for (let attempt = 0; attempt < 200; attempt++) {
    const draft = template.make(rng);
    if (draft === null) continue;
    if (template.format === 'integer' && formatRational(draft.value).includes('/')) continue;
    if (!Number.isFinite(toFloat(draft.value))) continue;
    return {
      id: `gen-${template.name}-${seed}`,
      question: draft.question,
      answer: formatAnswer(draft.value, template.format),
      template: template.name,
      formula: draft.formula,
      format: template.format,
    };
  }
  // Unreachable in practice (every template accepts most draws); a fixed, valid problem.
  return { id: `gen-fallback-${seed}`, question: 'What is 6 times 7?', answer: '42', template: 'fallback', formula: '6*7', format: 'integer' };
}
