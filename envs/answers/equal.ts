// Answer equivalence: is a given answer the same as the reference? Pure; never throws.
//
// 1. Both are normalised (normalize.ts): LaTeX wrappers, $, units, degrees, thousands separators
//    and percent signs are removed (the percent sign is remembered).
// 2. Equal normalised strings (ignoring case and spaces) are equal: text answers end here.
// 3. Collections: "\{1, 2\}" or "{1, 2}" (set) and "1, 2" (list) are compared unordered,
//    "(1, 2]" (tuple or interval) ordered and with the same brackets; "a \pm b" is the list
//    a+b, a-b. A tuple and a bare list compare ordered; a scalar never equals a collection.
// 4. Scalars: a leading "x =" is dropped; both sides are parsed (expr.ts).
//    - Constants are evaluated, exactly while the arithmetic stays rational (BigInt fractions).
//      Exactly equal values are equal. Otherwise, when either side is an exact integer, they
//      must agree to 1e-9 relative (Python's 3.0000000000000004 is 3, 999.95 is not 1000);
//      else to `relTol` relative (default 1e-4, the reference graders' tolerance, so
//      0.3333333 == 1/3 and 0.5 == 1/2).
//    - Expressions with variables are equal when they agree (1e-6 relative) at 8 seeded random
//      points, variables in [0.3, 2.7]; points where both are undefined are skipped, at least 3
//      must remain; a point where only one side is defined makes them different.
//    - Equations with one "=" each compare side by side (or swapped).
//    - A value that overflows (10^{10^{10}}) equals nothing but the identical text; \infty is
//      only equal to \infty. "log" is the natural log (as in sympy and Python); 2\frac{1}{2}
//      and "2 1/2" are mixed numbers (5/2); a leading "1,234" is a thousands separator.
// 5. Percentages (`percent` option), for constants only:
//    - 'marked' (default): when one side is marked with % (or "percent"), p% equals both p and
//      p/100 on the other side: "50%" == "50" == "0.5", and "\boxed{50}" == reference "50%".
//      Unmarked numbers are never rescaled: "0.5" != "50". Both marked: compared as written.
//    - 'always': the reference graders' include_percentage rule (Qwen2.5-Math / ToRA
//      `math_equal`): the given answer may equal the reference, reference/100 or reference*100,
//      marks or not; so "0.5" == "50" as well (lenient, exploitable).
//    - 'never': the % sign is dropped and numbers compare as written ("50%" == "50" only).
import { parseExpression, evaluate, samplePoints, variablesOf, type Expr } from './expr.js';
import { compareExact, div, int, isExact, isInteger, mul, toFloat, type Num } from './num.js';
import { normalizeAnswer } from './normalize.js';
import { extractAnswer } from './extract.js';

export type PercentMode = 'marked' | 'always' | 'never';

export interface EquivalenceOptions {
  /** Relative tolerance for non-integer constants (default DEFAULT_REL_TOL). */
  relTol?: number;
  /** How a percent sign relates numbers (default 'marked'); see the module comment. */
  percent?: PercentMode;
}

export const DEFAULT_REL_TOL = 1e-4;
/** Integers must agree to this relative difference (float print noise only). */
export const INTEGER_REL_TOL = 1e-9;
/** Expressions with variables must agree to this relative difference at every sample point. */
export const SYMBOLIC_REL_TOL = 1e-6;
export const SYMBOLIC_POINTS = 8;
/** Longest answer compared by meaning; longer ones only by exact text. */
export const MAX_COMPARED_CHARS = 2000;
const MAX_ITEMS = 64;

interface Ctx {
  relTol: number;
  percent: PercentMode;
}

/** Whether `given` is the same answer as `reference` (two answer strings, not whole solutions). */
export function answersEqual(given: unknown, reference: unknown, options: EquivalenceOptions = {}): boolean {
  if (typeof given !== 'string' || typeof reference !== 'string') return false;
  const a = given.trim();
  const b = reference.trim();
  if (a === '' || b === '') return false;
  if (a === b) return true;
  if (a.length > MAX_COMPARED_CHARS || b.length > MAX_COMPARED_CHARS) return false;
  const ctx: Ctx = {
    relTol: typeof options.relTol === 'number' && options.relTol >= 0 ? options.relTol : DEFAULT_REL_TOL,
    percent: options.percent ?? 'marked',
  };
  try {
    const na = normalizeAnswer(a);
    const nb = normalizeAnswer(b);
    if (na.text === '' || nb.text === '') return false;
    if (canonical(na.text) === canonical(nb.text)) return true;
    return shapesEqual(shapeOf(na.text), shapeOf(nb.text), na.percent, nb.percent, ctx);
  } catch {
    return false;
  }
}

