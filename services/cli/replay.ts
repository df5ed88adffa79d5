// `tandem replay`: the determinism check. Replays recorded Temporal histories against the
// current workflow code (workflows/index.ts) and exits 1, with the determinism error, if the
// code no longer reproduces any of them.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Command } from 'commander';
import { fetchRecorded, fetchTrainingRun } from '../../infra/temporal/histories.js';
import { bundleWorkflows, WORKFLOWS_PATH } from '../../infra/temporal/bundle.js';
import { parseHistoryJSON, replayHistories, type RecordedHistory, type ReplayOutcome } from '../../infra/temporal/replay.js';
import { projectRoot } from '../../infra/settings.js';
import { printJson, usageError, type Act } from './args.js';
import { temporalClient } from '../client/temporal.js';

export function registerReplay(program: Command, act: Act): void {
  program
    .command('replay')
    .description('replay recorded histories against the current workflow code; exit 1 with the determinism error if one fails')
    .argument('[WORKFLOW_ID]', "one execution, fetched from the stack's Temporal (a run's or an episode's id)")
    .option('--run-id <R>', "with WORKFLOW_ID: that execution (Temporal's run id); default: the latest")
    .option('--run <RUN_ID>', 'a training run, every continue-as-new execution, and all its episodes')
    .option('--file <HISTORY...>', 'saved histories (temporal workflow show --output json)')
    .option('--workflow-id <ID>', 'with one --file: the workflow id it was recorded under')
    .option('--json', 'print the outcomes as JSON')
    .action(act(replayCommand));
}

type Source =
  | { kind: 'workflow'; workflowId: string; runId?: string }
  | { kind: 'run'; runId: string }
  | { kind: 'files'; files: string[]; workflowId?: string };

export interface ReplayOptions {
  runId?: string;
  run?: string;
  file?: string[];
  workflowId?: string;
  json?: boolean;
}

/** What to replay; a string is why the arguments do not fit (a usage error). */
export function replaySource(workflowId: string | undefined, opts: ReplayOptions): Source | string {
  const files = opts.file ?? [];
  const modes = [workflowId !== undefined, opts.run !== undefined, files.length > 0].filter(Boolean).length;
  if (modes !== 1) return 'give exactly one of WORKFLOW_ID, --run RUN_ID or --file HISTORY.json';
  if (opts.runId !== undefined && workflowId === undefined) return '--run-id goes with a WORKFLOW_ID';
  if (opts.workflowId !== undefined && files.length !== 1) return '--workflow-id goes with one --file';
  if (workflowId !== undefined) return { kind: 'workflow', workflowId, runId: opts.runId };
  if (opts.run !== undefined) return { kind: 'run', runId: opts.run };
  return { kind: 'files', files, workflowId: opts.workflowId };
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

async function replayCommand(workflowId: string | undefined, opts: ReplayOptions, cmd: Command): Promise<number> {
  const source = replaySource(workflowId, opts);
  if (typeof source === 'string') usageError(cmd, source);
  const recorded = await load(source);
  const against = relative(projectRoot, WORKFLOWS_PATH);
  if (!opts.json) console.log(`replaying ${recorded.length} ${recorded.length === 1 ? 'history' : 'histories'} against ${against}`);
  const outcomes = await replayHistories(recorded, await bundleWorkflows());
  const failed = outcomes.filter((o) => o.error).length;
  if (opts.json) printJson({ workflows: against, outcomes, replayed: outcomes.length, ok: outcomes.length - failed, failed });
  else {
    outcomes.forEach(printOutcome);
    console.log(`${outcomes.length} replayed: ${outcomes.length - failed} ok, ${failed} failed`);
  }
  return failed > 0 ? 1 : 0;
}
