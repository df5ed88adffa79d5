// Host processes as the sandbox tests see them (from /proc): those of a range of sandbox uids,
// a pid's parent and command line, and the launcher a process started.
import { readdirSync, readFileSync } from 'node:fs';

const pids = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number);

/**
 * Host processes (zombies included) whose real, effective or saved uid is in [first, last], with
 * their start time (clock ticks since boot: with the pid, it names one process for good).
 */
export function processesOfUids(uids: { first: number; last: number }): { pid: number; name: string; start: number }[] {
  return pids().flatMap((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
      if (!ids.some((u) => u >= uids.first && u <= uids.last)) return [];
      const start = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]);
      return [{ pid, name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '', start }];
    } catch {
      return []; // ended while we looked
    }
  });
}

/**
 * The processes of those uids alive at one moment. One walk of /proc is no snapshot: while
 * processes end and others start in their room, it can see more than ever lived at once. A
 * process seen by two walks in a row was alive between them, as was every other so seen.
 */
export function processesAliveAtOnce(uids: { first: number; last: number }): { pid: number; name: string }[] {
  const first = processesOfUids(uids);
  const second = processesOfUids(uids);
  return first.filter((p) => second.some((q) => q.pid === p.pid && q.start === p.start));
}

/** Pids of the pythons among them: the sandboxed programs. */
export function pythonsOfUids(uids: { first: number; last: number }): number[] {
  return processesOfUids(uids).filter((p) => p.name.startsWith('python')).map((p) => p.pid);
}

/** The host pid's parent, and its command line (empty once it is gone). */
export function hostProcess(pid: number): { ppid: number; cmdline: string } {
  try {
    const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    return { ppid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') };
  } catch {
    return { ppid: 0, cmdline: '' };
  }
}

/** The sandbox launcher that `parent` started (activities/sandbox/launcher.mjs), if any. */
export function launcherOf(parent: number): number | undefined {
  return pids().find((p) => {
    const { ppid, cmdline } = hostProcess(p);
    return ppid === parent && /launcher\.mjs/.test(cmdline);
  });
}
