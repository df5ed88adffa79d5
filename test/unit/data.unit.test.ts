// Problem files on small fixture files, read as the worker reads them (infra/data's reader with
// the environment's own row mapping, envs/<env>/dataset.ts): math and code rows in JSON Lines
// and Parquet, field-name mappings, and bad rows reported by file and line (or Parquet row),
// skipped and counted or fatal.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { codeProblemOf, looksLikePython2, type CodeRowOptions } from '../../envs/code/dataset.js';
import type { CodeProblem } from '../../envs/code/types.js';
import { mathProblemOf } from '../../envs/math/dataset.js';
import { describeLocation } from '../../envs/shared/rows.js';
import { BadRowError, loadRows, type LoadOptions } from '../../infra/data/load.js';
import { readRows } from '../../infra/data/rows.js';

const loadMathProblems = (path: string, options: LoadOptions = {}) => loadRows(path, mathProblemOf, options);

/** Code problems, and how many tests the kept problems dropped (maxTests, maxTestChars). */
async function loadCodeProblems(path: string, options: CodeRowOptions & LoadOptions = {}) {
  const dropped = new WeakMap<CodeProblem, number>();
  const loaded = await loadRows(
    path,
    (row, where) => {
      const r = codeProblemOf(row, where, options);
      if (!r.ok) return r;
      dropped.set(r.item.problem, r.item.dropped);
      return { ok: true, item: r.item.problem };
    },
    options,
  );
  return { ...loaded, testsDropped: loaded.items.reduce((n, p) => n + (dropped.get(p) ?? 0), 0) };
}

const FIX = 'test/fixtures/data';

test('math JSON Lines: every supported field-name style maps to {id, question, answer}', async () => {
  const { items, skipped, rows } = await loadMathProblems(`${FIX}/math-good.jsonl`, { onBadRow: 'fail' });
  assert.equal(rows, 6, 'the blank line is not a row');
  assert.deepEqual(skipped, []);
  assert.deepEqual(items, [
    { id: 'm1', question: 'What is 2 + 3?', answer: '5' },
    // MATH style: the answer is the last \boxed{} of the solution; no id field: file:line.
    { id: 'math-good.jsonl:2', question: 'A box holds 4 rows of 6 eggs. How many eggs?', answer: '24' },
    // GSM8K style: what follows "####".
    { id: 'math-good.jsonl:4', question: 'Tom has 3 apples and buys 4 more. How many apples does he have?', answer: '7' },
    // DAPO style: the last user message of a chat prompt, reward_model.ground_truth.
    { id: '17', question: 'Compute 10 / 4.', answer: '5/2' },
    // OlympiadBench style: final_answer is a list.
    { id: 'ob-3', question: 'Solve x^2 = 4.', answer: '-2, 2' },
    { id: '42', question: 'What is 6 * 7?', answer: '42' },
  ]);
});

test('math: malformed rows are skipped with file, line and reason, and counted', async () => {
  const path = `${FIX}/math-bad.jsonl`;
  const { items, skipped, rows } = await loadMathProblems(path);
  assert.deepEqual(
    items.map((p) => p.id),
    ['ok-1', 'ok-2'],
  );
  assert.equal(rows, 9);
  assert.deepEqual(
    skipped.map((b) => [b.file, b.line]),
    [2, 3, 4, 5, 6, 7, 8].map((line) => [path, line]),
  );
  const reasons = skipped.map((b) => b.reason);
  assert.match(reasons[0], /no answer/);
  assert.match(reasons[1], /invalid JSON/);
  assert.match(reasons[2], /not a JSON object/);
  assert.match(reasons[3], /no \\boxed/);
  assert.match(reasons[4], /duplicate id "ok-1" \(first at .*math-bad\.jsonl:1\)/);
  assert.match(reasons[5], /no question/);
  assert.match(reasons[6], /^answer: /);
});

test("math: onBadRow 'fail' stops at the first bad row, naming file and line", async () => {
  const path = `${FIX}/math-bad.jsonl`;
  await assert.rejects(loadMathProblems(path, { onBadRow: 'fail' }), (e: unknown) => {
    assert.ok(e instanceof BadRowError);
    assert.equal(e.bad.line, 2);
    assert.equal(e.message, `${path}:2: ${e.bad.reason}`);
    return true;
  });
});

