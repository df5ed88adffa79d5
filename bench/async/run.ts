// Asynchronous training's gain in iteration wall time (issue 42, item 6b): the same training runs
// with rollout.max_staleness 0 (strictly on-policy: rollout, then update) and 1 (iteration i's
// episodes play while iteration i-1's update runs), through the stack's Temporal, CPU worker, Kafka
// and Postgres, with every policy placed on a stand-in policy worker (bench/async/standin.ts) whose
// one simulated device generates and updates in the time a modelled GPU would (bench/async/model.ts:
// Qwen3-1.7B on an H100 by default), scaled down so that one iteration's rollout takes --rollout-s.
//   node --import tsx bench/async/run.ts [--shapes math,planpath] [--updates exclusive,shared,overlap]
//     [--iterations 5] [--blocks 1] [--problems 32] [--rollout-s 8] [--update-share 0.333|model]
//     [--gpu h100|h200] [--decode-bw 0.7] [--prefill-mfu 0.5] [--train-mfu 0.4]
//     [--response-tokens 1024] [--spread 0.5] [--text-chars 0] [--refit-s 0.15] [--set key=value ...]
// Shapes: math (configs/math/math_L1_prompt.yaml at the reference's shape: K=8, 4 turns x 2 agents,
// one shared model, full fine-tune) and planpath (configs/planpath/planpath_L2_lora.yaml: two LoRA
// adapters on one base, at the reference's Plan-Path K=8 and 5 turns); --problems per iteration.
// Updates (bench/async/device.ts): exclusive (an update takes the device alone, as Tandem's engine
// does with an update sent without overlap), shared (Tandem's engine with an update sent with
// overlap, on one device: the update and generation each get half of the device's time while both
// have work) and overlap (generation and update side by side without slowing each other: separate
// GPUs). With shared and overlap fewer rows fit beside a full fine-tune's state than with exclusive.
// --updates split (not among the defaults): every policy placed with a rollout engine
// (placement.<base>.rollout, the real code path: turns on the rollout queue, a syncPolicy per
// update before the version advances), its turns on one device and its updates on another; each
// sync takes --refit-s seconds of the GPU's time on the rollout device (default 0.15: NeMo-RL's
// published shard-to-shard refit, Megatron to vLLM, of a 4B model over 8 GPUs, 0.07-0.15 s,
// NVIDIA-NeMo/RL pull 2413; its naive broadcast is 4-10x slower, discussion 3315). Its bound:
// max(rollout, update + sync).
// --update-share F sizes the update to F of the synchronous step (the issue's condition: a third);
// `model` takes the roofline's update time instead (both are printed).
// Per (shape, updates): a stand-in worker of its own, then --blocks blocks of two runs, A (max_staleness
// 0) then B (1), the order alternating between blocks; each run --iterations iterations, the first
// not timed. An iteration's wall time: from the end of the previous iteration's last update to the
// end of its own (the stand-in's clock; IterationFinished follows each by one workflow task and one
// activity, the same in every iteration), so that in the asynchronous runs it is the time between two
// iterations done, not one iteration's latency. Its rollout: its episodes' span in the run's history.
// The bound (the issue's): an ideal asynchronous iteration takes max(rollout, update) with overlap and
// max(rollout, device busy + update) on one device (exclusive, shared), a synchronous one rollout +
// update (+ the steps between them). Prints one Markdown table per shape.
// Needs a running stack with the current workflow code (`npx tandem stack up`; the TANDEM_* settings
// choose which: `source infra/test-env.sh` for the test stack).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { CPU_QUEUE, projectPath } from '../../infra/settings.js';
import { temporalClient } from '../../services/client/temporal.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { STANDIN_MODELS, UPDATE_MODELS, type StandinModel } from './device.js';
import { episodeSpans } from './history.js';
import { DEFAULT_EFFICIENCY, deviceCosts, GPUS, lockstepRolloutMs, maxRowsOf, MODELS, samplesPerIteration, sizesOf, type WorkShape } from './model.js';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
};
const num = (name: string, fallback: number) => {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name}: a number > 0, not '${arg(name, '')}'`);
  return v;
};
const sets = argv.flatMap((a, i) => (argv[i - 1] === '--set' ? [a] : []));
const iterations = num('iterations', 5);
if (!Number.isInteger(iterations) || iterations < 2) throw new Error('--iterations: 2 or more (the first is not timed)');
const blocks = num('blocks', 1);
const problems = num('problems', 32);
const rolloutS = num('rollout-s', 8);
const shareArg = arg('update-share', String(1 / 3));
const share = shareArg === 'model' ? null : Number(shareArg);
if (share !== null && !(share > 0 && share < 1)) throw new Error(`--update-share: a fraction in (0, 1) or 'model', not '${shareArg}'`);
const gpu = GPUS[arg('gpu', 'h100')];
if (!gpu) throw new Error(`--gpu: one of ${Object.keys(GPUS).join(', ')}`);
const model = MODELS['qwen3-1.7b'];
const eff = { decodeBandwidth: num('decode-bw', DEFAULT_EFFICIENCY.decodeBandwidth), prefillMfu: num('prefill-mfu', DEFAULT_EFFICIENCY.prefillMfu), trainMfu: num('train-mfu', DEFAULT_EFFICIENCY.trainMfu) };
const responseTokens = num('response-tokens', 1024);
const spread = Number(arg('spread', '0.5'));
const textChars = Number(arg('text-chars', '0'));
const updateModels = arg('updates', UPDATE_MODELS.join(',')).split(',') as StandinModel[];
if (updateModels.some((m) => !STANDIN_MODELS.includes(m))) throw new Error(`--updates: of ${STANDIN_MODELS.join(', ')}, not '${arg('updates', '')}'`);
const refitS = Number(arg('refit-s', '0.15'));
if (!(refitS >= 0)) throw new Error(`--refit-s: seconds >= 0, not '${arg('refit-s', '')}'`);

interface Shape {
  name: string;
  title: string;
  file: string;
  /** The base model every policy of the config is built on (its placement key). */
  base: string;
  overrides: string[];
  promptTokens: number;
  training: 'full' | 'lora';
}
const SHAPES: Record<string, Shape> = {
  math: {
    name: 'math',
    title: "math L1, the reference's shape (K=8, 4 turns x 2 agents, one shared model, full fine-tune)",
    file: 'configs/math/math_L1_prompt.yaml',
    base: 'shared_model',
    overrides: ['training.train_sample_num=8', 'env.max_turns=4'],
    promptTokens: 1500,
    training: 'full',
  },
  planpath: {
    name: 'planpath',
    title: 'Plan-Path L2 (two LoRA adapters on one base, K=8, 5 turns x 2 agents)',
    file: 'configs/planpath/planpath_L2_lora.yaml',
    base: 'base_model',
    overrides: ['training.train_sample_num=8', 'env.max_turns=5'],
    promptTokens: 1000,
    training: 'lora',
  },
};
const shapes = arg('shapes', 'math,planpath').split(',').map((n) => {
  if (!SHAPES[n]) throw new Error(`--shapes: of ${Object.keys(SHAPES).join(', ')}, not '${n}'`);
  return SHAPES[n];
});

const scratch = mkdtempSync(join(tmpdir(), 'tandem-bench-async-'));
const stamp = Date.now().toString(36);
const children = new Set<ChildProcess>();
const stopChildren = () => {
  for (const c of children) c.kill('SIGTERM');
};
process.on('exit', stopChildren);
process.on('SIGINT', () => {
  stopChildren();
  process.exit(130);
});
const log = (line: string) => process.stderr.write(`${line}\n`);

function configOf(shape: Shape, queue: string, staleness: number, split = false): RunConfig {
  const parsed = loadRunConfig(projectPath(shape.file), [
    ...shape.overrides,
    `training.train_batch_size=${problems}`,
    `training.total_training_steps=${iterations}`,
    'training.val_freq=0',
    `placement.${shape.base}.task_queue=${queue}`,
    ...(split ? [`placement.${shape.base}.rollout.task_queue=${queue}-rollout`] : []),
    `rollout.max_staleness=${staleness}`,
    ...(staleness > 0 ? ['update.behaviour_weight_cap=2'] : []),
    ...sets,
  ]);
  if (!parsed.ok) throw new Error(`${shape.file}: ${parsed.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
  return parsed.config;
}

