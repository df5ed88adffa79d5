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