test('math Parquet: rows are read, and a bad row is reported by its row number', async () => {
  const path = `${FIX}/math.parquet`;
  const { items, skipped, rows } = await loadMathProblems(path);
  assert.equal(rows, 4);
  assert.deepEqual(items, [
    { id: 'p1', question: 'What is 7 + 8?', answer: '15' },
    { id: 'p2', question: 'What is 9 * 9?', answer: '81' },
    { id: 'p4', question: 'Simplify 6/8.', answer: '3/4' },
  ]);
  assert.equal(skipped.length, 1);
  assert.equal(skipped[0].row, 3);
  assert.equal(skipped[0].line, undefined);
  assert.match(skipped[0].reason, /no answer/);
  assert.equal(describeLocation(skipped[0]), `${path} row 3`);
  await assert.rejects(loadMathProblems(path, { onBadRow: 'fail' }), /math\.parquet row 3: no answer/);
});

test('limit keeps the first problems', async () => {
  const { items } = await loadMathProblems(`${FIX}/math-good.jsonl`, { limit: 2 });
  assert.deepEqual(
    items.map((p) => p.id),
    ['m1', 'math-good.jsonl:2'],
  );
});

test('code, APPS rows: JSON-text fields, lists of lines, the first Python 3 solution; bad rows with reasons', async () => {
  const path = `${FIX}/code-apps.jsonl`;
  const { items, skipped, testsDropped } = await loadCodeProblems(path);
  assert.equal(testsDropped, 0);
  assert.deepEqual(items, [
    {
      id: '7',
      statement: 'Read two integers on one line and print their sum.',
      tests: [
        { input: '1 2\n', output: '3\n' },
        { input: '10 -3\n', output: '7\n' },
      ],
      golden: 'a, b = map(int, input().split())\nprint(a + b)\n',
    },
    {
      id: '8',
      statement: 'Print the input line reversed.',
      tests: [
        { input: 'abc', output: 'cba' },
        { input: 'xy', output: 'yx' },
      ],
      golden: 'print(input()[::-1])\n',
    },
  ]);
  assert.deepEqual(
    skipped.map((b) => b.line),
    [3, 4, 5, 6, 7],
  );
  const reasons = skipped.map((b) => b.reason);
  assert.match(reasons[0], /^apps: call-based problem \(fn_name "double"\)/);
  assert.match(reasons[1], /^apps: no Python 3 solution/);
  assert.match(reasons[2], /^apps: input_output: 2 inputs but 1 outputs/);
  assert.match(reasons[3], /^apps: input_output: not valid JSON/);
  assert.match(reasons[4], /^apps: no Python 3 solution/, 'a Python 2 solution is not a golden solution');
});

test('code, CodeContests rows: public then private tests, the Python 3 solution, maxTestChars', async () => {
  const path = `${FIX}/code-codecontests.jsonl`;
  const { items, skipped, testsDropped } = await loadCodeProblems(path, { maxTestChars: 20 });
  assert.equal(items.length, 2);
  assert.deepEqual(items[0], {
    id: 'cc-max',
    statement: 'Print the largest of n integers. The first line holds n, the second the integers.',
    tests: [
      { input: '3\n1 5 2\n', output: '5\n' },
      { input: '1\n-4\n', output: '-4\n' },
      { input: '2\n7 7\n', output: '7\n' },
    ],
    golden: 'input()\nprint(max(map(int, input().split())))\n',
  });
  assert.deepEqual(items[1].tests, [{ input: 'short\n', output: 'short\n' }]);
  assert.equal(testsDropped, 1, 'the long test of cc-long');
  assert.deepEqual(
    skipped.map((b) => [b.line, b.reason.split(':')[0]]),
    [
      [2, 'codecontests'],
      [3, 'codecontests'],
      [5, 'codecontests'],
    ],
  );
  assert.match(skipped[0].reason, /no Python 3 solution/);
  assert.match(skipped[1].reason, /no tests/);
  assert.match(skipped[2].reason, /public_tests\.input/);

  const withGenerated = await loadCodeProblems(path, { includeGeneratedTests: true, maxTests: 3 });
  assert.equal(withGenerated.items[0].tests.length, 3, 'maxTests');
  assert.equal(withGenerated.testsDropped, 1, 'the generated test beyond maxTests');
});

