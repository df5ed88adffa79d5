// The final answer of a model's response as HF's math_verify finds it (math_verify.parse with its
// default LaTeX and expression targets), so that isCorrectSolution grades whole responses as
// math_verify does (test/fixtures/answers/math_verify_pairs.json). Pure; never throws.
//
// math_verify tries patterns by priority; within one priority the match that ends last wins (the
// longer one on a tie), and a match whose content does not parse gives way to the next one:
//    0  "final answer is X. I hope"                       (X: LaTeX in $...$, \(...\), \[...\], or a number)
//   50  \boxed{X} (several boxes close together are a list); "final answer ... is X"
//  100  "answer: ... X"
//  200  "answer ... X"
//  300  the last LaTeX environment, plain \frac{a}{b}, arithmetic expression ("6 * 2") or number
// Numbers may carry thousands separators ("1,234" or "1 234"), a currency sign before them and
// "%" or "percent" after them; a comma between digits otherwise is a decimal comma ("1,5").
// "1.2e3" is the number 1.2 followed by text, as in math_verify. Up to five LaTeX environments
// joined by "and", "or" or "," ("$2$ and $3$") are one list answer.
import { parseExpression } from './expr.js';
import { normalizeAnswer } from './normalize.js';

/** Longest tail of a response that is searched (characters); the final answer is near the end. */
export const MAX_SCANNED_CHARS = 20000;
const MAX_ANSWER_CHARS = 1000;
const LATEX_GROUPS = 6;

/** A pattern with its priority and how its matches are read. */
interface Pattern {
  re: RegExp;
  priority: number;
  kind: 'latex' | 'expr';
}

/** Case-insensitive letters for a phrase (Node 20 has no inline (?i:...)). */
const ci = (phrase: string) => phrase.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);

// ---------------------------------------------------------------- numbers and expressions (math_verify's lazy_expr_regex)

const NUMBER =
  String.raw`(?<!\d)(?:(?<int1>-?[1-9]\d{0,2}(?:[ ,]\d{3})+)(?<dec1>\.\d+)?|(?<int2>-?\d+)(?<dec2>[.,]\d+)|(?<dec3>\.\d+)|(?<int3>-?\d+))` +
  String.raw`(?<pct>\s*(?:%|[Pp]ercent|\s*[Pp]ercentage|\s*[Pp]ct))?`;
const OPS = String.raw`+\-*×/^()÷`;
const EXPR_CHARS = String.raw`[\d.\s${OPS}]`;
// At least one operator, starting with a digit: "6 * 2", "48/2", "3/4.".
const EXPR = String.raw`(?<expr>-?\(?-?\d${EXPR_CHARS}*[${OPS}]${EXPR_CHARS}+\)?)`;
const CURRENCY = '[$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₭₮₯₰₱₲₳₴₵₶₷₸₺₻₼₾₿]';
const EXPR_PREFIX = String.raw`(?:^|\s|=)(?:\*\*)?`;
const EXPR_SUFFIX = String.raw`(?:\*\*)?(?:\.|,|:|\s|\)|\$|$)`;
const EXPR_ANCHORED = `(?:${EXPR_PREFIX}${EXPR}${EXPR_SUFFIX})`;
const NUMBER_ANCHORED = `(?:${EXPR_PREFIX}${CURRENCY}?${NUMBER})`;
const EXPR_OR_NUMBER = `(?:${EXPR_ANCHORED}|${NUMBER_ANCHORED})`;

const EXPR_PATTERNS: [string, number][] = [
  [String.raw`${ci('final answer is')}:?\s*${EXPR_OR_NUMBER}\.?\s?I hope`, 0],
  [String.raw`${ci('final answer')}.{0,100}?\s+is:?${EXPR_OR_NUMBER}`, 50],
  [String.raw`${ci('answer')}:(?:.{0,100}=\s*|.{0,50}?)${EXPR_OR_NUMBER}(?!\s*=)`, 100],
  [String.raw`${ci('answer')}(?:.{0,100}=\s*|.{0,50}?)${EXPR_OR_NUMBER}(?!\s*=)`, 200],
  [EXPR_ANCHORED, 300],
  [NUMBER_ANCHORED, 300],
];

// ---------------------------------------------------------------- LaTeX environments (math_verify's make_latex_env_pattern)

