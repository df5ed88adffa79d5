// Sending a training run its lifecycle signals (workflows/messages.ts): the one home of it, for
// `tandem pause|resume|stop` (services/cli/lifecycle.ts) and the dashboard's buttons.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { pauseSignal, resumeSignal, stopSignal } from '../../workflows/messages.js';
import { findRun } from './runHandle.js';

const ACTIONS = {
  pause: { signal: pauseSignal, said: 'no new episode or update starts until it is resumed; those in flight finish' },
  resume: { signal: resumeSignal, said: 'it carries on' },
  stop: { signal: stopSignal, said: "it ends after the current iteration's episodes, update and checkpoint" },
} as const;

export type LifecycleAction = keyof typeof ACTIONS;

export const LIFECYCLE_ACTIONS = Object.keys(ACTIONS) as LifecycleAction[];

/**
 * Sends a running training run its pause, resume or stop signal; resolves with what the run does
 * about it. An unknown run id, or a run that has ended, is an error naming it.
 */
export async function sendLifecycleSignal(client: Client, runId: string, action: LifecycleAction): Promise<string> {
  const { handle, status } = await findRun(client, runId);
  const notRunning = (s: string) => new Error(`run '${runId}' has ended (Temporal status ${s}); only a running run can be sent ${action}`);
  if (status !== 'RUNNING') throw notRunning(status);
  try {
    await handle.signal(ACTIONS[action].signal);
  } catch (err) {
    // It ended between the look-up and the signal.
    if (err instanceof WorkflowNotFoundError) throw notRunning('closed');
    throw err;
  }
  return `run ${runId}: ${action} sent; ${ACTIONS[action].said}`;
}
