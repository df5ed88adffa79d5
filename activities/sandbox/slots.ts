// How many sandboxed programs this worker process runs at once, and the host uid each runs as.
//
// Every slot has its own unprivileged host uid, unique on the machine while this process lives:
// UID_BASE + (pid mod 2^22) * MAX_SLOTS + slot (2^22 is Linux's largest pid_max). RLIMIT_NPROC
// counts tasks per real uid, so a program at its process limit cannot starve a program running
// beside it, and "every process of that uid" is exactly what a run left behind.
import os from 'node:os';

export const MAX_SLOTS = 64;
const UID_BASE = 1_500_000_000;
const PID_SPAN = 1 << 22;

function defaultConcurrency(): number {
  const fromEnv = Number(process.env.TANDEM_SANDBOX_CONCURRENCY);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return Math.min(fromEnv, MAX_SLOTS);
  return Math.min(os.availableParallelism(), MAX_SLOTS);
}

let limit = defaultConcurrency();
const busy = new Set<number>();
const waiters: Array<() => void> = [];

/** The most programs run at once in this process (TANDEM_SANDBOX_CONCURRENCY, default: cores). */
export function sandboxConcurrency(): number {
  return limit;
}

export function setSandboxConcurrency(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SLOTS) throw new RangeError(`sandbox concurrency must be 1..${MAX_SLOTS}, got ${n}`);
  limit = n;
  wake();
}

/** Programs running in this process right now. */
export function activeSandboxes(): number {
  return busy.size;
}

function wake(): void {
  // The woken acquirer re-checks for room, and wakes the next one if room remains.
  if (waiters.length > 0 && busy.size < limit) waiters.shift()!();
}

export async function acquireSlot(): Promise<number> {
  while (busy.size >= limit) await new Promise<void>((resolve) => waiters.push(resolve));
  let slot = 0;
  while (busy.has(slot)) slot++;
  busy.add(slot);
  if (busy.size < limit) wake();
  return slot;
}

export function releaseSlot(slot: number): void {
  busy.delete(slot);
  wake();
}

export function uidOfSlot(slot: number): number {
  return UID_BASE + (process.pid % PID_SPAN) * MAX_SLOTS + slot;
}

/** The host uids this process's sandboxes run as (inclusive range). */
export function sandboxUidRange(): { first: number; last: number } {
  return { first: uidOfSlot(0), last: uidOfSlot(MAX_SLOTS - 1) };
}
