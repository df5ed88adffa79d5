// Fault tests on the real stack, strictly on-policy and asynchronous (rollout.max_staleness 0 and
// 1): two runs at once, one of each, and while they run every process is killed with -9 in
// turn and restarted after a seeded random outage: the CPU worker, the policy worker, the
// engine (which the policy worker replaces by itself, reloading the policies from their checkpoints), the projector, the Kafka broker, the Temporal server and Postgres (the event store, and
// the payload store the workers read large payloads from). Each dies at a seeded random
// moment while episodes sample or while the update runs (the policy worker always during an
// update), of one run or the other in turn. Once one whole iteration has run after the last
// restart, each run is stopped (the `stop` signal: it ends after the current iteration's update).
// Each must end cleanly, and Postgres must show every iteration's samples consumed by exactly one update.
// The seed is printed; TANDEM_FAULT_SEED=<seed> replays the same schedule.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { CPU_QUEUE } from '../../infra/settings.js';
import { stackUp } from '../../infra/stack.js';
import { progressQuery, stopSignal, type RunProgress } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { assertExactlyOnce } from '../support/exactlyOnce.js';
import { faultSeed, kill9, outageRunConfig, restart, resultAcrossOutages, seededRandom, shuffled, sleep, whyStuck, type FaultTarget } from '../support/faults.js';
import { eventually } from '../support/eventually.js';
import { childPids } from '../support/hostProcesses.js';
import { servicePid } from '../support/processes.js';
import { temporal } from '../support/stack.js';

const TARGETS: FaultTarget[] = ['cpu-worker', 'policy-worker', 'engine', 'projector', 'kafka', 'temporal', 'postgres'];
/**
 * Far more than the faults can use up, however fast the iterations (an iteration of this small run
 * takes about a second, and the faults take minutes): the run is stopped once they are over.
 */
const MAX_ITERATIONS = 100_000;

const log = (line: string) => console.log(`[faults] ${new Date().toISOString().slice(11, 19)} ${line}`);

const t = await temporal();
after(async () => {
  // Whatever happened, leave every service running for the test files after this one.
  await stackUp({ say: log });
  await t.close();
});

/** Each run's last progress query error (undefined once it answers again), for whyStuck. */
const queryErrors = new Map<string, unknown>();

/** The run's progress, or undefined while it cannot be asked (Temporal or the CPU worker is down). */
async function progress(handle: WorkflowHandle): Promise<RunProgress | undefined> {
  return handle.query(progressQuery).then(
    (p) => (queryErrors.delete(handle.workflowId), p),
    (err: unknown) => (queryErrors.set(handle.workflowId, err), undefined),
  );
}

/** Waits until the run is in the wanted phase; fails if it finishes first. */
async function waitForPhase(handle: WorkflowHandle, phase: 'sampling' | 'updating', target: FaultTarget): Promise<RunProgress> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const p = await progress(handle);
    if (p?.status === 'completed') {
      throw new Error(`the run finished before ${target} could be killed: raise MAX_ITERATIONS (seed ${seed})`);
    }
    // A run that failed answers no query: say why at once rather than wait out the deadline.
    if (!p) {
      const status = (await handle.describe().catch(() => undefined))?.status.name;
      if (status === 'FAILED' || status === 'TERMINATED') throw new Error(`the run is ${status} before ${target} could be killed (seed ${seed})`);
    }
    // Sampling: episodes of the iteration are in flight, mid-turn (not "one of them has finished":
    // at two episodes an iteration that window is narrow, and a wait for it took minutes). Updating:
    // an update is in flight (under asynchronous training while the next iteration's episodes play).
    const updating = p !== undefined && (p.status === 'updating' || Object.keys(p.training ?? {}).length > 0);
    if (p && (phase === 'updating' ? updating : p.status === 'running' && p.episodesInFlight >= 1)) return p;
    if (Date.now() > deadline) throw new Error(`the run never reached ${phase} for ${target} (seed ${seed})\n  ${await whyStuck(handle, queryErrors.get(handle.workflowId))}`);
    await sleep(250);
  }
}

/** Waits until the run's progress satisfies `done`. */
async function waitForProgress(handle: WorkflowHandle, done: (p: RunProgress) => boolean): Promise<RunProgress> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const p = await progress(handle);
    if (p && done(p)) return p;
    if (Date.now() > deadline) throw new Error(`the run made no progress after the faults (seed ${seed})\n  ${await whyStuck(handle, queryErrors.get(handle.workflowId))}`);
    await sleep(500);
  }
}

