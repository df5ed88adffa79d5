// Sandbox throughput: executions per second of a trivial program (`pass`) through runSandboxed at
// concurrency 1 and 4, against a bare `/usr/bin/python3 -c pass` subprocess at the same
// concurrency, and the per-run overhead of the sandbox. Prints a table, with this process's own
// CPU per run and its event loop's longest stall. Needs root (as the sandbox does).
//   node --import tsx bench/sandbox.ts [seconds-per-case] [--ballast MB]
// --ballast: this process first fills MB of memory, standing for a worker's heap (a CPU worker
// holds 200-300 MB): what starting a program costs the process that asks for it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { checkSandbox, runSandboxed, setSandboxConcurrency } from '../activities/sandbox/index.js';

const args = process.argv.slice(2);
const at = args.indexOf('--ballast');
const BALLAST_MB = at >= 0 ? Number(args[at + 1]) : 0;
const SECONDS = Number(args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--ballast') ?? 5);
const ballast = Array.from({ length: BALLAST_MB }, () => Buffer.alloc(1 << 20, 1));

function bare(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', ['-c', 'pass'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`python3 exited ${code}`))));
  });
}

async function sandboxed(): Promise<void> {
  const r = await runSandboxed('pass');
  if (r.exitCode !== 0) throw new Error(`sandboxed run failed: ${r.killedBy} ${r.stderr}`);
}

interface Row {
  name: string;
  concurrency: number;
  runs: number;
  perSec: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  /** This process's CPU milliseconds per run, and its event loop's longest stall. */
  cpuMsPerRun: number;
  stallMs: number;
}

/** Keeps `concurrency` runs of `op` in flight for SECONDS (after a short warm-up). */
async function measure(name: string, concurrency: number, op: () => Promise<void>): Promise<Row> {
  for (let i = 0; i < 3; i++) await op();
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await op();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return {
    name,
    concurrency,
    runs: latencies.length,
    perSec: latencies.length / elapsed,
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p50Ms: q(0.5),
    p95Ms: q(0.95),
    cpuMsPerRun: (cpu.user + cpu.system) / 1000 / latencies.length,
    stallMs: loop.max / 1e6,
  };
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

await checkSandbox();
console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${os.platform()} ${os.release()}`);
console.log(`load average before: ${load()}; ${SECONDS} s per case; ballast ${ballast.length} MB, this process's RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`);

const rows: Row[] = [];
for (const concurrency of [1, 4]) {
  setSandboxConcurrency(concurrency);
  rows.push(await measure('bare python3 -c pass', concurrency, bare));
  rows.push(await measure('runSandboxed("pass")', concurrency, sandboxed));
}

const pad = (s: string, n: number) => s.padEnd(n);
const num = (x: number, d = 1) => x.toFixed(d).padStart(8);
console.log(`\n${pad('case', 24)} ${'conc'.padStart(4)} ${'runs'.padStart(6)} ${'runs/s'.padStart(8)} ${'mean ms'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'cpu ms/run'.padStart(10)} ${'stall ms'.padStart(8)}`);
for (const r of rows) {
  console.log(`${pad(r.name, 24)} ${String(r.concurrency).padStart(4)} ${String(r.runs).padStart(6)} ${num(r.perSec)} ${num(r.meanMs)} ${num(r.p50Ms)} ${num(r.p95Ms)} ${num(r.cpuMsPerRun, 2).padStart(10)} ${num(r.stallMs)}`);
}
for (const concurrency of [1, 4]) {
  const [b, s] = rows.filter((r) => r.concurrency === concurrency);
  console.log(
    `overhead at concurrency ${concurrency}: +${(s.meanMs - b.meanMs).toFixed(1)} ms per run (mean), ` +
      `${(b.perSec / s.perSec).toFixed(2)}x fewer runs/s than bare python3`,
  );
}
console.log(`load average after: ${load()}`);
