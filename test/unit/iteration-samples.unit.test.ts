// The on-policy filter of updatePolicy: an update uses exactly its iteration's samples, each
// once, and never a sample of another iteration, run, policy or version. Also how its engine's
// errors become the activity's failures.
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
    { topic: TOPICS.trajectories, value: JSON.stringify(score) },
    { topic: TOPICS.rollouts, value: JSON.stringify(tokens) },
  ];
}

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

test("the update's engine errors: out of memory is retried and names the update's memory settings; replicas that disagree fail for good", () => {
  const oom = updateFailure(new EngineError('OutOfMemoryError', 'CUDA out of memory. Tried to allocate 7.25 GiB'));
  assert.ok(oom instanceof ApplicationFailure && !oom.nonRetryable && oom.type === 'OutOfMemoryError');
  assert.match(oom.message, /^CUDA out of memory\. Tried to allocate 7\.25 GiB \(.*update\.gradient_checkpointing: true.*update\.micro_batch_tokens\)$/);
  const mismatch = updateFailure(new EngineError('ReplicaMismatch', 'checksums differ'));
  assert.ok(mismatch instanceof ApplicationFailure && mismatch.nonRetryable);
  const other = new EngineError('EngineDied', 'gone');
  assert.equal(updateFailure(other), other);
});
