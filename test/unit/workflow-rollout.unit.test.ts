// Rollout engines (placement.<base>.rollout), with mocked activities (test/support/workflowEnv.ts):
// every turn goes to the rollout queue and every update to the trainer's; after each update the run
// installs the new version on each rollout engine (syncPolicy, on each engine's own queue) before any
// turn asks for it, synchronously and with max_staleness 1; a sync that fails is retried; by broadcast,
// one round per version (the trainer's publishPolicy and every engine's syncPolicy), and a round that
// fails falls back to the file; the engines are loaded at the start and released at the end. Also the
// placement checks, and how a worker knows which of a policy's engines it is.
import assert from 'node:assert/strict';
import { after, beforeEach, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { loadSpec } from '../../activities/policy.js';
import { loadRunConfig } from '../../configs/load.js';
import type { EngineClient } from '../../infra/engine/client.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { policyRef } from '../../policy/ref.js';
import { policiesOf } from '../../policy/spec.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { callsOf, defaultMocks, eventsOf, ROLLOUT_QUEUE, runConfig, startWorkflowHarness } from '../support/workflowEnv.js';

const L1 = 'configs/mathrefine/mathrefine_L1_prompt.yaml';
const SMALL = ['training.train_batch_size=2', 'training.train_sample_num=2', 'env.max_turns=1', 'training.total_training_steps=3', 'training.val_freq=0'];
const SPLIT = [...SMALL, `placement.shared_model.rollout.task_queue=${ROLLOUT_QUEUE}`, 'placement.shared_model.rollout.engines=2'];
const ENGINES = [`${ROLLOUT_QUEUE}-r0`, `${ROLLOUT_QUEUE}-r1`];

const h = await startWorkflowHarness();
after(() => h.close());
beforeEach(() => h.reset());

async function run(runId: string, overrides: string[]) {
  const config = runConfig(L1, overrides);
  return h.env.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config }] });
}

/** Each turn, with the versions every rollout engine had finished installing when it started. */
function recordSyncs() {
  const installed = new Map<string, number>(ENGINES.map((q) => [q, -1]));
  const seen: { version: number; engines: number[] }[] = [];
  h.mocks.syncPolicy = async (input) => {
    const result = await defaultMocks().syncPolicy(input);
    await new Promise((r) => setTimeout(r, 20)); // an install takes a while
    return result;
  };
  const turn = h.mocks.agentTurn;
  h.mocks.agentTurn = async (input) => {
    for (const c of callsOf(h.calls, 'syncPolicy')) if (c.output) installed.set(c.queue, Math.max(installed.get(c.queue)!, c.input.version));
    seen.push({ version: input.policyVersion, engines: ENGINES.map((q) => installed.get(q)!) });
    return turn(input);
  };
  return seen;
}

for (const staleness of [0, 1]) {
  test(`max_staleness ${staleness}: turns on the rollout engines, each version installed on every one before a turn asks for it`, async () => {
    const seen = recordSyncs();
    const result = await run(`rollout-split-n${staleness}`, [...SPLIT, `rollout.max_staleness=${staleness}`, ...(staleness ? ['update.behaviour_weight_cap=2'] : [])]);
    assert.deepEqual(result.recent.at(-1)?.updates.shared_model.rolloutSync, { engines: 2, seconds: 0.5, by: 'file' }, 'the status view shows it');
    assert.deepEqual([...new Set(callsOf(h.calls, 'agentTurn').map((c) => c.queue))], [ROLLOUT_QUEUE]);
    assert.deepEqual([...new Set(callsOf(h.calls, 'updatePolicy').map((c) => c.queue))], ['tandem-policy-0']);
    // Version 0 at the start (loading them), then each update's version, on both engines.
    const syncs = callsOf(h.calls, 'syncPolicy').map((c) => `${c.queue} v${c.input.version}`).sort();
    assert.deepEqual(syncs, ENGINES.flatMap((q) => [0, 1, 2, 3].map((v) => `${q} v${v}`)).sort());
    assert.ok(seen.length > 0);
    for (const t of seen) assert.ok(t.engines.every((v) => v >= t.version), `a turn at version ${t.version} ran before the engines held it: ${t.engines}`);
    assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.rolloutSync), [1, 2, 3].map(() => ({ engines: 2, seconds: 0.5, by: 'file' })));
    assert.deepEqual(callsOf(h.calls, 'releasePolicy').map((c) => c.queue).sort(), ['tandem-policy-0', ...ENGINES]);
  });
}

