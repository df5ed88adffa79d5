// A small, safe parser and evaluator for the math expressions answers are written in: plain
// ("3/4", "2*sqrt(2)", "x**2 + 1", as Python prints them) and simple LaTeX ("\frac{3}{4}",
// "2\sqrt{2}", "x^{2}+1", "\pi r^2"). No eval, no regex backtracking on the input: a tokenizer
// and a recursive-descent parser with a depth limit. Pure; the exported functions never throw.
//
// Grammar (loosest first): sum = term (('+'|'-') term)*; term = unary (('*'|'/'|implicit) power)*;
// unary = ('+'|'-') unary | power; power = postfix ('^' unary)?  (right-associative, so -2^2 = -4
// and 2^3^2 = 2^9); postfix = atom '!'*; atom = number | constant | variable | function call |
// (expr) | {expr} | |expr| | \frac{a}{b} | \sqrt[n]{x} | \binom{n}{k}.
// Implicit multiplication: "2x", "2\pi", "3\sqrt{2}", "(x+1)(x-1)", "xy" (= x*y); a number never
// multiplies implicitly ("2 3" is an error). Words split into known names or single letters.
import { mulberry32 } from '../shared/rng.js';
import {
  absNum,
  add,
  div,
  factorial,
  float,
  floor,
  int,
  isInteger,
  mul,
  neg,
  parseDecimal,
  pow,
  rational,
  sqrt,
  sub,
  toFloat,
  type Num,
} from './num.js';

export type Expr =
  | { t: 'num'; v: Num; decimal?: boolean }
  | { t: 'const'; name: 'pi' | 'e' | 'inf' }
  | { t: 'var'; name: string }
  | { t: 'neg'; a: Expr }
  | { t: 'bin'; op: '+' | '-' | '*' | '/' | '^'; a: Expr; b: Expr }
  | { t: 'fn'; name: string; args: Expr[] }
  | { t: 'fact'; a: Expr };

type Token = { k: 'num'; s: string } | { k: 'id'; s: string } | { k: 'op'; s: string } | { k: 'cmd'; s: string };

class ParseError extends Error {}

/** Longest input the parser reads (characters); longer answers are compared as strings only. */
export const MAX_EXPR_CHARS = 1000;
const MAX_DEPTH = 100;

const FUNCTIONS = new Set([
  'sqrt', 'cbrt', 'sin', 'cos', 'tan', 'sec', 'csc', 'cot', 'arcsin', 'arccos', 'arctan', 'asin', 'acos', 'atan',
  'sinh', 'cosh', 'tanh', 'ln', 'log', 'exp', 'abs', 'floor', 'ceil', 'Rational', 'Fraction', 'binomial', 'comb',
]);
const CONSTANTS: Readonly<Record<string, 'pi' | 'e' | 'inf'>> = { pi: 'pi', e: 'e', inf: 'inf', infty: 'inf', infinity: 'inf', oo: 'inf' };
const GREEK = new Set([
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'varepsilon', 'zeta', 'eta', 'theta', 'vartheta', 'iota', 'kappa', 'lambda',
  'mu', 'nu', 'xi', 'rho', 'sigma', 'tau', 'upsilon', 'phi', 'varphi', 'chi', 'psi', 'omega',
  'Gamma', 'Delta', 'Theta', 'Lambda', 'Xi', 'Sigma', 'Phi', 'Psi', 'Omega',
]);
// Plain words split into these names first (longest first), else into single letters.
const WORDS = [...FUNCTIONS, ...Object.keys(CONSTANTS), ...GREEK].sort((a, b) => b.length - a.length);
const OPERATOR_COMMANDS: Readonly<Record<string, string>> = { cdot: '*', times: '*', ast: '*', div: '/', '{': '{', '}': '}' };

