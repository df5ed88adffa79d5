// The answer checker against HF math_verify: test/fixtures/answers/math_verify_pairs.json holds
// math_verify's verdict on (gold, response) pairs (written by gen_math_verify_pairs.py there).
// isCorrectSolution(response, gold) must give that verdict on every row, except the rows marked
// as departures, where it must give the departure's verdict (each with its reason).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { boxedContents, extractFinalAnswer, isCorrectSolution } from '../../envs/answers/index.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import { cpuMark, cpuMsSince } from '../support/cpuTime.js';

interface Row {
  id: number;
  category: string;
  gold: string;
  given: string;
  math_verify: boolean;
  departure?: { verdict: boolean; reason: string };
}

const table = JSON.parse(readFileSync(new URL('../fixtures/answers/math_verify_pairs.json', import.meta.url), 'utf8')) as { rows: Row[] };
const rows = table.rows;
const departures = rows.filter((r) => r.departure);

test(`the checker agrees with math_verify on the table (${rows.length} rows, ${departures.length} departures)`, () => {
  assert.ok(rows.length >= 120, `${rows.length} rows`);
  const wrong = rows
    .filter((r) => isCorrectSolution(r.given, r.gold) !== (r.departure ? r.departure.verdict : r.math_verify))
    .map((r) => `#${r.id} [${r.category}] gold ${JSON.stringify(r.gold)}, response ${JSON.stringify(r.given)}: math_verify ${r.math_verify}${r.departure ? `, departure ${r.departure.verdict}` : ''}`);
  const agree = rows.filter((r) => isCorrectSolution(r.given, r.gold) === r.math_verify).length;
  console.log(`math_verify table: ${rows.length} rows, checker agrees with math_verify on ${agree}, ${departures.length} deliberate departures`);
  assert.deepEqual(wrong, []);
});

test('the table covers the categories of the issue', () => {
  const categories = new Set(rows.map((r) => r.category));
  for (const c of ['fraction', 'decimal', 'root', 'pi-e', 'interval', 'set', 'tuple', 'percent', 'unit', 'scientific', 'thousands', 'negative', 'variable', 'equation', 'text', 'infinity', 'matrix', 'response']) {
    assert.ok(categories.has(c), c);
  }
});

test('departures are few, each with a reason, and every decimal approximation of an irrational is rejected', () => {
  for (const r of departures) {
    assert.notEqual(r.departure!.verdict, r.math_verify, `#${r.id} differs from math_verify`);
    assert.ok(r.departure!.reason.length > 20, `#${r.id} has a reason`);
  }
  const approximations = departures.filter((r) => r.departure!.reason.startsWith('a decimal approximation'));
  assert.ok(approximations.length >= 5);
  for (const r of approximations) assert.equal(r.departure!.verdict, false, `#${r.id}`);
  const others = departures.length - approximations.length;
  assert.ok(others <= 10, `${others} departures other than approximations`);
});

test('extractFinalAnswer: math_verify priorities (final answer, boxes, "answer", the last LaTeX or number)', () => {
  assert.equal(extractFinalAnswer('Thus \\boxed{13}. The final answer is $12$. I hope it is correct.'), '12');
  assert.equal(extractFinalAnswer('So \\boxed{12}. Done in 2 steps.'), '12');
  assert.equal(extractFinalAnswer('The answer is $12$ because 7+5 is 13.'), '12');
  assert.equal(extractFinalAnswer('She sold 72 clips in total, after starting with 48.'), '48');
  assert.equal(extractFinalAnswer('The area is about 3.14, exactly $\\pi$.'), '\\pi');
  assert.equal(extractFinalAnswer('I computed 7 + 5 = 12 and double-checked with 6 * 2'), '6 * 2');
  assert.equal(extractFinalAnswer('The total is $1,000.'), '1000');
  assert.equal(extractFinalAnswer('The discount is 50%.'), '50%');
  assert.equal(extractFinalAnswer('The roots are $2$ and $3$.'), '2, 3');
  assert.equal(extractFinalAnswer('\\boxed{3} and \\boxed{4}'), '3,4');
  assert.equal(extractFinalAnswer('\\boxed{3} then later on \\boxed{4}'), '4');
  assert.equal(extractFinalAnswer('It is 1.2e3 in total.'), '1.2');
  assert.equal(extractFinalAnswer('I am not sure.'), null);
  assert.equal(extractFinalAnswer('The length is \\sqrt{2}.'), null);
  assert.equal(boxedContents('no box', 'last'), 'no box');
});

test('extractFinalAnswer is fast on long and hostile text and never throws', () => {
  const start = cpuMark();
  for (const unit of ['1 2 ', '1+2*3/4-', '$a$ ', '$$x ', '\\boxed{', 'answer: ', ' [1 ', '\\( ', '1 + ']) extractFinalAnswer(unit.repeat(Math.ceil(20000 / unit.length)));
  const rng = mulberry32(11);
  const alphabet = '0123456789+-*/^()[]{}\\,.=%$|!_ abcxyzepi\\frac\\sqrt\\boxed{}\n answer: final is I hope';
  for (let i = 0; i < 300; i++) {
    let s = '';
    const len = randomInt(rng, 400);
    for (let j = 0; j < len; j++) s += alphabet[randomInt(rng, alphabet.length)];
    assert.doesNotThrow(() => isCorrectSolution(s, '42'), s);
  }
  for (const v of [undefined, null, 42, {}]) assert.equal(extractFinalAnswer(v as unknown as string), null);
  const took = cpuMsSince(start);
  assert.ok(took < 5000, `took ${took.toFixed(0)} ms of CPU`);
});
