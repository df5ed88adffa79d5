// Waiting in tests for something another process (or a workflow) does: poll until it is there.

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
