// `tandem status RUN_ID`: where a run is, from the workflow's progress query.
import type { WorkflowHandle } from '@temporalio/client';
import { progressQuery, type IterationSummary, type RunProgress } from '../../workflows/messages.js';
import type { trainingRun } from '../../workflows/trainingRun.js';
import { temporalClient } from './temporal.js';

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

function formatRewards(rewards: Record<string, number>): string {
  return Object.entries(rewards)
    .map(([agent, r]) => `${agent}=${fmt(r)}`)
    .join(' ');
}

export function printIteration(s: IterationSummary, total: number): void {
  const losses = Object.entries(s.updates)
    .map(([p, u]) => `${p} v${u.toVersion} loss=${fmt(u.loss)} samples=${u.samples} groups=${u.groups}`)
    .join('; ');
  console.log(`iteration ${s.iteration + 1}/${total}  success=${fmt(s.successRate)}  reward ${formatRewards(s.rewardByAgent)}  | ${losses}`);
}

function printProgress(p: RunProgress): void {
  const last = p.recent[p.recent.length - 1];
  console.log(`run ${p.runId}: ${p.status}`);
  console.log(`  iteration        ${Math.min(p.iteration + 1, p.totalIterations)}/${p.totalIterations}`);
  console.log(`  episodes done    ${p.episodesDone}/${p.episodesPerIteration} (this iteration)`);
  console.log(`  policy versions  ${Object.entries(p.versions).map(([k, v]) => `${k}=v${v}`).join(' ')}`);
  console.log(`  updates applied  ${p.updatesApplied}`);
  console.log(`  last checkpoint  ${p.lastCheckpoint ?? '-'}`);
  if (last) console.log(`  mean reward      ${formatRewards(last.rewardByAgent)} (iteration ${last.iteration + 1}, success ${fmt(last.successRate)})`);
}

/** Follows a run until it ends, calling onIteration once per finished iteration. */
export async function watchRun(
  handle: WorkflowHandle<typeof trainingRun>,
  onIteration: (s: IterationSummary, total: number) => void,
): Promise<RunProgress> {
  let shown = -1;
  const result = handle.result();
  let finished = false;
  result.then(() => (finished = true), () => (finished = true));
  while (!finished) {
    await new Promise((r) => setTimeout(r, 1000));
    try {
      const p = await handle.query(progressQuery);
      for (const s of p.recent) if (s.iteration > shown) (onIteration(s, p.totalIterations), (shown = s.iteration));
    } catch {
      // not queryable yet (no worker has picked the run up); try again
    }
  }
  const final = await result;
  for (const s of final.recent) if (s.iteration > shown) onIteration(s, final.totalIterations);
  return final;
}

export async function statusCommand(args: string[]): Promise<number> {
  const [runId] = args;
  if (!runId) {
    console.error('usage: tandem status RUN_ID');
    return 2;
  }
  const client = await temporalClient();
  printProgress(await client.workflow.getHandle(runId).query(progressQuery));
  return 0;
}
