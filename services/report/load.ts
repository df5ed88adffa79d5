// What a report reads from Postgres: a run's read models (runs, iterations, episodes, samples,
// updates) and, from the events table, the record times of its run events, which of its
// episodes were evaluation episodes, and its evaluations. Only the columns the report uses are
// selected.
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { EvaluationResult } from '../../domain/events.js';
import { runStream } from '../../domain/ids.js';
import { readEvent } from '../../domain/upcast.js';
import { episodes, events, iterations, runs, samples, updates } from '../../infra/db/schema.js';

export interface RunData {
  run: { runId: string; status: string; totalIterations: number; iterationsDone: number; startedAt: Date; finishedAt: Date | null };
  iterations: { iteration: number; episodes: number; successRate: number; rewardByAgent: Record<string, number> }[];
  /** The run's training episodes (evaluation episodes are left out). */
  episodes: {
    episodeId: string;
    iteration: number;
    problemSeed: number;
    status: string;
    success: boolean | null;
    turns: number | null;
    rewardByAgent: Record<string, number> | null;
  }[];
  /** Per agent and turn, over the run's training samples: mean reward of the chosen candidates (null: none) and of all. */
  turnRewards: { agent: string; turn: number; chosen: number | null; all: number }[];
  updates: { policy: string; iteration: number; fromVersion: number; toVersion: number; samples: number; groups: number; metrics: Record<string, number> }[];
  /** The run's evaluations (EvaluationFinished), by the number of training iterations done before each. */
  evaluations: Pick<EvaluationResult, 'iteration' | 'episodes' | 'successRate' | 'rewardByAgent'>[];
  /** When the projector recorded the run's start and each IterationFinished (by iteration). */
  times: { started?: Date; iterationFinished: Map<number, Date> };
}

export class RunNotFoundError extends Error {
  constructor(runId: string) {
    super(`run ${runId} is not in the database (no row in runs)`);
  }
}

export async function loadRunData(db: NodePgDatabase, runId: string): Promise<RunData> {
  const [run] = await db
    .select({
      runId: runs.runId,
      status: runs.status,
      totalIterations: runs.totalIterations,
      iterationsDone: runs.iterationsDone,
      startedAt: runs.startedAt,
      finishedAt: runs.finishedAt,
    })
    .from(runs)
    .where(eq(runs.runId, runId));
  if (!run) throw new RunNotFoundError(runId);
  const ofRun = sql`${events.data}->>'runId' = ${runId}`;
  // Evaluation episodes share the run id; only their EpisodeStarted says phase "eval".
  const evalEpisodes = db
    .select({ id: sql`${events.data}->>'episodeId'` })
    .from(events)
    .where(and(eq(events.type, 'EpisodeStarted'), ofRun, sql`${events.data}->>'phase' = 'eval'`));

  const its = await db
    .select({ iteration: iterations.iteration, episodes: iterations.episodes, successRate: iterations.successRate, rewardByAgent: iterations.rewardByAgent })
    .from(iterations)
    .where(eq(iterations.runId, runId))
    .orderBy(asc(iterations.iteration));
  const eps = await db
    .select({
      episodeId: episodes.episodeId,
      iteration: episodes.iteration,
      problemSeed: episodes.problemSeed,
      status: episodes.status,
      success: episodes.success,
      turns: episodes.turns,
      rewardByAgent: episodes.rewardByAgent,
    })
    .from(episodes)
    .where(and(eq(episodes.runId, runId), sql`${episodes.episodeId} NOT IN (${evalEpisodes})`))
    .orderBy(asc(episodes.iteration), asc(episodes.episodeId));
  const turnRewards = await db
    .select({
      agent: samples.agent,
      turn: samples.turn,
      chosen: sql<number | null>`avg(${samples.reward}) FILTER (WHERE ${samples.chosen})`,
      all: sql<number>`avg(${samples.reward})`,
    })
    .from(samples)
    .where(and(eq(samples.runId, runId), sql`${samples.episodeId} NOT IN (${evalEpisodes})`))
    .groupBy(samples.agent, samples.turn)
    .orderBy(asc(samples.agent), asc(samples.turn));
  const ups = await db
    .select({
      policy: updates.policy,
      iteration: updates.iteration,
      fromVersion: updates.fromVersion,
      toVersion: updates.toVersion,
      samples: updates.samples,
      groups: updates.groups,
      metrics: updates.metrics,
    })
    .from(updates)
    .where(eq(updates.runId, runId))
    .orderBy(asc(updates.iteration), asc(updates.policy));
  const evaluations = await db
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.type, 'EvaluationFinished'), ofRun))
    .orderBy(asc(events.globalPosition));
  const runEvents = await db
    .select({ type: events.type, data: events.data, recordedAt: events.recordedAt })
    .from(events)
    .where(and(eq(events.stream, runStream(runId)), inArray(events.type, ['RunStarted', 'IterationFinished'])))
    .orderBy(asc(events.position));
  const times: RunData['times'] = { iterationFinished: new Map() };
  for (const e of runEvents) {
    if (e.type === 'RunStarted') times.started ??= e.recordedAt;
    else times.iterationFinished.set((e.data as { iteration: number }).iteration, e.recordedAt);
  }
  return {
    run,
    iterations: its.map((i) => ({ ...i, rewardByAgent: i.rewardByAgent as Record<string, number> })),
    episodes: eps.map((e) => ({ ...e, rewardByAgent: e.rewardByAgent as Record<string, number> | null })),
    // avg() of double precision comes back as a JS number from node-postgres.
    turnRewards: turnRewards.map((t) => ({ ...t, chosen: t.chosen === null ? null : Number(t.chosen), all: Number(t.all) })),
    updates: ups.map((u) => ({ ...u, metrics: u.metrics as Record<string, number> })),
    evaluations: evaluations.map(({ data }) => {
      const e = readEvent(data) as EvaluationResult;
      return { iteration: e.iteration, episodes: e.episodes, successRate: e.successRate, rewardByAgent: e.rewardByAgent };
    }),
    times,
  };
}