/** Starts a stand-in worker; resolves with it and its task queue once it serves. */
function startStandin(args: string[], logFile: string): Promise<{ child: ChildProcess; queue: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('bench/async/standin.ts'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const out = createWriteStream(logFile);
  child.stderr!.pipe(out);
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => {
      out.write(d);
      seen += d.toString();
      const m = /tandem:ready standin on task queue (\S+?),/.exec(seen);
      if (m) resolve({ child, queue: m[1] });
    });
    child.on('exit', (code) => {
      children.delete(child);
      reject(new Error(`stand-in ended (code ${code}) before serving; its log: ${logFile}`));
    });
  });
}

async function stopStandin(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const ended = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await ended;
  clearTimeout(timer);
}

interface TurnRecord { ev: 'turn'; run: string; it: number; start: number; end: number; busy0: number; busy1: number }
interface UpdateRecord { ev: 'update'; run: string; it: number; policy: string; queued: number; start: number; end: number; ms?: number }
interface SyncRecord { ev: 'sync'; run: string; policy: string; version: number; start: number; end: number }

/** One run's figures, per timed iteration (1..N-1): the stand-in's timeline and the run's history. */
function figuresOf(records: (TurnRecord | UpdateRecord | SyncRecord)[], runId: string, spans: Map<number, { open: number; end: number }>) {
  const turns = records.filter((r): r is TurnRecord => r.ev === 'turn' && r.run === runId);
  const updates = records.filter((r): r is UpdateRecord => r.ev === 'update' && r.run === runId);
  // (split) iteration it's update makes version it + 1, which the syncs then install
  const syncsOf = (it: number) => records.filter((r): r is SyncRecord => r.ev === 'sync' && r.run === runId && r.version === it + 1);
  const its = [...new Set(updates.map((u) => u.it))].sort((a, b) => a - b);
  const endOf = (it: number) => Math.max(...updates.filter((u) => u.it === it).map((u) => u.end), ...syncsOf(it).map((x) => x.end));
  return its.slice(1).map((it) => {
    const ts = turns.filter((t) => t.it === it);
    const us = updates.filter((u) => u.it === it);
    const first = Math.min(...ts.map((t) => t.start));
    const span = spans.get(it);
    return {
      it,
      wall: endOf(it) - endOf(it - 1),
      episodes: span ? span.end - span.open : NaN,
      // The updates' device time (with shared, their wall time is longer while rows decode beside them).
      update: us.reduce((n, u) => n + (u.ms ?? u.end - u.start), 0),
      updateWall: us.reduce((n, u) => n + u.end - u.start, 0),
      updateWait: us.reduce((n, u) => n + u.start - u.queued, 0),
      sync: syncsOf(it).reduce((n, x) => n + x.end - x.start, 0),
      window: Math.max(...ts.map((t) => t.end)) - first,
      busy: Math.max(...ts.map((t) => t.busy1)) - Math.min(...ts.map((t) => t.busy0)),
      // Asynchronous training at work: this iteration's first turn began before the previous iteration's updates ended.
      overlapped: first < endOf(it - 1),
      stall: longestIdle(ts),
    };
  });
}

