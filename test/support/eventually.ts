// Waiting in tests for something another process (or a workflow) does: poll until it is there.
import type { WorkflowHandle } from '@temporalio/client';
import { progressQuery, type RunProgress } from '../../workflows/messages.js';

/** Polls `check` every `intervalMs` until it returns a value (not undefined) or the time is up. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Polls a training run's progress query (every 100 ms, up to timeoutMs) until `ok` holds; fails at
 * once when the run completes first.
 */
export function progressUntil(handle: Pick<WorkflowHandle, 'query'>, what: string, ok: (p: RunProgress) => boolean, timeoutMs = 600_000): Promise<RunProgress> {
  return eventually(what, async () => {
    const p = await handle.query(progressQuery).catch(() => undefined);
    if (p && ok(p)) return p;
    if (p?.status === 'completed') throw new Error(`the run finished before ${what}`);
    return undefined;
  }, timeoutMs, 100);
}