// ---------------------------------------------------------------- tokenizer

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (/[0-9.]/.test(c)) {
      let j = i;
      while (j < src.length && /[0-9]/.test(src[j])) j++;
      if (src[j] === '.' && /[0-9]/.test(src[j + 1] ?? '')) {
        j++;
        while (j < src.length && /[0-9]/.test(src[j])) j++;
      } else if (src[j] === '.' && j > i) {
        j++; // "3." is 3
      }
      // An exponent only when digits follow ("1e-5"); "2e" is 2 times e.
      const exp = /^[eE][+-]?\d+/.exec(src.slice(j, j + 8));
      if (exp && j > i) j += exp[0].length;
      if (j === i) throw new ParseError(`unexpected "${c}"`);
      out.push({ k: 'num', s: src.slice(i, j) });
      i = j;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z]/.test(src[j])) j++;
      for (const w of splitWord(src.slice(i, j))) out.push({ k: 'id', s: w });
      i = j;
    } else if (c === '\\') {
      const m = /^\\([A-Za-z]+|[{}|])/.exec(src.slice(i, i + 40));
      if (!m) throw new ParseError('bad command');
      i += m[0].length;
      const name = m[1];
      if (OPERATOR_COMMANDS[name]) out.push({ k: 'op', s: OPERATOR_COMMANDS[name] });
      else if (name === 'dfrac' || name === 'tfrac' || name === 'frac') out.push({ k: 'cmd', s: 'frac' });
      else if (name === 'sqrt' || name === 'binom') out.push({ k: 'cmd', s: name });
      else if (name === '|') out.push({ k: 'op', s: '|' });
      else if (CONSTANTS[name] || FUNCTIONS.has(name) || GREEK.has(name)) out.push({ k: 'id', s: name });
      else throw new ParseError(`unknown command \\${name}`);
    } else if (c === '*' && src[i + 1] === '*') {
      out.push({ k: 'op', s: '^' }); // Python's power
      i += 2;
    } else if ('+-*/^!()[]{},|_'.includes(c)) {
      out.push({ k: 'op', s: c });
      i++;
    } else {
      throw new ParseError(`unexpected "${c}"`);
    }
    if (out.length > 2000) throw new ParseError('too long');
  }
  return out;
}

function splitWord(word: string): string[] {
  const parts: string[] = [];
  let i = 0;
  while (i < word.length) {
    const known = WORDS.find((w) => word.startsWith(w, i));
    if (known) {
      parts.push(known);
      i += known.length;
    } else {
      parts.push(word[i]);
      i++;
    }
  }
  return parts;
}

// ---------------------------------------------------------------- parser

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly toks: Token[]) {}

  parse(): Expr {
    const e = this.sum();
    if (this.pos < this.toks.length) throw new ParseError(`unexpected "${this.toks[this.pos].s}"`);
    return e;
  }

  private peek(): Token | undefined {
    return this.toks[this.pos];
  }

  private isOp(s: string): boolean {
    const t = this.toks[this.pos];
    return t !== undefined && t.k === 'op' && t.s === s;
  }

  private expect(s: string): void {
    if (!this.isOp(s)) throw new ParseError(`expected "${s}"`);
    this.pos++;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw new ParseError('nested too deeply');
  }

  private sum(): Expr {
    this.enter();
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.toks[this.pos++].s as '+' | '-';
      left = { t: 'bin', op, a: left, b: this.term() };
    }
    this.depth--;
    return left;
  }

  private term(): Expr {
    let left = this.unary();
    for (;;) {
      if (this.isOp('*') || this.isOp('/')) {
        const op = this.toks[this.pos++].s as '*' | '/';
        left = { t: 'bin', op, a: left, b: this.unary() };
      } else if (this.startsImplicitFactor()) {
        left = { t: 'bin', op: '*', a: left, b: this.power() };
      } else {
        return left;
      }
    }
  }

  private startsImplicitFactor(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.k === 'id' || t.k === 'cmd') return true;
    return t.k === 'op' && (t.s === '(' || t.s === '{');
  }

  private unary(): Expr {
    this.enter();
    let e: Expr;
    if (this.isOp('-')) {
      this.pos++;
      e = { t: 'neg', a: this.unary() };
    } else if (this.isOp('+')) {
      this.pos++;
      e = this.unary();
    } else {
      e = this.power();
    }
    this.depth--;
    return e;
  }

  private power(): Expr {
    const base = this.postfix();
    if (!this.isOp('^')) return base;
    this.pos++;
    return { t: 'bin', op: '^', a: base, b: this.unary() };
  }

  private postfix(): Expr {
    let e = this.atom();
    while (this.isOp('!')) {
      this.pos++;
      e = { t: 'fact', a: e };
    }
    return e;
  }

  /** A braced group, else a single atom (the argument of \frac12, \sqrt2, a subscript). */
  private arg(): Expr {
    if (this.isOp('{')) {
      this.pos++;
      const e = this.sum();
      this.expect('}');
      return e;
    }
    return this.atom();
  }

  private atom(): Expr {
    this.enter();
    const e = this.atomInner();
    this.depth--;
    return e;
  }

  private atomInner(): Expr {
    const t = this.peek();
    if (!t) throw new ParseError('unexpected end');
    this.pos++;
    if (t.k === 'num') {
      const v = parseDecimal(t.s);
      if (!v) throw new ParseError(`bad number ${t.s}`);
      // Written with a point or an exponent: a Float in sympy's terms (see equal.ts).
      return /[.eE]/.test(t.s) ? { t: 'num', v, decimal: true } : { t: 'num', v };
    }
    if (t.k === 'op') {
      if (t.s === '(' || t.s === '{' || t.s === '[') {
        const close = t.s === '(' ? ')' : t.s === '{' ? '}' : ']';
        const e = this.sum();
        this.expect(close);
        return e;
      }
      if (t.s === '|') {
        const e = this.sum();
        this.expect('|');
        return { t: 'fn', name: 'abs', args: [e] };
      }
      throw new ParseError(`unexpected "${t.s}"`);
    }
    if (t.k === 'cmd') {
      if (t.s === 'frac') {
        const a = this.arg();
        return { t: 'bin', op: '/', a, b: this.arg() };
      }
      if (t.s === 'binom') {
        const n = this.arg();
        return { t: 'fn', name: 'binomial', args: [n, this.arg()] };
      }
      // \sqrt[n]{x}
      if (this.isOp('[')) {
        this.pos++;
        const index = this.sum();
        this.expect(']');
        const x = this.arg();
        return { t: 'bin', op: '^', a: x, b: { t: 'bin', op: '/', a: { t: 'num', v: int(1) }, b: index } };
      }
      return { t: 'fn', name: 'sqrt', args: [this.arg()] };
    }
    // identifiers
    const name = t.s;
    const constant = CONSTANTS[name];
    if (constant) return { t: 'const', name: constant };
    if (FUNCTIONS.has(name)) return this.call(name);
    let varName = name;
    if (this.isOp('_')) {
      this.pos++;
      const sub = this.peek();
      if (sub && (sub.k === 'num' || sub.k === 'id')) {
        this.pos++;
        varName += `_${sub.s}`;
      } else if (this.isOp('{')) {
        const start = this.pos;
        let depth = 0;
        do {
          if (this.isOp('{')) depth++;
          else if (this.isOp('}')) depth--;
          this.pos++;
        } while (depth > 0 && this.pos < this.toks.length);
        if (depth !== 0) throw new ParseError('unclosed subscript');
        varName += `_${this.toks.slice(start + 1, this.pos - 1).map((x) => x.s).join('')}`;
      } else {
        throw new ParseError('bad subscript');
      }
    }
    return { t: 'var', name: varName };
  }

  /** name [_base] [^power] (args) | name [^power] arg. */
  private call(name: string): Expr {
    let base: Expr | null = null;
    if (name === 'log' && this.isOp('_')) {
      this.pos++;
      base = this.arg();
    }
    let power: Expr | null = null;
    if (this.isOp('^')) {
      this.pos++;
      power = this.arg();
    }
    let args: Expr[];
    if (this.isOp('(')) {
      this.pos++;
      args = [this.sum()];
      while (this.isOp(',')) {
        this.pos++;
        args.push(this.sum());
      }
      this.expect(')');
    } else {
      args = [this.power()];
    }
    if (base) args = [args[0], base];
    // \sin^{-1} x is arcsin x.
    if (power && power.t === 'neg' && power.a.t === 'num' && isInteger(power.a.v) && toFloat(power.a.v) === 1 && ['sin', 'cos', 'tan'].includes(name)) {
      return { t: 'fn', name: `arc${name}`, args };
    }
    const call: Expr = { t: 'fn', name, args };
    return power ? { t: 'bin', op: '^', a: call, b: power } : call;
  }
}

