// Proof of learning: the reference's results table in small, on this machine's stack.
//   node --import tsx bench/learning/run.ts --stamp S [--suite planpath|planpath-helper|sokoban|smollm2-math|smollm2-arith|smollm2-arith2|smollm2-arith2-3d]
//        [--preset reference] [--rows id,...] [--seeds N] [--first-seed N] [--iterations N] [--lr full=X,lora=Y]
//        [--tune full=a,b,...] [--tune-seeds N] [--test-problems N] [--test-samples N]
//        [--curve-every N] [--curve-problems N] [--batch N] [--map N] [--set key=value,...]
//        [--eval-on test|validation] [--dtype auto|float32|bfloat16] [--parallel N] [--queue Q --engine-metrics PORT] [--report]
// Rows (bench/learning/rows.ts): single agent and two agents without RL; single agent + GRPO with
// trajectory groups and with tree groups; two agents + plain GRPO; AT-GRPO L1 and L2. Every
// training row trains for --iterations (default 60; training.total_training_steps, so each
// config's LR schedule ends with its run), from --batch problems per iteration; the sampled
// response tokens its updates consumed are reported beside it.
// Learning rates: one per row family (full: the rows that train the whole shared model; lora: the
// L2 adapters), --lr full=X,lora=Y; unset, the rate --tune chose on validation problems in the
// same results file, else the family's config's own. --tune full=a,b,c runs each rate on the
// family's training rows (--tune-seeds each, default 1), evaluates them on the validation
// problems and prints each rate's mean; the final rows are evaluated on test problems only
// (seeds never used for tuning: envs/shared/seeds.ts).
// Evaluation: --test-problems problems (default 64), each played --test-samples times (default 2),
// with each config's val_llm_config: the primary figure; then each played once greedily
// (temperature 0), so that a rise that is only a sharper sampler shows. Every row of seed s plays
// the same problems with the same sampling seeds (the evaluation's samplingKey), so rows compare
// pairwise per seed. --eval-on validation plays validation problems instead of test problems (for
// choosing a task on the rows without RL before any RL row runs; the results file records it). Learning
// curves: each training run evaluates itself every --curve-every iterations (default 10) on
// --curve-problems validation problems (default 32), drawn as PNGs beside the results.
// --dtype D (default auto) sets every policy's placement.<base>.dtype: auto is bf16 on a GPU and
// float32 on a CPU, so a table that spans a GPU and CPUs fixes one; each trained row's line records
// the dtype its updates reported.
// --preset reference applies the suite's configs/<env>/reference.preset.yaml to every row.
// --seeds N (default 5): seed s trains on problems from training.seed = s x 1,000,000; --first-seed
// F runs seeds F .. N-1 only, so that a second process on the same --stamp can run other seeds
// beside the first (the engine batches both runs' decoding).
// --parallel N (default 1): up to N (row, seed) runs at once, started in the order above (seed by
// seed); the engine batches their decoding, so on a small model more runs at once train faster in
// all (bench/RESULTS.md, the miniature with the reading warm start: about 8 iterations a minute with
// 8 runs on two engines, about 4 with 3-4). Processes sharing a --stamp see each other's results:
// each run is looked up in the file just before it starts and again, under the file's lock, as it is written.
// Results: every finished (row, seed) is appended to bench/learning/results/<stamp>.jsonl with the
// commit and machine, and a run with the same --stamp skips what the file has (a bench spans
// sessions); the file's first line holds the settings, which a later run must repeat. Runs of the
// current session re-attach by workflow id (learn-<stamp>-...). --report prints the tables from the
// file and draws the curves without running anything, under the settings the file holds.
// --queue Q places every policy the runs learn on the policy worker that serves task queue Q (one
// started beside the stack's, e.g. on another core or GPU), so that two benches train on two
// engines at once; --engine-metrics PORT reads that worker's engine counters. Where a run is placed
// is not a learning setting: the results file does not hold it.
// Uses the stack the TANDEM_* settings point at (`npx tandem stack up` first). Prints one line
// per iteration to stderr and the Markdown section for bench/RESULTS.md to stdout.
import { execSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ServiceError, WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle, type WorkflowStartOptions } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { CPU_QUEUE, projectRoot } from '../../infra/settings.js';
import { temporalClient } from '../../services/client/temporal.js';
import { engineCounters } from '../../services/dashboard/engineBusy.js';
import { evaluate } from '../../workflows/evaluate.js';
import { progressQuery } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { report } from './report.js';
import { withDefaults, type RunResult, type Settings } from './resultsFile.js';
import { suiteOf, type Family, type Row } from './rows.js';

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const num = (name: string, fallback: number) => {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: a number >= 0, not '${arg(name, '')}'`);
  return v;
};
/** `full=1e-4,lora=1e-3` (or `full=a,b,c` for --tune) -> family -> values. */
function perFamily(name: string): Partial<Record<Family, number[]>> {
  const out: Partial<Record<Family, number[]>> = {};
  for (const part of arg(name, '').split(/,(?=[a-z]+=)/).filter(Boolean)) {
    const [family, values] = part.split('=');
    if (family !== 'full' && family !== 'lora') throw new Error(`--${name}: families are full and lora, not '${family}'`);
    out[family] = (values ?? '').split(',').map(Number);
    if (out[family]!.some((v) => !(v > 0))) throw new Error(`--${name}: ${family}'s rates must be numbers > 0: '${values}'`);
  }
  return out;
}


