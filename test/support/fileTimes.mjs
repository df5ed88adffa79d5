// A node:test reporter (infra/test.sh runs it beside TAP): each test file's time in its tests
// (the runner's per-file summary: its process start and imports not included), the slowest
// first, and the run's whole wall time, printed when the run ends, so that the suite's budget is
// held by numbers. Plain JavaScript: the runner loads reporters before any --import hook, so tsx
// cannot compile this one.

/** @param {AsyncIterable<{ type: string, data?: { file?: string, duration_ms?: number, success?: boolean } }>} source */
export default async function* fileTimes(source) {
  const t0 = Date.now();
  const files = [];
  for await (const event of source) {
    if (event.type === 'test:summary' && event.data?.file) files.push(event.data);
  }
  const root = `${process.cwd()}/`;
  files.sort((a, b) => (b.duration_ms ?? 0) - (a.duration_ms ?? 0));
  yield `# test files by time in their tests (${files.length} files; the run's wall time ${((Date.now() - t0) / 1000).toFixed(1)} s):\n`;
  for (const f of files) {
    const name = f.file.startsWith(root) ? f.file.slice(root.length) : f.file;
    yield `#   ${((f.duration_ms ?? 0) / 1000).toFixed(1).padStart(7)} s  ${name}${f.success === false ? '  (failed)' : ''}\n`;
  }
}
