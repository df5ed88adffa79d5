// Finds a training run by id for the CLI commands that talk to one (status, pause, resume, stop),
// with clear errors for an unknown id or a workflow that is not a training run.
import { WorkflowNotFoundError, type Client, type WorkflowExecutionStatusName, type WorkflowHandle } from '@temporalio/client';
import { stackSettings } from '../../infra/settings.js';
import type { trainingRun } from '../../workflows/trainingRun.js';

export interface FoundRun {
  handle: WorkflowHandle<typeof trainingRun>;
  /** Temporal's status of the run's latest execution (after any continue-as-new). */
  status: WorkflowExecutionStatusName;
}

export async function findRun(client: Client, runId: string): Promise<FoundRun> {
  const handle = client.workflow.getHandle<typeof trainingRun>(runId);
  try {
    const d = await handle.describe();
    if (d.type !== 'trainingRun') throw new Error(`${runId} is a workflow of type ${d.type}, not a training run`);
    return { handle, status: d.status.name };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      const s = stackSettings();
      throw new Error(`unknown run id '${runId}': no such workflow on Temporal ${s.temporalAddress} (namespace ${s.namespace})`);
    }
    throw err;
  }
}
