// Exactly-once into an update, at the activity level, with a real engine and Kafka: an agent
// turn retried after it published (its first attempt's records are never scored), an episode
// published twice (a retried publish), and the update run twice (a retry after it committed,
// as when its worker dies or Temporal loses its completion). The update consumes each scored
// sample once, the retry replays the engine's recorded step, and both attempts publish the same
// SamplesConsumed event. The update also deletes what every consumer group has read past
// (infra/kafka/retention.ts): the retry still finds its iteration, which its group holds.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentTurnActivities, type AgentTurnInput, type CandidateText } from '../../activities/agentTurn.js';
import { createPublishActivities } from '../../activities/publish.js';
import { createUpdateGroupActivities } from '../../activities/updateGroups.js';
import type { TrajectoryRecord } from '../../activities/records.js';
import { createUpdateActivities, type UpdateSummary } from '../../activities/updatePolicy.js';
import { loadRunConfig } from '../../configs/load.js';
import { policiesOf, trainable } from '../../policy/spec.js';
import type { EventEnvelope } from '../../domain/events.js';
import { lazyProducer } from '../../infra/kafka/client.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { TOPICS } from '../../infra/settings.js';
import { EngineClient } from '../../infra/engine/client.js';
import { runFolder } from '../../activities/policy.js';
import { policyRef } from '../../policy/ref.js';
import { kafka } from '../support/stack.js';

const K = 2;
const k = kafka();
const producer = lazyProducer(k);
const engine = new EngineClient('cpu');
const deps = {
  engine,
  producer,
  device: 'cpu',
  dataDir: mkdtempSync(join(tmpdir(), 'tandem-update-once-')),
};
after(async () => {
  await engine.stop();
  await producer.close();
  rmSync(deps.dataDir, { recursive: true, force: true });
});

test('retried turn, publish and update: each scored sample consumed once, one SamplesConsumed', { timeout: 600_000 }, async () => {
  const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['training.total_training_steps=1', `training.train_sample_num=${K}`]);
  assert.ok(loaded.ok);
  const cfg = loaded.config;
  const runId = `update-once-${Date.now()}`;
  const [spec] = trainable(policiesOf(cfg));
  const policy = policyRef(runId, spec, cfg);
  // As the run does at its start: its first update reads from here; and this test's own reader of
  // the events holds them from here (a group without offsets holds nothing).
  const groups = createUpdateGroupActivities(k);
  const runPolicies = { runId, policies: [{ name: spec.name, replicas: 1 }] };
  await groups.startUpdateGroups(runPolicies);
  await startAtEnd(k, `check-${runId}`, [TOPICS.events]);
  const turns = createAgentTurnActivities(deps);
  const episodeId = `${runId}/it0/ep0`;
  const turn: AgentTurnInput = {
    policy,
    policyVersion: 0,
    iteration: 0,
    episodeId,
    turn: 0,
    agent: 'plan_agent',
    messages: [{ role: 'user', content: 'Find a path. Answer after ####.' }],
    k: K,
    sampling: Object.values(cfg.agent_policy_configs.agent_configs)[0].train_llm_config,
    maxNewTokens: 8,
    seed: 7,
    record: true,
  };
  // Attempt 1 publishes its rollouts and then "dies"; attempt 2 is the one the episode keeps.
  await new MockActivityEnvironment({ attempt: 1 }).run(turns.agentTurn, turn);
  const kept: CandidateText[] = await new MockActivityEnvironment({ attempt: 2 }).run(turns.agentTurn, turn);
  assert.ok(kept.every((c) => c.sampleId.endsWith('/a2')));

  const samples: TrajectoryRecord[] = kept.map((c, i) => ({
    sampleId: c.sampleId,
    runId,
    iteration: 0,
    episodeId,
    problemSeed: 1,
    turn: 0,
    agent: 'plan_agent',
    policy: spec.name,
    policyVersion: 0,
    groupKey: 'p1/t0/plan_agent',
    member: c.sampleId,
    score: i, // different rewards: the group is kept whatever zero_variance_groups says
    candidate: i,
    local: i,
    global: 0,
    reward: i,
    chosen: i === K - 1,
  }));
  const publish = createPublishActivities(producer);
  await publish.publishEpisode({ samples, events: [] });
  await publish.publishEpisode({ samples, events: [] }); // a retried publish

  const update = createUpdateActivities({ ...deps, kafka: k });
  const input = { policy, iteration: 0, fromVersion: 0, expectedSamples: K, update: cfg.update };
  const first: UpdateSummary = await new MockActivityEnvironment({ attempt: 1 }).run(update.updatePolicy, input);
  const retry: UpdateSummary = await new MockActivityEnvironment({ attempt: 2 }).run(update.updatePolicy, input);
  assert.deepEqual([first.fromVersion, first.toVersion, first.replayed], [0, 1, false]);
  assert.deepEqual([retry.fromVersion, retry.toVersion, retry.replayed], [0, 1, true], 'the retry replays the recorded step');
  assert.equal(first.samples, K);
  assert.equal(retry.samples, K);
  // Each attempt handed its samples to the engine as a file, and removed it once answered.
  assert.deepEqual(readdirSync(join(runFolder(runId, cfg.data_dir, deps.dataDir), 'update-samples')), []);

  const events = await readBatch(k, `check-${runId}`, [TOPICS.events]);
  const consumed = events.records
    .map((r) => JSON.parse(r.value) as EventEnvelope)
    .filter((e) => e.event.type === 'SamplesConsumed' && e.event.runId === runId);
  assert.equal(consumed.length, 2, 'each attempt published it');
  assert.equal(new Set(consumed.map((e) => e.eventId)).size, 1, 'under one event id, so Postgres stores it once');
  for (const e of consumed) {
    assert.ok(e.event.type === 'SamplesConsumed');
    assert.deepEqual(Object.keys(e.event.advantages).sort(), samples.map((s) => s.sampleId).sort(), 'the scored samples, not attempt 1');
  }
  // The run's end deletes its groups (iterations 0 and 1 here).
  await groups.releaseUpdateGroups({ ...runPolicies, iterations: 1 });
  await deleteGroups(k, [`check-${runId}`]);
  const admin = k.admin();
  await admin.connect();
  const left = (await admin.listGroups()).groups.filter((g) => g.groupId.startsWith(`tandem-update.${runId}.`) || g.groupId === `check-${runId}`);
  await admin.disconnect();
  assert.deepEqual(left, []);
});
