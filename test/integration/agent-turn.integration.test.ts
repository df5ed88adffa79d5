// agentTurn against a real engine process (no Temporal server: MockActivityEnvironment): turns
// that arrive while others decode join the running batch and are answered as they finish, the
// first one loads the policy itself, an off-policy turn and a turn larger than the engine's KV
// cache fail for good, and a turn whose activity is cancelled (its heartbeat timed out, its
// worker shuts down) stops its rows in the engine.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentTurnActivities, type AgentTurnInput, type CandidateText } from '../../activities/agentTurn.js';
import { loadRunConfig } from '../../configs/load.js';
import { EngineClient, type EngineStats } from '../../infra/engine/client.js';
import { lazyProducer } from '../../infra/kafka/client.js';
import { policiesOf, trainable } from '../../policy/spec.js';
import { policyRef } from '../../policy/ref.js';
import { eventually } from '../support/eventually.js';
import { kafka } from '../support/stack.js';

const engine = new EngineClient('cpu', () => {});
const producer = lazyProducer(kafka()); // never connects: these turns are not recorded
const dataDir = mkdtempSync(join(tmpdir(), 'tandem-turn-'));
const turns = createAgentTurnActivities({ engine, producer, device: 'cpu', dataDir });
after(async () => {
  await engine.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', []);
assert.ok(loaded.ok);
const cfg = loaded.config;
const policy = policyRef(`turns-${Date.now()}`, trainable(policiesOf(cfg))[0], cfg);
const turn = (over: Partial<AgentTurnInput>): AgentTurnInput => ({
  policy,
  policyVersion: 0,
  iteration: 0,
  episodeId: `${policy.runId}/it0/ep0`,
  turn: 0,
  agent: 'plan_agent',
  messages: [{ role: 'user', content: 'Grid:\nS..#\n.#..\n...G\nFind the moves. Answer after ####.' }],
  k: 2,
  sampling: { ...cfg.agent_policy_configs.agent_configs.agent_1.train_llm_config, temperature: 0 },
  maxNewTokens: 8,
  seed: 1,
  record: false,
  ...over,
});
const stats = () => engine.request<EngineStats>('stats', {});
/** Waits until the engine decodes `rows` rows (a minute at most, for a loaded machine). */
async function decoding(rows: number): Promise<void> {
  await eventually(`the engine decoding ${rows} rows`, async () => ((await stats()).live_rows >= rows ? true : undefined), 60_000, 50).catch(() => {});
  assert.equal((await stats()).live_rows, rows, `the engine is not decoding the turn's ${rows} rows`);
}
/** One agentTurn attempt in a mock activity context. */
const run = (input: AgentTurnInput, env = new MockActivityEnvironment()): Promise<CandidateText[]> => env.run(turns.agentTurn, input);

test('turns join the running batch: a short turn sent after a long one is answered first; the policy loads on first use', async () => {
  const order: string[] = [];
  const long = run(turn({ maxNewTokens: 400, sampling: { ...turn({}).sampling, temperature: 1, ignore_eos: true } })).then((r) => (order.push('long'), r));
  // Once the long turn is decoding (its policy loaded on first use: that time depends on the machine).
  await decoding(2);
  const short = await run(turn({ maxNewTokens: 4 }));
  order.push('short');
  assert.equal(short.length, 2);
  assert.ok(short.every((c) => c.responseTokens <= 4));
  assert.deepEqual(order, ['short'], 'the short turn did not wait for the long one');
  await long;
  assert.deepEqual((await engine.request<{ policies: Record<string, number> }>('ping', {})).policies, { [`${policy.runId}/shared_model`]: 0 });
});

test('an off-policy turn fails for good', async () => {
  await assert.rejects(run(turn({ policyVersion: 3 })), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure && err.nonRetryable && err.type === 'VersionMismatch', String(err));
    return true;
  });
});

test('a prompt over training.max_prompt_length fails for good under truncation error, naming the key; keep_system and left cut it and say from how many tokens', async () => {
  await assert.rejects(run(turn({ maxPromptTokens: 16 })), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure && err.nonRetryable && err.type === 'PromptTooLong', String(err));
    assert.match(err.message, /plan_agent's prompt in turn 0 of .*\/it0\/ep0: the prompt has \d+ tokens, more than the 16 allowed by training\.max_prompt_length/);
    return true;
  });
  const whole = await run(turn({}));
  assert.ok(whole.every((c) => c.promptTruncatedFrom === undefined));
  for (const truncation of ['left', 'keep_system'] as const) {
    const kept = await run(turn({ maxPromptTokens: 16, truncation }));
    assert.equal(kept.length, 2);
    assert.ok(kept.every((c) => typeof c.promptTruncatedFrom === 'number' && c.promptTruncatedFrom > 16), JSON.stringify(kept));
  }
});

test('a turn one sample of which needs more KV cache than the engine may take fails for good, naming the knobs', async (t) => {
  // An engine of its own, started with a budget smaller than one row of this prompt.
  const small = new EngineClient('cpu', () => {});
  t.after(() => small.stop());
  process.env.TANDEM_KV_CACHE_GB = '0.000001';
  try {
    await small.start();
  } finally {
    delete process.env.TANDEM_KV_CACHE_GB;
  }
  const smallTurns = createAgentTurnActivities({ engine: small, producer, device: 'cpu', dataDir });
  await assert.rejects(new MockActivityEnvironment().run(smallTurns.agentTurn, turn({})), (err: unknown) => {
    assert.ok(err instanceof ApplicationFailure && err.nonRetryable && err.type === 'KvCacheTooSmall', String(err));
    assert.match(err.message, /plan_agent's turn 0 of .*\/it0\/ep0: one sample of \d+ prompt \+ 8 new tokens needs .* GB of KV cache, more than the budget of 0\.00 GB .*TANDEM_KV_CACHE_GB in the policy worker's environment/);
    return true;
  });
});

test('a cancelled turn stops its rows in the engine, and the engine goes on', async () => {
  const env = new MockActivityEnvironment();
  // ignore_eos: no row can end by itself before the cancel.
  const doomed = run(turn({ maxNewTokens: 1000, k: 4, sampling: { ...turn({}).sampling, temperature: 1, ignore_eos: true } }), env);
  await decoding(4);
  const atCancel = (await stats()).steps;
  env.cancel();
  await assert.rejects(doomed, /Cancelled/);
  // Stopped at once: a few decoding steps after the cancel, not the hundreds left of its 1000
  // tokens (counted in steps, not seconds, so that a loaded machine cannot fail it).
  const after = await stats();
  assert.equal(after.live_rows, 0);
  assert.ok(after.steps - atCancel < 100, `${after.steps - atCancel} steps after the cancel`);
  assert.equal((await run(turn({}))).length, 2);
});
