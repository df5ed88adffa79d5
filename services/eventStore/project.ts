// The projection: one event -> the read models. Called inside the transaction that appends the
// event, and only when the append was new, so a re-delivered event changes nothing. Also used,
// event by event in global order, by `tandem projector rebuild` (rebuild.ts).
import { and, eq, lt, notInArray, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { TandemEvent } from '../../domain/events.js';
import { updateStream } from '../../domain/ids.js';
import { checkpoints, episodes, evaluations, events, iterations, runs, samples, turnGroups, updates } from '../../infra/db/schema.js';

export type Tx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];

/** Where the event is stored: when, and at which position of its stream. */
export interface Stored {
  at: Date;
  position: number;
}

type SamplesConsumed = Extract<TandemEvent, { type: 'SamplesConsumed' }>;

export async function project(tx: Tx, e: TandemEvent, stored: Stored): Promise<void> {
  const at = stored.at;
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
        .values({ episodeId: e.episodeId, runId: e.runId, iteration: e.iteration, problemSeed: e.problemSeed, phase: e.phase, status: 'running' })
        .onConflictDoNothing();
      return;
    case 'TurnGroupScored': {
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
          position: stored.position,
          state: e.state ?? null,
          handoff: e.handoff ?? null,
          prompt: e.prompt ?? null,
        })
        .onConflictDoNothing();
      await tx
        .insert(samples)
        .values(
          e.samples.map((s) => ({
            sampleId: s.sampleId,
            runId: e.runId,
            iteration: e.iteration,
            episodeId: e.episodeId,
            turn: e.turn,
            agent: e.agent,
            groupKey: e.groupKey,
            policy: e.policy,
            policyVersion: e.policyVersion,
            candidate: s.candidate,
            local: s.local,
            global: s.global,
            reward: s.reward,
            chosen: s.candidate === e.chosen,
          })),
        )
        .onConflictDoNothing();
      // Events of different streams may arrive in any order: the update that consumed these
      // samples may already be stored.
      const consumed = await tx
        .select({ data: events.data })
        .from(events)
        .where(and(eq(events.stream, updateStream(e.runId, e.policy, e.policyVersion)), eq(events.type, 'SamplesConsumed')));
      for (const c of consumed) await markConsumed(tx, c.data as SamplesConsumed);
      return;
    }
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
    case 'SamplesConsumed':
      await markConsumed(tx, e);
      return;
    case 'CheckpointSaved':
      await tx
        .insert(checkpoints)
        .values({ runId: e.runId, policy: e.policy, version: e.version, iteration: e.iteration, path: e.path })
        .onConflictDoNothing();
      if (e.keptVersions) {
        // The versions before this one that the retention removed from disk.
        await tx
          .update(checkpoints)
          .set({ pruned: true })
          .where(and(eq(checkpoints.runId, e.runId), eq(checkpoints.policy, e.policy), lt(checkpoints.version, e.version), notInArray(checkpoints.version, e.keptVersions)));
      }
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
    case 'EvaluationFinished':
      await tx
        .insert(evaluations)
        .values({
          evalId: e.evalId,
          runId: e.runId,
          iteration: e.iteration,
          versions: e.versions,
          episodes: e.episodes,
          successRate: e.successRate,
          meanTurns: e.meanTurns,
          rewardByAgent: e.rewardByAgent,
          rewardByAgentTurn: e.rewardByAgentTurn,
        })
        .onConflictDoNothing();
      return;
    case 'RunFinished':
      await tx.update(runs).set({ status: e.reason, finishedAt: at }).where(eq(runs.runId, e.runId));
      return;
    default:
      e satisfies never; // every event type has a case
  }
}

/**
 * Each consumed sample gets its advantage and the update (fromVersion -> toVersion) that consumed
 * it; a sample set apart as stale (asynchronous training) is consumed with no advantage.
 */
async function markConsumed(tx: Tx, e: SamplesConsumed): Promise<void> {
  const advantages = { ...e.advantages, ...Object.fromEntries(Object.keys(e.stale ?? {}).map((id) => [id, null])) };
  await tx.execute(sql`
    UPDATE samples SET advantage = a.value::double precision, consumed_from_version = ${e.fromVersion}, consumed_to_version = ${e.toVersion}
    FROM jsonb_each_text(${JSON.stringify(advantages)}::jsonb) AS a(key, value)
    WHERE samples.sample_id = a.key AND samples.run_id = ${e.runId} AND samples.policy = ${e.policy}`);
}
