// Asynchronous training end to end (rollout.max_staleness 1, decoupled PPO's loss): `tandem train`
// runs 3 iterations of a tiny Plan-Path config on the real stack, its policy on a worker of its own
// whose engine takes the host's update lock (TANDEM_UPDATE_LOCK), which the test holds until the
// next iteration's turns have decoded: so iteration 0's update is in flight, waiting at the lock,
// while iteration 1's turns decode beside it from version 0 (a tiny model's update is otherwise
// about as short as the next iteration's opening, and whether a turn reached the engine before the
// update ended was a race). The next iteration's episodes start before the update of the one before
// is applied; every sample the run published is consumed by exactly one update, the one of its own
// iteration, from the version that generated it or the one after (some of them the one after); the
// updates report their behaviour weights and ran beside the decoding (the engine served the
// policy's turns from a copy of the version in training; the first update decoded while it waited
// for the lock); `tandem episodes verify` passes (the audit finds each sample's update by its
// iteration) and `episodes show` names each candidate's generating version and consuming update.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { and, asc, eq } from 'drizzle-orm';
import { events, samples } from '../../infra/db/schema.js';
import { freePort, startPolicyWorker } from '../../infra/stack.js';
import type { RunProgress } from '../../workflows/messages.js';
import { tandem } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { database, temporal } from '../support/stack.js';

const ITERATIONS = 3;
const EPISODES = 2;
const runId = `e2e-async-${Date.now()}`;
const QUEUE = `tandem-async-e2e-${process.pid}`;
const lockDir = mkdtempSync(join(tmpdir(), 'tandem-async-e2e-'));
const LOCK = join(lockDir, 'update.lock');
const t = await temporal();
const pg = database();
let worker: ChildProcess | undefined;
after(async () => {
  worker?.kill('SIGKILL');
  rmSync(lockDir, { recursive: true, force: true });
  await t.close();
  await pg.close();
});

/** Holds the lock file as another engine's update would (flock(1)) until `release`. */
async function holdLock(path: string): Promise<{ release: () => Promise<void> }> {
  const proc = spawn('flock', ['--exclusive', path, 'sh', '-c', 'echo held; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    proc.on('exit', (code) => reject(new Error(`flock exited (code ${code}) before it held ${path}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => line === 'held' && resolve());
  });
  return { release: () => (proc.stdin!.end(), exited) };
}

let result: RunProgress;

before(async () => {
  worker = await startPolicyWorker({ taskQueue: QUEUE, replica: 0, device: 'cpu', metricsPort: await freePort(), quiet: true, env: { TANDEM_UPDATE_LOCK: LOCK } });
  const lock = await holdLock(LOCK);
  const training = tandem(
    'train', 'configs/planpath/planpath_L1_prompt.yaml',
    `training.total_training_steps=${ITERATIONS}`,
    `training.train_batch_size=${EPISODES}`,
    'training.train_sample_num=3',
    'training.max_response_length=24',
    'env.max_turns=2',
    'rollout.max_staleness=1',
    'update.behaviour_weight_cap=2',
    `placement.shared_model.task_queue=${QUEUE}`,
    '--id', runId, '--wait',
  );
  // Iteration 0's update cannot end before this: a turn of iteration 1 decoded (and recorded) meanwhile.
  await eventually('a turn of iteration 1 while the first update waits for the lock', async () => {
    const r = await pg.db.select().from(samples).where(and(eq(samples.runId, runId), eq(samples.iteration, 1))).limit(1);
    return r.length > 0 ? true : undefined;
  }, 300_000).finally(() => lock.release());
  const train = await training;
  assert.equal(train.code, 0, train.out);
  result = await t.client.workflow.getHandle(runId).result();
});

test('the run completes every update, the next iteration starting before the update of the one before is applied', async () => {
  assert.equal(result.status, 'completed');
  assert.equal(result.updatesApplied, ITERATIONS);
  assert.deepEqual(result.versions, { shared_model: ITERATIONS });
  const rows = await eventually('RunFinished in Postgres', async () => {
    const r = await pg.db.select().from(events).orderBy(asc(events.globalPosition));
    const mine = r.filter((e) => (e.data as { runId?: string }).runId === runId);
    return mine.some((e) => e.type === 'RunFinished') ? mine : undefined;
  });
  const at = (type: string, it: number) => rows.findIndex((e) => e.type === type && (e.data as { iteration?: number }).iteration === it);
  for (let it = 0; it + 1 < ITERATIONS; it++) {
    assert.ok(at('EpisodeStarted', it + 1) >= 0 && at('EpisodeStarted', it + 1) < at('UpdateApplied', it), `iteration ${it + 1} started before iteration ${it}'s update was applied`);
  }
  const updates = rows.filter((r) => r.type === 'UpdateApplied').map((e) => (e.data as { metrics: Record<string, number> }).metrics);
  for (const m of updates) {
    // Decoupled PPO's weights, truncated at update.behaviour_weight_cap (2): their mean after truncation cannot exceed it.
    assert.ok(m.is_weight_mean > 0 && m.is_weight_mean <= 2 && m.is_weight_max > 0 && m.is_truncated_fraction >= 0 && m.is_truncated_fraction <= 1, JSON.stringify(m));
    assert.ok(m.serving_copy_mb > 0, `the engine served the decoding from a copy during the update: ${JSON.stringify(m)}`);
  }
  // The first update waited for the lock, iteration 1's turns decoding beside it.
  assert.ok(updates[0].update_lock_wait_s > 0 && updates[0].overlap_decode_s > 0, `the first update: ${JSON.stringify(updates[0])}`);
});

test('every sample is consumed once, by its iteration\'s update, at most one version after the one that generated it', async () => {
  const consumed = await eventually('every sample consumed in the read model', async () => {
    const r = await pg.db.select().from(samples).where(eq(samples.runId, runId));
    return r.length > 0 && r.every((s) => s.consumedFromVersion !== null) ? r : undefined;
  });
  const byIteration = new Map<number, number>();
  let older = 0;
  for (const s of consumed) {
    assert.equal(s.consumedFromVersion, s.iteration, `${s.sampleId}: consumed by its iteration's update`);
    const age = s.consumedFromVersion! - s.policyVersion;
    assert.ok(age === 0 || age === 1, `${s.sampleId}: generated by v${s.policyVersion}, consumed from v${s.consumedFromVersion}`);
    if (age === 1) older++;
    byIteration.set(s.iteration, (byIteration.get(s.iteration) ?? 0) + 1);
  }
  assert.deepEqual([...byIteration.keys()].sort(), [...Array(ITERATIONS).keys()]);
  assert.ok(older > 0, 'some samples (iteration 1\'s first turns) were generated one version before the update that trained them');
});

test('verify passes; show names each candidate\'s generating version and consuming update', async () => {
  const v = await tandem('episodes', 'verify', '--run', runId);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, new RegExp(`${ITERATIONS * EPISODES}/${ITERATIONS * EPISODES} episodes verified`));
  const show = await tandem('episodes', 'show', `${runId}/it1/ep0`, '--json');
  assert.equal(show.code, 0, show.out);
  const tr = JSON.parse(show.out.slice(0, show.out.lastIndexOf('}') + 1)) as { steps: { policy: string; policyVersion: number; candidates: { update: { fromVersion: number } | null }[] }[] };
  for (const s of tr.steps) {
    assert.ok(s.policyVersion === 0 || s.policyVersion === 1, `generated by v${s.policyVersion}`);
    for (const c of s.candidates) assert.equal(c.update?.fromVersion, 1, "consumed by iteration 1's update");
  }
});
