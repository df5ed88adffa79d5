// Rollout engines on this machine's own cores (issue 55, item 4): the real engine, SmolLM2-135M L2
// on two-step arithmetic by default, in four arms: one engine (pinned to core 0) at max_staleness 0
// and 1, and split (the rollout engine pinned to core 0, the trainer to core 1: placement.<base>.
// rollout) at 0 and 1. Each engine runs one torch thread; the stack's other processes float. The
// arms alternate by seed (seed s plays its own training problems, bench/learning/arith.ts, in every arm).
//   node --import tsx bench/async/cpu.ts [--iterations 4] [--seeds 2] [--first-seed 0] [--batch 4]
//     [--config configs/smollm2/math_L2_lora.yaml] [--task arith2|none] [--set key=value ...]
//     [--results bench/async/results/cpu.jsonl] [--report]
// Each finished run is appended to the results file at once (its first line the settings, which a
// later invocation must match), so the arms can be measured a seed at a time across sessions: a
// run already in the file is skipped, and the table is printed from every run the file holds
// (`--report` prints it without running anything).
// Per arm, over its timed iterations (the first of each run is not timed): the iteration's wall
// time (from the end of the previous iteration's last update or sync to the end of its own), its
// episodes' span, its updates' and syncs' activity time, each core's idle share over the runs
// (/proc/stat), and the async gain (N=1 over N=0) of each placement against its bound: one engine,
// max(episodes, update) can at best overlap only what the one core does not do; split,
// max(episodes, update + sync); and the response tokens each iteration's updates trained (the record's
// `updates`), so that arms whose iterations carried different work compare a token at a time too, and
// the rows of a decoding step (those tokens over the generating engine's decoding steps).
// A results file of another machine is only read (`--report`). Needs the stack up (`npx tandem
// stack up`); starts its own policy workers (task queues bench-cpu-one, bench-cpu-trainer,
// bench-cpu-rollout) and stops them at the end.
// Give it the machine alone: it measures the cores' idle time.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { eq } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { updates } from '../../infra/db/schema.js';
import { freePort } from '../../infra/stack.js';
import { CPU_QUEUE, projectPath, READY_LINE } from '../../infra/settings.js';
import { withDatabase } from '../../services/client/database.js';
import { temporalClient } from '../../services/client/temporal.js';
import { policiesOf, trainable } from '../../policy/spec.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { arithmetic } from '../learning/arith.js';
import { activitySpans, episodeSpans } from './history.js';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
};
const int = (name: string, fallback: number, min: number) => {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isInteger(v) || v < min) throw new Error(`--${name}: an integer >= ${min}, not '${arg(name, '')}'`);
  return v;
};
const iterations = int('iterations', 4, 2);
const seeds = int('seeds', 2, 1);
const firstSeed = int('first-seed', 0, 0);
const batch = int('batch', 4, 1);
const file = arg('config', 'configs/smollm2/math_L2_lora.yaml');
const task = arg('task', 'arith2');
const sets = argv.flatMap((a, i) => (argv[i - 1] === '--set' ? [a] : []));
const resultsFile = projectPath(arg('results', 'bench/async/results/cpu.jsonl'));
const reportOnly = argv.includes('--report');
if (cpus().length < 2) throw new Error('needs two cores: the rollout engine on one, the trainer on the other');

// Issue 53's sampling (bench/learning/results/arith2.choice): temperature 0.7, top_p 0.9, top_k 20, 128-token
// responses; with --task none the config's own.
const SAMPLING = ['training.max_response_length=128', ...['temperature=0.7', 'top_p=0.9', 'top_k=20'].map((s) => `agent_policy_configs.agent_configs.*.train_llm_config.${s}`)];
const QUEUES = { one: 'bench-cpu-one', trainer: 'bench-cpu-trainer', rollout: 'bench-cpu-rollout' };

type Arm = { placement: 'one' | 'split'; staleness: 0 | 1 };
const ARMS: Arm[] = [{ placement: 'one', staleness: 0 }, { placement: 'one', staleness: 1 }, { placement: 'split', staleness: 0 }, { placement: 'split', staleness: 1 }];
const armName = (a: Arm) => `${a.placement} N=${a.staleness}`;

