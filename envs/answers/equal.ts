// Answer equivalence: is a given answer the same as the reference (gold)? It follows HF's
// math_verify (verify(gold, given) with its defaults), checked on a committed table of pairs
// (test/fixtures/answers/math_verify_pairs.json; isCorrectSolution finds a response's final
// answer as math_verify does, final.ts). Like math_verify it is not symmetric: the reference is
// the gold side. Deliberate departures, each marked in the table with its reason:
//   - a decimal never equals an exact irrational value (math_verify: 3.141593 == pi), rule 5;
//   - p% also equals p for any p, not only for integers (rule 7);
//   - spellings math_verify's LaTeX parser cannot read are read: 45°, 1\,000, "20 dollars",
//     Python's 2**10 and 1.2e3 (as programs print them; math_verify reads e as Euler's number),
//     and 33\frac{1}{3}\% is (33 + 1/3)% (latex2sympy makes it 1/300).
// Pure; never throws.
//
// 1. Both are normalised (normalize.ts): LaTeX wrappers, $, units, degrees, thousands separators
//    and percent signs are removed (the percent sign is remembered).
// 2. Equal normalised strings (ignoring case and spaces) are equal: text answers end here
//    ("\text{Yes}" == "yes", "(A)" == "A").
// 3. Collections (math_verify's sets, tuples and intervals):
//    - a reference set "\{1, 2\}" or list "1, 2" matches any collection of the same items in any
//      order, except a closed interval "[1, 2]";
//    - a reference tuple or interval "(1, 2]" needs the same brackets, or a bare list or set in
//      the same order when the reference is "(...)"; "a \pm b" is the list a+b, a-b;
//    - unions of intervals ("(-\infty, 0) \cup (1, \infty)") compare as unordered collections;
//    - matrices (pmatrix, bmatrix, ...) compare entry by entry; a scalar is the set of itself
//      ("3" == "\{3\}") and equals no other collection.
// 4. Equations (math_verify's relation rules): a given equation against a reference that is not
//    one is read as its last right-hand side ("x = 2" == "2"); a reference assignment ("x = 2",
//    one variable on the left) against a given non-equation is read as its right-hand side; two
//    equations are equal when lhs - rhs of one is a constant non-zero multiple of the other's
//    ("2x+3y=6" == "y = 2 - \frac{2}{3}x"; "x = 2" != "y = 2").
// 5. Constants are evaluated exactly while the arithmetic stays rational (BigInt fractions; a
//    decimal "0.75" is the exact 3/4, but remembered as written with a point, sympy's Float).
//    - A bare decimal against an exact integer: exactly equal (3.0 == 3; 3.0000001 != 3,
//      999.95 != 1000): sympy's Integer never equals a Float, so math_verify falls back to
//      simplify(a - b) == 0.
//    - A bare decimal against any other rational value (fraction or decimal): both are rounded
//      to 6 decimal places, half to even, and compared (math_verify's float_rounding=6):
//      0.333333 == 1/3 and 0.3333333 == 1/3, but 0.33333 != 1/3 and 2.500001 != 5/2.
//    - A decimal against a value that is not rational (pi, e, sqrt 2, ln 2): never equal, at
//      any number of digits. math_verify rounds here too (3.141593 == pi); we do not: a decimal
//      approximation is not the exact answer. "0.5\pi" is not a decimal (it equals \frac{\pi}{2}).
//    - Otherwise exact values compare exactly, and values computed in floating point (radicals,
//      pi, logs) agree to 1e-9 relative (the stand-in for sympy's simplify(a - b) == 0).
//    - A value that overflows (10^{10^{10}}) equals nothing but the identical text; \infty is
//      only equal to \infty. "log" is the natural log (as in sympy); 2\frac{1}{2} is 5/2.
// 6. Expressions with variables are equal when they agree (1e-9 relative) at 8 seeded random
//    points, variables in [0.3, 2.7]; points where both are undefined are skipped, at least 3 must
//    remain; a point where only one side is defined makes them different. Then at 4 points with
//    the variables in [-2.7, -0.3], where both sides are defined, they must agree too (sympy's
//    variables are real: \sqrt{x^2} is |x|, not x).
// 7. Percentages (`percent` option), for constants only:
//    - 'marked' (default): when one side is marked, p% equals p/100 (math_verify's rule:
//      "50%" == "0.5" == "1/2") and also p, the sign left out ("50%" == "50", "50" == "50%").
//      math_verify leaves the sign out between integers only; we do it for any p
//      ("12.5%" == "12.5"), a departure: the math env asks for answers without units and
//      generates percentages such as 37.5%. Both marked: compared as written ("50%" != "5%").
//      Unmarked numbers are never rescaled ("0.5" != "50").
//    - 'always': the reference graders' include_percentage rule (Qwen2.5-Math / ToRA
//      `math_equal`): the given answer may equal the reference, reference/100 or reference*100,
//      marks or not; so "0.5" == "50" as well (lenient, exploitable).
//    - 'never': the % sign is dropped and numbers compare as written ("50%" == "50" only).
import { parseExpression, evaluate, hasDecimal, isDecimalLiteral, samplePoints, someNode, variablesOf, type Expr } from './expr.js';
import { compareExact, div, int, isExact, isInteger, mul, roundToPlaces, toFloat, type Num } from './num.js';
import { normalizeAnswer } from './normalize.js';
import { extractBoxed } from './extract.js';
import { extractFinalAnswer } from './final.js';

