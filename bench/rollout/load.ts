// The rollout's in-process side (direct.ts) beside a synthetic CPU load: what a given amount of
// CPU, spread evenly over the rollout and taken from no hop of its critical path, costs the engine
// alone. The stack's orchestration uses about as much CPU beside its engine (run.ts prints it);
// the difference between the two costs is what its hops' latencies, slowed down by that same load,
// add on top.
//
//   node --import tsx bench/rollout/load.ts [--config FILE] [--loads 0,0.5,0,0.5] [--procs N]
//        [--burst MS] [--runs N] [key=value ...]
//
// Each load (in cores) is run by --procs busy-loop processes, each in a session of its own as the
// stack's services are (so each is an autogroup of its own to the scheduler), busy for --burst ms at
// a time; every run of a block plays the same run id, hence the same problems and sampling seeds.
// Needs no stack.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rolloutConfig, rolloutDirect } from './direct.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const file = opt('--config', 'configs/planpath/planpath_L1_prompt.yaml');
const loads = opt('--loads', '0,0.5,0,0.5').split(',').map(Number);
const procs = Number(opt('--procs', '1'));
const burstMs = Number(opt('--burst', '5'));
const runs = Number(opt('--runs', '3'));
for (const [name, v] of [['--procs', procs], ['--burst', burstMs], ['--runs', runs]] as const)
  if (!(v > 0)) throw new Error(`${name} ${v}: not a positive number`);
loads.forEach((l) => {
  if (!(l >= 0 && l <= procs)) throw new Error(`--loads: ${l} is not between 0 and --procs (${procs}) cores`);
});
const overrides = argv.filter((a, i) => a.includes('=') && !argv[i - 1]?.startsWith('--'));
const cfg = rolloutConfig(file, overrides);

/** The load's processes (detached) and the run's scratch folder: gone with this process however it ends. */
const running = new Set<ReturnType<typeof spawn>>();
let scratch: string | undefined;
process.on('exit', () => {
  running.forEach((b) => b.kill('SIGKILL'));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** A process busy `share` of one core, in bursts of burstMs, in a session of its own. */
function burner(share: number) {
  const code = `const a=new Int32Array(new SharedArrayBuffer(4)),b=${burstMs},p=${burstMs / share};for(;;){const t=performance.now();while(performance.now()-t<b);Atomics.wait(a,0,0,Math.max(0,p-(performance.now()-t)));}`;
  const b = spawn(process.execPath, ['-e', code], { stdio: 'ignore', detached: true });
  running.add(b);
  return b;
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
console.log(`config: ${file} ${overrides.join(' ')}; ${runs} runs per load; the load in ${procs} process(es), bursts of ${burstMs} ms`);
const byLoad = new Map<number, number[]>();
for (const load of loads) {
  const burners = load > 0 ? Array.from({ length: procs }, () => burner(load / procs)) : [];
  await new Promise((r) => setTimeout(r, 300));
  const tps: number[] = [];
  for (let r = 0; r < runs; r++) {
    scratch = mkdtempSync(join(tmpdir(), 'tandem-bench-load-'));
    const f = await rolloutDirect(cfg, 'bench-rollout-load', scratch);
    rmSync(scratch, { recursive: true, force: true });
    scratch = undefined;
    tps.push(f.generatedTokens / f.seconds);
  }
  for (const b of burners) {
    b.kill('SIGKILL');
    running.delete(b);
  }
  byLoad.set(load, [...(byLoad.get(load) ?? []), ...tps]);
  console.log(`load ${load} cores: in-process tokens/s ${tps.map((x) => x.toFixed(0)).join(', ')} (mean ${mean(tps).toFixed(0)})`);
}
const base = byLoad.get(0);
if (base)
  for (const [load, tps] of [...byLoad].sort((a, b) => a[0] - b[0]))
    console.log(`load ${load} cores: mean ${mean(tps).toFixed(0)} tokens/s over ${tps.length} runs, ${(mean(tps) / mean(base)).toFixed(3)} of no load`);
