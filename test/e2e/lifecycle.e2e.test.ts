// The lifecycle commands end to end on the real stack: `tandem status` (fields, --json, --watch,
// unknown id, a failed run, the root cause of a run an episode's activity failed), `tandem runs`,
// `tandem pause`, `resume` and `stop` on one short run, and an ended run refusing them. What the signals do to a run (nothing starts while paused, a stop ends the run after the
// current iteration's update, a stop between iterations, continue-as-new carrying a pause) is
// asserted on mocked activities in test/unit/workflow-run.unit.test.ts.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import type { RunProgress } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { eventually, progressUntil } from '../support/eventually.js';
import { database, temporal } from '../support/stack.js';

const EPISODES = 3;
// Far more than the test lets run: it stops the run early, so how fast iterations go never matters.
const ITERATIONS = 20;
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

function startRun(runId: string, overrides: string[]): Promise<WorkflowHandle<typeof trainingRun>> {
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [...SMALL, ...overrides]);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  return t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
}

/** `tandem ARGS` against the test stack. */
function tandem(args: string[]) {
  const r = spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('status: clear error for an unknown run id; lifecycle commands too', () => {
  for (const args of [['status', 'no-such-run-xyz'], ['pause', 'no-such-run-xyz'], ['stop', 'no-such-run-xyz']]) {
    const r = tandem(args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.out}${r.err}`);
    assert.match(r.err, /unknown run id 'no-such-run-xyz'/);
  }
});

test('status of a run that failed (started with a bad config, as from the Temporal CLI) says so with its errors by path, and exits 1', { timeout: SLOW }, async () => {
  const runId = `failed-status-${Date.now()}`;
  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: { env: { name: 'plan_path' } } }] });
  await handle.result().then(() => assert.fail('the run should fail'), () => undefined);
  const plain = tandem(['status', runId]);
  assert.equal(plain.code, 1, plain.err);
  assert.match(plain.out, new RegExp(`^run ${runId} failed: invalid run config`));
  assert.match(plain.out, /base_models: required/);
  assert.doesNotMatch(plain.out, /running|iteration/, 'no progress view of a run that never ran');
  const json = tandem(['status', runId, '--json']);
  assert.equal(json.code, 1, json.err);
  const parsed = JSON.parse(json.out) as { runId: string; status: string; error: string };
  assert.deepEqual([parsed.runId, parsed.status], [runId, 'failed']);
  assert.match(parsed.error, /agent_policy_configs: required/);
  const watched = tandem(['status', runId, '--watch']);
  assert.equal(watched.code, 1);
  assert.match(watched.out, /failed: invalid run config/);
});

test("status of a run one episode's activity failed names the root cause, not the child workflow's wrapper; `tandem runs` lists the run as failed", { timeout: SLOW }, async () => {
  // truncation error (not the default) and a limit below every prompt: the first agent turn fails for good.
  const runId = `failed-turn-${Date.now()}`;
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [...SMALL, 'training.truncation=error', 'training.max_prompt_length=16']);
  assert.ok(cfg.ok);
  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }], memo: { config: 'configs/planpath/planpath_L1_prompt.yaml' } });
  await handle.result().then(() => assert.fail('the run should fail'), () => undefined);
  const plain = tandem(['status', runId]);
  assert.equal(plain.code, 1, plain.err);
  assert.match(plain.out, new RegExp(`^run ${runId} failed: \\w+'s prompt in turn 0 of ${runId}/it0/ep\\d+: the prompt has \\d+ tokens, more than the 16 allowed by training\\.max_prompt_length .*\\(in workflow ${runId}/it0/ep\\d+, activity agentTurn\\)$`, 'm'));
  assert.doesNotMatch(plain.out, /Child Workflow execution failed/);
  const listed = tandem(['runs', '--json', '--limit', '200']);
  assert.equal(listed.code, 0, listed.err);
  const mine = (JSON.parse(listed.out) as { runId: string; status: string; config: string | null; iterationsDone: number | null }[]).find((r) => r.runId === runId);
  assert.deepEqual(mine && [mine.status, mine.config, mine.iterationsDone], ['failed', 'configs/planpath/planpath_L1_prompt.yaml', 0]);
  assert.match(tandem(['runs']).out, /^RUN +CONFIG +STATUS +ITERATIONS +HELD-OUT SUCCESS +STARTED \(UTC\)$/m);
});

test('pause, status, resume and stop from the CLI on a real run: the fields, --json, --watch; the run ends stopped with its checkpoint; an ended run refuses them', { timeout: 2 * SLOW }, async () => {
  const runId = `life-${Date.now()}`;
  // The first pause lands in the first iteration; the stop comes while a second pause holds the
  // run, so the run cannot move on between reading its iteration and sending the stop.
  const handle = await startRun(runId, [`training.total_training_steps=${ITERATIONS}`]);
  await progressUntil(handle, 'an episode done', (p) => p.episodesDone >= 1);

  const paused = tandem(['pause', runId]);
  assert.equal(paused.code, 0, paused.err);
  assert.match(paused.out, /pause sent/);
  // In-flight work finishes; then the run waits.
  const still = await progressUntil(handle, 'paused with nothing in flight', (p) => p.status === 'paused' && p.episodesInFlight === 0);
  assert.ok(still.pausedSince !== null);
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

  // Status while running, after the first update: more iterations are still to come.
  await progressUntil(handle, 'iteration 2 or later running', (p) => p.iteration >= 1 && p.status === 'running');
  const json = tandem(['status', runId, '--json']);
  assert.equal(json.code, 0, json.err);
  const shown = JSON.parse(json.out) as RunProgress;
  assert.equal(shown.runId, runId);
  assert.ok(shown.status === 'running' || shown.status === 'updating', shown.status);
  assert.ok(shown.iteration >= 1 && shown.iteration < ITERATIONS, `iteration ${shown.iteration}`);
  assert.equal(shown.totalIterations, ITERATIONS);
  assert.equal(shown.episodesPerIteration, EPISODES);
  assert.ok(shown.episodesDone >= 0 && shown.episodesDone <= EPISODES);
  assert.ok(shown.updatesApplied >= 1);
  assert.equal(shown.versions.shared_model, shown.updatesApplied);
  assert.ok((shown.tokensTrained ?? 0) > 0, `tokensTrained ${shown.tokensTrained} after ${shown.updatesApplied} updates`);
  assert.ok(shown.lastCheckpoint && existsSync(shown.lastCheckpoint), `checkpoint ${shown.lastCheckpoint}`);
  assert.equal(shown.recent[0].iteration, 0);
  assert.deepEqual(Object.keys(shown.recent[0].rewardByAgent).sort(), ['plan_agent', 'tool_call_agent']);
  assert.equal(typeof shown.recent[0].successRate, 'number');
  assert.ok(shown.recent[0].durationMs > 0);

  const text = tandem(['status', runId]);
  assert.equal(text.code, 0, text.err);
  for (const field of [
    new RegExp(`^run .*\\[#*-*\\] +\\d+%  iteration \\d+/${ITERATIONS}`, 'm'),
    /^ {2}status {11}(running|updating)$/m,
    new RegExp(`^ {2}episodes done {4}\\d/${EPISODES} this iteration, \\d in flight$`, 'm'),
    /^ {2}policy versions {2}shared_model=v\d+( \(training v\d+->v\d+\))?$/m,
    /^ {2}updates applied {2}\d+, \d+ response tokens trained on$/m,
    /^ {2}last checkpoint {2}\/\S+$/m,
    /^ {2}mean reward {6}\w+=-?\d/m,
    /^ {2}success rate {5}\d\.\d{3} /m,
    /^ {2}ETA {14}(\d+s|\d+m\d\ds|\d+h\d\dm)$/m,
  ]) {
    assert.match(text.out, field);
  }

  // Stop while paused: the stop lifts the pause, and the iteration it lands in finishes with its
  // update and checkpoint (or, paused between iterations, the run ends before the next one).
  assert.equal(tandem(['pause', runId]).code, 0);
  const atStop = await progressUntil(handle, 'paused again', (p) => p.status === 'paused' && p.episodesInFlight === 0);
  assert.ok(atStop.iteration < ITERATIONS - 1, `iteration ${atStop.iteration} at the stop`);
  const stopped = tandem(['stop', runId]);
  assert.equal(stopped.code, 0, stopped.err);
  const result = await handle.result();
  const done = result.iteration;
  assert.equal(result.status, 'stopped');
  assert.ok(done >= Math.max(atStop.iteration, 1) && done <= atStop.iteration + 1, `stopped after iteration ${done}, paused in ${atStop.iteration}`);
  assert.equal(result.updatesApplied, done);
  assert.deepEqual(result.versions, { shared_model: done });
  assert.ok(result.lastCheckpoint && existsSync(result.lastCheckpoint), `checkpoint ${result.lastCheckpoint}`);
  assert.equal(JSON.parse(readFileSync(join(result.lastCheckpoint, 'state.json'), 'utf8')).version, done);
  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await pg.db.select().from(events).where(eq(events.stream, `run:${runId}`));
    return r.some((e) => e.type === 'RunFinished') ? r : undefined;
  });
  assert.deepEqual(rows.find((e) => e.type === 'RunFinished')?.data, { type: 'RunFinished', runId, iterations: done, reason: 'stopped' });

  const after = tandem(['status', runId]);
  assert.equal(after.code, 0, after.err);
  assert.match(after.out, /^ {2}status {11}stopped$/m);

  assert.equal(await watchExit, 0, watched);
  const lines = watched.trim().split('\n');
  assert.ok(lines.some((l) => /\bpaused\b/.test(l)), watched);
  assert.match(lines[lines.length - 1], new RegExp(`iteration ${done}/${ITERATIONS} done .* stopped$`));

  const ended = tandem(['pause', runId]);
  assert.equal(ended.code, 1);
  assert.match(ended.err, /has ended \(Temporal status COMPLETED\)/);
});