function configOf(arm: Arm, seed: number): RunConfig {
  const probe = loadRunConfig(projectPath(file), []);
  if (!probe.ok) throw new Error(`${file}: ${probe.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  const base = Object.values(probe.config.base_models).find((m) => !m.scripted)!.name;
  const parsed = loadRunConfig(projectPath(file), [
    ...(task === 'none' ? [] : [...arithmetic(task as 'arith2', seed).run, ...SAMPLING]),
    `training.total_training_steps=${iterations}`,
    `training.train_batch_size=${batch}`,
    'training.val_freq=0',
    `rollout.max_staleness=${arm.staleness}`,
    ...(arm.staleness > 0 ? ['update.behaviour_weight_cap=2'] : []),
    ...(arm.placement === 'one'
      ? [`placement.${base}.task_queue=${QUEUES.one}`]
      : [`placement.${base}.task_queue=${QUEUES.trainer}`, `placement.${base}.rollout.task_queue=${QUEUES.rollout}`]),
    ...sets,
  ]);
  if (!parsed.ok) throw new Error(`${file}: ${parsed.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  return parsed.config;
}

/** A policy worker on `queue` pinned to `core`, its engine on one torch thread; resolves once it serves. */
async function startWorker(queue: string, core: number): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn('taskset', ['-c', String(core), process.execPath, '--import', 'tsx', projectPath('services/policy-worker.ts'),
    '--task-queue', queue, '--device', 'cpu', '--metrics-port', String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TANDEM_TORCH_THREADS: '1' },
  });
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`policy worker on ${queue} exited (code ${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line.includes(READY_LINE) && resolve());
  });
  return { child, port };
}

/** The worker's engine since it started (its metrics): seconds spent prefilling and decoding, and decoding steps. */
async function engineCounters(port: number): Promise<{ busyMs: number; steps: number }> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const counter = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} ([\\d.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { busyMs: 1000 * counter('tandem_engine_busy_seconds'), steps: counter('tandem_engine_decode_steps') };
}

/** Idle and total jiffies of cpu0 and cpu1 (/proc/stat: idle + iowait of the whole). */
function coreTimes(): { idle: number; total: number }[] {
  return readFileSync('/proc/stat', 'utf8').split('\n').filter((l) => /^cpu[01] /.test(l)).map((l) => {
    const f = l.trim().split(/\s+/).slice(1).map(Number);
    return { idle: f[3] + f[4], total: f.reduce((a, x) => a + x, 0) };
  });
}

/** tokens: the response tokens its updates trained (every sample an episode generated); steps: the generating engine's
 *  decoding steps, a run's mean (each absent in runs recorded before it was counted). */
interface Iteration { wall: number; episodes: number; update: number; sync: number; busy: number; tokens?: number; steps?: number }

/** Each iteration's trained response tokens, its policies' updates summed (the record's projection, waited for). */
async function tokensOf(runId: string, policies: number): Promise<Map<number, number>> {
  for (let tries = 0; ; tries++) {
    const rows = await withDatabase((db) => db.select({ iteration: updates.iteration, metrics: updates.metrics }).from(updates).where(eq(updates.runId, runId)));
    if (rows.length >= iterations * policies) {
      const tokens = new Map<number, number>();
      for (const r of rows) tokens.set(r.iteration, (tokens.get(r.iteration) ?? 0) + Number((r.metrics as { tokens?: number }).tokens ?? NaN));
      return tokens;
    }
    if (tries === 60) throw new Error(`${runId}: ${rows.length} of ${iterations * policies} updates projected after a minute`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A finished run's timed iterations, from its history. */
async function iterationsOf(client: Awaited<ReturnType<typeof temporalClient>>, runId: string, policies: number, engine: { busyMs: number; steps: number }): Promise<Iteration[]> {
  const spans = await episodeSpans(client, runId);
  const updates = await activitySpans(client, runId, 'updatePolicy');
  // Syncs: the first `policies` load the rollout engine at the start; then one after each update, in its order.
  const syncs = (await activitySpans(client, runId, 'syncPolicy')).slice(policies);
  const tokens = await tokensOf(runId, policies);
  const of = <T>(xs: T[], it: number) => xs.slice(it * policies, (it + 1) * policies);
  const endOf = (it: number) => Math.max(...of(updates, it).map((u) => u.end), ...of(syncs, it).map((s) => s.end));
  const out: Iteration[] = [];
  for (let it = 1; it < iterations; it++) {
    const span = spans.get(it)!;
    out.push({
      wall: endOf(it) - endOf(it - 1),
      episodes: span.end - span.open,
      update: of(updates, it).reduce((n, u) => n + u.end - u.start, 0),
      sync: of(syncs, it).reduce((n, s) => n + s.end - s.start, 0),
      busy: engine.busyMs / iterations, // the generating engine's busy time, a run's mean
      steps: engine.steps / iterations, // its decoding steps, a run's mean
      tokens: tokens.get(it),
    });
  }
  return out;
}

const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
const family = (field: string) => new RegExp(`^${field}\\s*: (\\d+)`, 'm').exec(cpuinfo)?.[1] ?? '?';
/** What a results file's runs must share: a later invocation with other settings (or on another kind of machine) would mix arms of different work. */
const SETTINGS = { config: file, task, iterations, batch, set: sets, machine: `${cpus().length} x ${cpus()[0]?.model} (family ${family('cpu family')}, model ${family('model')})` };
/** One finished run: its arm, seed, timed iterations and the cores' idle shares over it. */
interface RunRecord { kind: 'run'; arm: string; seed: number; runId: string; its: Iteration[]; idle: number[]; commit: string; at: string }

let measuredOn = SETTINGS.machine;
function readResults(): RunRecord[] {
  if (!existsSync(resultsFile)) return [];
  const [head, ...rest] = readFileSync(resultsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  measuredOn = head.settings.machine;
  for (const [key, value] of Object.entries(SETTINGS)) {
    if (reportOnly && key === 'machine') continue; // another machine's file is read, not added to
    if (JSON.stringify(head.settings[key]) !== JSON.stringify(value)) {
      throw new Error(`${resultsFile}: its runs were measured with ${key} ${JSON.stringify(head.settings[key])}, not ${JSON.stringify(value)}: pass --results with another file, or the same settings`);
    }
  }
  return rest;
}

function appendResult(record: Omit<RunRecord, 'kind' | 'commit' | 'at'>) {
  if (!existsSync(resultsFile)) {
    mkdirSync(dirname(resultsFile), { recursive: true });
    appendFileSync(resultsFile, `${JSON.stringify({ kind: 'bench', settings: SETTINGS })}\n`);
  }
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  appendFileSync(resultsFile, `${JSON.stringify({ kind: 'run', ...record, commit, at: new Date().toISOString() })}\n`);
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
const sd = (xs: number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
const s1 = (ms: number) => (ms / 1000).toFixed(1);

const done = readResults();
const todo: { arm: Arm; seed: number }[] = [];
for (let seed = firstSeed; seed < firstSeed + seeds && !reportOnly; seed++) {
  for (const arm of seed % 2 === 0 ? ARMS : [...ARMS].reverse()) {
    if (!done.some((r) => r.arm === armName(arm) && r.seed === seed)) todo.push({ arm, seed });
  }
}
if (todo.length > 0) {
  const generators = { one: await startWorker(QUEUES.one, 0), split: await startWorker(QUEUES.rollout, 0) };
  const workers = [generators.one, generators.split, await startWorker(QUEUES.trainer, 1)];
  const stop = () => workers.forEach((w) => w.child.kill('SIGTERM'));
  process.on('exit', stop);
  process.on('SIGINT', () => process.exit(130));
  const client = await temporalClient();
  const stamp = Date.now().toString(36);
  const policies = trainable(policiesOf(configOf(ARMS[0], firstSeed))).length;
  for (const { arm, seed } of todo) {
    const runId = `bench-cpu-${stamp}-${arm.placement}-n${arm.staleness}-s${seed}`;
    const before = coreTimes();
    const engine0 = await engineCounters(generators[arm.placement].port);
    const t0 = Date.now();
    await client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: configOf(arm, seed) }] });
    const after = coreTimes();
    const engine1 = await engineCounters(generators[arm.placement].port);
    const engine = { busyMs: engine1.busyMs - engine0.busyMs, steps: engine1.steps - engine0.steps };
    const idle = after.map((a, c) => (a.idle - before[c].idle) / (a.total - before[c].total));
    appendResult({ arm: armName(arm), seed, runId, its: await iterationsOf(client, runId, policies, engine), idle });
    process.stderr.write(`${runId}: ${iterations} iterations in ${((Date.now() - t0) / 1000).toFixed(0)} s (${resultsFile})\n`);
  }
  stop();
  await client.connection.close();
}
const runs = readResults();
const results = new Map<string, { its: Iteration[]; idle: number[][] }>(ARMS.map((a) => [armName(a), { its: [], idle: [] }]));
for (const r of runs) {
  const arm = results.get(r.arm)!;
  arm.its.push(...r.its);
  arm.idle.push(r.idle);
}
if ([...results.values()].some((r) => r.its.length === 0)) {
  throw new Error(`${resultsFile}: no runs yet of ${[...results].filter(([, r]) => r.its.length === 0).map(([a]) => a).join(', ')}`);
}

const out = (l = '') => console.log(l);
out(`machine: ${measuredOn}; ${file}${task === 'none' ? '' : ` on ${task}`}, ${batch} problems an iteration, ${iterations} iterations a run (the first not timed), seeds ${[...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b).join(', ')} (${relative(projectPath(''), resultsFile)}); one torch thread an engine; one: its engine on core 0; split: the rollout engine on core 0, the trainer on core 1`);
out();
out('| arm | timed iterations | iteration s (mean ± sd) | episodes s | engine busy s | update s | sync s | core 0 idle | core 1 idle | async gain | its bound | own work / iteration | tokens / iteration | gain a token |');
out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
/** Seconds of iteration a trained token, over an arm's iterations (NaN where a run predates the count). */
const perToken = (its: Iteration[]) => mean(its.map((x) => x.wall)) / mean(its.map((x) => x.tokens ?? NaN));
for (const placement of ['one', 'split'] as const) {
  const [sync, async] = [0, 1].map((n) => results.get(`${placement} N=${n}`)!);
  const T = mean(sync.its.map((x) => x.wall));
  const E = mean(sync.its.map((x) => x.episodes));
  const U = mean(sync.its.map((x) => x.update));
  const S = mean(sync.its.map((x) => x.sync));
  const D = mean(sync.its.map((x) => x.busy));
  // One engine does the decoding and the update on one core either way: only its idle time in the
  // rollout (the orchestration's) can take the update; split: the update and its sync beside the rollout.
  const bound = placement === 'one' ? T / Math.max(E, D + U) : T / Math.max(E, U + S);
  for (const [n, r] of [[0, sync], [1, async]] as const) {
    const W = mean(r.its.map((x) => x.wall));
    const idle = [0, 1].map((c) => `${(100 * mean(r.idle.map((i) => i[c]))).toFixed(0)}%`);
    const tokens = mean(r.its.map((x) => x.tokens ?? NaN));
    const perTokenGain = perToken(sync.its) / perToken(async.its);
    out(`| ${placement} N=${n} | ${r.its.length} | ${s1(W)} ± ${s1(sd(r.its.map((x) => x.wall)))} | ${s1(mean(r.its.map((x) => x.episodes)))} | ${s1(mean(r.its.map((x) => x.busy)))} | ${s1(mean(r.its.map((x) => x.update)))} | ${placement === 'split' ? s1(mean(r.its.map((x) => x.sync))) : ''} | ${idle[0]} | ${idle[1]} | ${n === 1 ? `**${(T / W).toFixed(2)}x**` : ''} | ${n === 1 ? `${bound.toFixed(2)}x` : ''} | ${(mean(r.its.map((x) => x.episodes + x.update + x.sync)) / W).toFixed(2)}x | ${Number.isNaN(tokens) ? '-' : tokens.toFixed(0)} | ${n === 1 && !Number.isNaN(perTokenGain) ? `${perTokenGain.toFixed(2)}x` : ''} |`);
  }
}
const counted = (x: Iteration) => x.steps !== undefined && x.tokens !== undefined;
const rowsAStep = [...results].map(([arm, r]) => [arm, r.its.filter(counted)] as const).filter(([, its]) => its.length > 0);
if (rowsAStep.length > 0) {
  out();
  out(`Rows a decoding step (the trained tokens over the generating engine's decoding steps, over the iterations that counted both): ${rowsAStep.map(([arm, its]) => `${arm} ${(mean(its.map((x) => x.tokens!)) / mean(its.map((x) => x.steps!))).toFixed(2)} (${its.length} iterations)`).join(', ')}`);
}
out();
out('Each timed iteration (s): iteration / episodes / update / sync');
out();
out('| arm | seed | iterations |');
out('|---|---|---|');
for (const r of runs) out(`| ${r.arm} | ${r.seed} | ${r.its.map((x) => [x.wall, x.episodes, x.update, x.sync].map(s1).join(' / ')).join('; ')} |`);
out();
out('iteration s: from the end of the previous iteration\'s last update (or its sync) to the end of its own; episodes s: from the workflow task that opened its first episode to its last episode\'s end; engine busy s: the generating engine\'s prefill and decoding time (its metrics), a run\'s mean per iteration; update s and sync s: their activities, scheduled to completed (a sync installs the new version on the rollout engine); idle: /proc/stat over the arm\'s runs. Bound: one engine, T / max(episodes, engine busy + update) (one core does both); split, T / max(episodes, update + sync), T the synchronous iteration. Own work / iteration: (episodes + update + sync) / iteration, both means of the arm\'s own iterations: under 1 the orchestration between them, above 1 the share of its own work it overlapped; for the split arms, whose engines have a core each, the async gain matched for work (iterations of different arms differ in the tokens they decode and train: their policies and samples diverge). Tokens / iteration: the response tokens its updates trained (every sample its episodes generated); gain a token: the synchronous arm\'s iteration seconds a token over the asynchronous arm\'s, the other control for work (it leaves each iteration\'s fixed costs, its orchestration and prompts, to the arm with fewer tokens).');
