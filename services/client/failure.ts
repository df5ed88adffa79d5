// What a failed run failed of: the innermost failure, the one a user can act on (an activity's
// "the prompt has 1792 tokens, more than the 1536 allowed by training.max_prompt_length ..."),
// rather than its wrappers ("Child Workflow execution failed", "Activity task failed"), with where
// it happened (the child workflows and the activity it passed through).
import { ActivityFailure, ChildWorkflowFailure } from '@temporalio/common';

export function rootCause(error: unknown): string {
  const where: string[] = [];
  let e: unknown = error;
  while (e instanceof Error && e.cause instanceof Error) {
    if (e instanceof ChildWorkflowFailure) where.push(`workflow ${e.execution.workflowId}`);
    else if (e instanceof ActivityFailure) where.push(`activity ${e.activityType}`);
    e = e.cause;
  }
  const message = e instanceof Error ? e.message : String(e);
  return where.length ? `${message} (in ${where.join(', ')})` : message;
}
