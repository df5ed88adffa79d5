// Rollout at engine speed? The same rollout work (one iteration of a config: its problems, K,
// lengths, sampling seeds and episodes in flight) (a) through the stack and (b) in one process
// driving an engine directly (direct.ts), with the same torch thread count, side by side.
//   node --import tsx bench/rollout/run.ts [--quick] [--runs N] [--config FILE] [key=value ...]
// Needs a running stack (`npx tandem stack up`; the TANDEM_* settings choose which) and root
// (the sandbox). Default config: the quickstart's (configs/planpath/planpath_L1_prompt.yaml);
// for mixed adapters pass --config configs/planpath/planpath_L2_lora.yaml. --quick: 4 problems.
// --runs N: N pairs, each a stack run then an in-process run of the same work (the machine's
// drift between pairs cancels in each pair's ratio); then their ratios, mean and standard
// deviation. The last line is exactly `ratio stack/engine tokens/s: X.XX` (with N > 1, the mean
// of the pairs' ratios).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineThreads } from '../../infra/engine/client.js';
import { stackSettings } from '../../infra/settings.js';
import { runFolder } from '../../activities/policy.js';
import { temporalClient } from '../../services/client/temporal.js';
import { rolloutConfig, rolloutDirect, type RolloutFigures } from './direct.js';
import { rolloutThroughStack, stackNode } from './stack.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--config');
const file = at >= 0 ? argv[at + 1] : 'configs/planpath/planpath_L1_prompt.yaml';
const overrides = argv.filter((a, i) => a.includes('=') && argv[i - 1] !== '--config');
const quick = argv.includes('--quick');
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 1;
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${argv[runsAt + 1]}: not a whole number of runs (1 or more)`);
const cfg = rolloutConfig(file, [...(quick ? ['training.train_batch_size=4'] : []), ...overrides]);

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const f = (x: number, d = 1) => x.toFixed(d);

const client = await temporalClient();
const tps = (r: { generatedTokens: number; seconds: number }) => r.generatedTokens / r.seconds;
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; engine torch threads ${engineThreads('cpu') ?? '(torch default)'}; node ${process.version} (this process), ${stackNode()} (the stack's CPU worker)`);
console.log(`config: ${file} ${overrides.join(' ')}; ${cfg.training.train_batch_size} problems, K ${cfg.training.train_sample_num}, max_response_length ${cfg.training.max_response_length}, episode_window ${cfg.rollout.episode_window ?? 'all'}`);

/** One pair: the stack's run, then the same work in process; prints both and returns their ratio. */
async function pair(): Promise<{ ratio: number; stack: number; engine: number; extra: ExtraTime }> {
  const runId = `bench-rollout-${Date.now()}`;
  const stack = await rolloutThroughStack(client, cfg, runId);
  // The run's checkpoint (its one update's) is of no further use: without this, every bench run
  // left about 30 MB of the tiny model's, more of a real one's, in the stack's data folder.
  rmSync(runFolder(runId, cfg.data_dir, stackSettings().dataDir), { recursive: true, force: true });
  // The same run id: the same episode ids, hence the same sampling seeds.
  const scratch = mkdtempSync(join(tmpdir(), 'tandem-bench-rollout-'));
  const direct = await rolloutDirect(cfg, runId, scratch);
  rmSync(scratch, { recursive: true, force: true });
  for (const [name, r] of [['stack', stack], ['engine', direct]] as const) {
    console.log(`${name.padEnd(6)}: ${r.generatedTokens} tokens in ${f(r.seconds)} s = ${f(tps(r))} tokens/s; ${r.turns} agent turns; engine busy ${f((100 * r.engineSeconds) / r.seconds, 0)}%, ${r.engineSteps} decoding steps (${f(r.generatedTokens / r.engineSteps)} tokens per step), ${r.enginePrefills} prefills, ${r.engineCacheCopies} cache copies, engine on a core ${f(r.engineSched.onCpu)} s, waiting for one ${f(r.engineSched.waiting, 2)} s; the machine's CPU beside the engine ${f(r.besideEngine, 2)} s`);
  }
  for (const [name, r] of [['stack', stack], ['engine', direct]] as const) {
    console.log(`${name.padEnd(6)}: episode start -> first turn p50 ${f(pct(r.openingMs, 0.5), 0)} ms; a turn's result -> the next turn (its scoring included) p50 ${f(pct(r.betweenTurnsMs, 0.5), 0)} ms, p95 ${f(pct(r.betweenTurnsMs, 0.95), 0)} ms; last turn's result -> episode end p50 ${f(pct(r.closingMs, 0.5), 0)} ms`);
  }
  console.log(`stack, per agent turn: scheduled -> started p50 ${f(pct(stack.dispatchMs, 0.5), 0)} ms, p95 ${f(pct(stack.dispatchMs, 0.95), 0)} ms; the episodes' workflow tasks scheduled -> started p50 ${f(pct(stack.workflowTaskMs, 0.5), 0)} ms, p95 ${f(pct(stack.workflowTaskMs, 0.95), 0)} ms; one scoring takes ${f(stack.scoringMs, 0)} ms on average`);
  console.log(`stack CPU seconds during the rollout: ${Object.entries(stack.cpuSeconds).map(([n, s]) => `${n} ${f(s, 2)}`).join(', ')}`);
  const extra = extraTime(stack, direct);
  console.log(`stack - in process: ${said(extra)}`);
  return { ratio: tps(stack) / tps(direct), stack: tps(stack), engine: tps(direct), extra };
}

