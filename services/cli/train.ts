// `tandem train FILE [key=value ...] [--wait] [--id RUN_ID]`: starts a training run, prints its id.
import type { Command } from 'commander';
import { loadRunConfig } from '../../configs/load.js';
import { formatIssues } from '../../configs/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import type { Act } from './args.js';
import { watchRun } from './status.js';
import { freshWorkflowId, temporalClient } from '../client/temporal.js';

export function registerTrain(program: Command, act: Act): void {
  program
    .command('train')
    .description('start a training run; prints its run id')
    .argument('<FILE>', 'the run config (YAML)')
    .argument('[key=value...]', 'overrides, dotted paths with YAML values: training.train_sample_num=8 (* matches every entry of a mapping); @FILE applies a preset, the list of overrides FILE holds (configs/sokoban/reference.preset.yaml)')
    .option('--wait', 'then follow it: a line per iteration and evaluation, until it ends')
    .option('--id <RUN_ID>', 'the run id (workflow id); default: a fresh run-<time>-<random> id')
    .action(act(train));
}

async function train(file: string, overrides: string[], opts: { wait?: boolean; id?: string }): Promise<number> {
  const runId = opts.id ?? freshWorkflowId('run');
  const loaded = loadRunConfig(file, overrides);
  if (!loaded.ok) {
    console.error(`${file}: ${loaded.issues.length} error(s)\n${formatIssues(loaded.issues)}`);
    return 1;
  }
  const client = await temporalClient();
  const handle = await client.workflow.start(trainingRun, {
    taskQueue: CPU_QUEUE,
    workflowId: runId,
    args: [{ config: loaded.config }],
    memo: { config: file }, // what `tandem runs` shows
  });
  console.log(runId);
  if (!opts.wait) return 0;
  await watchRun(handle);
  return 0;
}
