// Proof of learning: the reference's results table in small, on this machine's stack.
//   node --import tsx bench/learning/run.ts [--suite planpath|sokoban|smollm2-math|smollm2-arith] [--tokens N]
//                                           [--val-problems N] [--val-samples N] [--batch N] [--map N] [--seeds N]
//                                           [--rows id,id,...] [--stamp S] [--set key=value,...]
// --suite planpath (the default): Plan-Path (map N x N) with the tiny model; sokoban: Sokoban (room
// N x N, one box) with the tiny model; smollm2-math: math with SmolLM2-135M-Instruct
// (configs/smollm2/). Every training row trains until its updates have consumed N sampled response
// tokens (then `stop`: the iteration in flight finishes), and every row is evaluated on the same
// held-out problems (validation seeds, --val-samples episodes each, sampled with the config's
// val_llm_config). --seeds N (default 3) runs every row N times, each with its own training problems
// (training.seed) and sampling seeds (the run id); the table gives each seed's held-out success,
// their mean and a 95% interval for the mean (Student's t over the seeds: the run-to-run spread,
// which is larger than one evaluation's), and which rows' intervals are apart.
// --set key=value,... adds config overrides (dotted keys, as `tandem train` takes) to every row.
// --stamp S continues an interrupted bench: its runs and evaluations (workflow ids learn-S-<row>)
// are attached to where they are, running or finished, instead of started again.
// Uses the stack the TANDEM_* settings point at (`npx tandem stack up` first). Prints one line
// per iteration to stderr and a Markdown section for bench/RESULTS.md to stdout.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ServiceError, WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle, type WorkflowStartOptions } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import type { EvaluationResult } from '../../domain/events.js';
import { CPU_QUEUE, projectRoot } from '../../infra/settings.js';
import { temporalClient } from '../../services/cli/temporal.js';
import { evaluate } from '../../workflows/evaluate.js';
import { progressQuery, stopSignal } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';

interface Row {
  id: string;
  label: string;
  file: string;
  /** null: no RL, the base model is evaluated as it is. */
  algorithm: 'grpo' | 'at_grpo' | null;
}

/** The rows of a suite: the reference's table in small, on one environment and model. */
function rowsOf(dir: string, prefix: string): Row[] {
  const L0 = `${dir}/${prefix}_L0_single_agent.yaml`;
  const L1 = `${dir}/${prefix}_L1_prompt.yaml`;
  const L2 = `${dir}/${prefix}_L2_lora.yaml`;
  return [
    { id: 'single', label: 'single agent', file: L0, algorithm: null },
    { id: 'single-grpo', label: 'single agent + GRPO', file: L0, algorithm: 'grpo' },
    { id: 'multi', label: 'two agents, no RL', file: L1, algorithm: null },
    { id: 'multi-grpo', label: 'two agents + plain GRPO', file: L1, algorithm: 'grpo' },
    { id: 'at-grpo-l1', label: 'AT-GRPO L1 (one shared model)', file: L1, algorithm: 'at_grpo' },
    { id: 'at-grpo-l2', label: 'AT-GRPO L2 (one LoRA adapter per agent)', file: L2, algorithm: 'at_grpo' },
  ];
}

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

// planpath: Plan-Path with the tiny model; smollm2-math: math (the project's generated problems)
// with SmolLM2-135M-Instruct, configs/smollm2/.
// smollm2-arith: the same configs on one-step arithmetic (a + b, a - b, a x b) written by arithmetic()
// below, problems that a 135M model sometimes solves, so that GRPO groups get different rewards.
const SUITES = ['planpath', 'sokoban', 'smollm2-math', 'smollm2-arith'];
const suite = arg('suite', 'planpath');
if (!SUITES.includes(suite)) throw new Error(`--suite: one of ${SUITES.join(', ')}, not '${suite}'`);
const puzzle = suite === 'planpath' || suite === 'sokoban';
const ROWS = puzzle ? rowsOf(`configs/${suite}`, suite) : rowsOf('configs/smollm2', 'math');

