// One policy on two data-parallel replicas on the real stack: the test stack's policy worker is
// replica 0 and this test starts replica 1 (a second policy worker, with its own engine, on the
// same task queue). Runs of L1 (one full model, its optimizer state split over the replicas) and L2
// (two adapters) complete two iterations;
// every update is one step over both replicas (UpdateApplied says so, with the checksum of the
// weights both hold), written once, and the exactly-once check passes. The step's equality with a
// single engine's on the same samples is services/engine/tests/test_replicas.py.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import type { TandemEvent } from '../../domain/events.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { freePort, startPolicyWorker } from '../../infra/stack.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { assertExactlyOnce } from '../support/exactlyOnce.js';
import { database, settings, temporal } from '../support/stack.js';

const t = await temporal();
let replica1: ChildProcess | undefined;

before(async () => {
  replica1 = await startPolicyWorker({ taskQueue: settings.policyQueue, replica: 1, device: 'cpu', metricsPort: await freePort() });
});

after(async () => {
  replica1?.kill('SIGTERM');
  await t.close();
});

async function runOnReplicas(file: string, base: string, policies: string[], extra: string[] = []) {
  const overrides = ['training.total_training_steps=2', 'training.train_batch_size=2', 'training.train_sample_num=2', 'env.max_turns=1',
    `placement.${base}.replicas=2`, `placement.${base}.rendezvous=127.0.0.1:${await freePort()}`, `placement.${base}.replica_join_timeout_s=120`, ...extra];
  const cfg = loadRunConfig(file, overrides);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  const runId = `replicas-${Date.now()}`;
  const result = await t.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
  assert.deepEqual(result.versions, Object.fromEntries(policies.map((p) => [p, 2])));
  await assertExactlyOnce(runId, { iterations: 2, policies });

  const pg = database();
  let applied: Extract<TandemEvent, { type: 'UpdateApplied' }>[] = [];
  try {
    const rows = await pg.db.select({ data: events.data }).from(events)
      .where(and(eq(events.type, 'UpdateApplied'), eq(sql`${events.data}->>'runId'`, runId)));
    applied = rows.map((r) => r.data as Extract<TandemEvent, { type: 'UpdateApplied' }>);
    assert.equal(applied.length, 2 * policies.length);
    for (const u of applied) {
      assert.equal(u.replicas?.count, 2, `${u.policy} v${u.toVersion}: a step over both replicas`);
      assert.match(u.replicas!.checksum, /^[0-9a-f]{8}$/);
    }
  } finally {
    await pg.close();
  }
  for (const p of policies) {
    const root = join(settings.dataDir, 'runs', runId, 'checkpoints', p);
    assert.deepEqual(readdirSync(root).sort(), ['v000001', 'v000002'], `${p}: each version written once, nothing half-written left`);
    assert.ok(existsSync(join(root, 'v000002', 'state.json')));
  }
  return { runId, applied };
}

test('L1: one shared model on two replicas, its optimizer state split over them, trains two iterations in PPO mini-batches, every step over both', async () => {
  const { runId, applied } = await runOnReplicas('configs/planpath/planpath_L1_prompt.yaml', 'shared_model', ['shared_model'],
    ['placement.shared_model.shard_optimizer=true', 'update.ppo_mini_batch_size=4', 'update.ppo_epochs=2']);
  // Mini-batches of 4 of the iteration's samples, two passes: every replica took each step.
  for (const u of applied) assert.equal(u.metrics.optimizer_steps, 2 * Math.ceil(u.samples / 4), `v${u.toVersion}`);
  // Rank 0 holds about half of AdamW's two moments (whole tensors, assigned by size): 8 bytes per
  // fp32 weight in all, the weights being the checkpoint's model file.
  const weightsMb = statSync(join(settings.dataDir, 'runs', runId, 'checkpoints', 'shared_model', 'v000001', 'model', 'model.safetensors')).size / 2 ** 20;
  for (const u of applied) {
    const mb = u.metrics.optimizer_state_mb;
    assert.ok(mb > 0.25 * 2 * weightsMb && mb < 0.75 * 2 * weightsMb, `rank 0 holds ${mb} MiB of optimizer state; the whole is about ${2 * weightsMb}`);
  }
});

test('L2: two adapters on a base with two replicas, each adapter stepped over both', async () => {
  await runOnReplicas('configs/planpath/planpath_L2_lora.yaml', 'base_model', ['tool_call_agent', 'plan_agent']);
});