const stamp = arg('stamp', '');
if (!/^[\w.-]+$/.test(stamp)) throw new Error('--stamp S names the bench (its results file and workflow ids): letters, digits, . _ -');
const resultsDir = join(projectRoot, 'bench', 'learning', 'results');
const resultsFile = join(resultsDir, `${stamp}.jsonl`);
// --report reads the bench's settings from its results file; a run takes them from its flags (and
// readResults checks them against the file's).
const recorded: Settings | null = flag('report') && existsSync(resultsFile) ? withDefaults(JSON.parse(readFileSync(resultsFile, 'utf8').split('\n')[0]).settings) : null;
const suite = suiteOf(recorded?.suite ?? arg('suite', 'planpath'));
const preset = recorded ? recorded.preset : arg('preset', '') || null;
if (preset !== null && preset !== 'reference') throw new Error(`--preset: reference (configs/<env>/reference.preset.yaml), not '${preset}'`);
const puzzle = ['configs/planpath', 'configs/sokoban'].includes(suite.dir); // suites with env.map_size
const evalOn = arg('eval-on', 'test');
if (evalOn !== 'test' && evalOn !== 'validation') throw new Error(`--eval-on: test or validation, not '${evalOn}'`);
const lrFlag = perFamily('lr');
const settings: Settings = recorded ?? {
  suite: suite.name,
  evalOn,
  lr: Object.keys(lrFlag).length ? Object.fromEntries(Object.entries(lrFlag).map(([f, v]) => [f, v![0]])) : null,
  preset,
  iterations: num('iterations', 60),
  batch: num('batch', 8),
  // the puzzles' map size; unset: each config's own
  map: puzzle && arg('map', '') !== '' ? num('map', 0) : null,
  set: arg('set', '').split(',').filter(Boolean),
  testProblems: num('test-problems', 64),
  testSamples: num('test-samples', 2),
  curveEvery: num('curve-every', 10),
  curveProblems: num('curve-problems', 32),
  dtype: dtypeOf(arg('dtype', 'auto')),
};
function dtypeOf(v: string): Settings['dtype'] {
  if (v !== 'auto' && v !== 'float32' && v !== 'bfloat16') throw new Error(`--dtype: auto, float32 or bfloat16, not '${v}'`);
  return v;
}
const seeds = num('seeds', 5);
const firstSeed = num('first-seed', 0);
const tuneSeeds = num('tune-seeds', 1);
const parallel = num('parallel', 1);
if (!(parallel >= 1 && Number.isInteger(parallel))) throw new Error(`--parallel: a whole number >= 1, not ${parallel}`);
const only = arg('rows', suite.rows.map((r) => r.id).join(',')).split(',');
const unknown = only.filter((id) => !suite.rows.some((r) => r.id === id));
if (unknown.length) throw new Error(`--rows: ${unknown.join(', ')} not among ${suite.rows.map((r) => r.id).join(', ')}`);
const rows = suite.rows.filter((r) => only.includes(r.id));
const tune = perFamily('tune');
const queue = arg('queue', '') || null;
const engineMetricsPort = arg('engine-metrics', '');
if (engineMetricsPort !== '' && !/^\d+$/.test(engineMetricsPort)) throw new Error(`--engine-metrics: a port number, not '${engineMetricsPort}'`);
const engineUrl = engineMetricsPort === '' ? undefined : `http://127.0.0.1:${engineMetricsPort}/metrics`;

