// runSandboxed: runs one model-written Python program in the sandbox and reports what happened.
// See "The sandbox" in docs/ARCHITECTURE.md for the mechanism and its limits.
import { constants as fsConstants } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { recordableText } from '../../domain/events.js';
import { projectRoot } from '../../infra/settings.js';
import { fakeEtc, INNER_ID, sandboxCommand, STATUS_FD, TOOLS } from './command.js';
import { type Limits, outputKillBytes, resolveLimits, type SandboxOptions } from './limits.js';
import { launch, LauncherDied } from './launcher.js';
import { killInside, killUid } from './processes.js';
import { acquireSlot, releaseSlot, uidOfSlot } from './slots.js';

export type KillReason = 'timeout' | 'cpu' | 'memory' | 'output' | 'processes';

export interface SandboxResult {
  /** The program's exit code; null when it was killed (by a signal or by a limit). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** The wall-clock limit was reached and the program killed. */
  timedOut: boolean;
  /** Why the program ended abnormally: a limit it hit, or the name of the signal that killed it. */
  killedBy: KillReason | string | null;
  durationMs: number;
}

/** The sandbox cannot isolate programs on this machine; nothing was run. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

/** A run's host folder is os.tmpdir()/<prefix><worker pid>-XXXXXX, removed after the run. */
export const HOST_DIR_PREFIX = 'tandem-sbx-';

/** Runs `code` with the system python3 in the sandbox; waits for a free slot first. */
export async function runSandboxed(code: string, opts: SandboxOptions = {}): Promise<SandboxResult> {
  const limits = resolveLimits(opts);
  await checkSandbox();
  return runInSlot(code, opts.stdin ?? '', limits);
}

async function runInSlot(code: string, stdin: string, limits: Limits): Promise<SandboxResult> {
  const slot = await acquireSlot();
  try {
    return await execute(code, stdin, limits, uidOfSlot(slot));
  } finally {
    releaseSlot(slot);
  }
}

async function execute(code: string, stdin: string, limits: Limits, uid: number): Promise<SandboxResult> {
  const hostDir = await mkdtemp(join(os.tmpdir(), `${HOST_DIR_PREFIX}${process.pid}-`));
  try {
    // Root owns the folder; the sandbox's uid may only read the files bound into it (explicit
    // modes: the worker's umask must not make them unreadable).
    const files: Array<[string, string]> = [
      ...Object.entries(fakeEtc()).map(([name, text]): [string, string] => [join('etc', name), text]),
      ['main.py', code],
    ];
    await chmod(hostDir, 0o711);
    await mkdir(join(hostDir, 'etc'));
    await chmod(join(hostDir, 'etc'), 0o755);
    for (const [name, text] of files) {
      await writeFile(join(hostDir, name), text);
      await chmod(join(hostDir, name), 0o644);
    }
    const { result, clean } = await spawnSandbox(sandboxCommand({ uid, hostDir, limits }), stdin, limits, uid);
    if (!clean) await killUid(uid);
    return result;
  } catch (e) {
    await killUid(uid);
    throw e;
  } finally {
    await rm(hostDir, { recursive: true, force: true });
  }
}

