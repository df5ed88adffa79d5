// Rollout at engine speed? The same rollout work (one iteration of a config: its problems, K,
// lengths, sampling seeds and episodes in flight) (a) through the stack and (b) in one process
// driving an engine directly (direct.ts), with the same torch thread count, side by side.
//   node --import tsx bench/rollout/run.ts [--quick] [--config FILE] [key=value ...]
// Needs a running stack (`npx tandem stack up`; the TANDEM_* settings choose which) and root
// (the sandbox). Default config: the quickstart's (configs/planpath/planpath_L1_prompt.yaml);
// for mixed adapters pass --config configs/planpath/planpath_L2_lora.yaml. --quick: 4 problems.
// The last line is exactly `ratio stack/engine tokens/s: X.XX`.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRunConfig } from '../../configs/load.js';
import { engineThreads } from '../../infra/engine/client.js';
import { stackSettings } from '../../infra/settings.js';
import { runFolder } from '../../policy/activities.js';
import { temporalClient } from '../../services/cli/temporal.js';
import { rolloutDirect } from './direct.js';
import { rolloutThroughStack } from './stack.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--config');
const file = at >= 0 ? argv[at + 1] : 'configs/planpath/planpath_L1_prompt.yaml';
const overrides = argv.filter((a, i) => a.includes('=') && argv[i - 1] !== '--config');
const quick = argv.includes('--quick');
const loaded = loadRunConfig(file, ['training.total_training_steps=1', 'training.val_freq=0', ...(quick ? ['training.train_batch_size=4'] : []), ...overrides]);
if (!loaded.ok) throw new Error(`${file}: ${JSON.stringify(loaded.issues)}`);
const cfg = loaded.config;

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const f = (x: number, d = 1) => x.toFixed(d);

const runId = `bench-rollout-${Date.now()}`;
const client = await temporalClient();
const stack = await rolloutThroughStack(client, cfg, runId);
// The run's checkpoint (its one update's) is of no further use: without this, every bench run
// left about 30 MB of the tiny model's, more of a real one's, in the stack's data folder.
rmSync(runFolder(runId, cfg.data_dir, stackSettings().dataDir), { recursive: true, force: true });
// The same run id: the same episode ids, hence the same sampling seeds.
const scratch = mkdtempSync(join(tmpdir(), 'tandem-bench-rollout-'));
const direct = await rolloutDirect(cfg, runId, scratch);
rmSync(scratch, { recursive: true, force: true });
await client.connection.close();

const tps = (r: { generatedTokens: number; seconds: number }) => r.generatedTokens / r.seconds;
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; engine torch threads ${engineThreads('cpu') ?? '(torch default)'}`);
console.log(`config: ${file} ${overrides.join(' ')}; ${cfg.training.train_batch_size} problems, K ${cfg.training.train_sample_num}, max_response_length ${cfg.training.max_response_length}, episode_window ${cfg.rollout.episode_window ?? 'all'}`);
for (const [name, r] of [['stack', stack], ['engine', direct]] as const) {
  console.log(`${name.padEnd(6)}: ${r.generatedTokens} tokens in ${f(r.seconds)} s = ${f(tps(r))} tokens/s; ${r.turns} agent turns; engine busy ${f((100 * r.engineSeconds) / r.seconds, 0)}%, ${r.engineSteps} decoding steps (${f(r.generatedTokens / r.engineSteps)} tokens per step), ${r.enginePrefills} prefills, ${r.engineCacheCopies} cache copies, engine on a core ${f(r.engineSched.onCpu)} s, waiting for one ${f(r.engineSched.waiting, 2)} s; the machine's CPU beside the engine ${f(r.besideEngine, 2)} s`);
}
for (const [name, r] of [['stack', stack], ['engine', direct]] as const) {
  console.log(`${name.padEnd(6)}: episode start -> first turn p50 ${f(pct(r.openingMs, 0.5), 0)} ms; a turn's result -> the next turn (its scoring included) p50 ${f(pct(r.betweenTurnsMs, 0.5), 0)} ms, p95 ${f(pct(r.betweenTurnsMs, 0.95), 0)} ms; last turn's result -> episode end p50 ${f(pct(r.closingMs, 0.5), 0)} ms`);
}
console.log(`stack, per agent turn: scheduled -> started p50 ${f(pct(stack.dispatchMs, 0.5), 0)} ms, p95 ${f(pct(stack.dispatchMs, 0.95), 0)} ms; one scoring takes ${f(stack.scoringMs, 0)} ms on average`);
console.log(`stack CPU seconds during the rollout: ${Object.entries(stack.cpuSeconds).map(([n, s]) => `${n} ${f(s, 2)}`).join(', ')}`);
console.log(`ratio stack/engine tokens/s: ${(tps(stack) / tps(direct)).toFixed(2)}`);
