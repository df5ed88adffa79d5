// Answer extraction and equivalence (envs/answers): a table of equal and unequal pairs, the
// percent modes, extraction from solutions and program output, and garbage that must not throw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  answersEqual,
  evaluateText,
  extractAnswer,
  extractBoxed,
  extractOutputAnswer,
  formatDecimal,
  formatRational,
  isCorrectSolution,
  normalizeAnswer,
  parseExpression,
  rational,
} from '../../envs/answers/index.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import { cpuMark, cpuMsSince } from '../support/cpuTime.js';

// [given, reference, equal?, what it covers]
const TABLE: [string, string, boolean, string][] = [
  // integers, signs, decimals
  ['42', '42', true, 'same integer'],
  ['42.0', '42', true, 'trailing .0'],
  ['042', '42', true, 'leading zero'],
  ['+7', '7', true, 'explicit plus'],
  ['-7', '7', false, 'sign matters'],
  ['- 7', '-7', true, 'spaced minus'],
  ['\u22127', '-7', true, 'unicode minus'],
  ['43', '42', false, 'off by one'],
  ['100001', '100000', false, 'integers are exact'],
  // A decimal against an integer is compared exactly, as math_verify does (sympy's Integer never
  // equals a Float, so it falls back to simplify(a - b) == 0); this used to be 1e-9 relative.
  ['3.0000000000000004', '3', false, 'decimal vs integer is exact (float print noise is not 3)'],
  ['3.0', '3', true, 'decimal vs integer, exactly equal'],
  ['999.95', '1000', false, 'integer reference is strict'],
  ['2.50', '2.5', true, 'trailing zero'],
  ['.5', '0.5', true, 'no leading zero'],
  ['2e3', '2000', true, 'scientific notation'],
  ['1e-05', '0.00001', true, 'Python small float'],
  // fractions
  ['\\frac{3}{4}', '0.75', true, '\\frac vs decimal'],
  ['3/4', '\\dfrac{3}{4}', true, '\\dfrac'],
  ['\\tfrac{6}{8}', '3/4', true, '\\tfrac, unreduced'],
  ['\\frac12', '0.5', true, '\\frac12 shorthand'],
  ['-\\frac{1}{2}', '\\frac{-1}{2}', true, 'sign placement'],
  ['\\frac{1}{3}', '0.33', false, 'rounded decimal is not exact'],
  ['0.3333333333333333', '1/3', true, 'Python float of 1/3'],
  // A decimal against a fraction: both rounded to 6 places (math_verify's float_rounding); this
  // used to be 1e-4 relative, which took 0.33333 for 1/3.
  ['0.33333', '1/3', false, 'not 1/3 at 6 places'],
  ['0.333333', '1/3', true, '1/3 at 6 places'],
  ['0.3333334', '1/3', true, 'rounds to 0.333333'],
  ['1\\frac{1}{2}', '3/2', true, 'mixed number (LaTeX)'],
  ['1 1/2', '1.5', true, 'mixed number (text)'],
  ['7/3', '2.333', false, 'too coarse'],
  ['Rational(7, 2)', '3.5', true, 'sympy Rational'],
  ['Fraction(7, 2)', '7/2', true, 'Python Fraction repr'],
  // separators, money, units, text
  ['1,000', '1000', true, 'thousands separator'],
  ['1,234,567', '1234567', true, 'two separators'],
  ['1{,}000', '1000', true, 'LaTeX {,} separator'],
  ['1\\,000', '1000', true, 'LaTeX thin space'],
  ['\\$1,234.50', '1234.5', true, 'escaped dollar'],
  ['$18', '18', true, 'dollar sign'],
  ['20 dollars', '20', true, 'unit word'],
  ['5 \\text{ cm}', '5', true, '\\text unit'],
  ['5cm', '5', true, 'glued unit'],
  ['12 km/h', '12', true, 'compound unit'],
  ['7 \\mbox{ square units}', '7', true, '\\mbox unit'],
  ['30^\\circ', '30', true, 'degrees ^\\circ'],
  ['30^{\\circ}', '30', true, 'degrees ^{\\circ}'],
  ['45\u00b0', '45', true, 'degree sign'],
  ['5 cm', '6', false, 'units do not hide a wrong number'],
  ['\\text{(A)}', 'A', true, 'choice letter'],
  ['(B)', 'A', false, 'other choice'],
  ['Yes', 'yes', true, 'text, case'],
  ['no solution', 'No Solution', true, 'text phrase'],
  ['red', 'blue', false, 'different text'],
  // percentages (default 'marked')
  ['50\\%', '50', true, '50% == 50'],
  ['50%', '0.5', true, '50% == 0.5'],
  ['0.5', '50%', true, '0.5 == reference 50%'],
  ['50', '50%', true, '50 == reference 50%'],
  ['50 percent', '0.5', true, 'percent word'],
  ['0.5', '50', false, 'unmarked numbers are not rescaled'],
  ['50%', '5%', false, 'both marked compare as written'],
  ['12.5%', '1/8', true, 'percent of a fraction'],
  // radicals, pi, powers, LaTeX operators
  ['2\\sqrt{2}', '\\sqrt{8}', true, 'radicals'],
  ['\\sqrt2', '2^{1/2}', true, '\\sqrt2 shorthand'],
  ['\\sqrt[3]{27}', '3', true, 'cube root'],
  ['\\frac{\\sqrt{3}}{2}', 'sqrt(3)/2', true, 'LaTeX vs Python'],
  // A decimal never equals an exact irrational value (the old 1e-4 tolerance took it; math_verify
  // takes it at 6 places); exact forms of it do.
  ['\\sqrt{3}/2', '0.8660254', false, 'decimal approximation of a radical'],
  ['\\sqrt{3}/2', '\\frac{\\sqrt{12}}{4}', true, 'exact radicals'],
  ['\\sqrt{3}', '1.7', false, 'coarse radical'],
  ['\\pi', '3.14159265', false, 'pi is not a decimal'],
  ['3.141593', '\\pi', false, 'not even at 6 places'],
  ['0.5\\pi', '\\frac{\\pi}{2}', true, 'a decimal coefficient of pi is exact'],
  ['3.14', '\\pi', false, 'pi is not 3.14'],
  ['2\\pi', '\\pi + \\pi', true, 'implicit product with pi'],
  ['2\\pi', '6.283185307', false, 'decimal approximation of 2 pi'],
  ['2^{10}', '1024', true, 'power'],
  ['2**10', '1024', true, 'Python power'],
  ['3 \\cdot 4', '12', true, '\\cdot'],
  ['3 \\times 4', '12', true, '\\times'],
  ['\\left( \\frac{1}{2} \\right)^2', '1/4', true, '\\left \\right'],
  ['10!', '3628800', true, 'factorial'],
  ['\\binom{5}{2}', '10', true, 'binomial'],
  ['|-3|', '3', true, 'absolute value'],
  ['\\infty', '\\infty', true, 'infinity'],
  ['-\\infty', '\\infty', false, 'signed infinity'],
  ['e^{0}', '1', true, 'e to the 0'],
  ['\\log_2 8', '3', true, 'log base 2'],
  ['\\ln(e^2)', '2', true, 'natural log'],
  // expressions with variables
  ['x^2+2x+1', '(x+1)^2', true, 'expanded square'],
  ['x^2+1', '(x+1)^2', false, 'different polynomial'],
  ['\\frac{x^2-1}{x-1}', 'x+1', true, 'rational function'],
  ['2(a+b)', '2a+2b', true, 'distribution'],
  ['\\sin^2 x + \\cos^2 x', '1', true, 'trig identity'],
  ['x**2', 'x^2', true, 'Python power with variable'],
  ['xy', 'yx', true, 'commutative product'],
  ['x', 'y', false, 'different variables'],
  // Variables are real, as in sympy: \sqrt{x^2} is |x| (this used to be true: only positive points).
  ['\\sqrt{x^2}', 'x', false, 'sqrt of a square is the absolute value'],
  ['\\sqrt{x^2}', '|x|', true, 'absolute value'],
  ['\\sqrt{x}\\sqrt{x}', 'x', true, 'domains may differ at negative points'],
  ['\\theta + 1', '1 + \\theta', true, 'Greek variable'],
  // equations, tuples, intervals, sets, lists
  ['x = 5', '5', true, 'variable prefix'],
  ['x=\\frac{5}{2}', '2.5', true, 'prefix and fraction'],
  ['y = 2x + 1', 'y = 1 + 2x', true, 'equations'],
  ['(1, 2)', '\\left(1,2\\right)', true, 'tuple'],
  ['(2, 1)', '(1, 2)', false, 'tuple order'],
  ['(1, 2]', '(1, 2)', false, 'interval brackets'],
  ['[0, \\frac{1}{2})', '[0, 0.5)', true, 'interval values'],
  ['\\{1, 2, 3\\}', '\\{3, 2, 1\\}', true, 'set order'],
  ['1, 2', '2, 1', true, 'list order'],
  ['2 and 3', '3, 2', true, '"and" list'],
  ['1, 2', '1, 2, 3', false, 'list length'],
  ['2 \\pm \\sqrt{3}', '2+\\sqrt3, 2-\\sqrt{3}', true, '\\pm'],
  ['x = 2, x = 3', '3, 2', true, 'list of equations'],
  ['\\boxed{\\frac{1}{2}}', '0.5', true, 'boxed given whole'],
  ['{1, 2}', '\\{2, 1\\}', true, 'Python set'],
  // math_verify reads [1, 2] as the closed interval, which is not the set {1, 2}.
  ['[1, 2]', '1, 2', false, 'closed interval vs bare list'],
  ['(1, 2)', '1, 2', true, 'open interval or tuple vs bare list'],
  ['\\pm 2', '2, -2', true, 'bare \\pm'],
  ['(1, 2)', '1', false, 'tuple vs scalar'],
  // no answer
  ['', '0', false, 'empty given'],
  ['0', '', false, 'empty reference'],
  ['1/0', '2/0', false, 'undefined values'],
];

