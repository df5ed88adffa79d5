// The projection: one event -> the read models. Called inside the transaction that appends the
// event, and only when the append was new, so a re-delivered event changes nothing.
import { eq, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { TandemEvent } from '../../domain/events.js';
import { checkpoints, episodes, iterations, runs, turnGroups, updates } from '../../infra/db/schema.js';

type Tx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];

export async function project(tx: Tx, e: TandemEvent, at: Date): Promise<void> {
  switch (e.type) {
    case 'RunStarted':
      await tx
        .insert(runs)
        .values({ runId: e.runId, config: e.config, status: 'running', totalIterations: e.totalIterations, startedAt: at })
        .onConflictDoNothing();
      return;
    case 'EpisodeStarted':
      await tx
        .insert(episodes)
        .values({ episodeId: e.episodeId, runId: e.runId, iteration: e.iteration, problemSeed: e.problemSeed, status: 'running' })
        .onConflictDoNothing();
      return;
    case 'TurnGroupScored':
      await tx
        .insert(turnGroups)
        .values({
          episodeId: e.episodeId,
          turn: e.turn,
          agent: e.agent,
          runId: e.runId,
          iteration: e.iteration,
          groupKey: e.groupKey,
          policy: e.policy,
          policyVersion: e.policyVersion,
          samples: e.samples,
          chosen: e.chosen,
        })
        .onConflictDoNothing();
      return;
    case 'EpisodeFinished':
      await tx
        .update(episodes)
        .set({ status: 'finished', success: e.success, turns: e.turns, rewardByAgent: e.rewardByAgent })
        .where(eq(episodes.episodeId, e.episodeId));
      return;
    case 'UpdateApplied':
      await tx
        .insert(updates)
        .values({
          runId: e.runId,
          policy: e.policy,
          iteration: e.iteration,
          fromVersion: e.fromVersion,
          toVersion: e.toVersion,
          samples: e.samples,
          groups: e.groups,
          loss: e.metrics.loss ?? null,
          metrics: e.metrics,
        })
        .onConflictDoNothing();
      return;
    case 'CheckpointSaved':
      await tx
        .insert(checkpoints)
        .values({ runId: e.runId, policy: e.policy, version: e.version, iteration: e.iteration, path: e.path })
        .onConflictDoNothing();
      return;
    case 'IterationFinished':
      await tx
        .insert(iterations)
        .values({ runId: e.runId, iteration: e.iteration, episodes: e.episodes, successRate: e.successRate, rewardByAgent: e.rewardByAgent })
        .onConflictDoNothing();
      await tx
        .update(runs)
        .set({ iterationsDone: sql`GREATEST(${runs.iterationsDone}, ${e.iteration + 1})` })
        .where(eq(runs.runId, e.runId));
      return;
    case 'SamplesConsumed':
      return; // stored in the event table; no read model yet
    case 'RunFinished':
      await tx.update(runs).set({ status: 'completed', finishedAt: at }).where(eq(runs.runId, e.runId));
      return;
  }
}