/** The longest time within an iteration's turns during which none was in flight (a stalled stack shows here). */
function longestIdle(turns: TurnRecord[]): number {
  const edges = turns.flatMap((t) => [[t.start, 1], [t.end, -1]] as const).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let active = 0;
  let idleSince = NaN;
  let longest = 0;
  for (const [at, d] of edges) {
    if (active === 0 && d === 1 && !Number.isNaN(idleSince)) longest = Math.max(longest, at - idleSince);
    active += d;
    if (active === 0) idleSince = at;
  }
  return longest;
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
const sd = (xs: number[]) => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1)));
const s1 = (ms: number) => (ms / 1000).toFixed(2);

const client = await temporalClient();
const notes: string[] = [];
const stalls: string[] = [];
const { params, kvBytesPerToken } = sizesOf(model);
const out = (l = '') => console.log(l);
out(`machine: ${cpus().length} x ${cpus()[0]?.model}; node ${process.version}; stand-in device: ${model.name} (${(params / 1e9).toFixed(2)}B parameters, ${(kvBytesPerToken / 1024).toFixed(0)} KiB KV per token) on ${gpu.name}; decode at ${eff.decodeBandwidth} of bandwidth, prefill ${eff.prefillMfu} and training ${eff.trainMfu} of BF16 peak`);
out(`settings: ${problems} problems per iteration, ${iterations} iterations per run (the first not timed), ${blocks} block(s) of A (max_staleness 0) and B (1), rollout scaled to ${rolloutS} s, update ${share === null ? 'from the roofline' : `sized to ${(share * 100).toFixed(0)}% of the synchronous step`}; responses ${responseTokens} tokens on average (+-${spread * 100}%)${sets.length ? `; --set ${sets.join(' ')}` : ''}`);

