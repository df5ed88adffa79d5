// A policy on two data-parallel replicas (placement.<base>.replicas=2), with mocked activities
// (test/support/workflowEnv.ts): each update is one step with a part on each replica's own update
// queue, both in the same rendezvous group; a failed part makes the whole step run again under a
// new group; a non-retryable failure ends the run; the run's policies are released on every
// replica; turns and updates take their timeouts from the config. Also the pure pieces: how groups are dealt to replicas, and the placement checks.
import assert from 'node:assert/strict';
import { after, beforeEach, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { replicaShare } from '../../activities/iterationSamples.js';
import { loadRunConfig } from '../../configs/load.js';
import { policiesOf } from '../../policy/spec.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { callsOf, defaultMocks, eventsOf, runConfig, startWorkflowHarness } from '../support/workflowEnv.js';

const L1 = 'configs/mathrefine/mathrefine_L1_prompt.yaml';
const SMALL = ['training.train_batch_size=2', 'training.train_sample_num=2', 'env.max_turns=1', 'training.total_training_steps=2', 'training.val_freq=0'];
const REPLICATED = [...SMALL, 'placement.shared_model.replicas=2'];

const h = await startWorkflowHarness();
after(() => h.close());
beforeEach(() => h.reset());

/** A replica group's name with its workflow run's id (a UUID) as `<run>`. */
const withoutRun = (group: string) => group.replace(/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\//, '/<run>/');

async function run(runId: string, overrides: string[]) {
  const config = runConfig(L1, overrides);
  return h.env.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config }] });
}

test('each update is one step with a part on each replica, in one group per attempt', async () => {
  await run('replicas-ok', REPLICATED);
  const updates = callsOf(h.calls, 'updatePolicy');
  assert.deepEqual(updates.map((c) => [c.queue, c.input.fromVersion, c.input.replica?.rank]).sort(), [
    ['tandem-policy-0-r0', 0, 0], ['tandem-policy-0-r0', 1, 0], ['tandem-policy-0-r1', 0, 1], ['tandem-policy-0-r1', 1, 1],
  ]);
  for (const v of [0, 1]) {
    const parts = updates.filter((c) => c.input.fromVersion === v).map((c) => c.input.replica!);
    // The group names the step, the workflow run and the attempt.
    assert.deepEqual(parts.map((p) => [p.world, withoutRun(p.group)]), [[2, `replicas-ok/shared_model/v${v}/<run>/attempt-1`], [2, `replicas-ok/shared_model/v${v}/<run>/attempt-1`]]);
    assert.equal(parts[0].group, parts[1].group);
  }
  // One UpdateApplied per step, not per replica; the policy leaves both replicas at the end.
  assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.toVersion), [1, 2]);
  assert.deepEqual(callsOf(h.calls, 'releasePolicy').map((c) => c.queue).sort(), ['tandem-policy-0-r0', 'tandem-policy-0-r1']);
  // The run's update groups know the replicas, whose reader groups they delete at the end.
  assert.deepEqual(callsOf(h.calls, 'releaseUpdateGroups').map((c) => c.input), [{ runId: 'replicas-ok', policies: [{ name: 'shared_model', replicas: 2 }], iterations: 2 }]);
});

test('without replicas the update runs once, on the policy worker queue, as before', async () => {
  await run('replicas-none', SMALL);
  const updates = callsOf(h.calls, 'updatePolicy');
  assert.deepEqual(updates.map((c) => [c.queue, c.input.replica]), [['tandem-policy-0', undefined], ['tandem-policy-0', undefined]]);
});

test('a turn may take rollout.turn_timeout_s and an update update.timeout_s (two hours each by default), on one policy worker or over replicas', async () => {
  const timeouts = (name: 'agentTurn' | 'updatePolicy' | 'policyVersion' | 'releasePolicy') => [...new Set(callsOf(h.calls, name).map((c) => c.startToCloseMs))];
  await run('timeouts-default', SMALL);
  assert.deepEqual([timeouts('agentTurn'), timeouts('updatePolicy')], [[7_200_000], [7_200_000]]);
  assert.deepEqual([timeouts('policyVersion'), timeouts('releasePolicy')], [[1_800_000], [1_800_000]]);
  for (const [runId, overrides] of [['timeouts-set', SMALL], ['timeouts-replicas', REPLICATED]] as const) {
    h.reset();
    await run(runId, [...overrides, 'rollout.turn_timeout_s=90', 'update.timeout_s=600']);
    assert.deepEqual([timeouts('agentTurn'), timeouts('updatePolicy')], [[90_000], [600_000]], runId);
  }
});

