// Host processes as the tests see them (from /proc): those of a range of sandbox uids, a pid's
// parent and command line, a process's children, and whether a process is alive.
import { readdirSync, readFileSync } from 'node:fs';
import { processEnded } from '../../infra/stack.js';

const pids = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number);

/**
 * Host processes (zombies included) whose real, effective or saved uid is in [first, last], with
 * their start time (clock ticks since boot: with the pid, it names one process for good).
 */
export function processesOfUids(uids: { first: number; last: number }): { pid: number; name: string; start: number; state: string; ppid: number }[] {
  return pids().flatMap((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
      if (!ids.some((u) => u >= uids.first && u <= uids.last)) return [];
      // /proc/<pid>/stat after the command's closing parenthesis: state, ppid, ..., start time (field 22).
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return [{ pid, name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '', start: Number(stat[19]), state: stat[0], ppid: Number(stat[1]) }];
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

/** Pids of the processes whose parent is `ppid` and whose command line contains `marker`. */
export function childPids(ppid: number, marker: string): number[] {
  return pids().filter((p) => {
    const { ppid: parent, cmdline } = hostProcess(p);
    return parent === ppid && cmdline.includes(marker);
  });
}

/** The sandbox launcher that `parent` started (activities/sandbox/launcher.mjs), if any. */
export const launcherOf = (parent: number): number | undefined => childPids(parent, 'launcher.mjs')[0];

/** Whether `pid` is alive: not once it has ended (infra/stack.ts `processEnded`: a zombie with no thread left counts as ended). */
export const alive = (pid: number): boolean => !processEnded(pid);