test(`the equivalence table (${TABLE.length} cases) holds`, () => {
  assert.ok(TABLE.length >= 60);
  const failures = TABLE.filter(([a, b, want]) => answersEqual(a, b) !== want).map(([a, b, want, what]) => `${what}: ${JSON.stringify(a)} vs ${JSON.stringify(b)} should be ${want ? 'equal' : 'different'}`);
  assert.deepEqual(failures, []);
});

// Like math_verify, equivalence is not symmetric: the reference is the gold side. These rows of
// the table differ when swapped, and no others.
const ASYMMETRIC = new Set(['closed interval vs bare list', 'open interval or tuple vs bare list']);

test('equivalence is symmetric on the table, except where math_verify is not', () => {
  for (const [a, b, , what] of TABLE) if (!ASYMMETRIC.has(what)) assert.equal(answersEqual(a, b), answersEqual(b, a), what);
  // A reference tuple or interval is ordered, a reference list is not (sympy sorts sets).
  assert.equal(answersEqual('2, 1', '(1, 2)'), false);
  assert.equal(answersEqual('(2, 1)', '1, 2'), true);
  // A given equation is read as its right-hand side; a reference one only when it assigns a variable.
  assert.equal(answersEqual('2x + 1 = 5', '5'), true);
  assert.equal(answersEqual('5', '2x + 1 = 5'), false);
  assert.equal(answersEqual('5', 'x = 5'), true);
});