test('a sync that fails is tried again, and the version waits for it', async () => {
  let failed = false;
  h.mocks.syncPolicy = async (input) => {
    if (input.version === 1 && !failed) {
      failed = true;
      throw ApplicationFailure.retryable('engine died mid-sync', 'EngineExited');
    }
    return defaultMocks().syncPolicy(input);
  };
  await run('rollout-sync-retry', SPLIT);
  const v1 = callsOf(h.calls, 'syncPolicy').filter((c) => c.input.version === 1);
  assert.equal(v1.length, 3, 'one sync per engine, one of them twice');
  const lastSync = h.calls.indexOf(v1[2]);
  assert.ok(callsOf(h.calls, 'agentTurn').filter((c) => c.input.policyVersion === 1).every((c) => h.calls.indexOf(c) > lastSync));
  assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.toVersion), [1, 2, 3]);
});

const BROADCAST = [...SPLIT, 'placement.shared_model.rollout.weights=broadcast'];

test('by broadcast: each new version in one round, the trainer publishing and every rollout engine receiving, before any turn asks for it', async () => {
  const seen = recordSyncs();
  await run('rollout-broadcast', BROADCAST);
  const rounds = new Map<string, string[]>();
  for (const c of [...callsOf(h.calls, 'publishPolicy'), ...callsOf(h.calls, 'syncPolicy').filter((c) => c.input.round)]) {
    const round = c.input.round!;
    const rank = 'rank' in round ? (round as { rank: number }).rank : 0;
    assert.equal(round.world, 3);
    rounds.set(round.group, [...(rounds.get(round.group) ?? []), `${c.queue} rank ${rank} v${c.input.version}`]);
  }
  // Each update's version: one group each, the trainer rank 0, the engines 1 and 2.
  assert.deepEqual([...rounds.values()].map((r) => r.sort()), [1, 2, 3].map((v) => [`tandem-policy-0 rank 0 v${v}`, `${ENGINES[0]} rank 1 v${v}`, `${ENGINES[1]} rank 2 v${v}`]));
  assert.ok([...rounds.keys()].every((g) => g.startsWith('rollout-broadcast/shared_model/v')), [...rounds.keys()].join(', '));
  // Loading them at the start: by file (a load may outlast a round's join timeout); nothing else by file.
  assert.deepEqual(callsOf(h.calls, 'syncPolicy').filter((c) => !c.input.round).map((c) => `${c.queue} v${c.input.version}`).sort(), ENGINES.map((q) => `${q} v0`));
  for (const t of seen) assert.ok(t.engines.every((v) => v >= t.version), `a turn at version ${t.version} ran before the engines held it: ${t.engines}`);
  assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.rolloutSync), [1, 2, 3].map(() => ({ engines: 2, seconds: 0.25, by: 'broadcast' })));
});

test('a broadcast round that fails is not retried: its version goes to every rollout engine by file, and waits for it', async () => {
  h.mocks.publishPolicy = async (input) => {
    if (input.version === 2) throw ApplicationFailure.nonRetryable('rank 2 of 3 could not join group g', 'ReplicaGroupFailed');
    return defaultMocks().publishPolicy(input);
  };
  await run('rollout-broadcast-fallback', BROADCAST);
  assert.equal(callsOf(h.calls, 'publishPolicy').filter((c) => c.input.version === 2).length, 1, 'one attempt');
  const byFile = callsOf(h.calls, 'syncPolicy').filter((c) => !c.input.round && c.input.version > 0);
  assert.deepEqual(byFile.map((c) => `${c.queue} v${c.input.version}`).sort(), ENGINES.map((q) => `${q} v2`));
  const lastSync = Math.max(...byFile.map((c) => h.calls.indexOf(c)));
  assert.ok(callsOf(h.calls, 'agentTurn').filter((c) => c.input.policyVersion === 2).every((c) => h.calls.indexOf(c) > lastSync));
  assert.deepEqual(eventsOf(h.calls, 'UpdateApplied').map((e) => e.rolloutSync), [
    { engines: 2, seconds: 0.25, by: 'broadcast' },
    { engines: 2, seconds: 0.5, by: 'file', fallback: 'rank 2 of 3 could not join group g' },
    { engines: 2, seconds: 0.25, by: 'broadcast' },
  ]);
});

test('colocated (no rollout engines): no sync, turns on the policy worker', async () => {
  await run('rollout-none', SMALL);
  assert.equal(callsOf(h.calls, 'syncPolicy').length, 0);
  assert.deepEqual([...new Set(callsOf(h.calls, 'agentTurn').map((c) => c.queue))], ['tandem-policy-0']);
  assert.equal(eventsOf(h.calls, 'UpdateApplied')[0].rolloutSync, undefined);
});