for (const shape of shapes) {
  const probe = configOf(shape, 'probe', 0);
  const agentTurns = ((probe.env as { max_turns?: number }).max_turns ?? 1) * probe.multi_agent_interaction.turn_order.length;
  const work: WorkShape = { problems, k: probe.training.train_sample_num, agentTurns, promptTokens: shape.promptTokens, responseTokens, spread, training: shape.training };
  const costs = deviceCosts(gpu, model, work, eff);
  const samples = samplesPerIteration(work);
  // One scale per shape (the exclusive device's rollout to --rollout-s), so that every update model is in the same GPU seconds.
  const rolloutOf = (m: StandinModel) => lockstepRolloutMs(costs, work, maxRowsOf(gpu, model, work, m === 'exclusive'));
  const scale = (rolloutS * 1000) / rolloutOf('exclusive');
  const rooflineUpdateMs = samples * costs.updateMsPerSample;
  out();
  out(`### ${shape.title}, ${problems} problems`);
  out();
  out(`Modelled on the ${gpu.name}, unscaled: a decoding step over B rows max(${costs.stepWeightsMs.toFixed(2)} + B x ${costs.stepRowMs.toFixed(4)}, B x ${costs.stepRowFlopsMs.toFixed(4)}) ms; prefill ${costs.prefillMs.toFixed(1)} ms a turn; ` +
    `rollout (lock step) ${(rolloutOf('exclusive') / 1000).toFixed(1)} s at ${maxRowsOf(gpu, model, work, true)} rows (exclusive) and ${(rolloutOf('overlap') / 1000).toFixed(1)} s at ${maxRowsOf(gpu, model, work, false)} rows (shared, overlap); ` +
    `update (roofline, ${samples} samples, ${shape.training}) ${(rooflineUpdateMs / 1000).toFixed(1)} s = ${((100 * rooflineUpdateMs) / (rooflineUpdateMs + rolloutOf('exclusive'))).toFixed(0)}% of the synchronous step. ` +
    `Scaled by ${scale.toFixed(4)} (1 s here = ${(1 / scale).toFixed(1)} s on the GPU).`);
  out();
  out('| updates | max_staleness | timed iterations | iteration s (mean ± sd) | episodes s | update s | rest s | device busy s | speedup | ideal async s from the sync runs (speedup bound) | ideal async s from its own runs (iteration / it) |');
  out('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const m of updateModels) {
    const rows = maxRowsOf(gpu, model, work, m === 'exclusive');
    const updateMs = share === null ? rooflineUpdateMs : (share / (1 - share)) * rolloutOf(m);
    const timeline = join(scratch, `${shape.name}-${m}.jsonl`);
    const { child, queue } = await startStandin(
      [
        '--update-model', m,
        '--step-weights-ms', String(costs.stepWeightsMs * scale),
        '--step-row-ms', String(costs.stepRowMs * scale),
        '--step-row-flops-ms', String(costs.stepRowFlopsMs * scale),
        '--prefill-ms', String(costs.prefillMs * scale),
        '--update-ms-per-sample', String((updateMs / samples) * scale),
        '--max-rows', String(rows),
        '--response-tokens', String(responseTokens),
        '--spread', String(spread),
        '--text-chars', String(textChars),
        '--timeline', timeline,
        ...(m === 'split' ? ['--refit-ms', String(refitS * 1000 * scale)] : []),
      ],
      join(scratch, `${shape.name}-${m}.log`),
    );
    const runs: { staleness: number; runId: string }[] = [];
    for (let b = 0; b < blocks; b++) {
      for (const staleness of b % 2 === 0 ? [0, 1] : [1, 0]) {
        const runId = `bench-async-${stamp}-${shape.name}-${m}-s${staleness}-b${b}`;
        const t0 = Date.now();
        const handle = await client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: configOf(shape, queue, staleness, m === 'split') }] });
        await handle.result();
        log(`${runId}: ${iterations} iterations in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        runs.push({ staleness, runId });
      }
    }
    await stopStandin(child);
    const records = readFileSync(timeline, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const figures = await Promise.all(runs.map(async (r) => ({ ...r, per: figuresOf(records, r.runId, await episodeSpans(client, r.runId)) })));
    const [sync, async] = [0, 1].map((staleness) => figures.filter((r) => r.staleness === staleness).flatMap((r) => r.per));
    const meanOf = (xs: typeof sync, key: 'wall' | 'episodes' | 'update' | 'updateWall' | 'busy' | 'window' | 'updateWait' | 'sync') => mean(xs.map((x) => x[key]));
    for (const r of figures) for (const x of r.per) if (x.stall > 2000) stalls.push(`${r.runId} iteration ${x.it}: no turn in flight for ${s1(x.stall)} s (the stack stalled or restarted? its figures are suspect)`);
    const T = meanOf(sync, 'wall');
    const E = meanOf(sync, 'episodes');
    const U = meanOf(sync, 'update');
    const D = meanOf(sync, 'busy');
    // The ideal asynchronous iteration: rollout (the episodes) and update fully overlapped, every other
    // step of the iteration (the update's dispatch, its record, the next opening) hidden as well; with
    // one device (exclusive, shared), the device still does the rollout's work and the update's, one
    // after the other or sharing its time, so they add up. From the synchronous runs (the issue's
    // bound), and from the asynchronous runs' own figures (what they could have reached with the
    // rollouts they had: the machine's load drifts between runs, and moves the first).
    // Split: the update, then its sync, on the version's path; the rollout beside them on its own device.
    const S = meanOf(sync, 'sync');
    const idealOf = (e: number, u: number, d: number, s = 0) => (m === 'overlap' ? Math.max(e, u) : m === 'split' ? Math.max(e, u + s) : Math.max(e, d + u));
    const ideal = idealOf(E, U, D, S);
    const A = meanOf(async, 'wall');
    const own = m === 'overlap' || m === 'split' ? idealOf(meanOf(async, 'episodes'), meanOf(async, 'update'), 0, meanOf(async, 'sync')) : meanOf(async, 'busy') + meanOf(async, 'update');
    for (const [staleness, xs] of [[0, sync], [1, async]] as const) {
      const W = meanOf(xs, 'wall');
      const cells = [
        `${m} (${rows} rows)`,
        String(staleness),
        `${xs.length}${staleness === 0 ? '' : ` (${xs.filter((x) => x.overlapped).length} overlapped)`}`,
        `${s1(W)} ± ${s1(sd(xs.map((x) => x.wall)))}`,
        s1(meanOf(xs, 'episodes')),
        s1(meanOf(xs, 'update')),
        staleness === 0 ? s1(T - E - U) : '',
        s1(meanOf(xs, 'busy')),
        staleness === 0 ? '' : `**${(T / W).toFixed(2)}x**`,
        staleness === 0 ? '' : `${s1(ideal)} (${(T / ideal).toFixed(2)}x)`,
        staleness === 0 ? '' : `${s1(own)} (${(W / own).toFixed(2)})`,
      ];
      out(`| ${cells.join(' | ')} |`);
    }
    notes.push(
      `${m}: update share of the synchronous step ${((100 * U) / T).toFixed(0)}%; speedup ${(T / A).toFixed(2)}x against a bound of ${(T / ideal).toFixed(2)}x (target 1.3x: ${T / A >= 1.3 ? 'met' : 'not met'}); the asynchronous iteration ${((100 * (A - own)) / own).toFixed(0).replace(/^-0$/, '0')}% over the ideal of its own rollouts; ` +
        `synchronous turns, first to last, ${s1(meanOf(sync, 'window'))} s, the device busy ${s1(D)} s of them` +
        `${m === 'exclusive' ? `; asynchronous updates waited ${s1(meanOf(async, 'updateWait'))} s an iteration for the rows in flight` : ''}` +
        `${m === 'split' ? `; each update's sync to the rollout engine took ${s1(S)} s (synchronous) and ${s1(meanOf(async, 'sync'))} s (asynchronous) an iteration, for a refit of ${refitS} s on the GPU` : ''}` +
        `${m === 'shared' ? `; asynchronous updates took ${s1(meanOf(async, 'updateWall'))} s of wall time an iteration for their ${s1(meanOf(async, 'update'))} s of device time (sharing it with the rows)` : ''}.`,
    );
  }
  out();
  for (const n of notes.splice(0)) out(`- ${n}`);
  for (const w of stalls.splice(0)) out(`- warning: ${w}`);
}
out();
out('episodes s: from the workflow task that opened the iteration\'s first episode to its last episode\'s end (the rollout, its orchestration included); update s: the updates\' device time; rest s: the rest of a synchronous iteration (the update\'s dispatch and record, the next opening); device busy s: prefilling and decoding. ideal async: max(episodes, update) (overlap), max(episodes, device busy + update) (exclusive, shared: one device does both), from the synchronous runs, and from the asynchronous runs themselves (overlap: max(their episodes, update); exclusive, shared: their device busy + update). updates: exclusive, the update has the device alone (newcomers held, the rows in flight finish first); shared, Tandem\'s engine with overlap on one device (the update and the rows each get half of its time while both have work); overlap, beside generation without slowing it (separate GPUs); split, a rollout engine generates on one device and a trainer updates on another, each update followed by its sync to the rollout engine (the refit\'s time taken from the rollout device): ideal max(episodes, update + sync).');
log(`stand-in logs and timelines: ${scratch}`);
await client.connection.close();