/**
 * Where the stack's longer window goes, against the in-process run of the same work: the engine
 * busy longer (its steps' wall time: more time on a core for the same tokens, when what runs
 * beside it slows it, and more time runnable but waiting for a core) or idle longer (waiting for
 * requests: the orchestration's latency). Seconds, stack minus in process.
 */
function extraTime(stack: RolloutFigures, direct: RolloutFigures) {
  return {
    window: stack.seconds - direct.seconds,
    busy: stack.engineSeconds - direct.engineSeconds,
    onCpu: stack.engineSched.onCpu - direct.engineSched.onCpu,
    waiting: stack.engineSched.waiting - direct.engineSched.waiting,
    idle: stack.seconds - stack.engineSeconds - (direct.seconds - direct.engineSeconds),
    beside: stack.besideEngine - direct.besideEngine,
  };
}
type ExtraTime = ReturnType<typeof extraTime>;
const sgn = (x: number) => `${x < 0 ? '-' : '+'}${f(Math.abs(x), 2)}`;
const said = (e: ExtraTime) =>
  `window ${sgn(e.window)} s = the engine busy ${sgn(e.busy)} s (on a core ${sgn(e.onCpu)} s, waiting for one ${sgn(e.waiting)} s) and idle ${sgn(e.idle)} s; the machine's CPU beside the engine ${sgn(e.beside)} s`;

const pairs: Awaited<ReturnType<typeof pair>>[] = [];
for (let r = 1; r <= runs; r++) {
  if (runs > 1) console.log(`-- pair ${r} of ${runs}`);
  pairs.push(await pair());
  if (runs > 1) console.log(`pair ${r}: ratio ${pairs[r - 1].ratio.toFixed(2)}`);
}
await client.connection.close();

const ratios = pairs.map((p) => p.ratio);
const meanOf = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
if (runs > 1) {
  const m = meanOf(ratios);
  const sd = Math.sqrt(ratios.reduce((a, x) => a + (x - m) ** 2, 0) / (ratios.length - 1));
  console.log(`${runs} pairs: stack ${f(meanOf(pairs.map((p) => p.stack)))} tokens/s, in process ${f(meanOf(pairs.map((p) => p.engine)))} tokens/s (means); ratios ${ratios.map((x) => x.toFixed(2)).join(', ')}; mean ${m.toFixed(3)}, sd ${sd.toFixed(3)}`);
  const meanExtra = Object.fromEntries(Object.keys(pairs[0].extra).map((k) => [k, meanOf(pairs.map((p) => p.extra[k as keyof ExtraTime]))])) as ExtraTime;
  console.log(`stack - in process, means: ${said(meanExtra)}`);
}
console.log(`ratio stack/engine tokens/s: ${meanOf(ratios).toFixed(2)}`);