/** The expression in `text`, or null when it does not parse (never throws). */
export function parseExpression(text: string): Expr | null {
  if (typeof text !== 'string' || text.length > MAX_EXPR_CHARS) return null;
  try {
    const toks = tokenize(text);
    if (toks.length === 0) return null;
    return new Parser(toks).parse();
  } catch {
    return null; // a ParseError, or a RangeError from a pathological input
  }
}

// ---------------------------------------------------------------- evaluation

/** The variables of an expression, sorted. */
export function variablesOf(e: Expr): string[] {
  const names = new Set<string>();
  const walk = (x: Expr): void => {
    switch (x.t) {
      case 'var':
        names.add(x.name);
        break;
      case 'neg':
      case 'fact':
        walk(x.a);
        break;
      case 'bin':
        walk(x.a);
        walk(x.b);
        break;
      case 'fn':
        x.args.forEach(walk);
        break;
    }
  };
  walk(e);
  return [...names].sort();
}

/** Whether the expression is a bare decimal number ("0.75", "-3.0", "1e-5"): sympy's atomic Float. */
export function isDecimalLiteral(e: Expr): boolean {
  return (e.t === 'num' && e.decimal === true) || (e.t === 'neg' && isDecimalLiteral(e.a));
}

/** Whether some node of the expression, itself included, satisfies `test`. */
export function someNode(e: Expr, test: (x: Expr) => boolean): boolean {
  if (test(e)) return true;
  switch (e.t) {
    case 'neg':
    case 'fact':
      return someNode(e.a, test);
    case 'bin':
      return someNode(e.a, test) || someNode(e.b, test);
    case 'fn':
      return e.args.some((x) => someNode(x, test));
    default:
      return false;
  }
}

