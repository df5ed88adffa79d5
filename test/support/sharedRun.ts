// A trained run that the end-to-end files which only read a run share (replay.e2e, report.e2e):
// a small Plan-Path L1 run with evaluations, under one fixed workflow id on the test stack. The
// first file to ask starts it and waits for it; the others (the files run one at a time) find it
// and read its result. A fresh test stack (infra/test.sh) has no run under that id; on a stack
// that has one from before, the files read that one.
import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import { runs } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import type { RunProgress } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { eventually } from './eventually.js';
import { database, temporal } from './stack.js';

export const SHARED_RUN = {
  runId: 'e2e-shared-planpath-v1', // a new shape of run needs a new id
  config: 'configs/planpath/planpath_L1_prompt.yaml',
  iterations: 2,
  episodes: 2,
  /** Evaluations before training and after the last iteration, of this many held-out problems each. */
  valProblems: 2,
} as const;

const OVERRIDES = [
  `training.total_training_steps=${SHARED_RUN.iterations}`,
  `training.train_batch_size=${SHARED_RUN.episodes}`,
  'training.train_sample_num=2',
  'training.max_response_length=16',
  'env.max_turns=2',
  `training.val_freq=${SHARED_RUN.iterations}`,
  `training.val_problems=${SHARED_RUN.valProblems}`,
];

/** The shared run's result once it has completed and the projector has recorded it as completed in Postgres. */
export async function sharedRun(): Promise<RunProgress> {
  const t = await temporal();
  const pg = database();
  try {
    const cfg = loadRunConfig(SHARED_RUN.config, OVERRIDES);
    assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
    const { runId } = SHARED_RUN;
    try {
      await t.client.workflow.start(trainingRun, {
        taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }], memo: { config: SHARED_RUN.config }, workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err; // started by a file before: read it
    }
    const result = await t.client.workflow.getHandle<typeof trainingRun>(runId).result();
    assert.equal(result.status, 'completed', `the shared run ${runId} ended ${result.status}`);
    await eventually('the shared run completed in Postgres', async () => {
      const [run] = await pg.db.select({ status: runs.status }).from(runs).where(eq(runs.runId, runId));
      return run?.status === 'completed' ? run : undefined;
    });
    return result;
  } finally {
    await Promise.all([t.close(), pg.close()]);
  }
}