/** $$..$$, \[..\], $..$, \(..\), " [..] " (and a plain \frac{a}{b} unless boxed), then an optional percent; group names carry `prefix`. */
function latexEnv(prefix: string, boxed: boolean): string {
  const contents = [
    String.raw`(?:[^$]|\$(?!\$))`, // display $$
    String.raw`(?:[^\\]|\\(?!\]))`, // \[ \]
    String.raw`(?:\\[$]|[^\n$])`, // inline $
    String.raw`(?:[^\\\n]|\\(?!\)))`, // \( \)
    String.raw`[^\n\]\[]`, // " [ ] "
  ].map((c) => (boxed ? String.raw`${c}*?\\boxed\{${c}+?\}${c}*?` : `${c}+?`));
  const g = (k: number) => `(?<${prefix}L${k}>${contents[k]})`;
  const patterns = [
    String.raw`(?<!\\)\$\$${g(0)}(?<!\\)\$\$`,
    String.raw`(?<!\\)\\\[${g(1)}(?<!\\)\\\]`,
    String.raw`(?<!\\|\d)\$${g(2)}(?<!\\)\$`,
    String.raw`(?<!\\)\\\(${g(3)}(?<!\\)\\\)`,
    String.raw`\s\[${g(4)}\]\s`,
  ];
  if (!boxed) {
    const simple = String.raw`-?\d+(?:[.,]\d+)?`;
    patterns.push(String.raw`(?<${prefix}L5>-?\\frac\{${simple}\}\{${simple}\})`);
  }
  return String.raw`(?:(?:${patterns.join('|')})\s*(?<${prefix}pct>\\?%|[Pp]ercent|[Pp]ercentage|[Pp]ct)?)`;
}

/** Up to five more environments joined by "and", "or" or ",". */
function joinedEnvs(boxed: boolean): string {
  let s = latexEnv('first_', boxed);
  for (let i = 1; i < LATEX_GROUPS; i++) s += String.raw`(?:\s*(?:,?and|,?or|,)\s*${latexEnv(`next${i}_`, boxed)})?`;
  return `(?:${s})`;
}

const LATEX = joinedEnvs(false);
const LATEX_PATTERNS: [string, number][] = [
  [String.raw`${ci('final answer is')}:?\s*${LATEX}\.?\s?I hope`, 0],
  [String.raw`${ci('final answer')}[\s\S]{0,100}?\s+is:?\s*${LATEX}`, 50],
  [String.raw`${ci('answer')}:[\s\S]{0,50}?${LATEX}`, 100],
  [String.raw`${ci('answer')}[\s\S]{0,50}?${LATEX}`, 200],
  [LATEX, 300],
  // An environment holding a \boxed{}, then a bare \boxed{...} up to the last "}" (its content is found below).
  [joinedEnvs(true), 50],
  [String.raw`(?<first_B>\\boxed\{[\s\S]+\})`, 50],
];

let compiled: Pattern[] | null = null;

function patterns(): Pattern[] {
  compiled ??= [
    ...LATEX_PATTERNS.map(([re, priority]) => ({ re: new RegExp(re, 'g'), priority, kind: 'latex' as const })),
    ...EXPR_PATTERNS.map(([re, priority]) => ({ re: new RegExp(re, 'g'), priority, kind: 'expr' as const })),
  ];
  return compiled;
}

// ---------------------------------------------------------------- boxes (latex2sympy's extract_boxed_content)

