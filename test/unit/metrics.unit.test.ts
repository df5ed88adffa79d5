// Worker metrics without services: activity counting and timing, batch counts, and the /metrics endpoint.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { GenerateBatcher } from '../../infra/engine/batcher.js';
import type { EngineClient, GenerateRequest } from '../../infra/engine/client.js';
import { instrumentActivities } from '../../services/metrics/activities.js';
import { observeBatcherQueue, recordBatch } from '../../services/metrics/engine.js';
import { serveMetrics } from '../../services/metrics/server.js';
import { createEngineMetrics, createWorkerMetrics } from '../../services/metrics/workerMetrics.js';

/** The value of one sample line `name{labels} value` in Prometheus text, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('activities are counted as started, completed and failed, and timed, by type', async () => {
  const m = createWorkerMetrics('test');
  const acts = instrumentActivities(
    {
      async ok(x: number) {
        return x + 1;
      },
      async boom() {
        throw new Error('no');
      },
    },
    m,
  );
  assert.equal(await acts.ok(1), 2);
  assert.equal(await acts.ok(2), 3);
  await assert.rejects(acts.boom(), /no/);
  const text = await m.registry.metrics();
  assert.equal(sample(text, 'tandem_activities_started_total', 'activity="ok"'), 2);
  assert.equal(sample(text, 'tandem_activities_completed_total', 'activity="ok"'), 2);
  assert.equal(sample(text, 'tandem_activities_failed_total', 'activity="boom"'), 1);
  assert.equal(sample(text, 'tandem_activities_completed_total', 'activity="boom"'), undefined);
  assert.equal(sample(text, 'tandem_activity_duration_seconds_count', 'activity="ok",outcome="completed"'), 2);
  assert.equal(sample(text, 'tandem_activity_duration_seconds_count', 'activity="boom",outcome="failed"'), 1);
});

test('each engine batch is counted: requests, samples, generated tokens; the queue gauges read the batcher', async () => {
  const m = createWorkerMetrics('test');
  const em = createEngineMetrics(m.registry);
  const engine = {
    async request(_op: string, params: { requests: GenerateRequest[] }) {
      const candidate = { text: 'x', prompt_ids: [1], response_ids: [5, 6, 7], logprobs: [0, 0, 0], finish_reason: 'stop' };
      return { results: params.requests.map((r) => ({ policy: r.policy, version: 0, samples: Array(r.n).fill(candidate) })) };
    },
  } as unknown as EngineClient;
  const b = new GenerateBatcher(engine, { windowMs: 10, maxTokens: 1_000_000, onBatch: recordBatch(em) });
  observeBatcherQueue(m.registry, b);
  const req = { policy: 'p', version: 0, messages: [], n: 2, temperature: 1, top_p: 1, top_k: -1, min_p: 0, max_new_tokens: 8, stop: [], seed: 1, enable_thinking: false };
  const pending = Promise.all([b.generate(req), b.generate(req)]);
  assert.match(await m.registry.metrics(), /^tandem_batcher_queue_depth\{[^}]*\} 2$/m);
  await pending;
  const text = await m.registry.metrics();
  assert.match(text, /^tandem_batcher_queue_depth\{[^}]*\} 0$/m);
  assert.match(text, /^tandem_batcher_in_flight_requests\{[^}]*\} 0$/m);
  assert.match(text, /^tandem_engine_batch_requests_sum\{[^}]*\} 2$/m);
  assert.match(text, /^tandem_engine_batch_samples_sum\{[^}]*\} 4$/m);
  assert.match(text, /^tandem_generated_tokens_total\{[^}]*\} 12$/m);
});

test('the endpoint serves the registry at /metrics and 404 elsewhere', async () => {
  const m = createWorkerMetrics('test');
  m.activitiesStarted.inc({ activity: 'x' });
  const server = await serveMetrics(0, m.registry);
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(await res.text(), /^tandem_activities_started_total\{activity="x",worker="test"\} 1$/m);
    assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 404);
    await assert.rejects(serveMetrics(port, m.registry), new RegExp(`metrics endpoint on 127.0.0.1:${port}: .*EADDRINUSE`));
  } finally {
    server.close();
  }
});
