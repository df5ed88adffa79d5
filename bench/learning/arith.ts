// One-step arithmetic problems for the learning bench's smollm2-arith suite: a + b, a - b with
// two-digit numbers, a x b with a of 2-12, as {question, answer} rows, problems that a 135M model
// sometimes solves, so that its groups get different rewards. Writes a training, a validation and
// a test file (no question in two of them) and returns the overrides that use them: `run` for the
// training runs (their evaluations play the validation file), `test` for the final evaluations.
// (A data-backed environment maps every held-out seed to a row of its val_dataset, so the test
// problems are given as a file of their own.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../infra/settings.js';

export function arithmetic(): { run: string[]; test: string[] } {
  const dir = join(projectRoot, '.data', 'bench');
  mkdirSync(dir, { recursive: true });
  let x = 12345;
  const next = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), x % n);
  const row = () => {
    const op = next(3);
    const a = op === 2 ? 2 + next(11) : 10 + next(90);
    const b = 10 + next(90);
    const [q, v] = op === 0 ? [`${a} + ${b}`, a + b] : op === 1 ? [`${Math.max(a, b)} - ${Math.min(a, b)}`, Math.abs(a - b)] : [`${a} × ${b}`, a * b];
    return JSON.stringify({ question: `What is ${q}?`, answer: String(v) });
  };
  const files = { train: join(dir, 'arith-train.jsonl'), val: join(dir, 'arith-val.jsonl'), test: join(dir, 'arith-test.jsonl') };
  const train = Array.from({ length: 4000 }, row);
  const seen = new Set(train);
  const unseen = (count: number) => {
    const rows: string[] = [];
    while (rows.length < count) {
      const r = row();
      if (!seen.has(r)) rows.push(r), seen.add(r);
    }
    return rows;
  };
  const val = unseen(500);
  const test = unseen(500);
  writeFileSync(files.train, `${train.join('\n')}\n`);
  writeFileSync(files.val, `${val.join('\n')}\n`);
  writeFileSync(files.test, `${test.join('\n')}\n`);
  return { run: [`env.dataset.path=${files.train}`, `env.val_dataset.path=${files.val}`], test: [`env.val_dataset.path=${files.test}`] };
}
