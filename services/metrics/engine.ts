// The policy worker's engine metrics: an EngineClient that times every request by op and counts
// the tokens its generate requests produced, and gauges of the engine's own state (its `stats`
// op: busy time, decoding steps, rows decoding and waiting, the KV cache's bytes and budget), read
// at each scrape.
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import { EngineClient, type EngineStats, type GenerateResult } from '../../infra/engine/client.js';
import type { EngineMetrics } from './workerMetrics.js';

export class MeteredEngineClient extends EngineClient {
  constructor(device: string, private readonly metrics: EngineMetrics) {
    super(device);
  }

  override async request<T>(op: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    if (op === 'stats') return super.request<T>(op, params, signal); // the scrape's own request
    const stop = this.metrics.engineRequestDuration.startTimer({ op });
    try {
      const result = await super.request<T>(op, params, signal);
      stop({ outcome: 'completed' });
      if (op === 'generate') this.metrics.generatedTokens.inc(generatedTokens(result as { results: GenerateResult[] }));
      return result;
    } catch (err) {
      stop({ outcome: 'failed' });
      throw err;
    }
  }
}

function generatedTokens({ results }: { results: GenerateResult[] }): number {
  return results.reduce((n, r) => n + r.samples.reduce((m, c) => m + c.response_ids.length, 0), 0);
}

const GAUGES: [keyof EngineStats, string, string][] = [
  ['busy_seconds', 'tandem_engine_busy_seconds', 'Seconds the engine spent prefilling and decoding since it started (rate() of it is its busy fraction)'],
  ['update_seconds', 'tandem_engine_update_seconds', 'Seconds the engine spent in updates since it started (beside the decoding with overlap: the two add up to at most the time passed)'],
  ['steps', 'tandem_engine_decode_steps', 'Decoding steps (one forward over the running batch) since the engine started'],
  ['prefills', 'tandem_engine_prefills', 'Prefills (one forward over the prompts of newcomers to a decode batch) since the engine started'],
  ['cache_copies', 'tandem_engine_cache_copies', 'Copies of a running decode batch\'s KV cache into fresh buffers (newcomers that found no free slot, or a compaction) since the engine started'],
  ['live_rows', 'tandem_engine_live_rows', 'Sequences in the engine\'s running decode batches'],
  ['waiting_rows', 'tandem_engine_waiting_rows', 'Sequences waiting to join a decode batch'],
  ['pending_ops', 'tandem_engine_pending_ops', 'Requests waiting behind an op that changes a policy (load, update, unload)'],
  ['memory_waits', 'tandem_engine_memory_waits', 'Admissions that left newcomers waiting for rows to finish, as new KV buffers for them would outgrow the budget, since the engine started'],
  ['kv_cache_bytes', 'tandem_engine_kv_cache_bytes', 'Bytes of the running decode batches\' KV buffers (keys and values)'],
  ['kv_budget_bytes', 'tandem_engine_kv_budget_bytes', 'Bytes the decode batches\' KV buffers may take in all (TANDEM_KV_CACHE_GB, or a share of the memory free)'],
];

/** Gauges of the engine's state: one `stats` request per scrape (none while the engine is down: the gauges keep their last values). */
export function observeEngine(registry: Registry, engine: EngineClient): void {
  // A scrape collects every gauge at once: they share one request while it is in flight.
  let inFlight: Promise<EngineStats | undefined> | undefined;
  const read = () =>
    (inFlight ??= (engine.running ? engine.request<EngineStats>('stats', {}).catch(() => undefined) : Promise.resolve(undefined)).finally(() => {
      inFlight = undefined;
    }));
  for (const [field, name, help] of GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const stats = await read();
        if (stats) this.set(stats[field]);
      },
    });
  }
}