/** The final answer of a solution text (extractAnswer) compared with the reference. */
export function isCorrectSolution(text: unknown, reference: unknown, options: EquivalenceOptions = {}): boolean {
  return typeof text === 'string' && answersEqual(extractAnswer(text), reference, options);
}

function canonical(s: string): string {
  const t = s.replace(/\s+/g, '').toLowerCase();
  // A choice letter: "(A)", "A)", "A".
  const choice = /^\(?([a-e])\)?$/.exec(t);
  return choice ? choice[1] : t;
}

// ---------------------------------------------------------------- shapes

type Shape =
  | { kind: 'scalar'; text: string }
  | { kind: 'tuple'; open: string; close: string; items: string[] }
  | { kind: 'set'; items: string[] }
  | { kind: 'list'; items: string[] };

/** Splits at top-level commas; null when the brackets do not balance. */
function splitTopLevel(s: string): string[] | null {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth < 0) return null;
    } else if (c === ',' && depth === 0) {
      items.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (depth !== 0) return null;
  items.push(s.slice(start).trim());
  return items;
}

function shapeOf(text: string): Shape {
  const pm = text.match(/\\pm|\\mp/g);
  if (pm && pm.length === 1) {
    const at = text.search(/\\pm|\\mp/);
    const before = text.slice(0, at);
    const after = text.slice(at + 3);
    // "x = 1 \pm 2" and "1 \pm 2" alike: both signs.
    if (!text.includes(',')) return { kind: 'list', items: [`${before}+${after}`, `${before}-${after}`] };
  }
  // A set: \{1, 2\} in LaTeX, {1, 2} as Python prints one.
  const braced = text.startsWith('\\{') && text.endsWith('\\}') ? text.slice(2, -2) : text.startsWith('{') && text.endsWith('}') ? text.slice(1, -1) : null;
  if (braced !== null) {
    const items = splitTopLevel(braced);
    if (items && items.length <= MAX_ITEMS && (items.length >= 2 || text.startsWith('\\{'))) return { kind: 'set', items: items.filter((x) => x !== '') };
  }
  const open = text[0];
  const close = text[text.length - 1];
  if ((open === '(' || open === '[') && (close === ')' || close === ']') && text.length >= 2) {
    const items = splitTopLevel(text.slice(1, -1));
    if (items && items.length >= 2 && items.length <= MAX_ITEMS) return { kind: 'tuple', open, close, items };
  }
  const items = splitTopLevel(text);
  if (items && items.length >= 2 && items.length <= MAX_ITEMS && items.every((x) => x !== '')) return { kind: 'list', items };
  return { kind: 'scalar', text };
}

