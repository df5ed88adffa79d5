// Finding the test stack's processes, for fault tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { settings } from './stack.js';

export function servicePid(name: string): number {
  return Number(readFileSync(join(settings.dataDir, 'run', `${name}.pid`), 'utf8').trim());
}

/** Pids of the processes whose parent is `ppid` and whose command line contains `marker`. */
export function childPids(ppid: number, marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent !== ppid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/**
 * Whether `pid` is alive. A zombie is not (it only waits for its parent to reap it) once its last
 * thread has exited: a killed process shows its main thread as a zombie while the others still exit.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) || readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}
