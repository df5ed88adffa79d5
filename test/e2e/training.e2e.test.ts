// End to end on the real stack: `tandem train` runs 2 iterations of a tiny Plan-Path config
// through Temporal (workflows + CPU and policy workers), Kafka (rollouts, trajectories,
// events), the Python engine (generation, PPO update, checkpoint) and Postgres (projector);
// with checkpoints.keep_last 1, only the newest checkpoint stays on disk; the run's update groups
// are gone from Kafka once it has finished.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { asc, eq } from 'drizzle-orm';
import { rolloutOf, type TrajectoryRecord } from '../../activities/records.js';
import { checkpoints, events, runs } from '../../infra/db/schema.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { TOPICS, UPDATE_TOPICS } from '../../infra/settings.js';
import type { RunProgress } from '../../workflows/messages.js';
import { eventually } from '../support/eventually.js';
import { database, kafka, temporal } from '../support/stack.js';

const K = 3;
const ITERATIONS = 2;
const EPISODES = 2;
const runId = `e2e-${Date.now()}`;
/** This test's reader of the run's records: made before the run, it holds them (infra/kafka/retention.ts). */
const checkGroup = `e2e-check-${runId}`;
const t = await temporal();
const pg = database();
after(async () => {
  await deleteGroups(kafka(), [checkGroup]);
  await t.close();
  await pg.close();
});

let cli: ReturnType<typeof spawnSync>;
let result: RunProgress;

before(async () => {
  await startAtEnd(kafka(), checkGroup, UPDATE_TOPICS);
  cli = spawnSync(
    process.execPath,
    [
      'bin/tandem.js', 'train', 'configs/planpath/planpath_L1_prompt.yaml',
      `training.total_training_steps=${ITERATIONS}`,
      `training.train_batch_size=${EPISODES}`,
      `training.train_sample_num=${K}`,
      'training.max_response_length=24',
      'env.max_turns=2',
      'checkpoints.keep_last=1',
      '--id', runId, '--wait',
    ],
    { encoding: 'utf8', timeout: 600_000 },
  );
  result = await t.client.workflow.getHandle(runId).result();
});

test('the CLI starts the run, prints its id and one line per iteration', () => {
  assert.equal(cli.status, 0, String(cli.stderr));
  const out = String(cli.stdout);
  assert.match(out, new RegExp(`^${runId}$`, 'm'));
  assert.match(out, /^iteration 1\/2 .*reward tool_call_agent=-?\d/m);
  assert.match(out, /^iteration 2\/2 .*shared_model v2 loss=/m);
});

test('two updates were applied, and the latest checkpoint is the one on disk (checkpoints.keep_last 1)', () => {
  assert.equal(result.status, 'completed');
  assert.equal(result.updatesApplied, ITERATIONS);
  assert.deepEqual(result.versions, { shared_model: ITERATIONS });
  assert.ok(result.lastCheckpoint && existsSync(result.lastCheckpoint), `checkpoint ${result.lastCheckpoint}`);
  const state = JSON.parse(readFileSync(join(result.lastCheckpoint, 'state.json'), 'utf8'));
  assert.equal(state.version, ITERATIONS);
  assert.ok(existsSync(join(result.lastCheckpoint, 'model', 'config.json')) || existsSync(join(result.lastCheckpoint, 'config.json')));
  assert.deepEqual(readdirSync(dirname(result.lastCheckpoint)), ['v000002'], 'v000001 removed once v000002 was written');
});

test('Kafka holds every scored sample once, in (problem, turn, agent) groups of size K, each with its tokens', async () => {
  const read = await readBatch(kafka(), checkGroup, UPDATE_TOPICS);
  const scored = read.records.filter((r) => r.topic === TOPICS.trajectories).map((r) => JSON.parse(r.value) as TrajectoryRecord).filter((r) => r.runId === runId);
  const tokens = new Map(
    read.records.filter((r) => r.topic === TOPICS.rollouts).map((r) => rolloutOf(JSON.parse(r.value))).filter((r) => r.runId === runId).map((r) => [r.sampleId, r]),
  );
  const ids = new Set(scored.map((s) => s.sampleId));
  assert.equal(ids.size, scored.length, 'sample ids are unique');
  const expected = result.recent.reduce((n, it) => n + it.updates.shared_model.samples, 0);
  assert.equal(scored.length, expected, 'the updates used exactly the published samples');

  const groups = new Map<string, TrajectoryRecord[]>();
  for (const s of scored) {
    const key = `${s.iteration}|${s.groupKey}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, members] of groups) {
    assert.equal(members.length, K, `group ${key}`);
    assert.deepEqual(members.map((m) => m.candidate).sort(), [...Array(K).keys()]);
    assert.equal(new Set(members.map((m) => `${m.problemSeed}|${m.turn}|${m.agent}`)).size, 1, 'one (problem, turn, agent) per group');
    assert.equal(members.filter((m) => m.chosen).length, 1, 'exactly one candidate continued');
  }
  // Both agents act in the first turn of every episode: at least 2 groups per episode.
  assert.ok(groups.size >= ITERATIONS * EPISODES * 2);
  for (const s of scored) {
    const tok = tokens.get(s.sampleId);
    assert.ok(tok, `rollout record for ${s.sampleId}`);
    assert.equal(tok.logprobs.length, tok.responseIds.length);
    assert.equal(tok.policyVersion, s.iteration, 'sampled from the version of its iteration (on-policy)');
  }
});

test("the run's update groups are gone from Kafka once it has finished", async () => {
  const admin = kafka().admin();
  await admin.connect();
  try {
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
    assert.deepEqual(groups.filter((g) => g.startsWith(`tandem-update.${runId}.`)), []);
    assert.ok(groups.includes(checkGroup), 'the listing sees groups');
  } finally {
    await admin.disconnect();
  }
});

test("the run's events reach Postgres through the projector", async () => {
  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await pg.db.select().from(events).orderBy(asc(events.globalPosition));
    const mine = r.filter((e) => (e.data as { runId?: string }).runId === runId);
    return mine.some((e) => e.type === 'RunFinished') ? mine : undefined;
  });
  const count = (type: string) => rows.filter((e) => e.type === type).length;
  assert.equal(count('RunStarted'), 1);
  assert.equal(count('EpisodeStarted'), ITERATIONS * EPISODES);
  assert.equal(count('EpisodeFinished'), ITERATIONS * EPISODES);
  assert.equal(count('UpdateApplied'), ITERATIONS);
  assert.equal(count('CheckpointSaved'), ITERATIONS);
  assert.equal(count('IterationFinished'), ITERATIONS);
  assert.ok(count('TurnGroupScored') >= ITERATIONS * EPISODES * 2);
  const [run] = await pg.db.select().from(runs).where(eq(runs.runId, runId));
  assert.equal(run.status, 'completed');
  assert.equal(run.iterationsDone, ITERATIONS);
  const saved = await pg.db.select().from(checkpoints).where(eq(checkpoints.runId, runId)).orderBy(asc(checkpoints.version));
  assert.deepEqual(saved.map((c) => [c.version, c.pruned]), [[1, true], [2, false]]);
});