class Capped {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  private tailBuf = Buffer.alloc(0);
  constructor(private readonly cap: number) {}
  push(b: Buffer): void {
    this.total += b.length;
    if (this.kept < this.cap) {
      const part = b.subarray(0, this.cap - this.kept);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.tailBuf = Buffer.concat([this.tailBuf, b.subarray(-4096)]).subarray(-4096);
  }
  get truncated(): boolean {
    return this.total > this.cap;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
  /** The last 4 KiB written, kept past the cap to tell why a program failed. */
  tail(): string {
    return this.tailBuf.toString('utf8');
  }
}

/**
 * Runs the command and collects the result. `clean`: `unshare` itself exited (it was not
 * killed), so it reaped bwrap, the init of its pid namespace, and the kernel had already killed
 * and reaped every process under it: no process of the slot's uid is left anywhere (all of them
 * descend from that namespace, and a process cannot leave its pid namespace). Otherwise the
 * caller kills what is left of the uid.
 */
function spawnSandbox(
  cmd: { file: string; args: string[] },
  stdin: string,
  limits: Limits,
  uid: number,
): Promise<{ result: SandboxResult; clean: boolean }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    // Through the launcher (launcher.ts): a new session and process group, killed as a whole.
    const child = launch(cmd.file, cmd.args, { env: { PATH: '/usr/bin:/bin' }, stdin });
    const out = new Capped(limits.outputBytes);
    const err = new Capped(limits.outputBytes);
    const killAt = outputKillBytes(limits.outputBytes);
    let status = '';
    let ourKill: 'timeout' | 'output' | null = null;
    let spawnError: Error | null = null;

    // Stopping a run kills the sandbox's processes inside bwrap's pid namespace (as its uid);
    // bwrap then exits, and `unshare` reaps it. Killing the process group (unshare included) is
    // the fallback if that finds nothing yet (bwrap still setting up) or does not end the run.
    let fallback: NodeJS.Timeout | undefined;
    const stop = (reason: 'timeout' | 'output') => {
      if (ourKill !== null) return;
      ourKill = reason;
      fallback = setTimeout(() => child.kill(), 1000);
      void killInside(uid, child.pid ?? -1).then((killed) => killed || child.kill(), () => child.kill());
    };
    const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
    child.on('data', (fd: number, b: Buffer) => {
      if (fd === STATUS_FD) return void (status += b.toString('utf8'));
      const sink = fd === 1 ? out : err;
      sink.push(b);
      if (sink.total > killAt) stop('output');
    });
    let clean = false;
    child.on('exit', (code: number | null) => (clean = code !== null));
    child.on('error', (e: Error) => (spawnError = e));
    child.on('close', () => {
      clearTimeout(timer);
      clearTimeout(fallback);
      if (spawnError instanceof LauncherDied) return reject(spawnError);
      if (spawnError) return reject(new SandboxUnavailableError(`sandbox: cannot start ${cmd.file}: ${spawnError.message}`));
      const exit = /"exit-code"\s*:\s*(\d+)/.exec(status);
      if (!exit && ourKill === null) {
        // bwrap reports the exit code only of a program it started: the set-up failed.
        return reject(new SandboxUnavailableError(`sandbox set-up failed: ${err.text().trim() || 'no status from bwrap'}`));
      }
      const verdict = classify(exit ? Number(exit[1]) : null, ourKill, err.tail());
      const result: SandboxResult = {
        ...verdict,
        stdout: recordableText(out.text()),
        stderr: recordableText(err.text()),
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        timedOut: ourKill === 'timeout',
        durationMs: Math.round(performance.now() - start),
      };
      resolve({ result, clean });
    });
  });
}

const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n as number, name]));

/**
 * The exit code and the reason a program ended. bwrap reports a program killed by signal N as
 * exit code 128 + N (as shells do), so a program calling exit(128 + N) reads as killed by N.
 * 'memory' and 'processes' are read from the last line of stderr: under RLIMIT_AS and
 * RLIMIT_NPROC the kernel refuses the allocation or the fork, and Python ends with
 * MemoryError or BlockingIOError (EAGAIN) rather than being killed.
 */
