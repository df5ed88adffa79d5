// The advantages an update recorded (SamplesConsumed), recomputed from the recorded rewards of
// the iteration it consumed, with the same function the update uses (groupAdvantages).
import { and, asc, eq, like } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { RunConfig } from '../../configs/schema.js';
import { advantageInputs, advantageOptions, groupAdvantages } from '../../domain/atgrpo.js';
import type { TurnGroupScoredEvent } from '../../domain/events.js';
import { episodeStream, iterationEpisodesPrefix } from '../../domain/ids.js';
import { readEvent } from '../../domain/upcast.js';
import { events } from '../../infra/db/schema.js';

/** Escapes LIKE's wildcards in a literal prefix. */
export const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * What the update of `policy` for `iteration` should have computed: the iteration's recorded
 * groups of that policy, each sample's group member and score by the episode's own rule
 * (advantageInputs), without the samples the update set apart as stale.
 */
export async function expectedAdvantages(db: NodePgDatabase, cfg: RunConfig, runId: string, iteration: number, policy: string, stale: readonly string[] = []): Promise<Map<string, number>> {
  const rows = await db
    .select({ data: events.data })
    .from(events)
    .where(and(eq(events.type, 'TurnGroupScored'), like(events.stream, likePrefix(episodeStream(iterationEpisodesPrefix(runId, iteration))))))
    .orderBy(asc(events.stream), asc(events.position));
  const groups = rows.map((r) => readEvent(r.data) as TurnGroupScoredEvent).filter((g) => g.policy === policy);
  const setApart = new Set(stale);
  const inputs = advantageInputs(cfg.algorithm, groups).filter((s) => !setApart.has(s.sampleId));
  return groupAdvantages(inputs, advantageOptions(cfg.update));
}

/** Equal up to the rounding of a different summation order (the update sums in Kafka's order). */
export const sameAdvantage = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
