// `tandem pause|resume|stop RUN_ID`: sends a trainingRun one of its lifecycle signals
// (workflows/messages.ts). The run acts on it at its next step; `tandem status` shows the effect.
// `sendLifecycleSignal` is the one home of sending them: the dashboard's buttons use it too.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import { pauseSignal, resumeSignal, stopSignal } from '../../workflows/messages.js';
import type { Act } from './args.js';
import { findRun } from './runHandle.js';
import { temporalClient } from './temporal.js';

const ACTIONS = {
  pause: { signal: pauseSignal, said: 'no new episode or update starts until it is resumed; those in flight finish' },
  resume: { signal: resumeSignal, said: 'it carries on' },
  stop: { signal: stopSignal, said: "it ends after the current iteration's episodes, update and checkpoint" },
} as const;

export type LifecycleAction = keyof typeof ACTIONS;

export const LIFECYCLE_ACTIONS = Object.keys(ACTIONS) as LifecycleAction[];

const DESCRIPTIONS: Record<LifecycleAction, string> = {
  pause: 'pause a run: no new episode or update starts until it is resumed; episodes in flight finish',
  resume: 'resume a paused run',
  stop: "stop a run after the current iteration's episodes, update and checkpoint",
};

export function registerLifecycle(program: Command, act: Act): void {
  for (const action of LIFECYCLE_ACTIONS) {
    program
      .command(action)
      .description(DESCRIPTIONS[action])
      .argument('<RUN_ID>', 'the training run (its workflow id)')
      .action(act((runId: string) => lifecycleCommand(action, runId)));
  }
}

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

async function lifecycleCommand(action: LifecycleAction, runId: string): Promise<number> {
  console.log(await sendLifecycleSignal(await temporalClient(), runId, action));
  return 0;
}