test('a failed part runs the whole step again, under a new group', async () => {
  let failures = 0;
  h.mocks.updatePolicy = async (input) => {
    if (input.replica?.rank === 1 && input.fromVersion === 0 && failures++ === 0) throw ApplicationFailure.retryable('peer died', 'ReplicaGroupFailed');
    return defaultMocks().updatePolicy(input);
  };
  await run('replicas-retry', REPLICATED);
  const first = callsOf(h.calls, 'updatePolicy').filter((c) => c.input.fromVersion === 0).map((c) => `${c.input.replica!.rank} ${withoutRun(c.input.replica!.group)}`);
  assert.deepEqual(first.sort(), [
    '0 replicas-retry/shared_model/v0/<run>/attempt-1', '0 replicas-retry/shared_model/v0/<run>/attempt-2',
    '1 replicas-retry/shared_model/v0/<run>/attempt-1', '1 replicas-retry/shared_model/v0/<run>/attempt-2',
  ]);
  assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.toVersion), [1, 2]);
});

test('a non-retryable failure of a part (replicas that disagree) ends the run', async () => {
  h.mocks.updatePolicy = async (input) => {
    if (input.replica?.rank === 1) throw ApplicationFailure.nonRetryable('weights differ', 'ReplicaMismatch');
    return defaultMocks().updatePolicy(input);
  };
  await assert.rejects(run('replicas-mismatch', REPLICATED), (err) => err instanceof WorkflowFailedError);
  assert.equal(callsOf(h.calls, 'updatePolicy').filter((c) => c.input.replica?.rank === 1).length, 1);
});

test('replicas get whole groups, the largest first to the least loaded', () => {
  const s = (groupKey: string, sampleId: string, tokens: number) => ({ groupKey, sampleId, tokens });
  const samples = [s('a', 'a1', 50), s('a', 'a2', 50), s('b', 'b1', 30), s('c', 'c1', 40), s('c', 'c2', 10), s('d', 'd1', 5)];
  const shares = [0, 1].map((r) => replicaShare(samples, (x) => x.tokens, r, 2).map((x) => x.sampleId));
  // a (100) -> 0; c (50) -> 1; b (30) -> 1 (50 < 100); d (5) -> 1 (80 < 100)
  assert.deepEqual(shares, [['a1', 'a2'], ['c1', 'c2', 'b1', 'd1']]);
  assert.deepEqual(replicaShare([...samples].reverse(), (x) => x.tokens, 1, 2).map((x) => x.sampleId), shares[1], 'the same deal whatever the order read');
});

test('placement: replicas on one task queue agree, and each set has its own rendezvous port', () => {
  const two = loadRunConfig('configs/planpath/planpath_L3_model.yaml', [
    'placement.tool_model.replicas=2', 'placement.plan_model.replicas=2', 'placement.plan_model.task_queue=tandem-policy-1',
  ]);
  assert.ok(!two.ok);
  assert.deepEqual(two.issues.map((i) => i.path), ['placement.plan_model.rendezvous']);
  const mixed = loadRunConfig('configs/planpath/planpath_L3_model.yaml', ['placement.tool_model.replicas=2', 'placement.plan_model.replicas=1']);
  assert.ok(!mixed.ok);
  assert.deepEqual(mixed.issues.map((i) => i.path), ['placement.plan_model.replicas']);
  const bad = loadRunConfig(L1, ['placement.shared_model.rendezvous=nowhere']);
  assert.ok(!bad.ok);
  assert.deepEqual(bad.issues.map((i) => i.path), ['placement.shared_model.rendezvous']);
});

test('placement: shard_optimizer needs replicas, and reaches the policy spec', () => {
  const alone = loadRunConfig(L1, ['placement.shared_model.shard_optimizer=true']);
  assert.ok(!alone.ok);
  assert.deepEqual(alone.issues.map((i) => i.path), ['placement.shared_model.shard_optimizer']);
  const sharded = loadRunConfig(L1, ['placement.shared_model.replicas=2', 'placement.shared_model.shard_optimizer=true']);
  assert.ok(sharded.ok, JSON.stringify(!sharded.ok && sharded.issues));
  assert.deepEqual(policiesOf(sharded.config)[0].replicas, { count: 2, rendezvous: '127.0.0.1:29400', joinTimeoutS: 60, timeoutS: 600, shardOptimizer: true });
});
