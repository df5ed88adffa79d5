// The trainingRun workflow on a local Temporal dev server with mocked activities
// (test/support/workflowEnv.ts), on math_refine (and plan_path for a run started from the
// Temporal CLI): the order of an iteration (episodes, then one update per trainable policy
// expecting exactly the episodes' samples, then UpdateApplied, CheckpointSaved and
// IterationFinished), evaluations on the val_freq schedule, the policies released at the end,
// the pause, resume and stop signals and the progress query, continue-as-new carrying the
// run's state, a pause and an evaluation a pause holds back (on a second dev server whose
// suggestContinueAsNew threshold is low),
// and a bad input started with `temporal workflow start` failing with the config's field paths.
// An activity a test must hold in flight waits at a gate() until the test opens it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { CPU_QUEUE, projectPath } from '../../infra/settings.js';
import { pauseSignal, progressQuery, resumeSignal, stopSignal, type RunProgress } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import {
  defaultMocks,
  eventsOf,
  gate,
  inputsOf,
  published,
  publishedSamples,
  runConfig,
  startWorkflowHarness,
  until,
  type ActivityCall,
  type WorkflowHarness,
} from '../support/workflowEnv.js';

const EPISODES = 2;
const K = 2;
const SMALL = [`training.train_batch_size=${EPISODES}`, `training.train_sample_num=${K}`, 'env.max_turns=1', `rollout.episode_window=${EPISODES}`];
/** One episode at a time, so that a signal lands between episodes. */
const SEQUENTIAL = ['rollout.episode_window=1'];
const L1 = 'configs/mathrefine/mathrefine_L1_prompt.yaml';
const L2 = 'configs/mathrefine/mathrefine_L2_lora.yaml';
/** How long a test watches a paused run to see that nothing moves. */
const QUIET_MS = 1_500;

const h = await startWorkflowHarness();
after(() => h.close());
beforeEach(() => h.reset());

type RunHandle = WorkflowHandle<typeof trainingRun>;

function startRun(runId: string, overrides: string[], opts: { file?: string; harness?: WorkflowHarness } = {}): Promise<RunHandle> {
  const config = runConfig(opts.file ?? L1, [...SMALL, ...overrides]);
  return (opts.harness ?? h).env.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config }] });
}

/** Polls the progress query until `ok` holds. */
function progressUntil(handle: RunHandle, what: string, ok: (p: RunProgress) => boolean): Promise<RunProgress> {
  return until(what, async () => {
    const p = await handle.query(progressQuery).catch(() => undefined);
    return p && ok(p) ? p : undefined;
  });
}

/** agentTurn as by default, but the turns of `episodeId` wait at the returned gate. */
function holdEpisode(harness: WorkflowHarness, episodeId: string) {
  const g = gate();
  harness.mocks.agentTurn = async (input) => {
    if (input.episodeId === episodeId) await g.pass();
    return defaultMocks().agentTurn(input);
  };
  return g;
}

/** updatePolicy as by default, but the update of `iteration` (of `policy`, if given) waits at the returned gate. */
function holdUpdate(harness: WorkflowHarness, iteration: number, policy?: string) {
  const g = gate();
  harness.mocks.updatePolicy = async (input) => {
    if (input.iteration === iteration && (policy === undefined || input.policy.spec.name === policy)) await g.pass();
    return defaultMocks().updatePolicy(input);
  };
  return g;
}

/**
 * Waits until nothing of the workflow is in flight (no activity, child or workflow task, and its
 * history ends with a completed workflow task: a run that has just continued as new has none yet),
 * then watches it for QUIET_MS: no history event and no activity call may come in that time.
 */
async function assertQuiet(harness: WorkflowHarness, handle: RunHandle): Promise<RunProgress> {
  const before = await until('nothing in flight', async () => {
    const d = await handle.describe();
    const idle = (d.raw.pendingActivities ?? []).length === 0 && (d.raw.pendingChildren ?? []).length === 0 && !d.raw.pendingWorkflowTask;
    const events = idle ? ((await handle.fetchHistory()).events ?? []) : [];
    return events.at(-1)?.workflowTaskCompletedEventAttributes ? { history: events.length, calls: harness.calls.length } : undefined;
  });
  await new Promise((r) => setTimeout(r, QUIET_MS));
  assert.equal(((await handle.fetchHistory()).events ?? []).length, before.history, 'nothing at all happened in the workflow');
  assert.equal(harness.calls.length, before.calls, 'no activity ran');
  return handle.query(progressQuery);
}

const episodeStarts = (calls: ActivityCall[], prefix: string) => eventsOf(calls, 'EpisodeStarted').filter((e) => e.episodeId.startsWith(prefix));
const runEvents = (calls: ActivityCall[], runId: string) => published(calls).filter((e) => e.stream === `run:${runId}`);
/** Index of the call that published the first event of `type` matching `match`. */
const publishing = (calls: ActivityCall[], type: string, match: (e: any) => boolean = () => true) =>
  calls.findIndex((c) => published([c]).some((e) => e.event.type === type && match(e.event)));
const lastIndex = <T>(xs: T[], ok: (x: T) => boolean) => xs.reduce((last, x, i) => (ok(x) ? i : last), -1);

