// The last line of defence: after a run, no process of the slot's uid may remain on the host.
// The pid namespace already takes every process of the program down when it ends; this finds
// (and kills) anything that got out of it anyway.
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { TOOLS } from './command.js';

export interface HostProcess {
  pid: number;
  ppid: number;
}

/** Live (not zombie) host processes whose real, effective or saved uid is `uid`. */
export async function processesOfUid(uid: number): Promise<HostProcess[]> {
  const entries = await readdir('/proc');
  const found: HostProcess[] = [];
  await Promise.all(
    entries.map(async (name) => {
      if (!/^\d+$/.test(name)) return;
      let status: string;
      try {
        status = await readFile(`/proc/${name}/status`, 'utf8');
      } catch {
        return; // gone meanwhile
      }
      const m = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
      if (/^State:\s+Z/m.test(status)) return; // exited, waiting to be reaped: holds nothing
      if (m && (Number(m[1]) === uid || Number(m[2]) === uid || Number(m[3]) === uid)) {
        found.push({ pid: Number(name), ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0) });
      }
    }),
  );
  return found;
}

/** Runs `kill -KILL ARGS` as `uid`: it can signal only that uid's processes, never a reused pid. */
function killAs(uid: number, args: string[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const k = spawn(TOOLS.kill, ['-KILL', '--', ...args], { uid, gid: uid, stdio: 'ignore' });
    k.on('error', () => resolve());
    k.on('close', () => resolve());
  });
}

/**
 * Kills the processes of `uid` except the children of `parent` (the sandbox's outer bwrap, whose
 * parent is `unshare`): killing bwrap's own init takes its pid namespace down, bwrap reports
 * that and exits, and `unshare` reaps it. Returns false if there was nothing to kill yet.
 */
export async function killInside(uid: number, parent: number): Promise<boolean> {
  const pids = (await processesOfUid(uid)).filter((p) => p.ppid !== parent).map((p) => String(p.pid));
  if (pids.length === 0) return false;
  await killAs(uid, pids);
  return true;
}

/** How long killUid keeps at it: killed processes take a while to end on a loaded machine. */
const KILL_UID_DEADLINE_MS = 10_000;

/**
 * Kills every process of `uid` until none is left (or KILL_UID_DEADLINE_MS has passed): `kill -KILL
 * -1` run as that uid signals exactly the processes it owns, in one pass of the kernel that a fork
 * bomb cannot outrun; the wait between passes grows from 20 to 200 ms.
 */
export async function killUid(uid: number): Promise<void> {
  const deadline = Date.now() + KILL_UID_DEADLINE_MS;
  for (let wait = 20; Date.now() < deadline; wait = Math.min(2 * wait, 200)) {
    if ((await processesOfUid(uid)).length === 0) return;
    await killAs(uid, ['-1']);
    await new Promise((r) => setTimeout(r, wait));
  }
}
