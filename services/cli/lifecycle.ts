// `tandem pause|resume|stop RUN_ID`: sends a trainingRun one of its lifecycle signals
// (services/client/lifecycle.ts). The run acts on it at its next step; `tandem status` shows the effect.
import type { Command } from 'commander';
import { LIFECYCLE_ACTIONS, sendLifecycleSignal, type LifecycleAction } from '../client/lifecycle.js';
import { temporalClient } from '../client/temporal.js';
import type { Act } from './args.js';

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

async function lifecycleCommand(action: LifecycleAction, runId: string): Promise<number> {
  console.log(await sendLifecycleSignal(await temporalClient(), runId, action));
  return 0;
}