test('an iteration: its episodes, then one update per trainable policy expecting exactly their samples, then UpdateApplied, CheckpointSaved and IterationFinished; the policies are released at the end', async () => {
  const runId = 'run-order';
  // L2: one adapter per agent; with two critiques all three agents act.
  const handle = await startRun(runId, ['env.max_turns=2', 'training.total_training_steps=2', 'training.seed=100'], { file: L2 });
  const result = await handle.result();
  const calls = h.calls;
  const policies = ['generator_initial', 'evaluator_critique', 'generator_refinement'];

  // Every policy is loaded before anything else, and RunStarted is the run's first event.
  assert.deepEqual(calls.slice(0, 3).map((c) => c.name), ['policyVersion', 'policyVersion', 'policyVersion']);
  assert.deepEqual(inputsOf(calls, 'policyVersion').map((r) => [r.runId, r.spec.name]), policies.map((p) => [runId, p]));
  const run = runEvents(calls, runId);
  assert.deepEqual(run.map((e) => e.position), [...run.keys()], 'the run stream is numbered without gaps');
  const perIteration = [...policies.flatMap(() => ['UpdateApplied', 'CheckpointSaved']), 'IterationFinished'];
  assert.deepEqual(run.map((e) => e.event.type), ['RunStarted', ...perIteration, ...perIteration, 'RunFinished']);
  assert.deepEqual(run[0].event, { type: 'RunStarted', runId, config: JSON.parse(JSON.stringify(runConfig(L2, [...SMALL, 'env.max_turns=2', 'training.total_training_steps=2', 'training.seed=100']))), totalIterations: 2 });

  for (const it of [0, 1]) {
    const prefix = `${runId}/it${it}/`;
    // The planned episodes: one per problem, seeds counting up from training.seed.
    const started = episodeStarts(calls, prefix).sort((a, b) => a.episodeId.localeCompare(b.episodeId));
    assert.deepEqual(started.map((e) => [e.episodeId, e.problemSeed, e.iteration, e.phase]), [...Array(EPISODES).keys()].map((j) => [`${prefix}ep${j}`, 100 + it * EPISODES + j, it, 'train']));
    for (const p of inputsOf(calls, 'agentTurn').filter((t) => t.iteration === it)) assert.equal(p.policyVersion, it, 'sampled from the versions of its iteration');

    // All its episodes, then the updates, then the iteration's events, then the next iteration.
    const updates = calls.flatMap((c, i) => (c.name === 'updatePolicy' && (c.input as { iteration: number }).iteration === it ? [i] : []));
    const lastPublish = lastIndex(calls, (c) => c.name === 'publishEpisode' && publishedSamples([c]).some((s) => s.iteration === it));
    const finished = publishing(calls, 'IterationFinished', (e) => e.iteration === it);
    assert.equal(updates.length, policies.length);
    assert.ok(lastPublish < updates[0], 'the updates start after every episode of the iteration is published');
    assert.ok(updates.at(-1)! < finished, 'IterationFinished after the last update');
    const next = it === 0 ? publishing(calls, 'EpisodeStarted', (e) => e.episodeId.startsWith(`${runId}/it1/`)) : publishing(calls, 'RunFinished');
    assert.ok(finished < next);

    const samples = publishedSamples(calls).filter((s) => s.iteration === it);
    const inputs = updates.map((i) => calls[i].input as ActivityCall<'updatePolicy'>['input']);
    assert.deepEqual(
      inputs.map((u) => [u.policy.spec.name, u.fromVersion, u.expectedSamples]),
      policies.map((p) => [p, it, samples.filter((s) => s.policy === p).length]),
      'expectedSamples: the samples its episodes published for the policy (the sum of their samplesByPolicy)',
    );
    for (const u of inputs) assert.ok(u.expectedSamples > 0, `${u.policy.spec.name} acted`);

    const events = run.filter((e) => 'iteration' in e.event && e.event.iteration === it).map((e) => e.event);
    assert.deepEqual(
      events.filter((e) => e.type === 'UpdateApplied').map((e) => [e.policy, e.fromVersion, e.toVersion, e.samples]),
      inputs.map((u) => [u.policy.spec.name, it, it + 1, u.expectedSamples]),
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'CheckpointSaved').map((e) => [e.policy, e.version, e.path]),
      policies.map((p) => [p, it + 1, `/mock/${runId}/${p}/v${it + 1}`]),
    );
    const episodes = eventsOf(calls, 'EpisodeFinished').filter((e) => e.episodeId.startsWith(prefix));
    const [summary] = events.filter((e) => e.type === 'IterationFinished');
    assert.deepEqual(summary, {
      type: 'IterationFinished',
      runId,
      iteration: it,
      episodes: EPISODES,
      successRate: episodes.filter((e) => e.success).length / EPISODES,
      rewardByAgent: Object.fromEntries(policies.map((a) => [a, episodes.reduce((x, e) => x + e.rewardByAgent[a], 0) / EPISODES])),
      truncatedEpisodes: 0,
    });
  }

  // The update groups: made before any episode publishes, at the run's start, for every trainable policy.
  const groups = { runId, policies: policies.map((name) => ({ name, replicas: 1 })) };
  assert.deepEqual(inputsOf(calls, 'startUpdateGroups'), [groups]);
  const groupsStart = calls.findIndex((c) => c.name === 'startUpdateGroups');
  assert.ok(groupsStart < calls.findIndex((c) => c.name === 'publishEpisode'), 'the groups start before the first episode publishes');
  assert.ok(calls.slice(0, groupsStart).every((c) => c.name === 'policyVersion'), 'right after the policies are loaded');

  // The end: RunFinished, then the run's update groups are deleted and every policy's weights leave the engine.
  assert.deepEqual(run.at(-1)!.event, { type: 'RunFinished', runId, iterations: 2, reason: 'completed' });
  const finishedAt = publishing(calls, 'RunFinished');
  assert.deepEqual(calls.slice(finishedAt + 1).map((c) => c.name), ['releaseUpdateGroups', 'releasePolicy', 'releasePolicy', 'releasePolicy']);
  assert.deepEqual(inputsOf(calls, 'releaseUpdateGroups'), [{ ...groups, iterations: 2 }], 'the groups of iterations 0 to 2 (the last update set the group of 2)');
  assert.deepEqual(inputsOf(calls, 'releasePolicy').map((r) => r.spec.name), policies);
  assert.equal(eventsOf(calls, 'EvaluationFinished').length, 0, 'val_freq 0: no evaluation');

  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, 2);
  assert.equal(result.updatesApplied, 6);
  assert.deepEqual(result.versions, Object.fromEntries(policies.map((p) => [p, 2])));
  assert.equal(result.lastCheckpoint, `/mock/${runId}/generator_refinement/v2`);
  assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1]);
  for (const r of result.recent) {
    for (const p of policies) {
      const samples = publishedSamples(calls).filter((s) => s.iteration === r.iteration && s.policy === p).length;
      assert.deepEqual(r.updates[p], { toVersion: r.iteration + 1, loss: 0.25, samples, groups: 1, tokens: 8 * samples });
    }
    assert.ok(r.durationMs >= 0);
  }
  const trained = result.recent.flatMap((r) => Object.values(r.updates)).reduce((n, u) => n + u.tokens!, 0);
  assert.equal(result.tokensTrained, trained, 'the run counts every token its updates trained on');
  assert.deepEqual(result.evaluations, []);
});