export type PercentMode = 'marked' | 'always' | 'never';

export interface EquivalenceOptions {
  /** How a percent sign relates numbers (default 'marked'); see the module comment. */
  percent?: PercentMode;
}

/** A bare decimal is compared with a rational value after rounding both to this many places (math_verify's float_rounding). */
export const FLOAT_ROUNDING = 6;
/** Values computed in floating point (radicals, pi) must agree to this relative difference. */
export const EXACT_REL_TOL = 1e-9;
/** Expressions with variables must agree to this relative difference at every sample point. */
export const SYMBOLIC_REL_TOL = 1e-9;
export const SYMBOLIC_POINTS = 8;
/** Further points with every variable negative, where both sides are defined. */
const NEGATIVE_POINTS = 4;
const NEGATIVE_SEED = 7;
/** Longest answer compared by meaning; longer ones only by exact text. */
export const MAX_COMPARED_CHARS = 2000;
const MAX_ITEMS = 64;

interface Ctx {
  percent: PercentMode;
}

/** Whether `given` is the same answer as `reference` (two answer strings, not whole solutions); the reference is the gold side. */
export function answersEqual(given: unknown, reference: unknown, options: EquivalenceOptions = {}): boolean {
  if (typeof given !== 'string' || typeof reference !== 'string') return false;
  const a = given.trim();
  const b = reference.trim();
  if (a === '' || b === '') return false;
  if (a === b) return true;
  if (a.length > MAX_COMPARED_CHARS || b.length > MAX_COMPARED_CHARS) return false;
  const ctx: Ctx = { percent: options.percent ?? 'marked' };
  try {
    const ma = matrixOf(a);
    const mb = matrixOf(b);
    if (ma || mb) return ma !== null && mb !== null && matricesEqual(mb, ma, ctx);
    const na = normalizeAnswer(a);
    const nb = normalizeAnswer(b);
    if (na.text === '' || nb.text === '') return false;
    if (canonical(na.text) === canonical(nb.text)) return true;
    return shapesEqual(shapeOf(nb.text), shapeOf(na.text), nb.percent, na.percent, ctx);
  } catch {
    return false;
  }
}

/**
 * Whether a whole response is correct: its final answer as math_verify finds it
 * (extractFinalAnswer: \boxed{}, "final answer is", "answer:", else the last LaTeX or number)
 * compared with the reference.
 */
export function isCorrectSolution(text: unknown, reference: unknown, options: EquivalenceOptions = {}): boolean {
  if (typeof text !== 'string') return false;
  const answer = extractFinalAnswer(text);
  return answer !== null && answersEqual(answer, reference, options);
}

function canonical(s: string): string {
  const t = s.replace(/\s+/g, '').toLowerCase();
  // A choice letter: "(A)", "A)", "A".
  const choice = /^\(?([a-e])\)?$/.exec(t);
  return choice ? choice[1] : t;
}

// ---------------------------------------------------------------- matrices

const MATRIX = /^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?([\s\S]*)\\end\{\1\}$/;

/** The cells of a matrix answer (\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}), rows of strings; null when it is not one. */
function matrixOf(raw: string): string[][] | null {
  let s = raw.trim();
  if (/^\\(?:boxed|fbox)\b/.test(s)) s = extractBoxed(s) ?? s;
  s = s.replace(/^\$+|\$+$/g, '').replace(/\\left\s*[[(]|\\right\s*[\])]/g, '').trim();
  const m = MATRIX.exec(s);
  if (!m) return null;
  const rows = m[2].split(/\\\\/).map((r) => r.trim()).filter((r) => r !== '');
  return rows.map((r) => r.split('&').map((c) => c.trim()));
}

