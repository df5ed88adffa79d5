// `tandem train FILE [key=value ...] [--wait] [--id RUN_ID]`
import { loadRunConfig } from '../../configs/load.js';
import { formatIssues } from '../../configs/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { watchRun } from './status.js';
import { freshWorkflowId, temporalClient } from './temporal.js';

export async function trainCommand(args: string[]): Promise<number> {
  const wait = args.includes('--wait');
  const idAt = args.indexOf('--id');
  const runId = idAt >= 0 ? args[idAt + 1] : freshWorkflowId('run');
  const positional = args.filter((a, i) => a !== '--wait' && (idAt < 0 || (i !== idAt && i !== idAt + 1)));
  const [file, ...overrides] = positional;
  if (!file) {
    console.error('usage: tandem train FILE [key.path=value ...] [--wait] [--id RUN_ID]');
    return 2;
  }
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
  });
  console.log(runId);
  if (!wait) return 0;
  await watchRun(handle);
  return 0;
}
