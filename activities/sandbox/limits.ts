// The sandbox's limits: what a caller may ask for, the defaults, and how they are checked.

export interface SandboxOptions {
  /** Text written to the program's standard input (then closed). Default: empty. */
  stdin?: string;
  /** Wall-clock limit in milliseconds, from start to kill. Default 10 000. */
  timeoutMs?: number;
  /** CPU-time limit in seconds (RLIMIT_CPU, per process). Default: the wall-clock limit + 1 s. */
  cpuSeconds?: number;
  /** Address-space limit per process in MiB (RLIMIT_AS). Default 512. */
  memoryMb?: number;
  /** Bytes kept of stdout and of stderr, each; the rest is dropped. Default 64 KiB. */
  outputBytes?: number;
  /** Tasks (processes and threads) the sandbox's uid may have, bubblewrap's two included. Default 32. */
  processes?: number;
  /** Size of the writable working folder (a tmpfs) in MiB; also the largest file. Default 64. */
  diskMb?: number;
}

export type Limits = Required<Omit<SandboxOptions, 'stdin'>>;

export const DEFAULT_LIMITS = {
  timeoutMs: 10_000,
  memoryMb: 512,
  outputBytes: 64 * 1024,
  processes: 32,
  diskMb: 64,
} as const;

/** A stream that goes on past this many bytes gets the program killed (`killedBy: 'output'`). */
export function outputKillBytes(outputBytes: number): number {
  return Math.max(4 * outputBytes, outputBytes + (1 << 20));
}

function positive(name: string, value: number | undefined, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new TypeError(`sandbox: ${name} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}`);
  }
  return value;
}

export function resolveLimits(opts: SandboxOptions): Limits {
  const timeoutMs = positive('timeoutMs', opts.timeoutMs, DEFAULT_LIMITS.timeoutMs, false);
  return {
    timeoutMs,
    cpuSeconds: positive('cpuSeconds', opts.cpuSeconds, Math.ceil(timeoutMs / 1000) + 1, true),
    memoryMb: positive('memoryMb', opts.memoryMb, DEFAULT_LIMITS.memoryMb, true),
    outputBytes: positive('outputBytes', opts.outputBytes, DEFAULT_LIMITS.outputBytes, true),
    processes: Math.max(4, positive('processes', opts.processes, DEFAULT_LIMITS.processes, true)),
    diskMb: positive('diskMb', opts.diskMb, DEFAULT_LIMITS.diskMb, true),
  };
}