/** One-step arithmetic problems, {question, answer} rows: training and held-out files (different numbers). */
function arithmetic(): string[] {
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
  const files = { train: join(dir, 'arith-train.jsonl'), val: join(dir, 'arith-val.jsonl') };
  const train = Array.from({ length: 4000 }, row);
  const seen = new Set(train);
  const val: string[] = [];
  while (val.length < 500) {
    const r = row();
    if (!seen.has(r)) val.push(r), seen.add(r);
  }
  writeFileSync(files.train, `${train.join('\n')}\n`);
  writeFileSync(files.val, `${val.join('\n')}\n`);
  return [`env.dataset.path=${files.train}`, `env.val_dataset.path=${files.val}`];
}
const suiteOverrides = suite === 'smollm2-arith' ? arithmetic() : [];
const budget = Number(arg('tokens', '60000'));
const valProblems = Number(arg('val-problems', '64'));
const valSamples = Number(arg('val-samples', '2'));
const batch = Number(arg('batch', '8'));
const map = Number(arg('map', suite === 'sokoban' ? '6' : '5'));
const seeds = Number(arg('seeds', '3'));
const only = arg('rows', ROWS.map((r) => r.id).join(',')).split(',');
const stamp = arg('stamp', new Date().toISOString().slice(0, 16).replace(/[-:T]/g, ''));
const extra = arg('set', '').split(',').filter(Boolean);

/** Starts the workflow, or attaches to the one of that id (running, or finished: --stamp). */
async function startOrAttach<T extends Workflow>(client: Client, wf: T, options: WorkflowStartOptions<T>): Promise<WorkflowHandle<T>> {
  try {
    return await client.workflow.start(wf, { ...options, workflowIdReusePolicy: 'REJECT_DUPLICATE' });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    console.error(`attached to ${options.workflowId}`);
    return client.workflow.getHandle(options.workflowId);
  }
}

/** The workflow's result; a call that fails on the way (the server busy, the connection lost) is made again. */
async function resultOf<T extends Workflow>(handle: WorkflowHandle<T>): Promise<WorkflowResultType<T>> {
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      console.error(`${handle.workflowId}: ${err.message}; asking again`);
      await new Promise((r) => setTimeout(r, 5000));
    }
  }
}

/** Seed s trains on problems from training.seed = s * 1,000,000 on (held-out problems are the same for all). */
function config(row: Row, seed = 0): RunConfig {
  const loaded = loadRunConfig(row.file, [
    ...(puzzle ? [`env.map_size=${map}`] : suiteOverrides),
    `training.seed=${seed * 1_000_000}`,
    `training.train_batch_size=${batch}`,
    'training.total_training_steps=1000', // the token budget ends the run, not the step count
    'training.val_freq=0',
    `training.val_problems=${valProblems}`,
    `training.validate_sample_num=${valSamples}`,
    `algorithm=${row.algorithm ?? 'at_grpo'}`,
    ...extra,
  ]);
  if (!loaded.ok) throw new Error(`${row.file}: ${JSON.stringify(loaded.issues)}`);
  return loaded.config;
}

/**
 * Trains until the updates have consumed about `budget` tokens; returns iterations and tokens.
 * A stop lets the iteration in flight finish, so it is sent as soon as that iteration is
 * expected (at the mean tokens per iteration so far) to reach the budget.
 */
async function train(client: Client, row: Row, cfg: RunConfig, runId: string): Promise<{ iterations: number; tokens: number }> {
  const handle = await startOrAttach(client, trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg }] });
  let tokens = 0;
  let seen = -1;
  let stopping = false;
  const done = resultOf(handle);
  let finished = false;
  done.then(() => (finished = true), () => (finished = true));
  while (!finished) {
    await new Promise((r) => setTimeout(r, 1000));
    const p = await handle.query(progressQuery).catch(() => undefined);
    for (const s of p?.recent ?? []) {
      if (s.iteration <= seen) continue;
      seen = s.iteration;
      tokens += Object.values(s.updates).reduce((n, u) => n + (u.tokens ?? 0), 0);
      console.error(`${row.id} iteration ${s.iteration + 1}: success ${s.successRate.toFixed(3)}, ${tokens} tokens of ${budget}`);
    }
    if (!stopping && !finished && seen >= 0 && tokens + tokens / (seen + 1) >= budget) {
      stopping = true;
      await handle.signal(stopSignal);
    }
  }
  const final = await done;
  return { iterations: final.iteration, tokens };
}

interface Result { row: Row; seed: number; iterations: number; tokens: number; evaluation: EvaluationResult; minutes: number }

/** Student's t quantile for a two-sided 95% interval with `df` degrees of freedom. */
function t975(df: number): number {
  const table = [NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
  return df < table.length ? table[df] : 1.96 + 2.4 / df; // close enough beyond 10
}

/** The mean of a row's held-out success over its seeds, and the half-width of its 95% interval. */
function interval(xs: number[]): { mean: number; half: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length < 2) return { mean, half: NaN };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
  return { mean, half: (t975(xs.length - 1) * sd) / Math.sqrt(xs.length) };
}