test('checkpoint retention: every update gets the config\'s checkpoints section, and each CheckpointSaved names the versions its update left on disk', async () => {
  h.mocks.updatePolicy = async (input) => {
    const done = await defaultMocks().updatePolicy(input);
    // As the engine reports it: the newest keep_last versions, when a retention is set.
    const keep = input.checkpoints?.keep_last;
    return keep ? { ...done, keptVersions: Array.from({ length: Math.min(keep, done.toVersion) }, (_, i) => done.toVersion - i).reverse() } : done;
  };
  await (await startRun('run-retention', ['training.total_training_steps=3', 'checkpoints.keep_last=2'])).result();
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.checkpoints), [0, 1, 2].map(() => ({ keep_last: 2, keep_every: null })));
  assert.deepEqual(eventsOf(h.calls, 'CheckpointSaved').map((e) => [e.version, e.keptVersions]), [[1, [1]], [2, [1, 2]], [3, [2, 3]]]);

  h.reset();
  await (await startRun('run-keep-all', ['training.total_training_steps=1'])).result();
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.checkpoints), [{ keep_last: null, keep_every: null }]);
  assert.ok(eventsOf(h.calls, 'CheckpointSaved').every((e) => !('keptVersions' in e)), 'no retention: nothing said of other versions');
});

test("the run opens the episodes that start together in one go: their EpisodeStarted in one publish and their envs reset in one call, in the run's workflow task; each episode's first workflow task schedules its first turn", async () => {
  const runId = 'run-open';
  // Three episodes, two at a time: the first two open together, the third alone when a lane frees.
  const handle = await startRun(runId, ['training.train_batch_size=3', 'rollout.episode_window=2', 'training.seed=200', 'training.total_training_steps=1']);
  await handle.result();
  const calls = h.calls;
  assert.deepEqual(inputsOf(calls, 'envResets').map((o) => o.seeds), [[200, 201], [202]]);
  assert.equal(inputsOf(calls, 'envReset').length, 0, 'no episode resets its env itself');
  const startedPublishes = calls.filter((c) => c.name === 'publishEvents' && published([c]).some((e) => e.event.type === 'EpisodeStarted'));
  assert.deepEqual(startedPublishes.map((c) => published([c]).map((e) => [e.stream, e.position])), [
    [[`episode:${runId}/it0/ep0`, 0], [`episode:${runId}/it0/ep1`, 0]],
    [[`episode:${runId}/it0/ep2`, 0]],
  ]);
  for (const j of [0, 1, 2]) {
    const episodeId = `${runId}/it0/ep${j}`;
    // Its EpisodeStarted is published before anything of the episode runs.
    const firstOwn = calls.findIndex((c) => (c.input as { episodeId?: string }).episodeId === episodeId);
    assert.ok(publishing(calls, 'EpisodeStarted', (e) => e.episodeId === episodeId) < firstOwn);
    // Its first workflow task schedules its first turn, with nothing recorded before it.
    const events = (await h.env.client.workflow.getHandle(episodeId).fetchHistory()).events ?? [];
    assert.ok(events[events.findIndex((e) => e.workflowTaskCompletedEventAttributes) + 1]?.activityTaskScheduledEventAttributes, episodeId);
    // Opened episodes run today's code: no patch marker, no search attribute update.
    assert.equal(events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length, 0, episodeId);
    assert.equal(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length, 0, episodeId);
  }
});

test('plain GRPO plans K episodes of one candidate per problem', async () => {
  const runId = 'run-grpo';
  const result = await (await startRun(runId, ['algorithm=grpo', 'training.total_training_steps=1', 'training.seed=7', 'training.train_batch_size=2', 'training.train_sample_num=3', 'rollout.episode_window=6'])).result();
  const started = episodeStarts(h.calls, runId).sort((a, b) => a.episodeId.localeCompare(b.episodeId));
  assert.deepEqual(started.map((e) => [e.episodeId, e.problemSeed]), [0, 1, 2, 3, 4, 5].map((j) => [`${runId}/it0/ep${j}`, 7 + Math.floor(j / 3)]));
  assert.ok(inputsOf(h.calls, 'agentTurn').every((t) => t.k === 1));
  const [update] = inputsOf(h.calls, 'updatePolicy');
  assert.equal(update.expectedSamples, publishedSamples(h.calls).length);
  assert.equal(result.recent[0].episodes, 6);
});

test('pause: in-flight episodes finish, no new episode starts, nothing happens; resume completes the run; the query shows it all', async () => {
  const runId = 'run-pause';
  const g = holdEpisode(h, `${runId}/it0/ep1`);
  const started = Date.now();
  // Three episodes, one at a time: the pause comes during the second.
  const handle = await startRun(runId, ['training.total_training_steps=2', 'training.train_batch_size=3', ...SEQUENTIAL]);
  await g.reached;

  const running = await handle.query(progressQuery);
  assert.deepEqual(
    { ...running, iterationStartedAt: 0 },
    {
      runId,
      status: 'running',
      iteration: 0,
      totalIterations: 2,
      episodesDone: 1,
      episodesInFlight: 1,
      episodesPerIteration: 3,
      versions: { shared_model: 0 },
      training: {},
      updatesApplied: 0,
      tokensTrained: 0,
      lastCheckpoint: null,
      recent: [],
      evaluations: [],
      iterationStartedAt: 0,
      iterationPausedMs: 0,
      pausedSince: null,
    },
  );
  assert.ok(running.iterationStartedAt >= started - 1_000 && running.iterationStartedAt <= Date.now());

  await handle.signal(pauseSignal);
  const paused = await progressUntil(handle, 'paused', (p) => p.status === 'paused');
  assert.equal(paused.episodesInFlight, 1, 'the episode in flight goes on');
  assert.ok(paused.pausedSince !== null);
  const pausedSeen = Date.now();
  g.open();
  await progressUntil(handle, 'paused with nothing in flight', (p) => p.status === 'paused' && p.episodesInFlight === 0 && p.episodesDone === 2);
  const still = await assertQuiet(h, handle);
  assert.equal(still.status, 'paused');
  assert.equal(still.episodesDone, 2);
  assert.equal(still.updatesApplied, 0);
  assert.equal(episodeStarts(h.calls, `${runId}/it0/ep2`).length, 0, 'the next episode did not start');

  const resumedAt = Date.now();
  await handle.signal(resumeSignal);
  const result = await handle.result();
  const ended = Date.now();
  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, 2);
  assert.equal(result.updatesApplied, 2);
  assert.deepEqual(result.versions, { shared_model: 2 });
  assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1]);
  assert.equal(result.pausedSince, null);
  // The iteration's duration leaves out the time it was paused.
  assert.ok(result.recent[0].durationMs <= ended - started - (resumedAt - pausedSeen), `durationMs ${result.recent[0].durationMs}`);
  assert.deepEqual(runEvents(h.calls, runId).at(-1)!.event, { type: 'RunFinished', runId, iterations: 2, reason: 'completed' });
});

