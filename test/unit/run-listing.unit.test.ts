// What `tandem status` says a failed run failed of (services/client/failure.ts: the innermost
// failure, with where it happened), and how `tandem runs` lays its listing out (services/cli/runs.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState } from '@temporalio/common';
import { runsTable, type RunListing } from '../../services/cli/runs.js';
import { rootCause } from '../../services/client/failure.js';

test("a run that failed in an episode's activity: the activity's message and where, not 'Child Workflow execution failed'", () => {
  const prompt = "reasoning_generator's prompt in turn 0 of r/it0/ep35: the prompt has 1792 tokens, more than the 1536 allowed by training.max_prompt_length";
  const app = ApplicationFailure.nonRetryable(prompt, 'PromptTooLong');
  const activity = new ActivityFailure('Activity task failed', 'agentTurn', '3', RetryState.NON_RETRYABLE_FAILURE, 'worker', app);
  const child = new ChildWorkflowFailure('default', { workflowId: 'r/it0/ep35', runId: 'x' }, 'episode', RetryState.NON_RETRYABLE_FAILURE, activity);
  const failed = new WorkflowFailedError('Workflow execution failed', child, RetryState.NON_RETRYABLE_FAILURE);
  assert.equal(rootCause(failed), `${prompt} (in workflow r/it0/ep35, activity agentTurn)`);
  // The workflow's own error (a bad config): its message alone; anything else as it is.
  assert.equal(rootCause(new WorkflowFailedError('Workflow execution failed', ApplicationFailure.nonRetryable('training.lr: expected a number'), RetryState.NON_RETRYABLE_FAILURE)), 'training.lr: expected a number');
  assert.equal(rootCause('gone'), 'gone');
});

test('tandem runs: aligned columns under a header, - where nothing is recorded yet', () => {
  const listed: RunListing[] = [
    { runId: 'run-b', config: 'configs/planpath/planpath_L1_prompt.yaml', status: 'running', iterationsDone: 3, totalIterations: 20, heldOut: { successRate: 0.4375, iteration: 2 }, startedAt: '2026-11-29T12:00:05.123Z' },
    { runId: 'run-a-longer', config: null, status: 'failed', iterationsDone: null, totalIterations: null, heldOut: null, startedAt: '2026-11-29T11:00:00.000Z' },
  ];
  assert.deepEqual(runsTable(listed), [
    'RUN           CONFIG                                    STATUS   ITERATIONS  HELD-OUT SUCCESS  STARTED (UTC)',
    'run-b         configs/planpath/planpath_L1_prompt.yaml  running  3/20        43.8% after 2     2026-11-29 12:00:05',
    'run-a-longer  -                                         failed   -           -                 2026-11-29 11:00:00',
  ]);
  assert.deepEqual(runsTable([]), ['no training runs on this stack']);
});
