// What the command files share when they declare themselves to commander (program.ts): how an
// action hands back its exit code, usage errors (exit 2), and parsers for option values.
import { InvalidArgumentError, type Command } from 'commander';

/**
 * Wraps a command's handler as a commander action. The handler returns the command's exit code
 * (0 done, 1 failed, 3 for `stack status` when a service is down); the wrapper keeps it for main.
 * (`any`: commander hands actions untyped arguments; each handler declares their types.)
 */
export type Act = <A extends any[]>(handler: (...args: A) => number | Promise<number>) => (...args: A) => Promise<void>;

/** The exit code of a command line that does not fit the command. */
export const USAGE_EXIT = 2;

/** Stops with a usage error: the message, the command's usage hint, exit code 2 (as commander's own errors). */
export function usageError(cmd: Command, message: string): never {
  cmd.error(message, { exitCode: USAGE_EXIT, code: 'tandem.usage' });
  throw new Error('unreachable: commander exits or throws on error'); // for the type checker
}

/** `--timeout S`: a number above 0. */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number.');
  return n;
}

/** `--memory MB`: a whole number above 0. */
export function positiveInteger(value: string): number {
  const n = positiveNumber(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('expected a whole number.');
  return n;
}

/** `--port N`: a TCP port, 1 to 65535. */
export function tcpPort(value: string): number {
  const n = positiveInteger(value);
  if (n > 65535) throw new InvalidArgumentError('expected a TCP port, 1 to 65535.');
  return n;
}

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--json` output: one JSON document on stdout. */
export function printJson(data: unknown): void {
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
}
