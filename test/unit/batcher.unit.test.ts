import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerateBatcher } from '../../infra/engine/batcher.js';
import type { EngineClient, GenerateRequest } from '../../infra/engine/client.js';

/** An engine stand-in that records each generate call and echoes one sample per request. */
function fakeEngine(fail = false) {
  const calls: GenerateRequest[][] = [];
  const engine = {
    async request(op: string, params: { requests: GenerateRequest[] }) {
      assert.equal(op, 'generate');
      calls.push(params.requests);
      if (fail) throw new Error('engine died');
      return { results: params.requests.map((r) => ({ policy: r.policy, version: r.version, samples: [] })) };
    },
  } as unknown as EngineClient;
  return { engine, calls };
}

const req = (policy: string, n = 4, max_new_tokens = 32): GenerateRequest => ({
  policy,
  version: 0,
  messages: [],
  n,
  temperature: 1,
  top_p: 1,
  top_k: -1,
  min_p: 0,
  max_new_tokens,
  stop: [],
  seed: 1,
  enable_thinking: false,
});

test('requests arriving within the window go to the engine as one batch, answered in order', async () => {
  const { engine, calls } = fakeEngine();
  const b = new GenerateBatcher(engine, { windowMs: 30, maxTokens: 1_000_000 });
  const results = await Promise.all([b.generate(req('a')), b.generate(req('b')), b.generate(req('c'))]);
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0].map((r) => r.policy), ['a', 'b', 'c']);
  assert.deepEqual(results.map((r) => r.policy), ['a', 'b', 'c']);
});

test('a full token budget flushes at once; later requests start a new batch', async () => {
  const { engine, calls } = fakeEngine();
  const b = new GenerateBatcher(engine, { windowMs: 10_000, maxTokens: 256 });
  // 4 * 32 = 128 tokens each: the second request fills the budget.
  await Promise.all([b.generate(req('a')), b.generate(req('b'))]);
  assert.equal(calls.length, 1);
  const third = b.generate(req('c', 8, 32)); // 256 tokens: flushes by itself
  await third;
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[1].map((r) => r.policy), ['c']);
});

test('an engine failure rejects every request of the batch', async () => {
  const { engine } = fakeEngine(true);
  const b = new GenerateBatcher(engine, { windowMs: 5, maxTokens: 1_000_000 });
  const outcomes = await Promise.allSettled([b.generate(req('a')), b.generate(req('b'))]);
  assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
});
