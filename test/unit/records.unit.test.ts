// Rollout records on Kafka: token arrays packed (int32 ids, float32 log-probs, base64), read back
// exactly; records written before packing still read; the size against JSON numbers; a record
// over the limit is refused by the producer, naming it, before anything is sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeRollout, rolloutOf, type RolloutRecord } from '../../activities/records.js';
import { selectIterationSamples } from '../../activities/iterationSamples.js';
import { batchesOf, lazyProducer, RecordTooLarge } from '../../infra/kafka/client.js';
import { MAX_RECORD_BYTES, TOPICS } from '../../infra/settings.js';

/** A record of the reference's math shape: 4,096 prompt and 8,192 response tokens. */
function longRecord(): RolloutRecord {
  let x = 7;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  return {
    sampleId: 'r/it0/ep0/t0/a/c0/a1', runId: 'r', iteration: 0, policy: 'p', policyVersion: 0,
    promptIds: Array.from({ length: 4096 }, () => next() % 151_936),
    responseIds: Array.from({ length: 8192 }, () => next() % 151_936),
    // The engine's log-probs are float32 values (its log_softmax), written by Python as doubles.
    logprobs: Array.from({ length: 8192 }, () => Math.fround(-(next() / 2 ** 31) * 12)),
    finishReason: 'length',
  };
}

test('a packed rollout reads back exactly, extreme values included', () => {
  const r: RolloutRecord = { ...longRecord(), promptIds: [0, 1, 2 ** 31 - 1], responseIds: [151_935, 5], logprobs: [0, -1e4, Math.fround(-1e-7)] };
  const value = encodeRollout(r);
  assert.deepEqual(rolloutOf(JSON.parse(value)), r);
  assert.equal(JSON.parse(value).packing, 'le-i32-f32-base64');
});

test('a rollout written before packing (plain arrays) reads as it was', () => {
  const r = longRecord();
  assert.deepEqual(rolloutOf(JSON.parse(JSON.stringify(r))), r);
  const trajectory = { sampleId: r.sampleId, runId: 'r', iteration: 0, episodeId: 'r/it0/ep0', problemSeed: 0, turn: 0, agent: 'a', policy: 'p', policyVersion: 0, groupKey: 'g', member: r.sampleId, score: 1, candidate: 0, local: 1, global: 0, reward: 1, chosen: true };
  for (const value of [JSON.stringify(r), encodeRollout(r)]) {
    const got = selectIterationSamples([{ topic: TOPICS.trajectories, partition: 0, offset: '0', value: JSON.stringify(trajectory) }, { topic: TOPICS.rollouts, partition: 0, offset: '0', value }], { runId: 'r', policy: 'p', iteration: 0, fromVersion: 0, expected: 1 });
    assert.ok(got.ok);
    assert.deepEqual(got.tokens.get(r.sampleId), r);
  }
});

test('packing takes under half the bytes of JSON numbers on a 4k + 8k-token record, far under the limit', () => {
  const r = longRecord();
  const packed = Buffer.byteLength(encodeRollout(r));
  const plain = Buffer.byteLength(JSON.stringify(r));
  assert.ok(packed < plain / 2, `${packed} packed vs ${plain} as JSON numbers`);
  assert.ok(packed < 120_000 && packed < MAX_RECORD_BYTES / 30, `${packed} bytes`);
});

test('the producer refuses a record over the limit before sending anything, naming topic and key', async () => {
  const sent: unknown[] = [];
  const fakeKafka = { producer: () => ({ connect: async () => {}, send: async (x: unknown) => void sent.push(x), disconnect: async () => {} }) };
  const producer = lazyProducer(fakeKafka as never);
  await producer.send(TOPICS.rollouts, [{ key: 'k', value: 'x'.repeat(10) }]);
  assert.equal(sent.length, 1);
  await assert.rejects(
    producer.send(TOPICS.events, [{ key: 'small', value: '{}' }, { key: 'run:r', value: 'x'.repeat(MAX_RECORD_BYTES + 1) }]),
    (err: unknown) => err instanceof RecordTooLarge && err.index === 1 && /a record for tandem\.events \(key run:r\) is 4194305 bytes, over the 4194304-byte limit \(with its key and framing\)/.test(err.message),
  );
  assert.equal(sent.length, 1, 'nothing of the refused batch was sent');
});

test('a send over the broker\'s limit in all goes in several requests, in order, each within it', async () => {
  const sent: { messages: { key: string; value: string }[] }[] = [];
  const fakeKafka = { producer: () => ({ connect: async () => {}, send: async (x: never) => void sent.push(x), disconnect: async () => {} }) };
  const producer = lazyProducer(fakeKafka as never);
  // 17 events of 1.3 MB: an episode's TurnGroupScored events with long texts (20 MB in all).
  const messages = Array.from({ length: 17 }, (_, i) => ({ key: 'episode:e', value: String(i % 10).repeat(1_300_000) }));
  await producer.send(TOPICS.events, messages);
  assert.ok(sent.length >= 6, `${sent.length} requests`);
  assert.deepEqual(sent.flatMap((r) => r.messages), messages, 'every message once, in order');
  for (const r of sent) assert.ok(r.messages.reduce((n, m) => n + m.value.length + m.key.length + 128, 128) <= MAX_RECORD_BYTES);
  assert.deepEqual(batchesOf([{ key: 'a', value: 'x' }, { key: 'b', value: 'y' }]).map((b) => b.length), [2], 'small sends stay one request');
});
