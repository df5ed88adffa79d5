// Run lifecycle end to end on the real stack: `tandem status` (fields, --json, --watch, unknown
// id), `tandem pause` / `resume` (nothing starts while paused; the run then completes),
// `tandem stop` (the run ends after the current iteration's update and checkpoint, reason
// stopped), and continue-as-new on a Temporal dev server of its own whose
// limit.historyCount.suggestContinueAsNew is low, with a pause carried across it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { and, eq, like } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { pauseSignal, progressQuery, resumeSignal, type RunProgress } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { database, eventually, settings, temporal } from '../support/stack.js';

const EPISODES = 3;
// Small and sequential (one episode at a time), so that a pause lands between episodes.
const SMALL = [
  `training.train_batch_size=${EPISODES}`,
  'training.train_sample_num=2',
  'training.max_response_length=16',
  'env.max_turns=1',
  'rollout.episode_window=1',
];
const SLOW = 600_000;

const t = await temporal();
const pg = database();
after(async () => {
  await t.close();
  await pg.close();
});

function startRun(client: Client, runId: string, overrides: string[]): Promise<WorkflowHandle<typeof trainingRun>> {
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [...SMALL, ...overrides]);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  return client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
}

/** `tandem ARGS` against the given environment (the test stack's by default). */
function tandem(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 120_000, env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Polls the progress query until `ok` holds. */
async function progressUntil(handle: WorkflowHandle<typeof trainingRun>, what: string, ok: (p: RunProgress) => boolean, timeoutMs = SLOW) {
  return eventually(what, async () => {
    const p = await handle.query(progressQuery).catch(() => undefined);
    return p && ok(p) ? p : undefined;
  }, timeoutMs);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until nothing of the workflow is in flight: no activity (an update), no child (an episode), no workflow task. */
async function settled(handle: WorkflowHandle<typeof trainingRun>) {
  return eventually('nothing in flight', async () => {
    const d = await handle.describe();
    if ((d.raw.pendingActivities ?? []).length > 0 || (d.raw.pendingChildren ?? []).length > 0 || d.raw.pendingWorkflowTask) return undefined;
    return { progress: await handle.query(progressQuery), history: d.historyLength };
  }, SLOW);
}

async function runEvents(runId: string) {
  return pg.db.select().from(events).where(eq(events.stream, `run:${runId}`));
}

test('status: clear error for an unknown run id; lifecycle commands too', () => {
  for (const args of [['status', 'no-such-run-xyz'], ['pause', 'no-such-run-xyz'], ['stop', 'no-such-run-xyz']]) {
    const r = tandem(args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.out}${r.err}`);
    assert.match(r.err, /unknown run id 'no-such-run-xyz'/);
  }
});

test('pause stops new work; status shows the fields; resume completes the run; --watch follows it', { timeout: 2 * SLOW }, async () => {
  const runId = `life-pause-${Date.now()}`;
  // Three iterations: the pause lands early in the first, and status runs while there is work left.
  const handle = await startRun(t.client, runId, ['training.total_training_steps=3']);
  await progressUntil(handle, 'an episode done', (p) => p.episodesDone >= 1);

  const paused = tandem(['pause', runId]);
  assert.equal(paused.code, 0, paused.err);
  assert.match(paused.out, /pause sent/);
  // In-flight work finishes; then nothing moves. (An update in flight at the pause finishes too.)
  const still = await progressUntil(handle, 'paused with nothing in flight', (p) => p.status === 'paused' && p.episodesInFlight === 0);
  assert.ok(still.pausedSince !== null);
  const before = await settled(handle);
  assert.equal(before.progress.status, 'paused');
  await sleep(20_000);
  const later = { progress: await handle.query(progressQuery), history: (await handle.describe()).historyLength };
  assert.equal(later.progress.status, 'paused');
  assert.equal(later.progress.iteration, before.progress.iteration);
  assert.equal(later.progress.episodesDone, before.progress.episodesDone, 'no episode progressed while paused');
  assert.equal(later.progress.updatesApplied, before.progress.updatesApplied, 'no update while paused');
  assert.equal(later.history, before.history, 'nothing at all happened in the workflow while paused');

  const whilePaused = tandem(['status', runId]);
  assert.equal(whilePaused.code, 0, whilePaused.err);
  assert.match(whilePaused.out, /^ {2}status {11}paused$/m);

  // --watch (not a TTY here: plain lines) follows the run to its end.
  const watch = spawn(process.execPath, ['bin/tandem.js', 'status', runId, '--watch'], { env: process.env });
  let watched = '';
  watch.stdout.on('data', (d: Buffer) => (watched += d.toString()));
  const watchExit = new Promise<number | null>((resolve) => watch.on('exit', resolve));
  await sleep(3_000);

  const resumed = tandem(['resume', runId]);
  assert.equal(resumed.code, 0, resumed.err);

  // Status while running, in the second iteration: a whole iteration is still to come.
  await progressUntil(handle, 'iteration 2 running', (p) => p.iteration === 1 && p.status === 'running');
  const json = tandem(['status', runId, '--json']);
  assert.equal(json.code, 0, json.err);
  const shown = JSON.parse(json.out) as RunProgress;
  assert.equal(shown.runId, runId);
  assert.ok(shown.status === 'running' || shown.status === 'updating', shown.status);
  assert.ok(shown.iteration === 1 || shown.iteration === 2, `iteration ${shown.iteration}`);
  assert.equal(shown.totalIterations, 3);
  assert.equal(shown.episodesPerIteration, EPISODES);
  assert.ok(shown.episodesDone >= 0 && shown.episodesDone <= EPISODES);
  assert.ok(shown.updatesApplied >= 1);
  assert.equal(shown.versions.shared_model, shown.updatesApplied);
  assert.ok(shown.lastCheckpoint && existsSync(shown.lastCheckpoint), `checkpoint ${shown.lastCheckpoint}`);
  assert.equal(shown.recent[0].iteration, 0);
  assert.deepEqual(Object.keys(shown.recent[0].rewardByAgent).sort(), ['plan_agent', 'tool_call_agent']);
  assert.equal(typeof shown.recent[0].successRate, 'number');
  assert.ok(shown.recent[0].durationMs > 0);

  const text = tandem(['status', runId]);
  assert.equal(text.code, 0, text.err);
  for (const field of [
    /^run .*\[#*-*\] +\d+%  iteration \d\/3/m,
    /^ {2}status {11}(running|updating)$/m,
    /^ {2}episodes done {4}\d\/3 this iteration, \d in flight$/m,
    /^ {2}policy versions {2}shared_model=v\d$/m,
    /^ {2}updates applied {2}\d$/m,
    /^ {2}last checkpoint {2}\/\S+$/m,
    /^ {2}mean reward {6}\w+=-?\d/m,
    /^ {2}success rate {5}\d\.\d{3} /m,
    /^ {2}ETA {14}(\d+s|\d+m\d\ds)$/m,
  ]) {
    assert.match(text.out, field);
  }

  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, 3);
  assert.equal(result.updatesApplied, 3);
  assert.deepEqual(result.versions, { shared_model: 3 });
  assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1, 2]);

  assert.equal(await watchExit, 0, watched);
  const lines = watched.trim().split('\n');
  assert.ok(lines.some((l) => /\bpaused\b/.test(l)), watched);
  assert.match(lines[lines.length - 1], /iteration 3\/3 done .* completed$/);

  const ended = tandem(['pause', runId]);
  assert.equal(ended.code, 1);
  assert.match(ended.err, /has ended \(Temporal status COMPLETED\)/);
});

test('stop mid-run: the run ends after that iteration, with its update and checkpoint, reason stopped', { timeout: 2 * SLOW }, async () => {
  const runId = `life-stop-${Date.now()}`;
  const handle = await startRun(t.client, runId, ['training.total_training_steps=4']);
  // Mid-iteration 1 (the second one).
  await progressUntil(handle, 'iteration 2 under way', (p) => p.iteration === 1 && p.episodesDone >= 1);
  const stopped = tandem(['stop', runId]);
  assert.equal(stopped.code, 0, stopped.err);
  await progressUntil(handle, 'stopping', (p) => p.status === 'stopping' || p.status === 'stopped', 60_000);

  const result = await handle.result();
  assert.equal(result.status, 'stopped');
  assert.equal(result.iteration, 2, 'the iteration under way finished');
  assert.equal(result.updatesApplied, 2);
  assert.deepEqual(result.versions, { shared_model: 2 });
  assert.ok(result.lastCheckpoint && existsSync(result.lastCheckpoint), `checkpoint ${result.lastCheckpoint}`);
  assert.equal(JSON.parse(readFileSync(join(result.lastCheckpoint, 'state.json'), 'utf8')).version, 2);

  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await runEvents(runId);
    return r.some((e) => e.type === 'RunFinished') ? r : undefined;
  });
  const finished = rows.find((e) => e.type === 'RunFinished');
  assert.deepEqual(finished?.data, { type: 'RunFinished', runId, iterations: 2, reason: 'stopped' });
  assert.deepEqual(rows.filter((e) => e.type === 'UpdateApplied').map((e) => (e.data as { iteration: number }).iteration).sort(), [0, 1]);
  assert.equal(rows.filter((e) => e.type === 'CheckpointSaved').length, 2);
  const episodesStarted = async () =>
    (await pg.db.select().from(events).where(and(eq(events.type, 'EpisodeStarted'), like(events.stream, `episode:${runId}/%`)))).length;
  await eventually('the episodes in Postgres', async () => ((await episodesStarted()) >= 2 * EPISODES ? true : undefined));
  assert.equal(await episodesStarted(), 2 * EPISODES, 'no episode of the next iteration started');

  const text = tandem(['status', runId]);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /^ {2}status {11}stopped$/m);
});

test('stop while paused between iterations: the run ends at once, before the next iteration starts', { timeout: 2 * SLOW }, async () => {
  const runId = `life-stop-paused-${Date.now()}`;
  const handle = await startRun(t.client, runId, ['training.total_training_steps=3']);
  await progressUntil(handle, 'iteration 1 updating', (p) => p.iteration === 0 && p.status === 'updating');
  await handle.signal(pauseSignal);
  await progressUntil(handle, 'paused after iteration 1', (p) => p.iteration === 1 && p.status === 'paused' && p.updatesApplied === 1);
  const stopped = tandem(['stop', runId]);
  assert.equal(stopped.code, 0, stopped.err);

  const result = await handle.result();
  assert.equal(result.status, 'stopped');
  assert.equal(result.iteration, 1);
  assert.equal(result.updatesApplied, 1);
  assert.deepEqual(result.versions, { shared_model: 1 });
  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await runEvents(runId);
    return r.some((e) => e.type === 'RunFinished') ? r : undefined;
  });
  assert.deepEqual(rows.find((e) => e.type === 'RunFinished')?.data, { type: 'RunFinished', runId, iterations: 1, reason: 'stopped' });
  const started = await pg.db.select().from(events).where(and(eq(events.type, 'EpisodeStarted'), like(events.stream, `episode:${runId}/it1/%`)));
  assert.equal(started.length, 0, 'no episode of iteration 2 started');
});

// ------------------------------------------------------------------ continue-as-new

// A second Temporal dev server (and CPU and policy workers on it) with a low continue-as-new
// threshold, beside the test stack, whose Kafka and Postgres it shares. The shared test stack
// keeps Temporal's default threshold, so no other test is affected.
const CAN_THRESHOLD = 20;
const canEnv: NodeJS.ProcessEnv = {
  ...process.env,
  TANDEM_DATA_DIR: join(settings.dataDir, 'continue-as-new'),
  TANDEM_TEMPORAL_PORT: String(settings.temporalPort + 50),
  TANDEM_TEMPORAL_UI_PORT: String(settings.temporalUiPort + 50),
  TANDEM_CPU_WORKER_METRICS_PORT: String(Number(process.env.TANDEM_CPU_WORKER_METRICS_PORT ?? 9464) + 50),
  TANDEM_POLICY_WORKER_METRICS_PORT: String(Number(process.env.TANDEM_POLICY_WORKER_METRICS_PORT ?? 9465) + 50),
  TANDEM_TEMPORAL_DYNAMIC_CONFIG: `limit.historyCount.suggestContinueAsNew=${CAN_THRESHOLD}`,
};
const CAN_SERVICES = ['temporal', 'cpu-worker', 'policy-worker'];

test('continue-as-new: the run carries on with the right iterations, versions, one update each; a pause and the query survive it', { timeout: 3 * SLOW }, async () => {
  const up = spawnSync(process.execPath, ['bin/tandem.js', 'stack', 'up', ...CAN_SERVICES], { encoding: 'utf8', env: canEnv, timeout: SLOW });
  try {
    assert.equal(up.status, 0, `${up.stdout}${up.stderr}`);
    const connection = await Connection.connect({ address: `127.0.0.1:${canEnv.TANDEM_TEMPORAL_PORT}` });
    try {
      await continueAsNewRun(new Client({ connection, namespace: settings.namespace }));
    } finally {
      await connection.close();
    }
  } finally {
    spawnSync(process.execPath, ['bin/tandem.js', 'stack', 'down', ...CAN_SERVICES], { encoding: 'utf8', env: canEnv, timeout: SLOW });
    rmSync(canEnv.TANDEM_DATA_DIR!, { recursive: true, force: true });
  }
});

async function continueAsNewRun(client: Client) {
  const ITERATIONS = 4;
  const runId = `life-can-${Date.now()}`;
  const handle = await startRun(client, runId, [`training.total_training_steps=${ITERATIONS}`]);
  const firstRun = (await handle.describe()).runId;

  // Pause during the update of iteration 1: the workflow continues as new right after it, so the
  // pause must be carried into the next run.
  await progressUntil(handle, 'iteration 2 updating', (p) => p.iteration === 1 && p.status === 'updating');
  const updatingRun = (await handle.describe()).runId;
  await handle.signal(pauseSignal);
  const paused = await progressUntil(handle, 'paused at iteration 3', (p) => p.iteration === 2 && p.status === 'paused');
  const afterPause = await handle.describe();
  assert.notEqual(updatingRun, firstRun, 'the run continued as new after iteration 1');
  assert.notEqual(afterPause.runId, updatingRun, 'the run continued as new after iteration 2');
  const before = await client.workflow.getHandle(runId, updatingRun).fetchHistory();
  assert.ok(
    (before.events ?? []).some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'pause'),
    'the pause reached the run that then continued as new',
  );
  assert.ok(before.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes, 'that run ended by continuing as new');
  assert.equal(paused.updatesApplied, 2);
  assert.deepEqual(paused.versions, { shared_model: 2 });
  assert.deepEqual(paused.recent.map((r) => r.iteration), [0, 1], 'the query after continue-as-new shows the carried state');
  await sleep(10_000);
  const still = await handle.query(progressQuery);
  assert.equal(still.status, 'paused');
  assert.equal(still.episodesDone + still.episodesInFlight, 0, 'no episode started while paused');
  assert.equal((await handle.describe()).runId, afterPause.runId);

  await handle.signal(resumeSignal);
  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(result.iteration, ITERATIONS);
  assert.equal(result.updatesApplied, ITERATIONS);
  assert.deepEqual(result.versions, { shared_model: ITERATIONS });
  assert.deepEqual(result.recent.map((r) => r.iteration), [0, 1, 2, 3]);
  for (const r of result.recent) assert.equal(r.updates.shared_model.toVersion, r.iteration + 1);

  const executions = await eventually('executions listed', async () => {
    const found = [];
    for await (const e of client.workflow.list({ query: `WorkflowId = '${runId}'` })) found.push(e.status.name);
    return found.includes('COMPLETED') ? found : undefined;
  });
  assert.ok(executions.filter((s) => s === 'CONTINUED_AS_NEW').length >= 2, `executions: ${executions.join(', ')}`);

  // One update per iteration, from version i to i + 1; one RunStarted; the events numbered without gaps.
  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await runEvents(runId);
    return r.some((e) => e.type === 'RunFinished') ? r : undefined;
  });
  const updates = rows.filter((e) => e.type === 'UpdateApplied').map((e) => e.data as { iteration: number; fromVersion: number; toVersion: number });
  assert.deepEqual(
    updates.sort((a, b) => a.iteration - b.iteration).map((u) => [u.iteration, u.fromVersion, u.toVersion]),
    [...Array(ITERATIONS).keys()].map((i) => [i, i, i + 1]),
  );
  assert.equal(rows.filter((e) => e.type === 'RunStarted').length, 1);
  assert.deepEqual(rows.map((e) => e.position).sort((a, b) => a - b), [...rows.keys()]);
  assert.deepEqual(rows.find((e) => e.type === 'RunFinished')?.data, { type: 'RunFinished', runId, iterations: ITERATIONS, reason: 'completed' });
}