test('pause during an update: the update in flight finishes, the next policy’s update waits for resume', async () => {
  const runId = 'run-pause-update';
  const g = holdUpdate(h, 0, 'generator_initial');
  const handle = await startRun(runId, ['training.total_training_steps=1'], { file: L2 });
  await g.reached;
  const updating = await handle.query(progressQuery);
  assert.equal(updating.status, 'updating');
  assert.equal(updating.episodesDone, EPISODES);
  await handle.signal(pauseSignal);
  await progressUntil(handle, 'paused', (p) => p.status === 'paused');
  g.open();
  await until('the update in flight returned', async () => (h.calls.find((c) => c.name === 'updatePolicy')?.output ? true : undefined));
  await assertQuiet(h, handle);
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.policy.spec.name), ['generator_initial']);

  await handle.signal(resumeSignal);
  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.policy.spec.name), ['generator_initial', 'evaluator_critique', 'generator_refinement']);
  assert.equal(result.updatesApplied, 3);
});

test('stop mid-run: the iteration under way finishes with its update, then the run ends, reason stopped', async () => {
  const runId = 'run-stop';
  const g = holdEpisode(h, `${runId}/it1/ep1`);
  const handle = await startRun(runId, ['training.total_training_steps=4', ...SEQUENTIAL]);
  await g.reached;
  await handle.signal(stopSignal);
  await progressUntil(handle, 'stopping', (p) => p.status === 'stopping');
  g.open();

  const result = await handle.result();
  assert.equal(result.status, 'stopped');
  assert.equal(result.iteration, 2, 'the iteration under way finished');
  assert.equal(result.updatesApplied, 2);
  assert.deepEqual(result.versions, { shared_model: 2 });
  assert.equal(result.lastCheckpoint, `/mock/${runId}/shared_model/v2`);
  assert.equal((await handle.query(progressQuery)).status, 'stopped');

  const events = runEvents(h.calls, runId).map((e) => e.event);
  assert.deepEqual(events.at(-1), { type: 'RunFinished', runId, iterations: 2, reason: 'stopped' });
  assert.deepEqual(events.flatMap((e) => (e.type === 'UpdateApplied' ? [e.iteration] : [])), [0, 1]);
  assert.equal(events.filter((e) => e.type === 'CheckpointSaved').length, 2);
  assert.equal(episodeStarts(h.calls, runId).length, 2 * EPISODES, 'no episode of the next iteration started');
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.iteration), [0, 1]);
  assert.equal(h.calls.at(-1)!.name, 'releasePolicy', 'a stopped run frees its policy too');
});

test('stop during the last iteration: the run did all it was asked, reason completed', async () => {
  const runId = 'run-stop-last';
  const g = holdEpisode(h, `${runId}/it1/ep0`);
  const handle = await startRun(runId, ['training.total_training_steps=2', ...SEQUENTIAL]);
  await g.reached;
  await handle.signal(stopSignal);
  g.open();
  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, 2);
  assert.equal(result.updatesApplied, 2);
  assert.deepEqual(runEvents(h.calls, runId).at(-1)!.event, { type: 'RunFinished', runId, iterations: 2, reason: 'completed' });
});

test('rollout.max_staleness 1: the next iteration plays while an update runs, with the version it opened at or a newer one; the one after waits; updates stay in order, each from the version before', async () => {
  const runId = 'run-async';
  const g = holdUpdate(h, 0);
  const handle = await startRun(runId, ['training.total_training_steps=3', 'rollout.max_staleness=1', 'update.behaviour_weight_cap=2']);
  await g.reached;
  // Iteration 1's episodes play to their end while iteration 0's update is held, opened at version 0...
  await until("iteration 1's episodes played to their end", async () => (published(h.calls).filter((e) => e.event.type === 'EpisodeFinished').length >= 2 * EPISODES ? true : undefined));
  // The update went out before the next iteration's opening (its local activities would have held it back).
  const updateCall = h.calls.findIndex((c) => c.name === 'updatePolicy');
  assert.ok(updateCall >= 0 && updateCall < publishing(h.calls, 'EpisodeStarted', (e) => e.episodeId.startsWith(`${runId}/it1/`)), 'update 0 scheduled before iteration 1 opened');
  const turns1 = inputsOf(h.calls, 'agentTurn').filter((t) => t.iteration === 1);
  assert.ok(turns1.every((t) => t.policyVersion === 0 && t.newerWithin === 1), 'iteration 1 samples from version 0 (or, in the engine, version 1)');
  // ...but iteration 2's wait: its samples would be 2 versions older than their update.
  await new Promise((r) => setTimeout(r, QUIET_MS));
  assert.equal(episodeStarts(h.calls, `${runId}/it2/`).length, 0, 'iteration 2 waits for iteration 0 to finish');
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.iteration), [0], 'the update of iteration 1 waits for the one of iteration 0');
  const during = await handle.query(progressQuery);
  assert.equal(during.iteration, 0, 'no iteration finished yet');
  assert.deepEqual([during.versions, during.training], [{ shared_model: 0 }, { shared_model: 0 }], "version 0 generates, and trains into version 1");
  g.open();
  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, 3);
  const updates = inputsOf(h.calls, 'updatePolicy');
  assert.deepEqual(updates.map((u) => [u.iteration, u.fromVersion, u.maxStaleness]), [[0, 0, 1], [1, 1, 1], [2, 2, 1]]);
  assert.ok(updates.every((u) => u.update.behaviour_weight_cap === 2));
  const events = runEvents(h.calls, runId).map((e) => e.event);
  assert.deepEqual(events.flatMap((e) => (e.type === 'IterationFinished' ? [e.iteration] : [])), [0, 1, 2]);
  assert.deepEqual(events.at(-1), { type: 'RunFinished', runId, iterations: 3, reason: 'completed' });
  // Iteration 2 opened after iteration 0's update: at version 1, while iteration 1's may still run.
  assert.ok(inputsOf(h.calls, 'agentTurn').filter((t) => t.iteration === 2).every((t) => t.policyVersion >= 1));
});