async function main(): Promise<void> {
  const client = await temporalClient();
  const results: Result[] = [];
  // Seed by seed, so that an interrupted bench still has every row at its first seeds.
  for (let seed = 0; seed < seeds; seed++) {
    for (const row of ROWS.filter((r) => only.includes(r.id))) {
      const started = Date.now();
      const cfg = config(row, seed);
      const runId = `learn-${stamp}-${row.id}-s${seed}`;
      const trained = row.algorithm === null ? { iterations: 0, tokens: 0 } : await train(client, row, cfg, runId);
      const evaluation = await resultOf(await startOrAttach(client, evaluate, {
        taskQueue: CPU_QUEUE,
        workflowId: `${runId}/final-eval`,
        args: [{ config: cfg, runId, iteration: trained.iterations }],
      }));
      const minutes = (Date.now() - started) / 60_000;
      console.error(`${row.id} seed ${seed}: held-out success ${evaluation.successRate.toFixed(3)} after ${trained.iterations} iterations (${minutes.toFixed(1)} min)`);
      results.push({ row, seed, ...trained, evaluation, minutes });
    }
  }
  const rows = ROWS.filter((r) => only.includes(r.id)).map((row) => {
    const mine = results.filter((r) => r.row === row);
    return { row, runs: mine, ...interval(mine.map((r) => 100 * r.evaluation.successRate)) };
  });
  // Orderings the intervals separate: A's interval entirely above B's.
  const apart = rows.flatMap((a) => rows.filter((b) => a.mean - a.half > b.mean + b.half).map((b) => `${a.row.label} > ${b.row.label}`));
  const n = valProblems * valSamples;

  const cpu = cpus();
  console.log(`## learning (${new Date().toISOString().slice(0, 10)})

Machine: ${cpu.length} x ${cpu[0]?.model ?? 'CPU'}, no GPU. Stack: the local Temporal, Kafka, Postgres and workers.
${puzzle ? `${suite === 'planpath' ? 'Plan-Path' : 'Sokoban, one box,'} ${map}x${map}, max_turns and rewards as in the configs; model: the tiny model infra/setup.sh builds
(${config(ROWS[4]).base_models.policy_0.path}).${extra.length ? ` Overrides: ${extra.join(', ')}.` : ''}` : `Math (the project's generated arithmetic and word problems), max_turns, lengths and rewards as in
configs/smollm2/${suite === 'smollm2-arith' ? ', on one-step arithmetic problems (a + b, a - b with two-digit numbers, a x b with a of 2-12; no held-out question among the training ones)' : ''}; model: SmolLM2-135M-Instruct (.tools/models/smollm2-135m-instruct).`} Training rows: ${batch} problems per iteration, K = ${config(ROWS[4]).training.train_sample_num},
each config's own update settings, run until their updates consumed ${budget} sampled response tokens (the
iteration in flight then finishes). Evaluation: the same ${valProblems} held-out problems (validation seeds) for
every row, each played ${valSamples} times, sampled with the configs' val_llm_config (temperature ${config(ROWS[4]).agent_policy_configs.agent_configs.agent_0.val_llm_config.temperature}); success = the
episode's goal reached, over all ${n} episodes of one evaluation (one evaluation's standard error at
50%: ${(100 * Math.sqrt(0.25 / n)).toFixed(1)} points). ${seeds} seed(s) per row (training.seed = seed x 1,000,000, and the
run id); mean over the seeds, with a 95% interval for it (Student's t, ${seeds - 1} degrees of freedom).

| method | level | held-out success per seed | mean | 95% interval | iterations per seed | sampled tokens per seed | wall min |
|---|---|---|---|---|---|---|---|
${rows
  .map(
    (r) =>
      `| ${r.row.label} | ${r.row.file.match(/_(L\d)_/)![1]} | ${r.runs.map((x) => `${(100 * x.evaluation.successRate).toFixed(1)}%`).join(', ')} | ${r.mean.toFixed(1)}% | ${Number.isNaN(r.half) ? '-' : `${(r.mean - r.half).toFixed(1)} to ${(r.mean + r.half).toFixed(1)}`} | ${r.runs.map((x) => x.iterations).join(', ')} | ${r.runs.map((x) => x.tokens).join(', ')} | ${r.runs.reduce((m, x) => m + x.minutes, 0).toFixed(1)} |`,
  )
  .join('\n')}

Orderings the intervals separate: ${apart.length ? apart.join('; ') : 'none'}.
`);
  await client.connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