/** The results file's runs; creates it with these settings, or checks that they are its own. */
function readResults(): RunResult[] {
  if (!existsSync(resultsFile)) {
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(resultsFile, `${JSON.stringify({ kind: 'bench', settings })}\n`);
    return [];
  }
  const [head, ...lines] = readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const theirs = withDefaults(head.settings);
  const differ = (Object.keys(settings) as (keyof Settings)[]).filter((k) => JSON.stringify(theirs[k]) !== JSON.stringify(settings[k]));
  if (differ.length) {
    throw new Error(`${resultsFile} was run with other settings: ${differ.map((k) => `${k} ${JSON.stringify(theirs[k])} (now ${JSON.stringify(settings[k])})`).join(', ')}; repeat them or use another --stamp`);
  }
  return lines as RunResult[];
}

/**
 * The config of a row's run: split says which held-out problems its evaluations play (run: the
 * validation problems of training), greedy evaluates at temperature 0 once per problem, lr null:
 * the config's own.
 */
function config(row: Row, seed: number, lr: number | null, split: 'run' | 'validation' | 'test', greedy = false): RunConfig {
  const overrides = suite.overrides(seed);
  const load = (placed: string[]) => loadRunConfig(row.file, [
    ...(row.set ?? []),
    ...overrides.run,
    ...(split === 'run' ? [] : overrides[split]),
    ...(preset ? [`@${suite.dir}/${preset}.preset.yaml`] : []),
    ...(settings.map !== null ? [`env.map_size=${settings.map}`] : []),
    `training.seed=${seed * 1_000_000}`,
    `training.train_batch_size=${settings.batch}`,
    `training.total_training_steps=${Math.max(1, settings.iterations)}`,
    `training.val_freq=${settings.curveEvery}`,
    `training.val_problems=${split === 'run' ? settings.curveProblems : settings.testProblems}`,
    `training.validate_sample_num=${split === 'run' || greedy ? 1 : settings.testSamples}`,
    `algorithm=${row.algorithm ?? 'at_grpo'}`,
    ...(lr === null ? [] : [`update.lr=${lr}`]),
    ...settings.set,
    ...(greedy ? ['agent_policy_configs.agent_configs.*.val_llm_config.temperature=0'] : []),
    ...placed,
  ]);
  let loaded = load([]);
  const placement = (name: string) => [...(queue !== null ? [`placement.${name}.task_queue=${queue}`] : []), ...(settings.dtype !== 'auto' ? [`placement.${name}.dtype=${settings.dtype}`] : [])];
  if (loaded.ok && (queue !== null || settings.dtype !== 'auto')) loaded = load(Object.values(loaded.config.base_models).flatMap((b) => placement(b.name)));
  if (!loaded.ok) throw new Error(`${row.file}: ${JSON.stringify(loaded.issues)}`);
  return loaded.config;
}

/**
 * Starts the workflow, or attaches to the one of that id (running, or completed; one that failed
 * is started again: its children reuse their ids, and the event store keeps the first attempt's
 * events of an episode whose stream already holds them, so audit such a re-run's episodes by its
 * workflow results, not its record).
 */
