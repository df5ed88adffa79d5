// Recorded histories from the stack's Temporal server: one workflow execution, or a whole
// training run (every execution of its continue-as-new chain, then every episode it started).
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { workflowTypeOf, type RecordedHistory } from './replay.js';

/** One execution's history; the latest run of the workflow id unless runId is given. */
export async function fetchRecorded(client: Client, workflowId: string, runId?: string): Promise<RecordedHistory> {
  try {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    return { workflowId, history, source: 'server' };
  } catch (err) {
    const which = runId ? `${workflowId} (run ${runId})` : workflowId;
    throw new Error(`cannot fetch the history of ${which}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The child workflows a history started, with the run id of each. */
export function childExecutions(history: History): { workflowId: string; runId: string }[] {
  return (history.events ?? []).flatMap((e) => {
    const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    return child?.workflowId && child.runId ? [{ workflowId: child.workflowId, runId: child.runId }] : [];
  });
}

/**
 * A training run's histories, oldest first: each execution of the run (it continues as new
 * when Temporal suggests it), then its episodes (`<run>/it<i>/ep<j>`) in the order started.
 */
export async function fetchTrainingRun(client: Client, runId: string): Promise<RecordedHistory[]> {
  const chain: RecordedHistory[] = [];
  let executionRunId: string | undefined;
  do {
    const recorded = await fetchRecorded(client, runId, executionRunId);
    const type = workflowTypeOf(recorded.history);
    if (type !== 'trainingRun') throw new Error(`${runId} is a workflow of type ${type}, not a trainingRun`);
    chain.unshift(recorded);
    executionRunId = recorded.history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (executionRunId);
  const episodes: RecordedHistory[] = [];
  for (const child of chain.flatMap((r) => childExecutions(r.history))) {
    episodes.push(await fetchRecorded(client, child.workflowId, child.runId));
  }
  return [...chain, ...episodes];
}