test('code, Tandem rows and unknown rows', async () => {
  const { items, skipped } = await loadCodeProblems(`${FIX}/code-tandem.jsonl`);
  assert.deepEqual(items, [
    {
      id: 't-square',
      statement: 'Print the square of the integer n given on one line.',
      tests: [
        { input: '3\n', output: '9\n' },
        { input: '-2\n', output: '4\n' },
      ],
      golden: 'n = int(input())\nprint(n * n)\n',
    },
  ]);
  assert.equal(skipped.length, 1);
  assert.match(skipped[0].reason, /unknown row format/);
  await assert.rejects(loadCodeProblems(`${FIX}/code-tandem.jsonl`, { onBadRow: 'fail' }), /code-tandem\.jsonl:2: unknown row format/);
});

test('code Parquet: CodeContests nested columns and APPS rows with int64 ids', async () => {
  const cc = await loadCodeProblems(`${FIX}/codecontests.parquet`);
  assert.deepEqual(
    cc.items.map((p) => [p.id, p.tests.length, p.golden]),
    [
      ['cc-min', 3, 'print(min(map(int, input().split())))\n'],
      ['cc-sum', 2, 'print(sum(map(int, input().split())))\n'],
    ],
  );
  assert.deepEqual(
    cc.skipped.map((b) => [b.row, b.reason]),
    [[2, 'codecontests: no Python 3 solution']],
  );
  const apps = await loadCodeProblems(`${FIX}/apps.parquet`, { onBadRow: 'fail' });
  assert.deepEqual(apps.items, [
    {
      id: '100',
      statement: 'Print the number of characters of the line.',
      tests: [
        { input: 'abc\n', output: '3\n' },
        { input: '\n', output: '0\n' },
      ],
      golden: 'print(len(input()))\n',
    },
    { id: '101', statement: 'Print the line in upper case.', tests: [{ input: 'Hi\n', output: 'HI\n' }], golden: 'print(input().upper())\n' },
  ]);
});

test('file-level problems throw: unknown extension, missing file, not Parquet', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-data-'));
  try {
    await writeFile(join(dir, 'x.csv'), 'a,b\n');
    await assert.rejects(loadMathProblems(join(dir, 'x.csv')), /unknown data file type/);
    await assert.rejects(loadMathProblems(join(dir, 'missing.jsonl')), /ENOENT/);
    await writeFile(join(dir, 'fake.parquet'), 'not parquet at all');
    await assert.rejects(loadMathProblems(join(dir, 'fake.parquet')), /not a readable Parquet file/);
    await assert.rejects(loadMathProblems(`${FIX}/math-good.jsonl`, { onBadRow: 'ignore' as never }), /onBadRow/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('readRows numbers JSON Lines by line (blank lines skipped) and Parquet by row', async () => {
  const lines = [];
  for await (const r of readRows(`${FIX}/math-good.jsonl`)) lines.push(r.where.line);
  assert.deepEqual(lines, [1, 2, 4, 5, 6, 7]);
  const rows = [];
  for await (const r of readRows(`${FIX}/math.parquet`)) rows.push(r.where.row);
  assert.deepEqual(rows, [1, 2, 3, 4]);
});

test('looksLikePython2', () => {
  assert.equal(looksLikePython2('print 5'), true);
  assert.equal(looksLikePython2('x = raw_input()'), true);
  assert.equal(looksLikePython2('for i in xrange(3): pass'), true);
  assert.equal(looksLikePython2('try:\n  pass\nexcept ValueError, e:\n  pass'), true);
  assert.equal(looksLikePython2('print(5)\nprint (6)'), false);
  assert.equal(looksLikePython2('printer = 1\nprint_it = 2'), false);
});
