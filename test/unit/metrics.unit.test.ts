// Worker metrics without services: activity counting and timing, the engine's counts and gauges, and the /metrics endpoint.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { EngineStats, GenerateRequest } from '../../infra/engine/client.js';
import { instrumentActivities } from '../../services/metrics/activities.js';
import { MeteredEngineClient, observeEngine } from '../../services/metrics/engine.js';
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

test('generate requests count their tokens; the engine gauges read its stats, and a stopped engine is not started by a scrape', async (t) => {
  const m = createWorkerMetrics('test');
  const em = createEngineMetrics(m.registry);
  const stats: EngineStats = { busy_seconds: 1.5, update_seconds: 0.5, steps: 30, prefills: 3, cache_copies: 7, generated_tokens: 12, rows_finished: 4, live_rows: 5, waiting_rows: 2, pending_ops: 1, memory_waits: 3, kv_cache_bytes: 4096, kv_cache_peak_bytes: 8192, kv_budget_bytes: 1 << 30 };
  const calls: string[] = [];
  let running = false;
  const engine = new MeteredEngineClient('cpu', em);
  Object.defineProperty(engine, 'running', { get: () => running });
  // The engine process itself is replaced: EngineClient.request is what MeteredEngineClient wraps.
  const base = Object.getPrototypeOf(MeteredEngineClient.prototype);
  const real = base.request;
  t.after(() => (base.request = real));
  base.request = async (op: string, params: { requests?: GenerateRequest[] }) => {
    calls.push(op);
    if (op === 'stats') return stats;
    const candidate = { text: 'x', prompt_ids: [1], response_ids: [5, 6, 7], logprobs: [0, 0, 0], finish_reason: 'stop' };
    return { results: params.requests!.map((r) => ({ policy: r.policy, version: 0, samples: Array(r.n).fill(candidate) })) };
  };
  observeEngine(m.registry, engine);
  await m.registry.metrics();
  assert.deepEqual(calls, [], 'no request to an engine that is down');
  running = true;
  const req = { policy: 'p', version: 0, messages: [], n: 2, temperature: 1, top_p: 1, top_k: -1, min_p: 0, repetition_penalty: 1, max_new_tokens: 8, stop: [], ignore_eos: false, max_prompt_tokens: null, truncation: 'error' as const, seed: 1, enable_thinking: false };
  await Promise.all([engine.request('generate', { requests: [req] }), engine.request('generate', { requests: [req] })]);
  const text = await m.registry.metrics();
  assert.equal(sample(text, 'tandem_generated_tokens_total', ''), 12);
  assert.equal(sample(text, 'tandem_engine_request_duration_seconds_count', 'op="generate",outcome="completed"'), 2);
  assert.equal(sample(text, 'tandem_engine_busy_seconds', ''), 1.5);
  assert.equal(sample(text, 'tandem_engine_update_seconds', ''), 0.5);
  assert.equal(sample(text, 'tandem_engine_cache_copies', ''), 7);
  assert.equal(sample(text, 'tandem_engine_live_rows', ''), 5);
  assert.equal(sample(text, 'tandem_engine_waiting_rows', ''), 2);
  assert.equal(sample(text, 'tandem_engine_kv_cache_bytes', ''), 4096);
  assert.equal(sample(text, 'tandem_engine_kv_budget_bytes', ''), 1 << 30);
  assert.equal(sample(text, 'tandem_engine_memory_waits', ''), 3);
  assert.equal(calls.filter((c) => c === 'stats').length, 1, 'one stats request per scrape');
  assert.equal(sample(text, 'tandem_engine_request_duration_seconds_count', 'op="stats"'), undefined, 'the scrape is not timed');
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