function matricesEqual(gold: string[][], given: string[][], ctx: Ctx): boolean {
  if (gold.length !== given.length) return false;
  return gold.every((row, i) => row.length === given[i].length && row.every((cell, j) => answersEqual(given[i][j], cell, { percent: ctx.percent })));
}

// ---------------------------------------------------------------- shapes

type Shape =
  | { kind: 'scalar'; text: string }
  | { kind: 'tuple'; open: string; close: string; items: string[] }
  | { kind: 'set'; items: string[] }
  | { kind: 'list'; items: string[] }
  | { kind: 'union'; parts: Shape[] };

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

/** Interval brackets may be unbalanced ("[0, 1)"): each part of a union is split on its own. */
function splitUnion(text: string): string[] | null {
  if (!text.includes('\\cup')) return null;
  const parts = text.split('\\cup').map((p) => p.trim());
  return parts.length >= 2 && parts.every((p) => /^[([].*[)\]]$/.test(p) || /^\\\{.*\\\}$/.test(p)) ? parts : null;
}

function shapeOf(text: string): Shape {
  const union = splitUnion(text);
  if (union) return { kind: 'union', parts: union.map(shapeOf) };
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
    // The brackets of an interval need not match each other ("(1, 2]"): only the inside is split.
    const items = splitTopLevel(text.slice(1, -1));
    if (items && items.length >= 2 && items.length <= MAX_ITEMS) return { kind: 'tuple', open, close, items };
  }
  const items = splitTopLevel(text);
  if (items && items.length >= 2 && items.length <= MAX_ITEMS && items.every((x) => x !== '')) return { kind: 'list', items };
  return { kind: 'scalar', text };
}

/** math_verify's sympy_compare_sets and sympy_deep_compare_set_and_tuple; `gold` is the reference. */
function shapesEqual(gold: Shape, given: Shape, pg: boolean, pp: boolean, ctx: Ctx): boolean {
  if (gold.kind === 'scalar' && given.kind === 'scalar') return scalarsEqual(gold.text, given.text, pg, pp, ctx);
  // sympy_compare_sets: a scalar against a set is the set of that one value ("\{3\}" == "3").
  if (gold.kind === 'scalar' && given.kind === 'set') return shapesEqual({ kind: 'set', items: [gold.text] }, given, pg, pp, ctx);
  if (gold.kind === 'set' && given.kind === 'scalar') return shapesEqual(gold, { kind: 'set', items: [given.text] }, pg, pp, ctx);
  if (gold.kind === 'scalar' || given.kind === 'scalar') return false;
  if (gold.kind === 'union' || given.kind === 'union') {
    // Unions are sets of intervals: the same parts in any order.
    if (gold.kind !== 'union' || given.kind !== 'union') return false;
    return matchUnordered(gold.parts, given.parts, (g, p) => shapesEqual(g, p, pg, pp, ctx));
  }
  if (gold.items.length !== given.items.length) return false;
  const eq = (g: string, p: string) => scalarsEqual(g, p, pg, pp, ctx);
  const ordered = () => gold.items.every((g, i) => eq(g, given.items[i]));
  const closedInterval = (s: Shape) => s.kind === 'tuple' && s.items.length === 2 && (s.open === '[' || s.close === ']');
  if (gold.kind === 'tuple') {
    // An interval or tuple: the same brackets, in order; "(a, b)" also matches a bare list or a set as written.
    if (given.kind === 'tuple') return gold.open === given.open && gold.close === given.close && ordered();
    return gold.open === '(' && gold.close === ')' && ordered();
  }
  // A set or a list: sympy sorts both sides; a closed interval is not a set of two numbers.
  if (closedInterval(given)) return false;
  return matchUnordered(gold.items, given.items, eq);
}

/** Each item of `gold` matches a distinct item of `given`. */
function matchUnordered<T>(gold: T[], given: T[], eq: (g: T, p: T) => boolean): boolean {
  if (gold.length !== given.length) return false;
  const used = new Array<boolean>(given.length).fill(false);
  for (const g of gold) {
    const j = given.findIndex((p, k) => !used[k] && eq(g, p));
    if (j < 0) return false;
    used[j] = true;
  }
  return true;
}

// ---------------------------------------------------------------- equations

interface Relation {
  /** The sides of "a = b = c", in order. */
  sides: string[];
  /** One variable on the left ("x = 2", "x_1 = 2", "\theta = 2"): math_verify's assignment. */
  assignment: boolean;
}