test('percent modes: marked (default), always (the reference graders), never', () => {
  assert.equal(answersEqual('0.5', '50', { percent: 'always' }), true);
  assert.equal(answersEqual('5000', '50', { percent: 'always' }), true);
  assert.equal(answersEqual('0.5', '50', { percent: 'marked' }), false);
  assert.equal(answersEqual('50%', '50', { percent: 'never' }), true);
  assert.equal(answersEqual('50%', '0.5', { percent: 'never' }), false);
  assert.equal(answersEqual('0.5', '50%'), true);
});

// The relTol option (1e-4 relative by default) is gone: decimals compare as math_verify compares
// them (equal.ts, rule 5), and never equal an irrational value.
test('decimals: 6 places against fractions, exact against integers, never an irrational', () => {
  assert.equal(answersEqual('0.142857', '1/7'), true);
  assert.equal(answersEqual('0.14286', '1/7'), false);
  assert.equal(answersEqual('2.5000004', '5/2'), true); // 2.500000 at 6 places
  assert.equal(answersEqual('2.500001', '5/2'), false);
  assert.equal(answersEqual('0.0000005', '0'), false); // integer: exact
  assert.equal(answersEqual('1.2 \\times 10^{3}', '1200'), true); // exact
  assert.equal(answersEqual('0.30000000000000004', '0.3'), true); // both decimals: 6 places
  for (const [approx, exact] of [['3.14159265358979', '\\pi'], ['1.4142135623731', '\\sqrt{2}'], ['2.718282', 'e'], ['0.693147', '\\ln 2']]) {
    assert.equal(answersEqual(approx, exact), false, `${approx} vs ${exact}`);
  }
  assert.equal(answersEqual('\\log_2 8', '3'), true); // computed in floating point, exact in meaning
});

test('extractBoxed: the last closed box, nested braces, \\fbox, unbraced', () => {
  assert.equal(extractBoxed('\\boxed{1} then \\boxed{\\frac{a}{b^{2}}}'), '\\frac{a}{b^{2}}');
  assert.equal(extractBoxed('\\fbox{7}'), '7');
  assert.equal(extractBoxed('so \\boxed 5.'), '5.');
  assert.equal(extractBoxed('\\boxed{3} and \\boxed{4'), '3');
  assert.equal(extractBoxed('\\boxed{\\{1,2\\}}'), '\\{1,2\\}');
  assert.equal(extractBoxed('no box'), null);
});

