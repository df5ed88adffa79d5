// The same training work on one policy replica and on two: rollout tokens/s, the update's wall
// time (its activities, from the run's history), the engine's step time and, with two replicas,
// the time its collectives took (all-reduces, checksum, agreement; waiting for the other replica
// included), and the AdamW state rank 0 holds: whole, and split over the two replicas
// (shard_optimizer). The stack's policy worker is replica 0; for the two-replica runs the bench
// starts replica 1 (a second policy worker with its own engine) and stops it after.
//   node --import tsx bench/replicas.ts [--config FILE] [--iterations N]
// Needs a running stack (`npx tandem stack up`) with nothing else on it. On a 2-core machine the
// two engines share the cores with the orchestration: this shows the mechanism and its overhead,
// not a speed-up.
import { cpus } from 'node:os';
import { and, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadRunConfig } from '../configs/load.js';
import type { TandemEvent } from '../domain/events.js';
import { events } from '../infra/db/schema.js';
import { CPU_QUEUE, stackSettings } from '../infra/settings.js';
import { freePort, startPolicyWorker } from '../infra/stack.js';
import { temporalClient } from '../services/client/temporal.js';
import { trainingRun } from '../workflows/trainingRun.js';

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const file = arg('config', 'configs/planpath/planpath_L1_prompt.yaml');
const iterations = Number(arg('iterations', '3'));
const s = stackSettings();

const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) + (t?.nanos ?? 0) / 1e9;

async function measure(replicas: number, shardOptimizer = false) {
  const client = await temporalClient();
  const plain = loadRunConfig(file);
  if (!plain.ok) throw new Error(JSON.stringify(plain.issues));
  const base = Object.values(plain.config.base_models)[0].name;
  const loaded = loadRunConfig(file, [
    `training.total_training_steps=${iterations}`, 'training.val_freq=0', 'training.train_batch_size=4', 'training.train_sample_num=4',
    `placement.${base}.replicas=${replicas}`, `placement.${base}.rendezvous=127.0.0.1:${await freePort()}`,
    `placement.${base}.shard_optimizer=${shardOptimizer}`,
  ]);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  const runId = `bench-replicas-${replicas}-${Date.now()}`;
  const started = Date.now();
  const result = await client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: loaded.config }] });
  const wall = (Date.now() - started) / 1000;

  // Each update step's wall time: from its activities' scheduling (one per replica, in one workflow
  // task) to the last one's completion.
  const history = await client.workflow.getHandle(runId).fetchHistory();
  const scheduled = new Map<string, { step: string; at: number }>();
  const steps = new Map<string, { from: number; to: number }>();
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name === 'updatePolicy') scheduled.set(String(e.eventId), { step: String(a.workflowTaskCompletedEventId), at: seconds(e.eventTime) });
    const done = e.activityTaskCompletedEventAttributes;
    const s0 = done && scheduled.get(String(done.scheduledEventId));
    if (s0) {
      const st = steps.get(s0.step) ?? { from: s0.at, to: 0 };
      steps.set(s0.step, { from: Math.min(st.from, s0.at), to: Math.max(st.to, seconds(e.eventTime)) });
    }
  }
  const updateWall = [...steps.values()].reduce((n, x) => n + (x.to - x.from), 0);
  const active = result.recent.reduce((n, it) => n + it.durationMs / 1000, 0);
  const tokens = result.recent.reduce((n, it) => n + Object.values(it.updates).reduce((m, u) => m + (u.tokens ?? 0), 0), 0);

  const pool = new pg.Pool({ connectionString: s.databaseUrl, max: 1 });
  const rows = await drizzle(pool).select({ data: events.data }).from(events)
    .where(and(eq(events.type, 'UpdateApplied'), eq(sql`${events.data}->>'runId'`, runId)));
  await pool.end();
  const applied = rows.map((r) => r.data as Extract<TandemEvent, { type: 'UpdateApplied' }>);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  await client.connection.close();
  return {
    replicas,
    shardOptimizer,
    iterations: result.recent.length,
    wall,
    rolloutTokensPerS: tokens / (active - updateWall),
    updateWall: updateWall / steps.size,
    engineStep: mean(applied.map((u) => u.metrics.update_s)),
    sync: replicas > 1 ? mean(applied.map((u) => u.metrics.sync_s)) : 0,
    optimizerMb: mean(applied.map((u) => u.metrics.optimizer_state_mb)),
    checksums: applied.every((u) => (u.replicas?.count ?? 1) === replicas),
  };
}

const one = await measure(1);
const replica1 = await startPolicyWorker({ taskQueue: s.policyQueue, replica: 1, device: s.policyDevice, metricsPort: await freePort(), quiet: true });
let two, sharded;
try {
  two = await measure(2);
  sharded = await measure(2, true);
} finally {
  replica1.kill('SIGTERM');
}
const cpu = cpus();
console.log(`## replicas (${new Date().toISOString().slice(0, 10)})

Machine: ${cpu.length} x ${cpu[0]?.model ?? 'CPU'}, no GPU. \`node --import tsx bench/replicas.ts --config ${file} --iterations ${iterations}\`
(4 problems x K=4 per iteration).

| replicas | optimizer state | iterations | wall s | rollout tokens/s | update wall s (per step) | engine step s | of which collectives s | AdamW state on rank 0, MiB |
|---|---|---|---|---|---|---|---|---|
${[one, two, sharded].map((r) => `| ${r.replicas} | ${r.shardOptimizer ? 'split' : 'whole'} | ${r.iterations} | ${r.wall.toFixed(1)} | ${r.rolloutTokensPerS.toFixed(0)} | ${r.updateWall.toFixed(2)} | ${r.engineStep.toFixed(3)} | ${r.replicas > 1 ? r.sync.toFixed(3) : '-'} | ${r.optimizerMb.toFixed(2)} |`).join('\n')}
`);
if (!two.checksums || !sharded.checksums) console.error('some UpdateApplied did not name the expected replica count');
