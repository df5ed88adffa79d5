// `tandem status RUN_ID [--watch] [--json]`: where a run is, from the workflow's progress query.
// --watch redraws the view in place on a terminal (one plain line per change otherwise) and
// exits when the run ends. A run that failed, or was terminated, timed out or cancelled, is said
// to have, with its root cause (the innermost failure's message: client/failure.ts), and the
// command exits 1.
import type { WorkflowHandle } from '@temporalio/client';
import { Option, type Command } from 'commander';
import { progressQuery, type EvaluationPoint, type IterationSummary, type RunProgress } from '../../workflows/messages.js';
import type { trainingRun } from '../../workflows/trainingRun.js';
import type { Act } from './args.js';
import { formatRewards, progressLines, watchRenderer } from '../client/progressView.js';
import { rootCause } from '../client/failure.js';
import { findRun } from '../client/runHandle.js';
import { temporalClient } from '../client/temporal.js';

const POLL_MS = 1000;
const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

export function printIteration(s: IterationSummary, total: number): void {
  const losses = Object.entries(s.updates)
    .map(([p, u]) => `${p} v${u.toVersion} loss=${fmt(u.loss)} samples=${u.samples} groups=${u.groups}`)
    .join('; ');
  console.log(`iteration ${s.iteration + 1}/${total}  success=${fmt(s.successRate)}  reward ${formatRewards(s.rewardByAgent)}  | ${losses}`);
}

export function printEvaluation(e: EvaluationPoint): void {
  console.log(`evaluation after ${e.iteration} iteration(s): held-out success=${fmt(e.successRate)}  reward ${formatRewards(e.rewardByAgent)}`);
}

/** Follows a run until it ends, printing each finished iteration and each evaluation once, in order. */
export async function watchRun(handle: WorkflowHandle<typeof trainingRun>): Promise<RunProgress> {
  let shownIteration = -1;
  let shownEvaluations = 0; // evaluations are appended in order; the list keeps the last 20
  const show = (p: RunProgress) => {
    // What happened in order: an evaluation after i iterations follows iteration i's line.
    const lines = [
      ...p.recent.filter((s) => s.iteration > shownIteration).map((s) => ({ at: s.iteration + 1, order: 0, print: () => printIteration(s, p.totalIterations) })),
      ...(p.evaluations ?? []).filter((e) => e.iteration >= shownEvaluations).map((e) => ({ at: e.iteration, order: 1, print: () => printEvaluation(e) })),
    ].sort((a, b) => a.at - b.at || a.order - b.order);
    for (const l of lines) l.print();
    shownIteration = Math.max(shownIteration, ...p.recent.map((s) => s.iteration));
    shownEvaluations = Math.max(shownEvaluations, ...(p.evaluations ?? []).map((e) => e.iteration + 1));
  };
  const result = handle.result();
  let finished = false;
  result.then(() => (finished = true), () => (finished = true));
  while (!finished) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    try {
      show(await handle.query(progressQuery));
    } catch {
      // not queryable yet (no worker has picked the run up); try again
    }
  }
  const final = await result;
  show(final);
  return final;
}

/** Temporal's statuses of a run that ended without finishing: no progress query answers for it. */
const ENDED_BADLY = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** Shows the progress until the run ends; returns the exit code (1 if the run failed). */
async function watchStatus(handle: WorkflowHandle<typeof trainingRun>, out: NodeJS.WriteStream): Promise<number> {
  const render = watchRenderer(out.isTTY === true);
  const show = (p: RunProgress) => out.write(render(p, Date.now()));
  let outcome: { ok: true; final: RunProgress } | { ok: false; error: unknown } | undefined;
  handle.result().then(
    (final) => (outcome = { ok: true, final }),
    (error: unknown) => (outcome = { ok: false, error }),
  );
  while (!outcome) {
    try {
      show(await handle.query(progressQuery));
    } catch {
      // a query can fail while the run continues as new or a worker restarts; the next poll retries
    }
    for (let waited = 0; !outcome && waited < POLL_MS; waited += 100) await new Promise((r) => setTimeout(r, 100));
  }
  if (!outcome.ok) {
    out.write(`run ${handle.workflowId} failed: ${rootCause(outcome.error)}\n`);
    return 1;
  }
  show(outcome.final);
  return 0;
}

export function registerStatus(program: Command, act: Act): void {
  program
    .command('status')
    .description('where a run is: iteration, episodes done, reward and success, versions, checkpoint, ETA')
    .argument('<RUN_ID>', 'the training run (its workflow id)')
    .addOption(new Option('--watch', 'a live progress bar until the run ends (exit 1 if it failed)').conflicts('json'))
    .option('--json', "print the run's progress (RunProgress) as JSON; a run that failed: {runId, status, error} (exit 1)")
    .action(act(statusCommand));
}

async function statusCommand(runId: string, opts: { watch?: boolean; json?: boolean }): Promise<number> {
  const client = await temporalClient();
  const { handle, status } = await findRun(client, runId);
  if (opts.watch) return watchStatus(handle, process.stdout);
  if (ENDED_BADLY.includes(status)) {
    // Its progress query would show the state it failed in as if it still ran: say how it ended instead.
    const error = await handle.result().then(() => `ended ${status.toLowerCase()}`, rootCause);
    const ended = status.toLowerCase().replace('_', ' ');
    if (opts.json) console.log(JSON.stringify({ runId, status: ended, error }, null, 2));
    else console.log(`run ${runId} ${ended}: ${error}`);
    return 1;
  }
  if (status !== 'RUNNING' && status !== 'COMPLETED') console.log(`run ${runId}: Temporal status ${status}`);
  const p = await handle.query(progressQuery);
  if (opts.json) console.log(JSON.stringify(p, null, 2));
  else for (const line of progressLines(p, Date.now())) console.log(line);
  return 0;
}