async function startOrAttach<T extends Workflow>(client: Client, wf: T, options: WorkflowStartOptions<T>): Promise<WorkflowHandle<T>> {
  try {
    return await client.workflow.start(wf, { ...options, workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' });
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

/** The stack's running training runs and evaluations (Temporal's visibility query). */
const RUNNING = "(WorkflowType = 'trainingRun' OR WorkflowType = 'evaluate') AND ExecutionStatus = 'Running'";

/** Trains for the configured iterations, following the run's progress; returns what it consumed and its curve. */
async function train(client: Client, label: string, cfg: RunConfig, runId: string, file: string): Promise<Pick<RunResult, 'iterations' | 'tokens' | 'curve' | 'engine' | 'dtype'>> {
  const before = await engineCounters(engineUrl);
  const t0 = Date.now();
  const handle = await startOrAttach(client, trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg }], memo: { config: file } });
  let seen = -1;
  let gap = false;
  const dtype: Record<string, string> = {};
  let finished = false;
  const done = resultOf(handle);
  done.then(() => (finished = true), () => (finished = true));
  // Whether another run or evaluation was running on the stack at any check (every 30 s): then the
  // engine's counters are not this run's alone (another process on this --stamp, or anything else).
  let shared = false;
  const checkShared = async () => {
    try {
      for await (const w of client.workflow.list({ query: RUNNING })) if (!w.workflowId.startsWith(runId)) return void (shared = true);
    } catch {
      shared = true; // unknown: not claimed alone
    }
  };
  await checkShared();
  for (let tick = 1; !finished; tick++) {
    await new Promise((r) => setTimeout(r, 1000));
    if (tick % 30 === 0 && !shared) await checkShared();
    const p = await handle.query(progressQuery).catch(() => undefined);
    for (const s of p?.recent ?? []) {
      if (s.iteration <= seen) continue;
      if (s.iteration > seen + 1) gap = true;
      seen = s.iteration;
      const tokens = Object.values(s.updates).reduce((n, u) => n + (u.tokens ?? 0), 0);
      for (const [policy, u] of Object.entries(s.updates)) if (u.dtype) dtype[policy] = u.dtype + (u.dtypeNote ? ` (${u.dtypeNote})` : '');
      const ups = Object.values(s.updates);
      const zero = ups.length > 0 && ups.every((u) => u.zeroAdvantage !== undefined) ? `, ${ups.reduce((n, u) => n + u.zeroAdvantage!, 0)} of ${ups.reduce((n, u) => n + u.samples, 0)} samples without signal (advantage 0)` : '';
      console.error(`${label} iteration ${s.iteration + 1}/${cfg.training.total_training_steps}: training success ${s.successRate.toFixed(3)}, ${tokens} tokens trained on${zero}`);
    }
  }
  const final = await done;
  const after = await engineCounters(engineUrl);
  if (!shared) await checkShared();
  // The bench followed every iteration (not re-attached), alone on the stack: the engine's counters are then this run's.
  const whole = !gap && seen + 1 === final.iteration && parallel === 1 && !shared;
  return {
    iterations: final.iteration,
    tokens: final.tokensTrained ?? null, // the run's own count (absent: a state carried from before it existed)
    // The engine over the training (it serves the stack's every run): recorded only when this run had the stack alone.
    engine: whole && before && after && after.busyS >= before.busyS
      ? { seconds: (Date.now() - t0) / 1000, busyS: after.busyS - before.busyS, updateS: after.updateS - before.updateS, tokens: after.tokens - before.tokens }
      : null,
    curve: final.evaluations.map((e) => ({ iteration: e.iteration, success: e.successRate })),
    ...(Object.keys(dtype).length ? { dtype } : {}),
  };
}

function commitOf(): string {
  const head = execSync('git rev-parse --short HEAD', { cwd: projectRoot, encoding: 'utf8' }).trim();
  const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: projectRoot, encoding: 'utf8' }).trim() !== '';
  return dirty ? `${head}+changes` : head;
}
const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'CPU'}`;

async function runOne(client: Client, kind: RunResult['kind'], row: Row, seed: number, lr: number): Promise<void> {
  const started = Date.now();
  const runId = `learn-${stamp}-${kind === 'tune' ? `tune${lr}-` : ''}${row.id}-s${seed}`;
  const label = `${row.id} seed ${seed}${kind === 'tune' ? ` lr ${lr}` : ''}`;
  const trained = row.algorithm === null ? { iterations: 0, tokens: 0, curve: [], engine: null } : await train(client, label, config(row, seed, lr, 'run'), runId, row.file);
  // Tuning plays the validation problems of training; final evaluations play the test problems
  // (or, with --eval-on validation, the validation ones), sampled (the primary figure) and greedily.
  const split = kind === 'tune' ? 'validation' : settings.evalOn;
  const play = async (greedy: boolean) => {
    const evalId = `${runId}/${split}-eval${greedy ? '-greedy' : ''}`;
    const cfg = config(row, seed, lr, kind === 'tune' ? 'run' : split, greedy);
    return resultOf(await startOrAttach(client, evaluate, {
      taskQueue: CPU_QUEUE,
      workflowId: evalId,
      args: [{ config: cfg, runId: row.algorithm === null ? evalId : runId, iteration: trained.iterations, split, samplingKey: `learn-${suite.name}-${split}${greedy ? '-greedy' : ''}-s${seed}`, release: true }],
    }));
  };
  const evaluation = await play(false);
  const greedy = kind === 'tune' ? undefined : await play(true);
  const result: RunResult = {
    kind,
    row: row.id,
    seed,
    lr: row.algorithm === null ? null : lr,
    ...trained,
    success: evaluation.successRate,
    episodes: evaluation.episodes,
    ...(greedy ? { greedy: { success: greedy.successRate, episodes: greedy.episodes } } : {}),
    minutes: (Date.now() - started) / 60_000,
    config: row.algorithm === null ? config(row, seed, lr, kind === 'tune' ? 'run' : split) : config(row, seed, lr, 'run'),
    runId,
    commit: commitOf(),
    machine,
    at: new Date().toISOString(),
  };
  // Another process on the stamp may have followed the same workflows to the end, and both wake
  // at the same completion: the check and the append hold the file's lock together.
  const written = underLock(() => {
    if (recordedIn(readResults(), kind, row.id, seed, result.lr)) return false;
    appendFileSync(resultsFile, `${JSON.stringify(result)}\n`);
    return true;
  });
  if (!written) console.error(`${label}: already in ${resultsFile} (another process), not written again`);
  const e = result.engine;
  const engineNote = e ? `; training ${e.seconds.toFixed(0)} s, the engine decoding ${((100 * e.busyS) / e.seconds).toFixed(0)}% and updating ${((100 * e.updateS) / e.seconds).toFixed(0)}% of it, idle ${((100 * Math.max(0, e.seconds - e.busyS - e.updateS)) / e.seconds).toFixed(0)}%, ${(e.tokens / e.seconds).toFixed(1)} tokens/s` : '';
  console.error(`${label}: ${split} success ${evaluation.successRate.toFixed(3)} sampled${greedy ? `, ${greedy.successRate.toFixed(3)} greedy` : ''} after ${trained.iterations} iterations (${result.minutes.toFixed(1)} min${engineNote})`);
}

/** The rate each family trains at: --lr, else the best tuned one in the file, else its config's. */
function ratesOf(results: RunResult[]): Record<Family, { lr: number; source: string }> {
  const pick = (family: Family): { lr: number; source: string } => {
    const given = settings.lr?.[family]; // --lr, or under --report the file's
    if (given !== undefined) return { lr: given, source: '--lr' };
    const tuned = results.filter((r) => r.kind === 'tune' && rows.some((row) => row.id === r.row && row.family === family) && r.lr !== null);
    if (tuned.length) {
      const byLr = new Map<number, number[]>();
      for (const r of tuned) byLr.set(r.lr!, [...(byLr.get(r.lr!) ?? []), r.success]);
      const best = [...byLr].map(([lr, xs]) => ({ lr, mean: xs.reduce((a, x) => a + x, 0) / xs.length })).sort((a, b) => b.mean - a.mean || a.lr - b.lr)[0];
      return { lr: best.lr, source: 'tuned on validation problems' };
    }
    const row = suite.rows.find((r) => r.family === family);
    return row ? { lr: config(row, 0, null, 'run').update.lr, source: row.file } : { lr: NaN, source: 'no row of the suite' };
  };
  return { full: pick('full'), lora: pick('lora') };
}

/** Whether results hold that run (lr null on either side: a row without training). */
function recordedIn(results: RunResult[], kind: RunResult['kind'], row: string, seed: number, lr: number | null): boolean {
  return results.some((r) => r.kind === kind && r.row === row && r.seed === seed && (lr === null || r.lr === null || r.lr === lr));
}

/** Runs f holding <results file>.lock (created exclusively; one left by a process killed inside f is taken after a minute). */
function underLock<T>(f: () => T): T {
  const lock = `${resultsFile}.lock`;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 60_000) rmSync(lock, { force: true });
      } catch {
        // released meanwhile
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return f();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Runs each of the jobs, at most n at once, starting them in order. */
async function atMost<T>(n: number, jobs: T[], run: (job: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) await run(jobs[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, lane));
}

async function main(): Promise<void> {
  if (!flag('report')) {
    const client = await temporalClient();
    type Job = { kind: RunResult['kind']; row: Row; seed: number; lr: number };
    const jobs: Job[] = [];
    if (Object.keys(tune).length) {
      for (const [family, lrs] of Object.entries(tune) as [Family, number[]][]) {
        for (let seed = 0; seed < tuneSeeds; seed++) {
          for (const lr of lrs) {
            for (const row of rows.filter((r) => r.family === family && r.algorithm !== null)) jobs.push({ kind: 'tune', row, seed, lr });
          }
        }
      }
    } else {
      const rates = ratesOf(readResults());
      for (const f of new Set(rows.map((r) => r.family))) console.error(`${f}: lr ${rates[f].lr} (${rates[f].source})`);
      // Seed by seed, so that a bench cut short has every row at its first seeds.
      for (let seed = firstSeed; seed < seeds; seed++) {
        for (const row of rows) jobs.push({ kind: 'final', row, seed, lr: rates[row.family].lr });
      }
    }
    // Looked up in the file as each starts: another process on the stamp may have run it meanwhile.
    await atMost(parallel, jobs, async ({ kind, row, seed, lr }) => {
      if (!recordedIn(readResults(), kind, row.id, seed, row.algorithm === null ? null : lr)) await runOne(client, kind, row, seed, lr);
    });
    await client.connection.close();
  }
  const all = readResults(); // with what other processes on the stamp added meanwhile
  console.log(report({ suite, settings, rows, results: all, resultsFile, rates: ratesOf(all) }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
