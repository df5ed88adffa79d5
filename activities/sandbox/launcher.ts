// The worker's side of the sandbox launcher (launcher.mjs): one launcher process per worker,
// started on first use and again after it died; `launch` starts one command line through it and
// returns a handle with the events of a child process: 'spawn', 'data' (fd, bytes), 'exit',
// 'error', then 'close' last.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const SCRIPT = fileURLToPath(new URL('./launcher.mjs', import.meta.url));

export interface Launched extends EventEmitter {
  /** Set once it started. */
  pid?: number;
  /** SIGKILL to its process group, unless it has been reaped already. */
  kill(): void;
}

/** The launcher died during a run (its program died with it); a retry starts a new launcher. */
export class LauncherDied extends Error {
  override name = 'LauncherDied';
}

interface Run extends Launched {
  /** The launcher it went through. */
  via: ChildProcessWithoutNullStreams;
}

type Message = { id: number; pid?: number; fd?: number; data?: string; exit?: number | null; signal?: string | null; error?: string; closed?: boolean };

let proc: ChildProcessWithoutNullStreams | undefined;
const runs = new Map<number, Run>();
let nextId = 1;

function launcher(): ChildProcessWithoutNullStreams {
  if (proc) return proc;
  // setpriv --pdeathsig: the launcher dies with this process, whatever ends it.
  const p = spawn('/usr/bin/setpriv', ['--pdeathsig', 'KILL', '--', process.execPath, SCRIPT], { stdio: 'pipe' });
  proc = p;
  p.stdin.on('error', () => {}); // it died: its exit fails the runs
  p.stderr.on('data', (b: Buffer) => process.stderr.write(`[sandbox launcher] ${b}`));
  createInterface({ input: p.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Message;
    const run = runs.get(m.id);
    if (!run) return;
    if (m.pid !== undefined) {
      run.pid = m.pid;
      run.emit('spawn');
    } else if (m.data !== undefined) run.emit('data', m.fd, Buffer.from(m.data, 'base64'));
    else if (m.error !== undefined) run.emit('error', new Error(m.error));
    else if (m.closed) {
      runs.delete(m.id);
      hold(p, runs.size > 0);
      run.emit('close');
    } else run.emit('exit', m.exit ?? null, m.signal ?? null);
  });
  // Its programs die with it (each one's setpriv --pdeathsig); their runs fail, and are retried.
  const fail = (why: string) => {
    if (proc === p) proc = undefined;
    for (const [id, run] of [...runs].filter(([, r]) => r.via === p)) {
      runs.delete(id);
      run.emit('error', new LauncherDied(`the sandbox launcher ${why}`));
      run.emit('close');
    }
  };
  p.on('exit', (code, signal) => fail(`exited (${signal ?? `code ${code}`})`));
  p.on('error', (e) => fail(`could not start: ${e.message}`));
  return p;
}

/** An idle launcher does not keep this process alive (a CLI command ends when its work does). */
function hold(p: ChildProcessWithoutNullStreams, busy: boolean): void {
  for (const h of [p, p.stdin, p.stdout, p.stderr] as unknown as Array<{ ref(): void; unref(): void }>) {
    if (busy) h.ref();
    else h.unref();
  }
}

/** Starts `file args` in a new session and process group, with `env` and `stdin` (then closed). */
export function launch(file: string, args: string[], opts: { env: Record<string, string>; stdin: string }): Launched {
  const id = nextId++;
  const p = launcher();
  const run: Run = Object.assign(new EventEmitter(), {
    via: p,
    pid: undefined as number | undefined,
    kill: () => {
      if (runs.has(id)) p.stdin.write(`${JSON.stringify({ op: 'kill', id })}\n`);
    },
  });
  runs.set(id, run);
  hold(p, true);
  p.stdin.write(`${JSON.stringify({ op: 'run', id, file, args, env: opts.env, stdin: opts.stdin })}\n`);
  return run;
}
