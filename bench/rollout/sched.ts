// The kernel's account of the benches' processes, from /proc: a process's CPU seconds (alone, or
// with its children, as a server's), the machine's, and the scheduler's account of a process (all
// its threads, /proc/PID/task/*/schedstat): seconds on a core, and seconds runnable but waiting
// for one (the kernel's run delay). An engine that waits for a core while it has rows to decode is
// slowed by the processes beside it.
import { readdirSync, readFileSync } from 'node:fs';

export interface Sched {
  onCpu: number;
  waiting: number;
}

export function schedOf(pid: number): Sched {
  let onCpu = 0;
  let waiting = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
      onCpu += run / 1e9;
      waiting += wait / 1e9;
    }
  } catch {
    // gone
  }
  return { onCpu, waiting };
}

const TICKS = 100; // clock ticks per second (USER_HZ)

/** The fields of /proc/PID/stat after the command name; undefined once it is gone. */
function statOf(pid: number | string): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime of a pid, in seconds; 0 once it is gone. */
export function cpuOf(pid: number): number {
  const fields = statOf(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / TICKS : 0;
}

/**
 * A server and its worker processes (Postgres: the postmaster and a backend per connection): its
 * own utime + stime, its children's that have ended (cutime + cstime), and its live children's
 * (/proc/PID/task/PID/children: no scan of /proc while the bench samples).
 */
export function serverCpuOf(pid: number): number {
  const own = statOf(pid);
  if (!own) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // gone
  }
  for (const child of children) {
    const fields = statOf(child);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS;
}

/** The machine's CPU seconds on every core so far, busy (user, nice, system, irq, softirq), from /proc/stat. */
export function machineBusy(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) / TICKS;
}

export const minus = (a: Sched, b: Sched): Sched => ({ onCpu: a.onCpu - b.onCpu, waiting: a.waiting - b.waiting });
