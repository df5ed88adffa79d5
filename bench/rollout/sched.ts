// The scheduler's account of a process (all its threads), from /proc/PID/task/*/schedstat: seconds
// on a core, and seconds runnable but waiting for one (the kernel's run delay). An engine that
// waits for a core while it has rows to decode is slowed by the processes beside it.
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

/** The machine's CPU seconds on every core so far, busy (user, nice, system, irq, softirq), from /proc/stat. */
export function machineBusy(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) / 100; // USER_HZ
}

export const minus = (a: Sched, b: Sched): Sched => ({ onCpu: a.onCpu - b.onCpu, waiting: a.waiting - b.waiting });