test('placement: a rollout queue of its own, one count of engines per queue, and a retention that keeps N + 1 versions', () => {
  const shared = loadRunConfig(L1, ['placement.shared_model.rollout.task_queue=tandem-policy-0']);
  assert.ok(!shared.ok);
  assert.deepEqual(shared.issues.map((i) => i.path), ['placement.shared_model.rollout.task_queue']);
  const L3 = 'configs/planpath/planpath_L3_model.yaml';
  const counts = loadRunConfig(L3, ['placement.tool_model.rollout.task_queue=r', 'placement.plan_model.rollout.task_queue=r', 'placement.plan_model.rollout.engines=2']);
  assert.ok(!counts.ok);
  assert.deepEqual(counts.issues.map((i) => i.path), ['placement.plan_model.rollout.engines']);
  const keep = loadRunConfig(L1, ['placement.shared_model.rollout.task_queue=r', 'rollout.max_staleness=1', 'update.behaviour_weight_cap=2', 'checkpoints.keep_last=1']);
  assert.ok(!keep.ok);
  assert.deepEqual(keep.issues.map((i) => [i.path, i.message]), [['checkpoints.keep_last', 'rollout engines load versions from checkpoints: keep at least the newest 2 (rollout.max_staleness + 1), not 1']]);
  const device = loadRunConfig(L1, ['placement.shared_model.rollout.task_queue=r', 'placement.shared_model.rollout.device=tpu']);
  assert.ok(!device.ok);
  assert.deepEqual(device.issues.map((i) => i.path), ['placement.shared_model.rollout.device']);
});

test('placement by broadcast: one dtype on both ends, and a rendezvous of its own per trainer engine', () => {
  const split = ['placement.shared_model.rollout.task_queue=r', 'placement.shared_model.rollout.weights=broadcast'];
  const dtype = loadRunConfig(L1, [...split, 'placement.shared_model.device=cuda']);
  assert.ok(!dtype.ok);
  assert.deepEqual(dtype.issues.map((i) => [i.path, i.message]), [['placement.shared_model.dtype', "rollout.weights broadcast sends the trainer's weights in its dtype; with auto, a trainer on cuda and rollout engines on cpu would differ: set float32 or bfloat16"]]);
  assert.ok(loadRunConfig(L1, [...split, 'placement.shared_model.device=cuda', 'placement.shared_model.dtype=bfloat16']).ok);
  assert.ok(loadRunConfig(L1, ['placement.shared_model.rollout.task_queue=r', 'placement.shared_model.device=cuda']).ok, 'by file, the checkpoint is cast');
  const L3 = 'configs/planpath/planpath_L3_model.yaml';
  const both = ['placement.tool_model.rollout.task_queue=r1', 'placement.tool_model.rollout.weights=broadcast', 'placement.plan_model.rollout.task_queue=r2', 'placement.plan_model.rollout.weights=broadcast'];
  const clash = loadRunConfig(L3, [...both, 'placement.plan_model.task_queue=tandem-policy-1']);
  assert.ok(!clash.ok);
  assert.deepEqual(clash.issues.map((i) => i.path).sort(), ['placement.plan_model.rollout.rendezvous', 'placement.tool_model.rollout.rendezvous']);
  assert.ok(loadRunConfig(L3, [...both, 'placement.plan_model.task_queue=tandem-policy-1', 'placement.plan_model.rollout.rendezvous=127.0.0.1:29501']).ok);
  assert.ok(loadRunConfig(L3, both).ok, 'one trainer engine serves both rounds');
  const spec = policiesOf(runConfig(L1, split))[0];
  assert.deepEqual(spec.rollout, { taskQueue: 'r', device: 'cpu', engines: 1, broadcast: { rendezvous: '127.0.0.1:29500', joinTimeoutS: 60, timeoutS: 600 } });
});

test('a worker on the rollout queue loads the policy as a rollout engine, on the rollout device', () => {
  const cfg = runConfig(L1, ['placement.shared_model.rollout.task_queue=r', 'placement.shared_model.rollout.device=cuda', 'placement.shared_model.device=cuda:1']);
  const spec = policiesOf(cfg)[0];
  assert.deepEqual(spec.rollout, { taskQueue: 'r', device: 'cuda', engines: 1 });
  const ref = policyRef('run-1', spec, cfg);
  const engine = {} as EngineClient;
  assert.equal(loadSpec({ engine, device: 'cuda:0', dataDir: '/d', taskQueue: 'r' }, ref).role, 'rollout');
  assert.equal(loadSpec({ engine, device: 'cuda:1', dataDir: '/d', taskQueue: 'tandem-policy-0' }, ref).role, 'trainer');
  assert.equal(loadSpec({ engine, device: 'cuda:1', dataDir: '/d' }, ref).role, 'trainer');
  assert.throws(() => loadSpec({ engine, device: 'cpu', dataDir: '/d', taskQueue: 'r' }, ref), /placed on cuda, but the worker on task queue r runs on cpu/);
});