test('extractAnswer: \\boxed, then ####, then "The answer is"', () => {
  assert.equal(extractAnswer('Thus \\boxed{12}. #### 13'), '12');
  assert.equal(extractAnswer('work...\n#### 1,000 \nmore'), '1,000');
  assert.equal(extractAnswer('So the answer is $\\frac{3}{4}$.'), '\\frac{3}{4}');
  assert.equal(extractAnswer('The final answer is 3.5. I hope it is correct.'), '3.5');
  assert.equal(extractAnswer('**Final Answer:** 17'), '17');
  assert.equal(extractAnswer('I think it is 5'), null);
  assert.equal(extractAnswer('#### '), null);
  assert.equal(isCorrectSolution('... \\boxed{0.75}', '3/4'), true);
  assert.equal(isCorrectSolution('... \\boxed{0.7}', '3/4'), false);
});

test("extractOutputAnswer: marked answers, else the last line's value", () => {
  assert.equal(extractOutputAnswer('3.5\n'), '3.5');
  assert.equal(extractOutputAnswer('debug 1\n\n7/2\n\n'), '7/2');
  assert.equal(extractOutputAnswer('x = 5'), '5');
  assert.equal(extractOutputAnswer('Total: 42\n'), '42');
  assert.equal(extractOutputAnswer('The answer is 9'), '9');
  assert.equal(extractOutputAnswer('\\boxed{4}\nbye'), '4');
  assert.equal(extractOutputAnswer(''), null);
  assert.equal(extractOutputAnswer('\n  \n'), null);
});

test('normalizeAnswer remembers percent signs and strips wrappers', () => {
  assert.deepEqual(normalizeAnswer('$50\\%$'), { text: '50', percent: true });
  assert.deepEqual(normalizeAnswer('\\text{5 dollars}'), { text: '5', percent: false });
});

test('exact arithmetic: evaluateText, formatRational, formatDecimal', () => {
  assert.equal(formatRational(evaluateText('(3*17+5)/4')!), '14');
  assert.equal(formatRational(evaluateText('1/3 + 1/6')!), '1/2');
  assert.equal(formatRational(evaluateText('(2/3)^3')!), '8/27');
  assert.equal(formatRational(evaluateText('\\sqrt{\\frac{9}{4}}')!), '3/2');
  assert.equal(formatRational(evaluateText('(-8)^{1/3}')!), '-2');
  assert.equal(formatDecimal(rational(1157625n, 1000n)), '1157.625');
  assert.equal(formatDecimal(rational(-1n, 8n)), '-0.125');
  assert.equal(formatDecimal(rational(1n, 3n)), null);
  assert.equal(evaluateText('x + 1'), null);
  assert.equal(evaluateText('2 3'), null);
});

test('huge and deep inputs are refused or approximated, not thrown or hung', () => {
  const start = cpuMark();
  assert.equal(answersEqual('10^{10^{10}}', '10^{10^{10}}'), true); // identical text
  assert.equal(answersEqual('10^{10^{10}}', '10^{10^{9}}'), false);
  assert.equal(answersEqual('2^{100000}', '2^{100001}'), false);
  assert.equal(parseExpression('('.repeat(5000) + '1' + ')'.repeat(5000)), null);
  assert.equal(answersEqual('('.repeat(500) + '1' + ')'.repeat(500), '1'), false);
  assert.equal(answersEqual('1'.repeat(3000), '1'.repeat(3000) + '0'), false);
  assert.equal(answersEqual('9'.repeat(400), '9'.repeat(400)), true);
  assert.equal(answersEqual('1000!', '1000!'), true);
  assert.ok(cpuMsSince(start) < 5000, 'took too long');
});

test('random garbage never throws', () => {
  const rng = mulberry32(7);
  const alphabet = '0123456789+-*/^()[]{}\\,.=%$|!_ abcxyzepi\\frac\\sqrt\\boxed{}####\n\u2212\u00b0';
  for (let i = 0; i < 3000; i++) {
    let s = '';
    const len = randomInt(rng, 40);
    for (let j = 0; j < len; j++) s += alphabet[randomInt(rng, alphabet.length)];
    assert.doesNotThrow(() => {
      answersEqual(s, '42');
      answersEqual('42', s);
      answersEqual(s, s);
      extractAnswer(s);
      extractOutputAnswer(s);
      normalizeAnswer(s);
      parseExpression(s);
    }, s);
  }
  for (const v of [undefined, null, 42, {}, [], true]) {
    assert.equal(answersEqual(v as unknown, '42'), false);
    assert.equal(extractAnswer(v as unknown as string), null);
    assert.equal(extractOutputAnswer(v as unknown as string), null);
  }
});
