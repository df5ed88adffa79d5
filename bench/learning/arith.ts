// Arithmetic problems for the learning bench's SmolLM2 suites, as {question, answer} rows:
//   one-step  a + b, a - b (two-digit numbers, the larger first), a × b (a of 2-12, b two-digit)
//   two-step  a op1 b op2 c, op1 of +, -, × and op2 of + and -: a + b + c, a + b - c,
//             a - b + c, a - b - c, a × b + c, a × b - c (a, b, c two-digit, except a × b's a of
//             2-9; no intermediate or final result below 0)
//   two-step, three-digit  the same six forms with a, b, c of three digits, except a × b's a of
//             2-9 and b of two digits (c three-digit): harder sums, the same products
// Row i of each file has form i mod forms (the forms in turn: the 64 test problems and each
// iteration's problems mix them evenly), its operands drawn with an integer PRNG (mulberry32), so
// their low bits are as random as their high ones. The validation and the test file are fixed (the same for every seed and row)
// and disjoint; each training seed draws its own training file from its own stream, with no
// question of the validation or test file (a seed's training problems are its file's rows in
// order from row (s x 1,000,000) mod 1200, the runs' training.seed).
// (A data-backed environment maps every held-out seed to a row of its val_dataset, so the test
// problems are given as a file of their own.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import { projectRoot } from '../../infra/settings.js';

/** The task: one-step, two-step (two-digit), two-step with three-digit operands; also its files' name prefix. */
export type Task = 'arith1' | 'arith2' | 'arith2-3d';

export interface Problem {
  question: string;
  answer: string;
}

const TRAIN_ROWS = 1200; // a seed's 30 iterations of 4 problems use 120
const HELD_OUT_ROWS = 480;
/** The PRNG streams: the validation file's, the test file's, and one per training seed. */
const VAL_STREAM = 0x7e57;
const TEST_STREAM = 0x7e58;
const trainStream = (seed: number) => 0x5eed0000 + seed;

/** A form draws its operands with int(lo, hi) (inclusive); null: a step below 0, draw again. */
type Form = (int: (lo: number, hi: number) => number) => [question: string, answer: number] | null;
const two = (int: (lo: number, hi: number) => number) => int(10, 99);
const three = (int: (lo: number, hi: number) => number) => int(100, 999);
const ok = (question: string, ...steps: number[]): [string, number] | null => (steps.every((v) => v >= 0) ? [question, steps[steps.length - 1]] : null);

/** The six two-step forms, their operands drawn by `n` (a × b's a of 2-9, b two-digit). */
const twoStep = (n: typeof two): Form[] => [
  (int) => ((a, b, c) => ok(`${a} + ${b} + ${c}`, a + b + c))(n(int), n(int), n(int)),
  (int) => ((a, b, c) => ok(`${a} + ${b} - ${c}`, a + b - c))(n(int), n(int), n(int)),
  (int) => ((a, b, c) => ok(`${a} - ${b} + ${c}`, a - b, a - b + c))(n(int), n(int), n(int)),
  (int) => ((a, b, c) => ok(`${a} - ${b} - ${c}`, a - b, a - b - c))(n(int), n(int), n(int)),
  (int) => ((a, b, c) => ok(`${a} × ${b} + ${c}`, a * b + c))(int(2, 9), two(int), n(int)),
  (int) => ((a, b, c) => ok(`${a} × ${b} - ${c}`, a * b - c))(int(2, 9), two(int), n(int)),
];

const FORMS: Record<Task, Form[]> = {
  arith1: [
    (int) => ((a, b) => ok(`${a} + ${b}`, a + b))(two(int), two(int)),
    (int) => ((a, b) => ok(`${Math.max(a, b)} - ${Math.min(a, b)}`, Math.abs(a - b)))(two(int), two(int)),
    (int) => ((a, b) => ok(`${a} × ${b}`, a * b))(int(2, 12), two(int)),
  ],
  arith2: twoStep(two),
  'arith2-3d': twoStep(three),
};

/**
 * `count` problems of `task` from PRNG stream `stream`, none in `exclude` nor twice. Row i has
 * form i mod forms (the forms in turn), so any run of rows holds every form about equally often.
 */
export function draw(task: Task, stream: number, count: number, exclude: ReadonlySet<string> = new Set()): Problem[] {
  const forms = FORMS[task];
  const rng = mulberry32(stream);
  const int = (lo: number, hi: number) => lo + randomInt(rng, hi - lo + 1);
  const seen = new Set(exclude);
  const rows: Problem[] = [];
  for (let tries = 0; rows.length < count; tries++) {
    if (tries > 100 * count) throw new Error(`draw: fewer than ${count} distinct ${task} problems outside the ${exclude.size} excluded`);
    const made = forms[rows.length % forms.length](int);
    if (made === null) continue;
    const question = `What is ${made[0]}?`;
    if (seen.has(question)) continue;
    seen.add(question);
    rows.push({ question, answer: String(made[1]) });
  }
  return rows;
}

/** The validation and test problems (fixed) and seed `seed`'s training problems: no question in two of them. */
export function problemSets(task: Task, seed: number): { train: Problem[]; val: Problem[]; test: Problem[] } {
  const val = draw(task, VAL_STREAM, HELD_OUT_ROWS);
  const test = draw(task, TEST_STREAM, HELD_OUT_ROWS, new Set(val.map((r) => r.question)));
  const train = draw(task, trainStream(seed), TRAIN_ROWS, new Set([...val, ...test].map((r) => r.question)));
  return { train, val, test };
}

/**
 * Writes the suite's files under .data/bench and returns the overrides that use them for a seed:
 * `run` for its training runs (their evaluations play the validation file), `test` for the final
 * evaluations (the test file), `validation` for final evaluations that choose the task (the validation file).
 */
export function arithmetic(task: Task, seed: number): { run: string[]; test: string[]; validation: string[] } {
  const dir = join(projectRoot, '.data', 'bench');
  mkdirSync(dir, { recursive: true });
  const name = (part: string) => join(dir, `${task}-${part}.jsonl`);
  const files = { train: name(`train-s${seed}`), val: name('val'), test: name('test') };
  const sets = problemSets(task, seed);
  for (const part of ['train', 'val', 'test'] as const) writeFileSync(files[part], `${sets[part].map((r) => JSON.stringify(r)).join('\n')}\n`);
  return {
    run: [`env.dataset.path=${files.train}`, `env.val_dataset.path=${files.val}`],
    test: [`env.val_dataset.path=${files.test}`],
    validation: [],
  };
}