const LONE_SYMBOL = /^\s*(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?|\\[A-Za-z]+)\s*$/;

/** The sides of an equation (split at "=" and "\approx"); null when the text is not one. */
function relationOf(text: string): Relation | null {
  const sides = text.split(/\\approx|(?<![<>!\\])=/).map((s) => s.trim());
  if (sides.length < 2 || sides.some((s) => s === '')) return null;
  return { sides, assignment: LONE_SYMBOL.test(sides[0]) };
}

/** math_verify's sympy_expr_eq for a possible relation on either side; `gold` is the reference. */
function scalarsEqual(gold: string, given: string, pg: boolean, pp: boolean, ctx: Ctx): boolean {
  if (canonical(gold) === canonical(given)) return true;
  const rg = relationOf(gold);
  const rp = relationOf(given);
  // A given equation against a reference that is not one: its last right-hand side.
  if (rp && !rg) return expressionsEqual(gold, rp.sides[rp.sides.length - 1], pg, pp, ctx);
  // A reference assignment against a given non-equation: the assigned value.
  if (rg && !rp) return rg.assignment && expressionsEqual(rg.sides[rg.sides.length - 1], given, pg, pp, ctx);
  if (rg && rp) {
    // Two assignments to the same variable: their values (math_verify solves both and compares).
    const last = (r: Relation) => r.sides[r.sides.length - 1];
    if (rg.assignment && rp.assignment && canonical(rg.sides[0]) === canonical(rp.sides[0])) return expressionsEqual(last(rg), last(rp), pg, pp, ctx);
    return equationsEqual(rg, rp);
  }
  return expressionsEqual(gold, given, pg, pp, ctx);
}

/** An equation as lhs - rhs; an assignment chain "x = a = b" is x = b. */
function differenceOf(r: Relation): Expr | null {
  const lhs = parseExpression(r.sides[0]);
  const rhs = parseExpression(r.sides[r.sides.length - 1]);
  if (!lhs || !rhs || (r.sides.length > 2 && !r.assignment)) return null;
  return { t: 'bin', op: '-', a: lhs, b: rhs };
}

/** Equations with the same solutions: lhs - rhs of one is a constant non-zero multiple of the other's (x = 2 vs y = 2 differ). */
function equationsEqual(gold: Relation, given: Relation): boolean {
  const dg = differenceOf(gold);
  const dp = differenceOf(given);
  if (!dg || !dp) return false;
  const vars = [...new Set([...variablesOf(dg), ...variablesOf(dp)])].sort();
  let ratio: number | null = null;
  let compared = 0;
  for (const p of samplePoints(vars, SYMBOLIC_POINTS)) {
    const g = toFloat(evaluate(dg, p));
    const q = toFloat(evaluate(dp, p));
    if (!Number.isFinite(g) || !Number.isFinite(q)) continue;
    if (g === 0 && q === 0) continue;
    if (g === 0 || q === 0) return false;
    const r = g / q;
    if (ratio === null) ratio = r;
    else if (Math.abs(r - ratio) > SYMBOLIC_REL_TOL * Math.max(1, Math.abs(r), Math.abs(ratio))) return false;
    compared++;
  }
  return compared >= 3 || (vars.length === 0 && compared >= 1);
}

// ---------------------------------------------------------------- values

/** A constant as math_verify sees it: its value, and whether it was written with a decimal point (sympy's Float). */
interface Value {
  v: Num;
  /** A decimal occurs in it ("1.2 \times 10^3", "0.5\pi"). */
  decimal: boolean;
  /** It is a bare decimal ("0.75", "-3.0"): an atomic Float, compared by rounding. */
  bare: boolean;
}

function expressionsEqual(gold: string, given: string, pg: boolean, pp: boolean, ctx: Ctx): boolean {
  const eg = parseExpression(gold.trim());
  const ep = parseExpression(given.trim());
  if (!eg || !ep) return false;
  const vars = [...new Set([...variablesOf(eg), ...variablesOf(ep)])].sort();
  if (vars.length > 0) return symbolicEqual(eg, ep, vars);
  const g = valueOf(eg);
  const p = valueOf(ep);
  if (!g || !p) return false;
  return percentEqual(g, p, pg, pp, ctx);
}

/** The value of a constant expression; null when it overflowed (10^{10^{10}}), which says nothing about equality. */
function valueOf(e: Expr): Value | null {
  const v = evaluate(e);
  if (!Number.isFinite(toFloat(v)) && !hasInfinity(e)) return null;
  return { v, decimal: hasDecimal(e), bare: isDecimalLiteral(e) };
}