test('rollout.max_staleness 0 (the default): no episode of the next iteration starts while an update runs', async () => {
  const runId = 'run-sync';
  const g = holdUpdate(h, 0);
  const handle = await startRun(runId, ['training.total_training_steps=2']);
  await g.reached;
  await new Promise((r) => setTimeout(r, QUIET_MS));
  assert.equal(episodeStarts(h.calls, `${runId}/it1/`).length, 0);
  assert.ok(inputsOf(h.calls, 'agentTurn').every((t) => t.newerWithin === 0));
  assert.ok(inputsOf(h.calls, 'updatePolicy').every((u) => u.maxStaleness === undefined));
  g.open();
  assert.equal((await handle.result()).status, 'completed');
});

test('rollout.max_staleness 1: an update that fails for good fails the run, with no later update and no hang', async () => {
  const runId = 'run-async-fail';
  h.mocks.updatePolicy = async (input) => {
    if (input.iteration === 1) throw ApplicationFailure.nonRetryable('the engine refused', 'BadRequest');
    return defaultMocks().updatePolicy(input);
  };
  const handle = await startRun(runId, ['training.total_training_steps=4', 'rollout.max_staleness=1', 'update.behaviour_weight_cap=2']);
  const err = await handle.result().then(() => assert.fail('the run should have failed'), (e: unknown) => e);
  assert.ok(err instanceof WorkflowFailedError);
  assert.match(`${err.cause?.message} ${(err.cause?.cause as Error | undefined)?.message}`, /the engine refused/);
  assert.deepEqual(inputsOf(h.calls, 'updatePolicy').map((u) => u.iteration), [0, 1]);
  assert.equal(episodeStarts(h.calls, `${runId}/it3/`).length, 0, 'iteration 3 never started: it waited on iteration 1');
});

test('stop while paused between iterations: the run ends at once, before the next iteration starts', async () => {
  const runId = 'run-stop-paused';
  const g = holdUpdate(h, 0);
  const handle = await startRun(runId, ['training.total_training_steps=3']);
  await g.reached;
  const updating = await handle.query(progressQuery);
  assert.deepEqual([updating.status, updating.iteration, updating.episodesDone, updating.episodesInFlight], ['updating', 0, EPISODES, 0]);
  await handle.signal(pauseSignal);
  g.open();
  const paused = await progressUntil(handle, 'paused after iteration 1', (p) => p.iteration === 1 && p.status === 'paused' && p.updatesApplied === 1);
  assert.deepEqual(paused.recent.map((r) => r.iteration), [0]);
  assert.deepEqual(paused.versions, { shared_model: 1 });
  assert.equal(paused.lastCheckpoint, `/mock/${runId}/shared_model/v1`);
  await handle.signal(stopSignal);

  const result = await handle.result();
  assert.equal(result.status, 'stopped');
  assert.equal(result.iteration, 1);
  assert.equal(result.updatesApplied, 1);
  assert.deepEqual(result.versions, { shared_model: 1 });
  assert.deepEqual(runEvents(h.calls, runId).at(-1)!.event, { type: 'RunFinished', runId, iterations: 1, reason: 'stopped' });
  assert.equal(episodeStarts(h.calls, `${runId}/it1/`).length, 0, 'no episode of iteration 2 started');
});

test('val_freq: an evaluation before training, after every val_freq-th iteration and after the last, each at the versions of then; none reaches an update', async () => {
  const runId = 'run-eval';
  const handle = await startRun(runId, ['training.total_training_steps=3', 'training.val_freq=2', 'training.val_problems=2', 'training.validate_sample_num=1']);
  const result = await handle.result();
  const calls = h.calls;

  const evaluations = eventsOf(calls, 'EvaluationFinished');
  assert.deepEqual(evaluations.map((e) => [e.evalId, e.runId, e.iteration, e.versions.shared_model, e.episodes]), [0, 2, 3].map((n) => [`${runId}/eval/it${n}`, runId, n, n, 2]));
  assert.deepEqual(result.evaluations, evaluations.map((e) => ({ iteration: e.iteration, successRate: e.successRate, rewardByAgent: e.rewardByAgent })));

  // When: after RunStarted and before the first episode; after IterationFinished of the 2nd
  // iteration and before the 3rd starts; after the last IterationFinished and before RunFinished.
  const evalAt = (n: number) => publishing(calls, 'EvaluationFinished', (e) => e.iteration === n);
  const episodeAt = (it: number) => publishing(calls, 'EpisodeStarted', (e) => e.episodeId === `${runId}/it${it}/ep0`);
  const iterationEnd = (it: number) => publishing(calls, 'IterationFinished', (e) => e.iteration === it);
  assert.ok(publishing(calls, 'RunStarted') < evalAt(0) && evalAt(0) < episodeAt(0));
  assert.ok(iterationEnd(0) < episodeAt(1), 'no evaluation after iteration 1');
  assert.deepEqual(episodeStarts(calls, `${runId}/eval/`).map((e) => e.episodeId.replace(/\/ep\d$/, '')).filter((x, i, xs) => xs.indexOf(x) === i), [0, 2, 3].map((n) => `${runId}/eval/it${n}`));
  assert.ok(iterationEnd(1) < evalAt(2) && evalAt(2) < episodeAt(2));
  assert.ok(iterationEnd(2) < evalAt(3) && evalAt(3) < publishing(calls, 'RunFinished'));

  // Evaluation episodes: held-out, sampled at the versions of then, never in an update.
  for (const n of [0, 2, 3]) {
    const turns = inputsOf(calls, 'agentTurn').filter((t) => t.episodeId.startsWith(`${runId}/eval/it${n}/`));
    assert.ok(turns.length > 0);
    for (const t of turns) assert.deepEqual([t.policyVersion, t.record, t.k], [n, false, 1]);
  }
  assert.ok(publishedSamples(calls).every((s) => !s.episodeId.includes('/eval/')));
  for (const u of inputsOf(calls, 'updatePolicy')) {
    assert.equal(u.expectedSamples, publishedSamples(calls).filter((s) => s.iteration === u.iteration).length);
  }
  assert.equal(result.status, 'completed');
});

