// Two runs stopped with one `tandem stack down` mid-run (every process, Temporal and Kafka
// included) and started again with `tandem stack up` continue where they were and finish, with every
// iteration's samples consumed by exactly one update: strictly on-policy, and asynchronous
// (rollout.max_staleness 1: the stack goes down with an update and the next iteration's episodes in
// flight together, the engine serving the episodes from a copy of the version in training).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { CPU_QUEUE } from '../../infra/settings.js';
import { stackUp } from '../../infra/stack.js';
import { progressQuery } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { assertExactlyOnce } from '../support/exactlyOnce.js';
import { outageRunConfig, resultAcrossOutages } from '../support/faults.js';
import { eventually } from '../support/eventually.js';
import { temporal } from '../support/stack.js';

const ITERATIONS = 5; // room for both runs to be between their first and last update at once

const t = await temporal();
after(async () => {
  // Whatever happened, leave every service running for the test files after this one.
  await stackUp({ say: () => {} });
  await t.close();
});

function tandem(...args: string[]): void {
  const r = spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 600_000 });
  assert.equal(r.status, 0, `tandem ${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
}

// One stack down/up under two runs at once: strictly on-policy and asynchronous.
test('stack down mid-run, stack up, under two runs at once (rollout.max_staleness 0 and 1): each continues where it was and finishes, exactly once', { timeout: 30 * 60_000 }, async () => {
  const runs = await Promise.all([0, 1].map(async (staleness) => {
    const runId = `resume-s${staleness}-${Date.now()}`;
    const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: outageRunConfig(ITERATIONS, staleness) }] });
    return { runId, handle, staleness };
  }));
  // Down mid-run, both: an update is behind each, episodes are in flight (under max_staleness 1,
  // maybe beside the update of the iteration before).
  const before = await eventually('iteration 2 under way in both runs', async () => {
    const ps = await Promise.all(runs.map(({ handle }) => handle.query(progressQuery).catch(() => undefined)));
    return ps.every((p) => p && p.updatesApplied >= 1 && p.updatesApplied < ITERATIONS && p.episodesInFlight >= 1) ? ps.map((p) => p!) : undefined;
  }, 600_000);
  tandem('stack', 'down');
  tandem('stack', 'up');

  await Promise.all(runs.map(async ({ runId, handle, staleness }, i) => {
    const result = await resultAcrossOutages(handle, 20 * 60_000);
    assert.equal(result.status, 'completed');
    assert.ok(result.updatesApplied >= before[i].updatesApplied);
    assert.deepEqual(result.versions, { shared_model: ITERATIONS });
    const { ages } = await assertExactlyOnce(runId, { iterations: ITERATIONS, policies: ['shared_model'], maxStaleness: staleness });
    if (staleness > 0) assert.ok((ages.get(1) ?? 0) > 0, `no sample of age 1 trained under max_staleness ${staleness}: ${JSON.stringify(Object.fromEntries(ages))}`);
  }));
});