/** Whether a decimal number occurs anywhere in the expression ("0.5\pi", "1.2 \times 10^3"). */
export const hasDecimal = (e: Expr): boolean => someNode(e, (x) => x.t === 'num' && x.decimal === true);

const FLOAT_FUNCTIONS: Readonly<Record<string, (x: number) => number>> = {
  sin: Math.sin, cos: Math.cos, tan: Math.tan,
  sec: (x) => 1 / Math.cos(x), csc: (x) => 1 / Math.sin(x), cot: (x) => 1 / Math.tan(x),
  arcsin: Math.asin, arccos: Math.acos, arctan: Math.atan, asin: Math.asin, acos: Math.acos, atan: Math.atan,
  sinh: Math.sinh, cosh: Math.cosh, tanh: Math.tanh, exp: Math.exp, ln: Math.log,
};

function callFunction(name: string, args: Num[]): Num {
  const [x, y] = args;
  switch (name) {
    case 'sqrt':
      return args.length === 1 ? sqrt(x) : float(NaN);
    case 'cbrt':
      return pow(x, rational(1n, 3n));
    case 'abs':
      return absNum(x);
    case 'floor':
      return floor(x);
    case 'ceil':
      return neg(floor(neg(x)));
    case 'Rational':
    case 'Fraction':
      return args.length === 2 ? div(x, y) : args.length === 1 ? x : float(NaN);
    case 'binomial':
    case 'comb':
      return args.length === 2 ? binomial(x, y) : float(NaN);
    case 'log':
      // log(x) is the natural log (as in sympy and Python); log(x, b) and \log_b x take a base.
      if (args.length === 2) return float(Math.log(toFloat(x)) / Math.log(toFloat(y)));
      return float(Math.log(toFloat(x)));
    default: {
      const f = FLOAT_FUNCTIONS[name];
      if (!f || args.length !== 1) return float(NaN);
      if (name === 'exp' && isInteger(x) && toFloat(x) === 0) return int(1);
      return float(f(toFloat(x)));
    }
  }
}

function binomial(n: Num, k: Num): Num {
  if (!isInteger(n) || !isInteger(k)) return float(NaN);
  const nn = toFloat(n);
  const kk = toFloat(k);
  if (kk < 0 || nn < 0 || kk > nn) return int(0);
  if (nn > 10000) return float(NaN);
  let r = 1n;
  const kSmall = Math.min(kk, nn - kk);
  for (let i = 1; i <= kSmall; i++) r = (r * BigInt(nn - kSmall + i)) / BigInt(i);
  return rational(r, 1n);
}

/** The value of an expression; variables take their values from `vars` (a missing one is NaN). Never throws. */
export function evaluate(e: Expr, vars: Readonly<Record<string, number>> = {}): Num {
  try {
    return evalNode(e, vars, 0);
  } catch {
    return float(NaN);
  }
}

function evalNode(e: Expr, vars: Readonly<Record<string, number>>, depth: number): Num {
  if (depth > MAX_DEPTH * 2) return float(NaN);
  const d = depth + 1;
  switch (e.t) {
    case 'num':
      return e.v;
    case 'const':
      return float(e.name === 'pi' ? Math.PI : e.name === 'e' ? Math.E : Infinity);
    case 'var':
      return Object.prototype.hasOwnProperty.call(vars, e.name) ? float(vars[e.name]) : float(NaN);
    case 'neg':
      return neg(evalNode(e.a, vars, d));
    case 'fact':
      return factorial(evalNode(e.a, vars, d));
    case 'fn':
      return callFunction(e.name, e.args.map((a) => evalNode(a, vars, d)));
    case 'bin': {
      const a = evalNode(e.a, vars, d);
      const b = evalNode(e.b, vars, d);
      switch (e.op) {
        case '+':
          return add(a, b);
        case '-':
          return sub(a, b);
        case '*':
          return mul(a, b);
        case '/':
          return div(a, b);
        case '^':
          return pow(a, b);
      }
    }
  }
}

/** Parses and evaluates a constant expression ("2\sqrt{2}", "(3*17+5)/4"); null if it does not parse or has variables. */
export function evaluateText(text: string): Num | null {
  const e = parseExpression(text);
  if (!e || variablesOf(e).length > 0) return null;
  return evaluate(e);
}

/** The seeded points at which expressions with variables are compared. */
export function samplePoints(vars: readonly string[], count: number, seed = 20240917): Record<string, number>[] {
  const rng = mulberry32(seed);
  const points: Record<string, number>[] = [];
  for (let i = 0; i < count; i++) {
    const p: Record<string, number> = {};
    // Positive, away from 0 and 1, so sqrt, log and powers are defined and distinguish terms.
    for (const v of vars) p[v] = 0.3 + 2.4 * rng();
    points.push(p);
  }
  return points;
}