/** The index of the "}" closing the "{" at `open` (no escapes, as latex2sympy counts); -1 when none. */
function closingBrace(text: string, open: number, end: number): number {
  let depth = 0;
  for (let i = open; i < end; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/**
 * The boxed contents of a text, from the right. 'last': the last box, with earlier ones while
 * they are close (under 10 characters between) or a bit farther apart (under 70) with "and",
 * "or", "," or ";" between and different contents; 'all': every box. Joined by ","; the text
 * itself when it has no box.
 */
export function boxedContents(text: string, mode: 'last' | 'all'): string {
  const results: string[] = [];
  let end = text.length;
  let laterBoxStart = -1;
  for (;;) {
    const start = Math.max(text.lastIndexOf('\\boxed', end - 1), text.lastIndexOf('\\fbox', end - 1));
    if (start < 0) break;
    let open = start + (text.startsWith('\\boxed', start) ? 6 : 5);
    while (open < end && /\s/.test(text[open])) open++;
    if (open >= end) break;
    if (text[open] !== '{') {
      if (results.length === 0) results.push(text.slice(open, end));
      break;
    }
    const close = closingBrace(text, open, end);
    if (close < 0) {
      if (results.length === 0) results.push(text.slice(open, end));
      break;
    }
    const content = text.slice(open + 1, close).trim();
    if (mode === 'last' && laterBoxStart >= 0 && !closeEnough(text.slice(close + 1, laterBoxStart), content, results[results.length - 1])) break;
    if (results[results.length - 1] !== content) results.push(content);
    laterBoxStart = start;
    end = start;
  }
  return results.length === 0 ? text : results.reverse().join(',');
}

function closeEnough(between: string, content: string, later: string | undefined): boolean {
  if (between.length < 10) return true;
  return content !== later && between.length < 70 && /\b(?:and|or)\b|,|;/.test(between);
}

// ---------------------------------------------------------------- reading a match

/** The answer a LaTeX match holds: its environments' contents (boxes opened), a list when there are several; null when the first does not parse. */
function readLatex(m: RegExpMatchArray): string | null {
  const groups = m.groups ?? {};
  const parts: string[] = [];
  const prefixes = ['first_', ...Array.from({ length: LATEX_GROUPS - 1 }, (_, i) => `next${i + 1}_`)];
  for (const prefix of prefixes) {
    const plainBox = prefix === 'first_' ? groups.first_B : undefined;
    const content = plainBox ?? [0, 1, 2, 3, 4, 5].map((k) => groups[`${prefix}L${k}`]).find((c) => c !== undefined);
    if (content === undefined) continue;
    let answer = boxedContents(content, plainBox !== undefined ? 'last' : 'all').trim();
    if (groups[`${prefix}pct`]) answer += '\\%';
    parts.push(parses(answer) ? answer : '');
  }
  if (parts.length === 0 || parts[0] === '') return null;
  return parts.length > 1 && parts.every((p) => p !== '') ? parts.join(', ') : parts[0];
}

/** A stand-in for "latex2sympy parses it": something is left after normalisation. */
function parses(latex: string): boolean {
  return latex !== '' && normalizeAnswer(latex).text !== '';
}

/** The number (separators removed, a decimal comma made a point, "%" kept) or the expression of a match; null when the expression does not parse. */
function readExpr(m: RegExpMatchArray): string | null {
  const g = m.groups ?? {};
  const integer = g.int1 ?? g.int2 ?? g.int3 ?? '';
  const decimal = g.dec1 ?? g.dec2 ?? g.dec3 ?? '';
  if (integer !== '' || decimal !== '') {
    const digits = integer.replace(/[, ]/g, '').replace(/^0+/, '') || '0';
    return `${digits}${decimal.replace(',', '.')}${g.pct ? '%' : ''}`;
  }
  const expr = (g.expr ?? '').replace(/\n/g, ' ').trim();
  return expr !== '' && parseExpression(expr) !== null ? expr : null;
}

/**
 * The final answer of a response as math_verify extracts it (see the module comment), as an
 * answer string for answersEqual ("12", "\frac{3}{4}", "2, 3", "50%"); null when there is none.
 */
export function extractFinalAnswer(text: string): string | null {
  if (typeof text !== 'string' || text.trim() === '') return null;
  const tail = text.length > MAX_SCANNED_CHARS ? text.slice(-MAX_SCANNED_CHARS) : text;
  const byPriority = new Map<number, { m: RegExpMatchArray; kind: Pattern['kind']; start: number; end: number }[]>();
  for (const p of patterns()) {
    p.re.lastIndex = 0;
    for (const m of tail.matchAll(p.re)) {
      const list = byPriority.get(p.priority) ?? [];
      list.push({ m, kind: p.kind, start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
      byPriority.set(p.priority, list);
    }
  }
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const matches = byPriority.get(priority)!.sort((a, b) => b.end - a.end || a.start - b.start);
    for (const { m, kind } of matches) {
      const answer = kind === 'latex' ? readLatex(m) : readExpr(m);
      if (answer !== null && answer !== '') return answer.length > MAX_ANSWER_CHARS ? answer.slice(0, MAX_ANSWER_CHARS) : answer;
    }
  }
  return null;
}
