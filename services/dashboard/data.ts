// What the dashboard's pages show, as JSON: the runs (Postgres' runs table; for a running run also
// its progress query: status, iteration, ETA), a run's progress, and a run's record: its charts
// (services/report/runCharts.ts, as ECharts options), evaluations and training episodes
// (services/report/load.ts). A run whose row says it has ended is not asked: the row says it all.
// While a run runs, its state also carries the engine's busy fraction (engineBusy.ts).
import type { Client } from '@temporalio/client';
import { count, desc, eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { episodes, evaluations, runs } from '../../infra/db/schema.js';
import { progressQuery, type RunProgress } from '../../workflows/messages.js';
import type { trainingRun } from '../../workflows/trainingRun.js';
import { etaMs, formatDuration, fractionDone, iterationText } from '../client/progressView.js';
import { chartOption, pointCount } from '../report/chartOption.js';
import { reportCharts } from '../report/runCharts.js';
import { episodeScore } from '../report/episodes.js';
import { loadRunData, type RunData } from '../report/load.js';

export interface Deps {
  db: NodePgDatabase;
  temporal: Client;
  /** The engine's busy fraction (engineBusy.ts). */
  engineBusy: () => Promise<number | null>;
}

/** How long a progress query may take before the dashboard shows the run without it. */
const QUERY_TIMEOUT_MS = 5_000;
/** The runs page lists this many runs, the latest first. */
const RUNS_LISTED = 100;

type RunRow = Pick<RunData['run'], 'runId' | 'status' | 'totalIterations' | 'iterationsDone'>;

/** Where a run is, as the pages show it: from the progress query while it runs, else from its row. */
export interface RunState {
  status: string;
  /** `3/20`, or `20/20 done` between iterations and at the end. */
  iteration: string;
  /** Share of the run done, 0..1. */
  fraction: number;
  /** `1m05s`; `?` until an iteration has finished; null when the run is not running. */
  eta: string | null;
  /** The progress query's answer (RunProgress); null when the run was not queried or did not answer. */
  progress: RunProgress | null;
  /** The engine's busy fraction while the run is running (engineBusy.ts); null: not measured. */
  engineBusy: number | null;
}

/**
 * What Temporal says of a run Postgres has as running: its progress query's answer; or, when its
 * workflow was terminated, failed, timed out or cancelled (no RunFinished event then, so its row
 * stays `running`), that status; null when Temporal does not answer in time. A workflow that
 * completed is queried too: its final progress says completed or stopped, before the projector does.
 */
async function askTemporal(client: Client, runId: string): Promise<RunProgress | { closed: string } | null> {
  const handle = client.workflow.getHandle<typeof trainingRun>(runId);
  return client
    .withDeadline(Date.now() + QUERY_TIMEOUT_MS, async () => {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING' && status.name !== 'COMPLETED') return { closed: status.name.toLowerCase() };
      return handle.query(progressQuery);
    })
    .catch(() => null);
}

export async function runState(deps: Deps, run: RunRow, now = Date.now()): Promise<RunState> {
  const [answer, busy] = run.status === 'running' ? await Promise.all([askTemporal(deps.temporal, run.runId), deps.engineBusy()]) : [null, null];
  if (answer === null || 'closed' in answer) {
    return {
      status: answer?.closed ?? run.status,
      iteration: `${run.iterationsDone}/${run.totalIterations} done`,
      fraction: run.totalIterations === 0 ? 1 : run.iterationsDone / run.totalIterations,
      eta: null,
      progress: null,
      engineBusy: answer === null ? busy : null,
    };
  }
  const p = answer;
  const eta = etaMs(p, now);
  return { status: p.status, iteration: iterationText(p, false), fraction: fractionDone(p), eta: eta === null ? '?' : formatDuration(eta), progress: p, engineBusy: busy };
}

/** The latest runs with their state. */
export async function listRuns(deps: Deps) {
  const rows = await deps.db
    .select({ runId: runs.runId, status: runs.status, totalIterations: runs.totalIterations, iterationsDone: runs.iterationsDone, startedAt: runs.startedAt, finishedAt: runs.finishedAt })
    .from(runs)
    .orderBy(desc(runs.startedAt))
    .limit(RUNS_LISTED);
  return Promise.all(rows.map(async (r) => ({ ...r, state: await runState(deps, r) })));
}

/** A run's record for its page: the run's row, every chart (option and point count), evaluations, episodes. */
export async function runRecord(db: NodePgDatabase, runId: string) {
  const d = await loadRunData(db, runId);
  return {
    run: d.run,
    charts: reportCharts(d).map((c) => {
      const option = chartOption(c.spec);
      return { file: c.file, title: c.spec.title, caption: c.caption, option, points: pointCount(option) };
    }),
    evaluations: d.evaluations,
    episodes: d.episodes.map((e) => ({ ...e, score: episodeScore(e) ?? null })),
  };
}

/**
 * A key that changes whenever a run's record does: its row (status, iterations done), its episodes
 * (started, finished) and its evaluations. Three indexed reads, where the record itself is the
 * report's queries (which aggregate every sample of the run): the live stream reads the record only
 * when this key changes.
 */
export async function recordKey(db: NodePgDatabase, runId: string): Promise<string> {
  const [row] = await db.select({ status: runs.status, done: runs.iterationsDone }).from(runs).where(eq(runs.runId, runId));
  const [eps] = await db.select({ started: count(), finished: count(episodes.turns) }).from(episodes).where(eq(episodes.runId, runId));
  const [evs] = await db.select({ n: count() }).from(evaluations).where(eq(evaluations.runId, runId));
  return JSON.stringify([row ?? null, eps, evs]);
}