test('continue-as-new: the run carries on with its iterations, versions and events, one update each; a pause and the query survive it', async () => {
  // A dev server of its own that suggests continue-as-new after 20 history events: after every iteration here.
  const can = await startWorkflowHarness({ dynamicConfig: ['limit.historyCount.suggestContinueAsNew=20'] });
  try {
    const ITERATIONS = 4;
    const runId = 'run-can';
    const g = holdUpdate(can, 1);
    const handle = await startRun(runId, [`training.total_training_steps=${ITERATIONS}`], { harness: can });
    const firstRun = (await handle.describe()).runId;

    // Pause during the update of iteration 2: the run continues as new right after it, so the
    // pause must be carried into the next run.
    await g.reached;
    const updatingRun = (await handle.describe()).runId;
    await handle.signal(pauseSignal);
    await progressUntil(handle, 'pause received', (p) => p.status === 'paused');
    g.open();
    const paused = await progressUntil(handle, 'paused at iteration 3', (p) => p.iteration === 2 && p.status === 'paused');
    const afterPause = (await handle.describe()).runId;
    assert.notEqual(updatingRun, firstRun, 'the run continued as new after iteration 1');
    assert.notEqual(afterPause, updatingRun, 'the run continued as new after iteration 2');
    const before = await can.env.client.workflow.getHandle(runId, updatingRun).fetchHistory();
    assert.ok(
      (before.events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'pause'),
      'the pause reached the run that then continued as new',
    );
    assert.ok(before.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes, 'that run ended by continuing as new');
    assert.equal(paused.updatesApplied, 2);
    assert.deepEqual(paused.versions, { shared_model: 2 });
    assert.deepEqual(paused.recent.map((r) => r.iteration), [0, 1], 'the query after continue-as-new shows the carried state');
    assert.ok(paused.pausedSince !== null);
    const still = await assertQuiet(can, handle);
    assert.equal(still.status, 'paused');
    assert.equal(still.episodesDone + still.episodesInFlight, 0, 'no episode started while paused');
    assert.equal(episodeStarts(can.calls, `${runId}/it2/`).length, 0);
    assert.equal((await handle.describe()).runId, afterPause);

    await handle.signal(resumeSignal);
    const result = await handle.result();
    assert.equal(result.status, 'completed');
    assert.equal(result.iteration, ITERATIONS);
    assert.equal(result.updatesApplied, ITERATIONS);
    assert.deepEqual(result.versions, { shared_model: ITERATIONS });
    assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1, 2, 3]);
    for (const r of result.recent) assert.equal(r.updates.shared_model.toVersion, r.iteration + 1);

    const executions = await until('executions listed', async () => {
      const found: string[] = [];
      for await (const e of can.env.client.workflow.list({ query: `WorkflowId = '${runId}'` })) found.push(e.status.name);
      return found.includes('COMPLETED') ? found : undefined;
    });
    assert.ok(executions.filter((s) => s === 'CONTINUED_AS_NEW').length >= 2, `executions: ${executions.join(', ')}`);

    // One update per iteration, from version i to i + 1; loaded once; one RunStarted; the events numbered without gaps.
    assert.deepEqual(inputsOf(can.calls, 'updatePolicy').map((u) => [u.iteration, u.fromVersion]), [0, 1, 2, 3].map((i) => [i, i]));
    assert.equal(inputsOf(can.calls, 'policyVersion').length, 1, 'the versions are carried, not loaded again');
    const run = runEvents(can.calls, runId);
    assert.deepEqual(run.map((e) => e.position), [...run.keys()]);
    assert.deepEqual(run.map((e) => e.eventId), run.map((e) => `run:${runId}#${e.position}`));
    const events = run.map((e) => e.event);
    assert.equal(events.filter((e) => e.type === 'RunStarted').length, 1);
    assert.deepEqual(
      events.flatMap((e) => (e.type === 'UpdateApplied' ? [[e.iteration, e.fromVersion, e.toVersion]] : [])),
      [0, 1, 2, 3].map((i) => [i, i, i + 1]),
    );
    assert.deepEqual(events.at(-1), { type: 'RunFinished', runId, iterations: ITERATIONS, reason: 'completed' });
    assert.equal(inputsOf(can.calls, 'releasePolicy').length, 1);
  } finally {
    await can.close();
  }
});

