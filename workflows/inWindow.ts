// Bounded fan-out for workflows: at most `window` child workflows in flight at once.

/** Runs fn(0..n-1) with at most `window` in flight; results in index order. */
export async function inWindow<T>(n: number, window: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, n) }, lane));
  return results;
}
