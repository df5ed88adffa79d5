// The policy worker's engine metrics: an EngineClient that times every request by op, the
// batcher's per-batch counts, and gauges of its queue.
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import type { BatchStats, GenerateBatcher } from '../../infra/engine/batcher.js';
import { EngineClient } from '../../infra/engine/client.js';
import type { EngineMetrics } from './workerMetrics.js';

export class MeteredEngineClient extends EngineClient {
  constructor(device: string, private readonly metrics: EngineMetrics) {
    super(device);
  }

  override async request<T>(op: string, params: Record<string, unknown>): Promise<T> {
    const stop = this.metrics.engineRequestDuration.startTimer({ op });
    try {
      const result = await super.request<T>(op, params);
      stop({ outcome: 'completed' });
      return result;
    } catch (err) {
      stop({ outcome: 'failed' });
      throw err;
    }
  }
}

/** The batcher's `onBatch`: counts one answered engine batch. */
export function recordBatch(metrics: EngineMetrics): (batch: BatchStats) => void {
  return (b) => {
    metrics.batchRequests.observe(b.requests);
    metrics.batchSamples.observe(b.samples);
    metrics.batchTokens.observe(b.generatedTokens);
    metrics.generatedTokens.inc(b.generatedTokens);
    if (b.seconds > 0) metrics.tokensPerSecond.set(b.generatedTokens / b.seconds);
  };
}

/** Gauges read from the batcher at each scrape: requests waiting for a batch, and in the engine. */
export function observeBatcherQueue(registry: Registry, batcher: GenerateBatcher): void {
  new Gauge({
    name: 'tandem_batcher_queue_depth',
    help: 'Agent-turn requests waiting in the batcher for the next engine batch',
    registers: [registry],
    collect() {
      this.set(batcher.waiting);
    },
  });
  new Gauge({
    name: 'tandem_batcher_in_flight_requests',
    help: 'Agent-turn requests sent to the engine whose batch is not answered yet',
    registers: [registry],
    collect() {
      this.set(batcher.inFlight);
    },
  });
}