function shapesEqual(a: Shape, b: Shape, pa: boolean, pb: boolean, ctx: Ctx): boolean {
  if (a.kind === 'scalar' || b.kind === 'scalar') {
    return a.kind === 'scalar' && b.kind === 'scalar' && scalarsEqual(a.text, b.text, pa, pb, ctx);
  }
  if (a.items.length !== b.items.length) return false;
  const eq = (x: string, y: string) => scalarsEqual(x, y, pa, pb, ctx);
  if (a.kind === 'tuple' && b.kind === 'tuple') {
    if (a.open !== b.open || a.close !== b.close) return false;
    return a.items.every((x, i) => eq(x, b.items[i]));
  }
  if (a.kind === 'tuple' || b.kind === 'tuple') return a.items.every((x, i) => eq(x, b.items[i]));
  // Unordered: each item of a matches a distinct item of b.
  const used = new Array<boolean>(b.items.length).fill(false);
  for (const x of a.items) {
    const j = b.items.findIndex((y, k) => !used[k] && eq(x, y));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

// ---------------------------------------------------------------- scalars

// "x =", "x_1 =", "\theta =", "f(x) =" before an answer.
const VARIABLE_PREFIX = /^\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?(?:\([A-Za-z]\))?|\\[A-Za-z]+)\s*(?:=|\\approx)\s*(?=\S)/;

function stripVariable(s: string): string {
  const m = VARIABLE_PREFIX.exec(s);
  if (!m) return s;
  const rest = s.slice(m[0].length);
  return rest.includes('=') ? s : rest;
}

function scalarsEqual(x: string, y: string, px: boolean, py: boolean, ctx: Ctx): boolean {
  const a = stripVariable(x);
  const b = stripVariable(y);
  if (canonical(a) === canonical(b)) return true;
  const sa = a.split('=');
  const sb = b.split('=');
  if (sa.length === 2 && sb.length === 2) {
    return (
      (expressionsEqual(sa[0], sb[0], false, false, ctx) && expressionsEqual(sa[1], sb[1], false, false, ctx)) ||
      (expressionsEqual(sa[0], sb[1], false, false, ctx) && expressionsEqual(sa[1], sb[0], false, false, ctx))
    );
  }
  if (sa.length > 1 || sb.length > 1) return false;
  return expressionsEqual(a, b, px, py, ctx);
}

function expressionsEqual(x: string, y: string, px: boolean, py: boolean, ctx: Ctx): boolean {
  const ea = parseExpression(x.trim());
  const eb = parseExpression(y.trim());
  if (!ea || !eb) return false;
  const vars = [...new Set([...variablesOf(ea), ...variablesOf(eb)])].sort();
  if (vars.length === 0) {
    const va = evaluate(ea);
    const vb = evaluate(eb);
    // An infinite value is only trusted from an explicit infinity; otherwise it is an overflow
    // (10^{10^{10}}), and two overflows say nothing about equality.
    const overflow = (v: Num, e: Expr) => !Number.isFinite(toFloat(v)) && !hasInfinity(e);
    if (overflow(va, ea) || overflow(vb, eb)) return false;
    return percentEqual(va, vb, px, py, ctx);
  }
  return symbolicEqual(ea, eb, vars);
}

function hasInfinity(e: Expr): boolean {
  switch (e.t) {
    case 'const':
      return e.name === 'inf';
    case 'neg':
    case 'fact':
      return hasInfinity(e.a);
    case 'bin':
      return hasInfinity(e.a) || hasInfinity(e.b);
    case 'fn':
      return e.args.some(hasInfinity);
    default:
      return false;
  }
}

function symbolicEqual(ea: Expr, eb: Expr, vars: string[]): boolean {
  let compared = 0;
  for (const p of samplePoints(vars, SYMBOLIC_POINTS)) {
    const fa = toFloat(evaluate(ea, p));
    const fb = toFloat(evaluate(eb, p));
    const okA = Number.isFinite(fa);
    const okB = Number.isFinite(fb);
    if (!okA && !okB) continue;
    if (okA !== okB) return false;
    if (Math.abs(fa - fb) > SYMBOLIC_REL_TOL * Math.max(1, Math.abs(fa), Math.abs(fb))) return false;
    compared++;
  }
  return compared >= 3;
}

function percentEqual(a: Num, b: Num, pa: boolean, pb: boolean, ctx: Ctx): boolean {
  if (numbersEqual(a, b, ctx.relTol)) return true;
  const hundred = int(100);
  if (ctx.percent === 'always') return numbersEqual(a, div(b, hundred), ctx.relTol) || numbersEqual(a, mul(b, hundred), ctx.relTol);
  if (ctx.percent === 'never' || pa === pb) return false;
  // The marked side's p% is p/100.
  return pa ? numbersEqual(div(a, hundred), b, ctx.relTol) : numbersEqual(a, div(b, hundred), ctx.relTol);
}

/** Numeric equality of two values; see the module comment for the tolerances. */
export function numbersEqual(a: Num, b: Num, relTol: number = DEFAULT_REL_TOL): boolean {
  if (isExact(a) && isExact(b) && compareExact(a, b)) return true;
  const x = toFloat(a);
  const y = toFloat(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  const diff = Math.abs(x - y);
  const scale = Math.max(Math.abs(x), Math.abs(y));
  if (isInteger(a) || isInteger(b)) return diff <= INTEGER_REL_TOL * Math.max(1, scale);
  return diff <= relTol * scale || diff <= 1e-12;
}