export function classify(
  status: number | null,
  ourKill: 'timeout' | 'output' | null,
  stderrTail: string,
): { exitCode: number | null; killedBy: KillReason | string | null } {
  if (ourKill !== null || status === null) return { exitCode: null, killedBy: ourKill ?? 'SIGKILL' };
  const last = stderrTail.trimEnd().split('\n').pop() ?? '';
  const memory = /^MemoryError\b|Cannot allocate memory|out of memory/i.test(last);
  if (status > 128 && status <= 128 + 64) {
    const signal = status - 128;
    if (signal === os.constants.signals.SIGXCPU) return { exitCode: null, killedBy: 'cpu' };
    return { exitCode: null, killedBy: memory ? 'memory' : (SIGNAL_NAMES.get(signal) ?? `signal ${signal}`) };
  }
  if (status === 0) return { exitCode: 0, killedBy: null };
  if (memory) return { exitCode: status, killedBy: 'memory' };
  if (/^BlockingIOError: \[Errno 11\]|can't start new thread/.test(last)) return { exitCode: status, killedBy: 'processes' };
  return { exitCode: status, killedBy: null };
}

// ---------------------------------------------------------------- fail closed

let ready: Promise<void> | null = null;

/**
 * Checks once per process that the isolation works here (tools present, root to switch uids,
 * and a probe program that must find no network, no project or home folder, its own uid and
 * its limits in place). Rejects with SandboxUnavailableError otherwise; runSandboxed calls it.
 */
export function checkSandbox(): Promise<void> {
  ready ??= probe().catch((e: unknown) => {
    ready = null; // look again next time: set-up may have been run meanwhile
    throw e;
  });
  return ready;
}

/** Removes the host folders of runs whose worker died mid-run (killed before it could clean up). */
async function removeStaleDirs(): Promise<void> {
  const tmp = os.tmpdir();
  for (const name of await readdir(tmp).catch(() => [] as string[])) {
    const m = new RegExp(`^${HOST_DIR_PREFIX}(\\d+)-`).exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // its worker is alive
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') continue;
    }
    await rm(join(tmp, name), { recursive: true, force: true });
  }
}

async function probe(): Promise<void> {
  const fix = 'run infra/setup.sh (it installs bubblewrap) and start the worker as root';
  if (process.platform !== 'linux') throw new SandboxUnavailableError(`sandbox: needs Linux namespaces (platform ${process.platform})`);
  if (process.getuid?.() !== 0) {
    throw new SandboxUnavailableError(`sandbox: must run as root, to run each program under its own unprivileged uid (${fix})`);
  }
  for (const tool of Object.values(TOOLS)) {
    try {
      await access(tool, fsConstants.X_OK);
    } catch {
      throw new SandboxUnavailableError(`sandbox: ${tool} is missing (${fix})`);
    }
  }
  await removeStaleDirs();
  const hidden = [projectRoot, os.homedir(), '/root', '/home', '/work', '/var', '/run'];
  const code = `import json, os, resource
r = {'uid': os.getuid(), 'pid': os.getpid()}
r['visible'] = [p for p in ${JSON.stringify(hidden)} if os.path.exists(p)]
r['ifaces'] = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])
r['nproc'] = resource.getrlimit(resource.RLIMIT_NPROC)[0]
r['as'] = resource.getrlimit(resource.RLIMIT_AS)[0]
try:
    open('/probe', 'w')
    r['rootWritable'] = True
except OSError:
    r['rootWritable'] = False
print(json.dumps(r))
`;
  const limits = resolveLimits({ timeoutMs: 20_000 });
  let result: SandboxResult;
  try {
    result = await runInSlot(code, '', limits);
  } catch (e) {
    throw new SandboxUnavailableError(`sandbox: isolation is unavailable: ${e instanceof Error ? e.message : String(e)} (${fix})`);
  }
  let r: { uid: number; pid: number; visible: string[]; ifaces: string[]; nproc: number; as: number; rootWritable: boolean };
  try {
    r = JSON.parse(result.stdout);
  } catch {
    throw new SandboxUnavailableError(`sandbox: the probe program failed (exit ${result.exitCode}, ${result.killedBy ?? 'no kill'}): ${result.stderr.slice(0, 2000)}`);
  }
  const problems: string[] = [];
  if (r.uid !== INNER_ID) problems.push(`runs as uid ${r.uid}, not ${INNER_ID}`);
  if (r.pid > 4) problems.push(`has pid ${r.pid}: no pid namespace`);
  if (r.visible.length > 0) problems.push(`sees ${r.visible.join(', ')}`);
  if (r.ifaces.join(',') !== 'lo') problems.push(`has network interfaces ${r.ifaces.join(', ')}`);
  if (r.nproc !== limits.processes) problems.push(`has RLIMIT_NPROC ${r.nproc}`);
  if (r.as !== limits.memoryMb * 1024 * 1024) problems.push(`has RLIMIT_AS ${r.as}`);
  if (r.rootWritable) problems.push('can write to /');
  if (problems.length > 0) throw new SandboxUnavailableError(`sandbox: isolation check failed: the program ${problems.join('; ')}`);
}