test('continue-as-new under rollout.max_staleness 1 carries the iterations still finishing: the next iteration plays while the carried update is held, the new run finishes them again from the state before, each iteration recorded once', async () => {
  const can = await startWorkflowHarness({ dynamicConfig: ['limit.historyCount.suggestContinueAsNew=20'] });
  const g = holdUpdate(can, 1);
  try {
    const ITERATIONS = 4;
    const runId = 'run-can-async';
    const handle = await startRun(runId, [`training.total_training_steps=${ITERATIONS}`, 'rollout.max_staleness=1', 'update.behaviour_weight_cap=2'], { harness: can });
    await g.reached;
    // Iteration 1's update is held; the run continues as new (it is suggested after every iteration
    // here) without waiting for it, and iteration 2's episodes play in the new run meanwhile (a run
    // that drained first could not start them before the update ends).
    await until("iteration 2's episodes started", async () => (episodeStarts(can.calls, `${runId}/it2/`).length > 0 ? true : undefined));
    const parentRun = (episodeId: string) =>
      until(`${episodeId}'s workflow`, async () => (await can.env.client.workflow.getHandle(episodeId).describe().catch(() => undefined))?.parentExecution?.runId);
    assert.notEqual(await parentRun(`${runId}/it2/ep0`), await parentRun(`${runId}/it1/ep0`), 'iteration 2 started in a run that continued as new after iteration 1');
    assert.deepEqual(inputsOf(can.calls, 'updatePolicy').filter((u) => u.iteration >= 2), [], "iteration 2's update waits for iteration 1's");
    g.open();

    const result = await handle.result();
    assert.equal(result.status, 'completed');
    assert.equal(result.iteration, ITERATIONS);
    assert.equal(result.updatesApplied, ITERATIONS, 'an update finished again is counted once');
    assert.equal(result.tokensTrained, result.recent.reduce((n, r) => n + r.updates.shared_model.tokens!, 0), 'and its tokens once');
    assert.deepEqual(result.versions, { shared_model: ITERATIONS });
    assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1, 2, 3]);
    assert.deepEqual(new Set(inputsOf(can.calls, 'updatePolicy').map((u) => `${u.iteration}:${u.fromVersion}`)), new Set(['0:0', '1:1', '2:2', '3:3']));
    // The run's events: an event published again (same id) is the same event; without them the positions have no gap.
    const byId = new Map<string, unknown>();
    for (const e of runEvents(can.calls, runId)) {
      const seen = byId.get(e.eventId);
      if (seen !== undefined) assert.deepEqual((seen as { type: string }).type, e.event.type, `${e.eventId} published again as another event`);
      else byId.set(e.eventId, e.event);
    }
    assert.deepEqual([...byId.keys()].sort(), [...byId.keys()].map((_, i) => `run:${runId}#${i}`).sort());
    const events = [...byId.values()] as { type: string; iteration?: number }[];
    assert.deepEqual(events.flatMap((e) => (e.type === 'IterationFinished' ? [e.iteration] : [])), [0, 1, 2, 3]);
    assert.equal(events.filter((e) => e.type === 'RunStarted').length, 1);
  } finally {
    g.open(); // (a failed assertion must not leave the held updates holding the workers' shutdown)
    await can.close();
  }
});

test('continue-as-new under rollout.max_staleness 1 while a pause holds an iteration\'s evaluation: the evaluation is not dropped, it runs after the resume', async () => {
  const can = await startWorkflowHarness({ dynamicConfig: ['limit.historyCount.suggestContinueAsNew=20'] });
  // Iteration 1's record waits at a gate, and so does iteration 2's first episode. The pause lands
  // while the record waits: the record is then published, and the evaluation after it waits for the
  // resume. Then iteration 2's episodes end, and the run is asked to continue as new.
  const record = gate();
  can.mocks.publishEvents = async (events) => {
    if (events.some((e) => e.event.type === 'IterationFinished' && e.event.iteration === 1)) await record.pass();
  };
  const episode = holdEpisode(can, 'run-can-pause-eval/it2/ep0');
  try {
    const ITERATIONS = 4; // (a continue-as-new is asked for only with an iteration still to start)
    const runId = 'run-can-pause-eval';
    const handle = await startRun(runId, [
      `training.total_training_steps=${ITERATIONS}`, 'rollout.max_staleness=1', 'update.behaviour_weight_cap=2',
      'training.val_freq=1', 'training.val_problems=2', 'training.validate_sample_num=1',
    ], { harness: can });
    await Promise.all([record.reached, episode.reached]);
    await handle.signal(pauseSignal);
    await progressUntil(handle, 'pause received', (p) => p.status === 'paused');
    record.open();
    await new Promise((r) => setTimeout(r, QUIET_MS)); // the record published; the evaluation waits for the resume
    episode.open();
    await until("iteration 2's episodes finished", async () => (eventsOf(can.calls, 'EpisodeFinished').filter((e) => e.episodeId.startsWith(`${runId}/it2/`)).length === EPISODES ? true : undefined));
    await new Promise((r) => setTimeout(r, QUIET_MS)); // (time for a continue-as-new to happen)
    assert.deepEqual(eventsOf(can.calls, 'EvaluationFinished').map((e) => e.iteration), [0, 1], 'no evaluation while paused');
    await handle.signal(resumeSignal);

    const result = await handle.result();
    assert.equal(result.status, 'completed');
    const evaluated = eventsOf(can.calls, 'EvaluationFinished').map((e) => e.iteration);
    assert.deepEqual([...new Set(evaluated)].sort(), [0, 1, 2, 3, 4], 'an evaluation before training and after each iteration');
    assert.deepEqual(result.evaluations.map((e) => e.iteration), [0, 1, 2, 3, 4]);
  } finally {
    record.open();
    episode.open();
    await can.close();
  }
});

test('a stop carried into a continued run ends it at once, where the carried state says', async () => {
  const runId = 'run-carried-stop';
  const config = runConfig(L1, [...SMALL, 'training.total_training_steps=3']);
  const carried: Parameters<typeof trainingRun>[1] = {
    iteration: 1,
    versions: { shared_model: 1 },
    eventPosition: 5,
    updatesApplied: 1,
    lastCheckpoint: '/mock/v1',
    recent: [],
    evaluations: [],
    lifecycle: { pausedSince: null, stopRequested: true },
  };
  const result = await h.env.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config }, carried] });
  assert.equal(result.status, 'stopped');
  assert.equal(result.iteration, 1);
  assert.deepEqual(result.versions, { shared_model: 1 });
  assert.equal(result.lastCheckpoint, '/mock/v1');
  assert.equal(result.tokensTrained, undefined, 'a state carried from before the token count shows none, not a partial one');
  assert.deepEqual(h.calls.map((c) => c.name), ['publishEvents', 'releaseUpdateGroups', 'releasePolicy'], 'no policy loaded again, no episode, no RunStarted');
  assert.deepEqual(inputsOf(h.calls, 'releaseUpdateGroups'), [{ runId, policies: [{ name: 'shared_model', replicas: 1 }], iterations: 1 }]);
  assert.deepEqual(published(h.calls), [{ eventId: `run:${runId}#5`, stream: `run:${runId}`, position: 5, event: { type: 'RunFinished', runId, iterations: 1, reason: 'stopped' } }]);
});

