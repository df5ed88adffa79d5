// The engine's busy fraction, for the run page: the local policy worker's Prometheus gauge
// tandem_engine_busy_seconds (services/metrics/engine.ts; each scrape asks the engine), read at
// most every SAMPLE_MS whatever the number of pages open. The fraction is the gauge's growth over
// the wall time between two reads. The engine serves every run of the stack, so this is the
// engine's, not one run's; it is not recorded in Postgres, so it is shown live only.
import { stackSettings } from '../../infra/settings.js';

const SAMPLE_MS = 5_000;
const GAUGE = /^tandem_engine_busy_seconds(?:\{[^}]*\})?\s+(\S+)$/gm;

/** The summed busy seconds in a Prometheus exposition; null if the gauge is not in it. */
function busySeconds(exposition: string): number | null {
  const values = [...exposition.matchAll(GAUGE)].map((m) => Number(m[1])).filter(Number.isFinite);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/** A function giving the latest busy fraction (0..1), or null until two reads a while apart have succeeded. */
export function engineBusySampler(url = `http://127.0.0.1:${stackSettings().policyWorkerMetricsPort}/metrics`): () => Promise<number | null> {
  let last: { at: number; busy: number } | undefined;
  let fraction: number | null = null;
  let reading: Promise<void> | undefined;
  const read = async () => {
    const at = Date.now();
    const busy = await fetch(url, { signal: AbortSignal.timeout(SAMPLE_MS) })
      .then((r) => (r.ok ? r.text() : ''))
      .then(busySeconds, () => null);
    if (busy === null) return void (fraction = null); // the worker or its engine is down
    // A restarted engine starts its count again: that read only starts a new interval.
    fraction = last && busy >= last.busy ? Math.min(1, (busy - last.busy) / ((at - last.at) / 1000)) : null;
    last = { at, busy };
  };
  return async () => {
    if (!last || Date.now() - last.at >= SAMPLE_MS) await (reading ??= read().finally(() => (reading = undefined)));
    return fraction;
  };
}
