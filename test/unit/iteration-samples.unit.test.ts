// The on-policy filter of updatePolicy: an update uses exactly its iteration's samples, each
// once, and never a sample of another iteration, run or policy, nor of another version (with
// rollout.max_staleness N: of a version more than N before the update's, which is set apart as
// stale). Where its read ends for the next update. Also how its engine's errors become the
// activity's failures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectIterationSamples, type IterationWanted } from '../../activities/iterationSamples.js';
import type { RolloutRecord, TrajectoryRecord } from '../../activities/records.js';
import { TOPICS } from '../../infra/settings.js';
import { ApplicationFailure } from '@temporalio/common';
import { updateFailure } from '../../activities/updatePolicy.js';
import { EngineError } from '../../infra/engine/client.js';

const want: IterationWanted = { runId: 'r', policy: 'p', iteration: 3, fromVersion: 3, expected: 2 };

function sample(id: string, over: Partial<TrajectoryRecord> = {}) {
  const score: TrajectoryRecord = {
    sampleId: id, runId: 'r', iteration: 3, episodeId: 'r/it3/ep0', problemSeed: 9, turn: 0, agent: 'a', policy: 'p', policyVersion: 3,
    groupKey: 'p9/t0/a', member: id, score: 1, candidate: 0, local: 1, global: 0, reward: 1, chosen: false, ...over,
  };
  const tokens: RolloutRecord = {
    sampleId: id, runId: score.runId, iteration: score.iteration, policy: score.policy, policyVersion: score.policyVersion,
    promptIds: [1], responseIds: [2], logprobs: [-1], finishReason: 'stop',
  };
  return [
    { topic: TOPICS.trajectories, partition: 0, offset: String(offset++), value: JSON.stringify(score) },
    { topic: TOPICS.rollouts, partition: 1, offset: String(offset++), value: JSON.stringify(tokens) },
  ];
}
let offset = 0;

test("keeps exactly this iteration's samples of this run and policy, each sample id once", () => {
  const records = [
    ...sample('s1'),
    ...sample('s2'),
    ...sample('s1'), // a retried publish
    ...sample('old', { iteration: 2, policyVersion: 2 }),
    ...sample('next', { iteration: 4, policyVersion: 4 }),
    ...sample('other-run', { runId: 'r2' }),
    ...sample('other-policy', { policy: 'q' }),
  ];
  const got = selectIterationSamples(records, want);
  assert.ok(got.ok);
  assert.deepEqual(got.scores.map((s) => s.sampleId).sort(), ['s1', 's2']);
});

test('rollouts never scored (a retried turn’s earlier attempt) are left out', () => {
  const orphan = sample('s3')[1];
  const got = selectIterationSamples([...sample('s1'), ...sample('s2'), orphan], want);
  assert.ok(got.ok);
  assert.deepEqual(got.scores.map((s) => s.sampleId).sort(), ['s1', 's2']);
});

test('a partial iteration is retryable; a missing rollout or an off-policy sample is not', () => {
  const partial = selectIterationSamples(sample('s1'), want);
  assert.deepEqual(partial.ok ? null : [partial.retryable, partial.type], [true, 'IncompleteIteration']);

  const missing = selectIterationSamples([...sample('s1'), sample('s2')[0]], want);
  assert.deepEqual(missing.ok ? null : [missing.retryable, missing.type], [false, 'MissingRollout']);

  // Same iteration, but sampled by another version of the policy: never trained on.
  const offPolicy = selectIterationSamples([...sample('s1'), ...sample('s2', { policyVersion: 2 })], want);
  assert.deepEqual(offPolicy.ok ? null : [offPolicy.retryable, offPolicy.type], [false, 'OffPolicySample']);
  assert.match(offPolicy.ok ? '' : offPolicy.message, /s2 came from version 2/);
});

test('rollout.max_staleness N: samples of the N versions before the update are trained on, older ones set apart as stale; never a newer one', () => {
  const async1 = { ...want, maxStaleness: 1, expected: 3 };
  const got = selectIterationSamples([...sample('now'), ...sample('one-back', { policyVersion: 2 }), ...sample('two-back', { policyVersion: 1 })], async1);
  assert.ok(got.ok);
  assert.deepEqual(got.scores.map((s) => s.sampleId).sort(), ['now', 'one-back']);
  assert.deepEqual(got.stale, { 'two-back': 1 });
  const newer = selectIterationSamples([...sample('now'), ...sample('ahead', { policyVersion: 4 }), ...sample('x')], async1);
  assert.deepEqual(newer.ok ? null : [newer.type, newer.message], ['OffPolicySample', 'iteration 3 of p: sample ahead came from version 4, the update starts from 3 (rollout.max_staleness 1)']);
  // Scored under one version, sampled under another: never.
  const [score, tokens] = sample('mixed', { policyVersion: 2 });
  const rollout = { ...tokens, value: JSON.stringify({ ...JSON.parse(tokens.value), policyVersion: 3 }) };
  const mixed = selectIterationSamples([...sample('now'), score, rollout, ...sample('y')], async1);
  assert.equal(mixed.ok ? null : mixed.type, 'OffPolicySample');
  // Strict (0, and absent): a sample one version back is an error, as before asynchronous training.
  for (const strict of [{ ...want, maxStaleness: 0 }, want]) {
    const r = selectIterationSamples([...sample('s1'), ...sample('s2', { policyVersion: 2 })], strict);
    assert.equal(r.ok ? null : r.type, 'OffPolicySample');
  }
});

test("the cut: each partition's first record of this run and policy from a later iteration, where the next update's read starts", () => {
  const records = [...sample('s1'), ...sample('other-run-later', { runId: 'r2', iteration: 4 }), ...sample('next1', { iteration: 4, policyVersion: 3 }), ...sample('s2'), ...sample('next2', { iteration: 5, policyVersion: 3 })];
  const got = selectIterationSamples(records, want);
  assert.ok(got.ok);
  const first = (id: string, topic: string) => records.find((r) => r.topic === topic && JSON.parse(r.value).sampleId === id)!.offset;
  assert.deepEqual([...got.cut], [
    [`${TOPICS.trajectories}:0`, BigInt(first('next1', TOPICS.trajectories))],
    [`${TOPICS.rollouts}:1`, BigInt(first('next1', TOPICS.rollouts))],
  ]);
  const none = selectIterationSamples([...sample('s1'), ...sample('s2')], want);
  assert.equal(none.ok && none.cut.size, 0, 'no later record: no cut');
});

test("the update's engine errors: out of memory is retried and names the update's memory settings; replicas that disagree fail for good", () => {
  const oom = updateFailure(new EngineError('OutOfMemoryError', 'CUDA out of memory. Tried to allocate 7.25 GiB'));
  assert.ok(oom instanceof ApplicationFailure && !oom.nonRetryable && oom.type === 'OutOfMemoryError');
  assert.match(oom.message, /^CUDA out of memory\. Tried to allocate 7\.25 GiB \(.*update\.gradient_checkpointing: true.*update\.micro_batch_tokens\)$/);
  const mismatch = updateFailure(new EngineError('ReplicaMismatch', 'checksums differ'));
  assert.ok(mismatch instanceof ApplicationFailure && mismatch.nonRetryable);
  const other = new EngineError('EngineDied', 'gone');
  assert.equal(updateFailure(other), other);
});
