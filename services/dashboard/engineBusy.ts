// The engine's busy fraction, for the run page: the local policy worker's Prometheus gauges
// tandem_engine_busy_seconds and tandem_engine_update_seconds (services/metrics/engine.ts; each
// scrape asks the engine), read at most every SAMPLE_MS whatever the number of pages open. The
// fraction is their growth over the wall time between two reads: decoding and updates (beside each
// other with overlap, their sum stays within the time passed). The engine serves every run of the
// stack, so this is the engine's, not one run's; it is not recorded in Postgres, so it is shown live
// only. bench/learning/run.ts reads the same counters around a training run.
import { stackSettings } from '../../infra/settings.js';

const SAMPLE_MS = 5_000;

/** What the engine has done since it started, from the policy worker's metrics. */
export interface EngineCounters {
  /** Seconds prefilling and decoding, and in updates. */
  busyS: number;
  updateS: number;
  /** Tokens of the generate requests answered. */
  tokens: number;
}

const defaultUrl = () => `http://127.0.0.1:${stackSettings().policyWorkerMetricsPort}/metrics`;

/** The summed value of a metric (over its labels) in a Prometheus exposition; null if it is not in it. */
function summed(exposition: string, name: string): number | null {
  const values = [...exposition.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)$`, 'gm'))].map((m) => Number(m[1])).filter(Number.isFinite);
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
}

/** The engine's counters now; null while the worker or its engine is down. */
export async function engineCounters(url = defaultUrl(), timeoutMs = SAMPLE_MS): Promise<EngineCounters | null> {
  const text = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then((r) => (r.ok ? r.text() : ''), () => '');
  const busyS = summed(text, 'tandem_engine_busy_seconds');
  if (busyS === null) return null;
  return { busyS, updateS: summed(text, 'tandem_engine_update_seconds') ?? 0, tokens: summed(text, 'tandem_generated_tokens_total') ?? 0 };
}

/** A function giving the latest busy fraction (0..1), or null until two reads a while apart have succeeded. */
export function engineBusySampler(url = defaultUrl()): () => Promise<number | null> {
  let last: { at: number; busy: number } | undefined;
  let fraction: number | null = null;
  let reading: Promise<void> | undefined;
  const read = async () => {
    const at = Date.now();
    const counters = await engineCounters(url);
    if (counters === null) return void (fraction = null); // the worker or its engine is down
    const busy = counters.busyS + counters.updateS;
    // A restarted engine starts its count again: that read only starts a new interval.
    fraction = last && busy >= last.busy ? Math.min(1, (busy - last.busy) / ((at - last.at) / 1000)) : null;
    last = { at, busy };
  };
  return async () => {
    if (!last || Date.now() - last.at >= SAMPLE_MS) await (reading ??= read().finally(() => (reading = undefined)));
    return fraction;
  };
}
