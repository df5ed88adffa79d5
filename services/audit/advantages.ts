// The advantages an update recorded (SamplesConsumed), recomputed from the recorded rewards of
// the iteration it consumed, with the same function the update uses (groupAdvantages).
import { and, asc, eq, like } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { RunConfig } from '../../configs/schema.js';
import { groupAdvantages, type AdvantageInput } from '../../domain/atgrpo.js';
import type { TurnGroupScoredEvent } from '../../domain/events.js';
import { events } from '../../infra/db/schema.js';

/** Escapes LIKE's wildcards in a literal prefix. */
export const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * What the update of `policy` for `iteration` should have computed: the iteration's recorded
 * groups of that policy, each sample's group member and score as the episode workflow sets them
 * (at_grpo: the sample and its turn reward; grpo: its episode and the agent's trajectory return).
 */
export async function expectedAdvantages(db: NodePgDatabase, cfg: RunConfig, runId: string, iteration: number, policy: string): Promise<Map<string, number>> {
  const rows = await db
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.type, 'TurnGroupScored'), like(events.stream, likePrefix(`episode:${runId}/it${iteration}/`))))
    .orderBy(asc(events.stream), asc(events.position));
  const groups = rows.map((r) => r.data as TurnGroupScoredEvent).filter((g) => g.policy === policy);
  const returns = new Map<string, number>(); // `${episode} ${agent}` -> the sum of its chosen rewards
  for (const g of groups) {
    const key = `${g.episodeId} ${g.agent}`;
    returns.set(key, (returns.get(key) ?? 0) + g.samples[g.chosen].reward);
  }
  const inputs: AdvantageInput[] = groups.flatMap((g) =>
    g.samples.map((s) =>
      cfg.algorithm === 'at_grpo'
        ? { sampleId: s.sampleId, groupKey: g.groupKey, member: s.sampleId, score: s.reward }
        : { sampleId: s.sampleId, groupKey: g.groupKey, member: g.episodeId, score: returns.get(`${g.episodeId} ${g.agent}`)! },
    ),
  );
  return groupAdvantages(inputs, { normByStd: cfg.update.norm_adv_by_std, zeroVariance: cfg.update.zero_variance_groups });
}

/** Equal up to the rounding of a different summation order (the update sums in Kafka's order). */
export const sameAdvantage = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
