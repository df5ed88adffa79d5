// The engine dies in the middle of a run: the policy worker starts a fresh one, which reloads
// the policy from its latest checkpoint; the activities in flight fail and Temporal retries
// them, and the run completes with every iteration's update applied once.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { loadRunConfig } from '../../configs/load.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { progressQuery } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { childPids } from '../support/hostProcesses.js';
import { servicePid } from '../support/processes.js';
import { eventually } from '../support/eventually.js';
import { temporal } from '../support/stack.js';

const t = await temporal();
after(() => t.close());

test('killing the engine mid-run: the run finishes, each update applied once', async () => {
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [
    'training.total_training_steps=2',
    'training.train_batch_size=3',
    'training.train_sample_num=2',
    'env.max_turns=2',
  ]);
  assert.ok(cfg.ok);
  const worker = servicePid('policy-worker');
  const [engineBefore] = childPids(worker, 'engine.py');
  assert.ok(engineBefore, 'the policy worker has an engine');

  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: `engine-kill-${Date.now()}`, args: [{ config: cfg.config }] });
  // Kill it once the first iteration's update is done and the second iteration is sampling.
  await eventually('iteration 2 under way', async () => {
    const p = await handle.query(progressQuery).catch(() => undefined);
    return p && p.updatesApplied === 1 && p.episodesDone >= 1 ? p : undefined;
  }, 300_000);
  process.kill(engineBefore, 'SIGKILL');

  const result = await handle.result();
  assert.equal(result.status, 'completed');
  assert.equal(result.updatesApplied, 2);
  assert.deepEqual(result.versions, { shared_model: 2 });
  assert.deepEqual(result.recent.map((r) => r.updates.shared_model.toVersion), [1, 2]);
  const [engineAfter] = childPids(worker, 'engine.py');
  assert.ok(engineAfter && engineAfter !== engineBefore, 'a fresh engine serves now');
});