test('the progress query shows each update with its version, count and checkpoint together, while the iteration still closes', async () => {
  // The iteration's closing events wait at a gate, after the update has returned.
  const g = gate();
  h.mocks.publishEvents = async (events) => {
    if (events.some((e) => e.event.type === 'IterationFinished')) await g.pass();
  };
  const handle = await startRun('run-progress-together', ['training.total_training_steps=2']);
  const p = await progressUntil(handle, 'the first update applied', (q) => q.versions.shared_model === 1);
  assert.equal(p.updatesApplied, 1, 'the count with the version');
  assert.equal(p.lastCheckpoint, `/mock/run-progress-together/shared_model/v1`);
  assert.equal(p.iteration, 0, 'the iteration has not closed yet');
  g.open();
  assert.equal((await handle.result()).updatesApplied, 2);
});

test("a run whose update groups cannot be deleted at its end still completes, and its policies are released", async () => {
  h.mocks.releaseUpdateGroups = async () => {
    throw ApplicationFailure.nonRetryable('Kafka said no', 'KafkaJSDeleteGroupsError');
  };
  const handle = await startRun('run-groups-left', ['training.total_training_steps=1']);
  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(inputsOf(h.calls, 'releaseUpdateGroups').length, 1);
  assert.equal(inputsOf(h.calls, 'releasePolicy').length, 1, 'the weights still leave the engine');
});

// ------------------------------------------------------------------ started from the Temporal CLI

function temporalStart(workflowId: string, input: string | Buffer): void {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-input-'));
  const file = join(dir, 'input.json');
  writeFileSync(file, input);
  try {
    execFileSync(projectPath('.venv/bin/temporal'), [
      'workflow', 'start',
      '--address', h.env.address,
      '--task-queue', CPU_QUEUE,
      '--type', 'trainingRun',
      '--workflow-id', workflowId,
      '--input-file', file,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('`temporal workflow start` with a bad input fails with a readable validation error', async () => {
  const config = structuredClone(runConfig('configs/planpath/planpath_L1_prompt.yaml')) as any;
  config.training.train_sample_num = 'four';
  config.env.map_sise = 5;
  const workflowId = 'bad-input';
  temporalStart(workflowId, JSON.stringify({ config }));
  const err = await h.env.client.workflow.getHandle(workflowId).result().then(
    () => assert.fail('the run should have failed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError);
  const cause = err.cause;
  assert.ok(cause instanceof ApplicationFailure);
  assert.equal(cause.type, 'InvalidConfig');
  assert.equal(cause.nonRetryable, true);
  assert.match(cause.message, /training\.train_sample_num: /);
  assert.match(cause.message, /env\.map_sise: unknown key/);
  assert.doesNotMatch(cause.message, /at .*\.ts:\d+/); // no stack trace in the message
  assert.equal(h.calls.length, 0, 'nothing ran');
});

test('the input `tandem config check --json` prints starts a run that trains', async () => {
  const input = execFileSync(process.execPath, [
    'bin/tandem.js', 'config', 'check', 'configs/planpath/planpath_L1_prompt.yaml',
    'training.total_training_steps=1', 'training.train_batch_size=1', 'training.train_sample_num=2', 'env.max_turns=1',
    '--json',
  ]);
  const workflowId = 'cli-start';
  temporalStart(workflowId, input);
  const result: RunProgress = await h.env.client.workflow.getHandle(workflowId).result();
  assert.equal(result.status, 'completed');
  assert.equal(result.updatesApplied, 1);
  assert.deepEqual(result.versions, { shared_model: 1 });
  assert.equal(inputsOf(h.calls, 'updatePolicy')[0].expectedSamples, publishedSamples(h.calls).length);
});

test('an evaluation of the test split with a samplingKey: test seeds, the same sampling seeds as every evaluation given that key, and its policies released when asked', async () => {
  const { evaluate } = await import('../../workflows/evaluate.js');
  const config = runConfig(L1, [...SMALL, 'training.val_problems=2', 'training.validate_sample_num=1']);
  const evalOf = (workflowId: string, extra: Record<string, unknown>) =>
    h.env.client.workflow.execute(evaluate, { taskQueue: CPU_QUEUE, workflowId, args: [{ config, runId: 'run-done', iteration: 3, ...extra }] });
  await evalOf('ev-a', { split: 'test', samplingKey: 'bench-s0', release: true });
  await evalOf('ev-b', { split: 'test', samplingKey: 'bench-s0', release: true });
  await evalOf('ev-c', {});
  const calls = h.calls;
  const seedsOf = (evalId: string) => episodeStarts(calls, `${evalId}/`).map((e) => e.problemSeed);
  assert.deepEqual(seedsOf('ev-a'), [1_100_000_000, 1_100_000_001], 'the test range');
  assert.deepEqual(seedsOf('ev-c'), [1_000_000_000, 1_000_000_001], 'the validation range by default');
  const sampling = (evalId: string) =>
    inputsOf(calls, 'agentTurn')
      .filter((t) => t.episodeId.startsWith(`${evalId}/`))
      .map((t) => `${t.episodeId.slice(evalId.length)} ${t.turn} ${t.agent} ${t.seed}`)
      .sort();
  assert.ok(sampling('ev-a').length > 0);
  assert.deepEqual(sampling('ev-a'), sampling('ev-b'), 'one key: the same seeds per (episode, turn, agent)');
  const seeds = (evalId: string) => new Set(inputsOf(calls, 'agentTurn').filter((t) => t.episodeId.startsWith(`${evalId}/`)).map((t) => t.seed));
  assert.ok([...seeds('ev-c')].every((s) => !seeds('ev-a').has(s)), 'without a key, seeds of its own');
  // released: ev-a and ev-b asked for it (the run's policies, loaded for them); ev-c evaluates a run's policies it did not load
  assert.deepEqual(inputsOf(calls, 'releasePolicy').map((r) => r.runId), ['run-done', 'run-done']);
});
