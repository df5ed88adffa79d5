// Faults in a policy's replicas on the real stack: one L1 run on two replicas (the stack's policy
// worker is replica 0, this test starts replica 1). During updates, replica 1's engine is killed
// with -9 (its worker starts a fresh one), then replica 1's whole worker (and its engine with it),
// which the test then starts again; then its worker once more while episodes sample, kept down
// until the iteration's rollout has finished on replica 0 alone. Each failed step is retried as a whole; the run must end
// cleanly, both replicas must agree after every step, and Postgres must show every iteration's
// samples consumed by exactly one update.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, test } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import type { TandemEvent } from '../../domain/events.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { freePort, startPolicyWorker } from '../../infra/stack.js';
import { stopSignal } from '../../workflows/messages.js';
import { progressUntil } from '../support/eventually.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { assertExactlyOnce } from '../support/exactlyOnce.js';
import { FAST_HEARTBEAT_TIMEOUT_MS, FAST_RECOVERY, sleep } from '../support/faults.js';
import { childPids } from '../support/hostProcesses.js';
import { database, settings, temporal } from '../support/stack.js';

const log = (line: string) => console.log(`[replica-faults] ${new Date().toISOString().slice(11, 19)} ${line}`);
const t = await temporal();
let replica1: ChildProcess | undefined;
let replica1Metrics = 0;
after(async () => {
  replica1?.kill('SIGKILL');
  await t.close();
});

/** Starts replica 1's policy worker and waits until it serves. */
async function startReplica1(): Promise<ChildProcess> {
  replica1Metrics = await freePort();
  return startPolicyWorker({ taskQueue: settings.policyQueue, replica: 1, device: 'cpu', metricsPort: replica1Metrics });
}

/** Agent turns replica 1's worker is running now (started - completed - failed, from its metrics). */
async function turnsOnReplica1(): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${replica1Metrics}/metrics`).then((r) => r.text()).catch(() => '');
  const count = (name: string) => Number(text.match(new RegExp(`^${name}\\{[^}]*activity="agentTurn"[^}]*\\} (\\d+)`, 'm'))?.[1] ?? 0);
  return count('tandem_activities_started_total') - count('tandem_activities_completed_total') - count('tandem_activities_failed_total');
}

test('kill -9 of a replica\'s engine, then of its worker, during updates: steps retried whole, every sample in exactly one update', { timeout: 20 * 60_000 }, async () => {
  replica1 = await startReplica1();
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [
    'training.total_training_steps=1000', 'training.train_batch_size=8', 'training.train_sample_num=2', 'env.max_turns=1',
    'placement.shared_model.replicas=2', `placement.shared_model.rendezvous=127.0.0.1:${await freePort()}`,
    // A replica that died before it joined is waited for this long before the step fails and is retried.
    'placement.shared_model.replica_join_timeout_s=10',
    ...FAST_RECOVERY,
  ]);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  const runId = `replica-faults-${Date.now()}`;
  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });

  // Replica 1's engine, as an update starts.
  let p = await progressUntil(handle, 'the first update', (x) => x.status === 'updating');
  const [engine] = childPids(replica1.pid!, 'engine.py');
  assert.ok(engine, 'replica 1 has an engine');
  process.kill(engine, 'SIGKILL');
  log(`killed replica 1's engine (pid ${engine}) in the update of iteration ${p.iteration}`);

  // Replica 1's worker (the engine dies with it), in a later update; started again after a while.
  p = await progressUntil(handle, 'a later update', (x) => x.status === 'updating' && x.iteration > p.iteration);
  replica1.kill('SIGKILL');
  log(`killed replica 1's worker (pid ${replica1.pid}) in the update of iteration ${p.iteration}`);
  await sleep(3_000);
  replica1 = await startReplica1();
  log('replica 1 is back');

  // Replica 1's worker again, while episodes sample: its turns in flight are retried (after their
  // heartbeat timeout) on replica 0, the iteration's rollout finishes without replica 1, and its
  // update waits for replica 1 to come back.
  // (while it runs agent turns, as its metrics say)
  const sampling = p.iteration;
  for (;;) {
    p = await progressUntil(handle, 'sampling', (x) => x.status === 'running' && x.iteration > sampling);
    if ((await turnsOnReplica1()) > 0) break;
    await sleep(20);
  }
  replica1.kill('SIGKILL');
  const killedAt = Date.now();
  log(`killed replica 1's worker (pid ${replica1.pid}) while iteration ${p.iteration} samples`);
  const rolledOut = await progressUntil(handle, 'that rollout done on replica 0 alone', (x) => x.status === 'updating');
  log(`iteration ${rolledOut.iteration} sampled without replica 1, ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
  // Its turns were retried elsewhere once their heartbeats had timed out (recovery.heartbeat_timeout_s).
  assert.ok(Date.now() - killedAt >= 0.8 * FAST_HEARTBEAT_TIMEOUT_MS, 'the rollout waited for the dead replica\'s turns to time out');
  replica1 = await startReplica1();
  log('replica 1 is back');

  // Recovered: two more updates after the restart, then stop.
  const back = await progressUntil(handle, 'progress', () => true);
  await progressUntil(handle, 'two updates after the restart', (x) => x.updatesApplied >= back.updatesApplied + 2);
  await handle.signal(stopSignal);
  const result = await handle.result();
  const iterations = result.versions.shared_model;
  log(`run ended (${result.status}) after ${iterations} iterations`);
  assert.equal(result.status, 'stopped');
  await assertExactlyOnce(runId, { iterations, policies: ['shared_model'] });

  const pg = database();
  try {
    const rows = await pg.db.select({ data: events.data }).from(events)
      .where(and(eq(events.type, 'UpdateApplied'), eq(sql`${events.data}->>'runId'`, runId)));
    const applied = rows.map((r) => r.data as Extract<TandemEvent, { type: 'UpdateApplied' }>);
    assert.equal(applied.length, iterations);
    for (const u of applied) assert.equal(u.replicas?.count, 2, `v${u.toVersion}: a step over both replicas`);
  } finally {
    await pg.close();
  }
});
