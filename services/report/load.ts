// What a report reads from Postgres: a run's read models (runs, iterations, episodes,
// turn_groups, updates) and the record times of its run events. Only the columns the report
// uses are selected.
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { runStream, type SampleScore } from '../../domain/events.js';
import { episodes, events, iterations, runs, turnGroups, updates } from '../../infra/db/schema.js';

export interface RunData {
  run: { runId: string; status: string; totalIterations: number; iterationsDone: number; startedAt: Date; finishedAt: Date | null };
  iterations: { iteration: number; episodes: number; successRate: number; rewardByAgent: Record<string, number> }[];
  episodes: {
    episodeId: string;
    iteration: number;
    problemSeed: number;
    status: string;
    success: boolean | null;
    turns: number | null;
    rewardByAgent: Record<string, number> | null;
  }[];
  turnGroups: {
    episodeId: string;
    iteration: number;
    turn: number;
    agent: string;
    policy: string;
    policyVersion: number;
    samples: SampleScore[];
    chosen: number;
  }[];
  updates: { policy: string; iteration: number; fromVersion: number; toVersion: number; samples: number; groups: number; metrics: Record<string, number> }[];
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
    .where(eq(episodes.runId, runId))
    .orderBy(asc(episodes.iteration), asc(episodes.episodeId));
  const groups = await db
    .select({
      episodeId: turnGroups.episodeId,
      iteration: turnGroups.iteration,
      turn: turnGroups.turn,
      agent: turnGroups.agent,
      policy: turnGroups.policy,
      policyVersion: turnGroups.policyVersion,
      samples: turnGroups.samples,
      chosen: turnGroups.chosen,
    })
    .from(turnGroups)
    .where(eq(turnGroups.runId, runId))
    .orderBy(asc(turnGroups.episodeId), asc(turnGroups.turn));
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
    turnGroups: groups.map((g) => ({ ...g, samples: g.samples as SampleScore[] })),
    updates: ups.map((u) => ({ ...u, metrics: u.metrics as Record<string, number> })),
    times,
  };
}