const hasInfinity = (e: Expr): boolean => someNode(e, (x) => x.t === 'const' && x.name === 'inf');

function symbolicEqual(ea: Expr, eb: Expr, vars: string[]): boolean {
  const differ = (fa: number, fb: number) => Math.abs(fa - fb) > SYMBOLIC_REL_TOL * Math.max(1, Math.abs(fa), Math.abs(fb));
  let compared = 0;
  for (const p of samplePoints(vars, SYMBOLIC_POINTS)) {
    const fa = toFloat(evaluate(ea, p));
    const fb = toFloat(evaluate(eb, p));
    const okA = Number.isFinite(fa);
    const okB = Number.isFinite(fb);
    if (!okA && !okB) continue;
    if (okA !== okB || differ(fa, fb)) return false;
    compared++;
  }
  if (compared < 3) return false;
  // sympy's symbols are real, not positive: \sqrt{x^2} is |x|, not x. Negated points catch that;
  // there a point where only one side is defined is skipped (\sqrt{x} has no real value).
  for (const p of samplePoints(vars, NEGATIVE_POINTS, NEGATIVE_SEED)) {
    const q = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, -v]));
    const fa = toFloat(evaluate(ea, q));
    const fb = toFloat(evaluate(eb, q));
    if (Number.isFinite(fa) && Number.isFinite(fb) && differ(fa, fb)) return false;
  }
  return true;
}

/** An integer written without a decimal point: sympy's Integer. */
const plainInteger = (x: Value) => isInteger(x.v) && !x.decimal;

const HUNDRED = int(100);
const scaled = (x: Value, by: (v: Num) => Num): Value => ({ ...x, v: by(x.v) });

function percentEqual(gold: Value, given: Value, pg: boolean, pp: boolean, ctx: Ctx): boolean {
  if (ctx.percent === 'never' || (!pg && !pp && ctx.percent === 'marked')) return valuesEqual(gold, given);
  if (ctx.percent === 'always') {
    return valuesEqual(gold, given) || valuesEqual(scaled(gold, (v) => div(v, HUNDRED)), given) || valuesEqual(scaled(gold, (v) => mul(v, HUNDRED)), given);
  }
  // Both marked: compared as written ("50%" != "5%").
  if (pg && pp) return valuesEqual(gold, given);
  // p% is the number p/100 (latex2sympy's p * 1/100): "50%" == "0.5" == "1/2".
  const g = pg ? scaled(gold, (v) => div(v, HUNDRED)) : gold;
  const p = pp ? scaled(given, (v) => div(v, HUNDRED)) : given;
  if (valuesEqual(g, p)) return true;
  // And p itself, the sign left out: math_verify's get_pct_val does this for integers only
  // ("50%" == "50"); we do it for any p ("37.5%" == "37.5", a departure): the math env asks for
  // answers without units and generates percentages such as 37.5%.
  return valuesEqual(gold, given);
}

/** Numeric equality of two constants; see rule 5 of the module comment. */
function valuesEqual(a: Value, b: Value): boolean {
  const x = toFloat(a.v);
  const y = toFloat(b.v);
  if (Number.isNaN(x) || Number.isNaN(y)) return false;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  const exactA = isExact(a.v);
  const exactB = isExact(b.v);
  if (a.bare || b.bare) return bareDecimalEqual(a, b);
  if (exactA && exactB) return compareExact(a.v, b.v);
  // A rational value written with decimals is an approximation of an irrational one, never it.
  if ((exactA && a.decimal) || (exactB && b.decimal)) return false;
  return Math.abs(x - y) <= EXACT_REL_TOL * Math.max(Math.abs(x), Math.abs(y)) || Math.abs(x - y) <= 1e-12;
}

/** One side is a bare decimal (sympy's atomic Float): math_verify's sympy_numeric_eq. */
function bareDecimalEqual(a: Value, b: Value): boolean {
  // Departure from math_verify: a decimal never equals a value that is not rational.
  if (!isExact(a.v) || !isExact(b.v)) return false;
  // sympy: Integer.round() stays an Integer, which never equals a Float; simplify(a - b) decides.
  if (plainInteger(a) || plainInteger(b)) return compareExact(a.v, b.v);
  // math_verify: a.round(float_rounding) == b.round(float_rounding).
  return roundToPlaces(a.v, FLOAT_ROUNDING) === roundToPlaces(b.v, FLOAT_ROUNDING);
}
