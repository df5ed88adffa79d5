// Host processes as the sandbox tests see them (from /proc): a pid's parent and command line, and
// the pythons running as a range of sandbox uids.
import { readdirSync, readFileSync } from 'node:fs';

/** The host pid's parent, and its command line (empty once it is gone). */
export function hostProcess(pid: number): { ppid: number; cmdline: string } {
  try {
    const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    return { ppid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') };
  } catch {
    return { ppid: 0, cmdline: '' };
  }
}

/** Pids of the processes named python whose real uid is in [first, last]. */
export function pythonsOfUids(uids: { first: number; last: number }): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const status = readFileSync(`/proc/${p}/status`, 'utf8');
        const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
        return /^Name:\s+python/m.test(status) && uid >= uids.first && uid <= uids.last;
      } catch {
        return false; // ended while we looked
      }
    })
    .map(Number);
}

/** The sandbox launcher that `parent` started (activities/sandbox/launcher.mjs), if any. */
export function launcherOf(parent: number): number | undefined {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .find((p) => hostProcess(p).ppid === parent && /launcher\.mjs/.test(hostProcess(p).cmdline));
}