const seed = faultSeed();

// Two runs at once under one kill schedule: strictly on-policy (rollout.max_staleness 0) and
// asynchronous (1: an iteration's update runs while the next one's episodes play). Each kill is
// timed by one run's phase, the two runs taking turns, so the other run loses the same process at
// whatever moment it is in: each run loses each process at a different moment of its own.
test(`kill -9 of every process under two runs at once (rollout.max_staleness 0 and 1), each restarted: both go on and end cleanly, every sample in exactly one update (seed ${seed})`, { timeout: 40 * 60_000 }, async () => {
  log(`seed ${seed}; replay with TANDEM_FAULT_SEED=${seed}`);
  const random = seededRandom(seed);
  const runs = await Promise.all([0, 1].map(async (staleness) => {
    const runId = `faults-${seed}-s${staleness}-${Date.now()}`;
    const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: outageRunConfig(MAX_ITERATIONS, staleness) }] });
    log(`run ${runId} started (rollout.max_staleness ${staleness})`);
    return { staleness, runId, handle };
  }));

  for (const [i, target] of shuffled(TARGETS, random).entries()) {
    const lead = runs[i % 2];
    // The policy worker always dies during an update (the moment exactly-once is about); the
    // others during sampling or updating, at random.
    const phase = target === 'policy-worker' || random() < 0.5 ? 'updating' : 'sampling';
    // An update of the tiny model takes a few seconds (mostly joining the consumer group), so the
    // delay spreads kills over its steps; a kill that comes after it lands in the next sampling.
    const delayMs = Math.round((phase === 'updating' ? 3_000 : 8_000) * random());
    const downMs = Math.round(1_000 + 7_000 * random());
    const p = await waitForPhase(lead.handle, phase, target);
    await sleep(delayMs);
    const otherHandle = runs[1 - (i % 2)].handle;
    const other = await progress(otherHandle);
    const pid = await kill9(target);
    log(`killed ${target} (pid ${pid}) ${delayMs} ms into ${phase} of iteration ${p.iteration} of the max_staleness ${lead.staleness} run (the other: ${other ? `${other.status}, iteration ${other.iteration}` : `not answering: ${String((queryErrors.get(otherHandle.workflowId) as Error)?.message).slice(0, 200)}`}); down for ${downMs} ms`);
    await sleep(downMs);
    await restart(target, log);
    if (target === 'engine') {
      // The policy worker starts a fresh engine by itself, which reloads the policies from their checkpoints.
      const fresh = await eventually('a fresh engine under the policy worker', async () => {
        const [engine] = childPids(servicePid('policy-worker'), 'engine.py');
        return engine && engine !== pid ? engine : undefined;
      }, 120_000);
      log(`the policy worker runs a fresh engine (pid ${fresh})`);
    }
  }

  // Recovered: one whole iteration of each run starts and ends after the last restart. Then stop them.
  await Promise.all(runs.map(async ({ staleness, runId, handle }) => {
    const last = await waitForProgress(handle, () => true);
    await waitForProgress(handle, (p) => p.updatesApplied >= last.updatesApplied + 2);
    await handle.signal(stopSignal);
    const result = await resultAcrossOutages(handle, 30 * 60_000);
    const iterations = result.versions.shared_model;
    log(`run ${runId} (max_staleness ${staleness}) ended (${result.status}): ${result.updatesApplied} updates, versions ${JSON.stringify(result.versions)}`);
    assert.equal(result.status, 'stopped');
    assert.ok(iterations >= last.updatesApplied + 2 && iterations < MAX_ITERATIONS, `${iterations} iterations`);
    assert.equal(result.updatesApplied, iterations);
    const { samples, ages } = await assertExactlyOnce(runId, { iterations, policies: ['shared_model'], maxStaleness: staleness });
    log(`run ${runId}: exactly once, ${samples} samples, each in one update; trained by age ${JSON.stringify(Object.fromEntries(ages))}`);
    // Under max_staleness 1 the run trained on samples one version old (the next iteration's
    // episodes play beside the update), and, by the bound, on none older.
    if (staleness > 0) assert.ok((ages.get(1) ?? 0) > 0, `no sample of age 1 trained under max_staleness ${staleness}`);
  }));
});
