// The learning bench's arithmetic problems (bench/learning/arith.ts): every form in turn, operands
// from an integer PRNG (odd as often as even), held-out files fixed and disjoint from every seed's
// own training problems, answers right.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { draw, problemSets } from '../../bench/learning/arith.js';

const form = (q: string) => q.replace(/\d+/g, 'n');
/** Evaluates "What is a op b [op c]?" left to right with × first, as Python would. */
function value(q: string): number {
  const tokens = q.replace(/^What is |\?$/g, '').split(' ');
  const terms: number[] = [];
  let sign = 1;
  for (let i = 0; i < tokens.length; i += 2) {
    let v = Number(tokens[i]);
    while (tokens[i + 1] === '×') (v *= Number(tokens[i + 2])), (i += 2);
    terms.push(sign * v);
    sign = tokens[i + 1] === '-' ? -1 : 1;
  }
  return terms.reduce((a, b) => a + b, 0);
}

for (const task of ['arith1', 'arith2', 'arith2-3d'] as const) {
  test(`${task} problems: the forms in turn, right answers, no step below 0, odd operands as often as even`, () => {
    const rows = draw(task, 1, 600);
    const forms = task === 'arith1' ? 3 : 6;
    assert.equal(new Set(rows.map((r) => form(r.question))).size, forms);
    rows.forEach((r, i) => assert.equal(form(r.question), form(rows[i % forms].question), `row ${i} out of turn`));
    for (const r of rows) {
      assert.equal(r.answer, String(value(r.question)), r.question);
      assert.ok(Number(r.answer) >= 0, r.question);
      const m = /^What is (\d+) - (\d+) /.exec(r.question);
      if (m) assert.ok(Number(m[1]) >= Number(m[2]), `${r.question}: a step below 0`);
    }
    assert.equal(new Set(rows.map((r) => r.question)).size, rows.length, 'a question twice');
    const digits = task === 'arith2-3d' ? 3 : 2; // of every operand but a product's factors
    for (const r of rows) {
      const [a, b, c] = r.question.match(/\d+/g)!;
      const sizes = r.question.includes('×') ? [a.length === 1 || task === 'arith1', b.length === 2, c === undefined || c.length === digits] : [a, b, c].filter(Boolean).map((x) => x!.length === digits);
      assert.ok(sizes.every(Boolean), `${r.question}: operand sizes`);
    }
    const operands = rows.flatMap((r) => r.question.match(/\d+/g)!.map(Number));
    const odd = operands.filter((n) => n % 2 === 1).length / operands.length;
    assert.ok(odd > 0.45 && odd < 0.55, `odd share ${odd}`);
  });

  test(`${task} problem sets: held-out files the same for every seed, disjoint; each seed its own training problems`, () => {
    const [a, b] = [problemSets(task, 0), problemSets(task, 1)];
    assert.deepEqual(a.val, b.val);
    assert.deepEqual(a.test, b.test);
    const heldOut = new Set([...a.val, ...a.test].map((r) => r.question));
    assert.equal(heldOut.size, a.val.length + a.test.length, 'a question in both held-out files');
    for (const { train } of [a, b]) assert.ok(train.every((r) => !heldOut.has(r.question)), 'a held-out question among the training ones');
    const first = (set: typeof a) => set.train.slice(0, 120).map((r) => r.question);
    const shared = first(a).filter((q) => first(b).includes(q)).length;
    assert.ok(shared < 12, `seeds 0 and 1 share ${shared} of their first 120 training problems`);
  });
}
