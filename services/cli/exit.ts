// Ending the CLI without losing output. process.exit() drops whatever stdout and stderr have not yet
// handed to the OS: into a pipe whose reader is slow, only the first 64 KiB (the kernel's buffer)
// would arrive. So the CLI exits only once both streams have flushed.
import type { Writable } from 'node:stream';

/** Resolves once everything written to STREAM so far is out, or the stream failed (EPIPE: its reader left). */
export function flushed(stream: Writable): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    // A reader that left (`tandem ... | head`) fails the pending writes with EPIPE. Nothing more
    // can reach it, so that ends the wait too, instead of an unhandled 'error' event crashing the CLI.
    stream.once('error', () => resolve());
    // Writes complete in order, so the callback of an empty write runs after all earlier ones.
    stream.write('', () => resolve());
  });
}

/** Exits with CODE once stdout and stderr have flushed. */
export async function exitWhenFlushed(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  // Still an explicit exit: a command may leave handles open (clients, pools, timers).
  process.exit(code);
}
