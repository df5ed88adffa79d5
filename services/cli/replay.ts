// `tandem replay`: the determinism check. Replays recorded Temporal histories against the
// current workflow code (workflows/index.ts) and exits 1, with the determinism error, if the
// code no longer reproduces any of them.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fetchRecorded, fetchTrainingRun } from '../../infra/temporal/histories.js';
import { bundleWorkflows, WORKFLOWS_PATH } from '../../infra/temporal/bundle.js';
import { parseHistoryJSON, replayHistories, type RecordedHistory, type ReplayOutcome } from '../../infra/temporal/replay.js';
import { projectRoot } from '../../infra/settings.js';
import { temporalClient } from './temporal.js';

export const REPLAY_USAGE = `usage: tandem replay WORKFLOW_ID [--run-id R]        one execution, fetched from the stack's Temporal
       tandem replay --run RUN_ID                      a training run and all its episodes
       tandem replay --file HISTORY.json [...] [--workflow-id ID]
                                                      saved histories (temporal workflow show --output json)`;

type Source =
  | { kind: 'workflow'; workflowId: string; runId?: string }
  | { kind: 'run'; runId: string }
  | { kind: 'files'; files: string[]; workflowId?: string };

/** Reads the command line; a string is the error to print with the usage. */
export function parseReplayArgs(args: string[]): Source | string {
  const values: Record<string, string> = {};
  const files: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--file') {
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) files.push(args[++i]);
      if (files.length === 0) return '--file needs at least one HISTORY.json';
    } else if (a === '--run-id' || a === '--run' || a === '--workflow-id') {
      const v = args[++i];
      if (v === undefined || v.startsWith('--')) return `${a} needs a value`;
      values[a] = v;
    } else if (a.startsWith('--')) {
      return `unknown option ${a}`;
    } else {
      positional.push(a);
    }
  }
  const modes = [positional.length > 0, '--run' in values, files.length > 0].filter(Boolean).length;
  if (modes !== 1) return 'give exactly one of WORKFLOW_ID, --run RUN_ID or --file HISTORY.json';
  if (positional.length > 1) return `one WORKFLOW_ID only, got ${positional.join(' ')}`;
  if ('--run-id' in values && positional.length === 0) return '--run-id goes with a WORKFLOW_ID';
  if ('--workflow-id' in values && files.length !== 1) return '--workflow-id goes with one --file';
  if (positional.length === 1) return { kind: 'workflow', workflowId: positional[0], runId: values['--run-id'] };
  if ('--run' in values) return { kind: 'run', runId: values['--run'] };
  return { kind: 'files', files, workflowId: values['--workflow-id'] };
}

async function load(source: Source): Promise<RecordedHistory[]> {
  if (source.kind === 'files') {
    return source.files.map((f) => {
      let text: string;
      try {
        text = readFileSync(f, 'utf8');
      } catch (err) {
        throw new Error(`${f}: cannot read (${err instanceof Error ? err.message : String(err)})`);
      }
      return parseHistoryJSON(text, f, source.workflowId);
    });
  }
  const client = await temporalClient();
  try {
    return source.kind === 'run'
      ? await fetchTrainingRun(client, source.runId)
      : [await fetchRecorded(client, source.workflowId, source.runId)];
  } finally {
    await client.connection.close();
  }
}

function printOutcome(o: ReplayOutcome): void {
  const from = o.source === 'server' ? '' : `  (${o.source})`;
  console.log(`${o.error ? 'FAIL' : 'ok  '}  ${o.workflowType.padEnd(12)} ${o.workflowId}  run ${o.runId}  ${o.events} events${from}`);
  if (o.error) console.log(`      ${o.error.name}: ${o.error.message}`);
}

export async function replayCommand(args: string[]): Promise<number> {
  const source = parseReplayArgs(args);
  if (typeof source === 'string') {
    console.error(`tandem replay: ${source}\n${REPLAY_USAGE}`);
    return 2;
  }
  const recorded = await load(source);
  console.log(`replaying ${recorded.length} ${recorded.length === 1 ? 'history' : 'histories'} against ${relative(projectRoot, WORKFLOWS_PATH)}`);
  const outcomes = await replayHistories(recorded, await bundleWorkflows());
  outcomes.forEach(printOutcome);
  const failed = outcomes.filter((o) => o.error).length;
  console.log(`${outcomes.length} replayed: ${outcomes.length - failed} ok, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}
