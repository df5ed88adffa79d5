// Which records one update may use: the on-policy filter of updatePolicy, as a pure function.
// Only this (run, policy, iteration) counts; each sample id once (a retried publish repeats
// records); rollouts that were never scored (a retried agent turn's first attempt) are left
// out by the join. Versions: with rollout.max_staleness 0 every sample must come from the version
// the update starts from; with N > 0 (asynchronous training) from that version or one of the N
// before it, and a sample older than that is set apart as stale (consumed, never trained on, and
// named in the update's SamplesConsumed event). Also where the read may end for the next update
// (`cut`): with asynchronous training the next iteration's records arrive while this one's update
// reads, and they are the next update's. A run and policy's records share a key, so each topic
// holds them in one partition, in publish order, and every record of an iteration comes before any
// of the next (the next iteration's episodes start only once this one's have published): the cut
// is each partition's first record of a later iteration.
import { TOPICS } from '../infra/settings.js';
import type { KafkaRecord } from '../infra/kafka/readBatch.js';
import { rolloutOf, type RolloutRecord, type TrajectoryRecord } from './records.js';

export interface IterationWanted {
  runId: string;
  policy: string;
  iteration: number;
  fromVersion: number;
  /** How many scored samples the iteration's episodes published for this policy. */
  expected: number;
  /** rollout.max_staleness (absent in updates scheduled before it existed: 0). */
  maxStaleness?: number;
}

export type IterationSamples =
  /** scores: the samples to train on; stale: those older than the bound, by sample id -> generating version. */
  /** cut: `topic:partition` -> offset of its first record of this run and policy from a later iteration. */
  | { ok: true; scores: TrajectoryRecord[]; tokens: Map<string, RolloutRecord>; stale: Record<string, number>; cut: Map<string, bigint> }
  /** retryable: the iteration is not all in Kafka yet; otherwise the records can never make a valid update. */
  | { ok: false; retryable: boolean; type: 'IncompleteIteration' | 'MissingRollout' | 'OffPolicySample'; message: string };

export function selectIterationSamples(records: KafkaRecord[], want: IterationWanted): IterationSamples {
  const scores = new Map<string, TrajectoryRecord>();
  const tokens = new Map<string, RolloutRecord>();
  const cut = new Map<string, bigint>();
  for (const { topic, partition, offset, value } of records) {
    // Other runs' and policies' records are skipped before their token arrays are unpacked.
    const r = JSON.parse(value) as Pick<TrajectoryRecord, 'runId' | 'policy' | 'iteration' | 'sampleId'>;
    if (r.runId !== want.runId || r.policy !== want.policy) continue;
    if (r.iteration > want.iteration) {
      const id = `${topic}:${partition}`;
      if (!cut.has(id) || BigInt(offset) < cut.get(id)!) cut.set(id, BigInt(offset));
    }
    if (r.iteration !== want.iteration) continue;
    if (topic === TOPICS.trajectories) scores.set(r.sampleId, r as TrajectoryRecord);
    else if (topic === TOPICS.rollouts) tokens.set(r.sampleId, rolloutOf(r));
  }
  const where = `iteration ${want.iteration} of ${want.policy}`;
  if (scores.size !== want.expected) {
    // Never update on a partial iteration; a publish may not be visible yet.
    return { ok: false, retryable: true, type: 'IncompleteIteration', message: `${where}: ${scores.size} scored samples in Kafka, ${want.expected} expected` };
  }
  const missing = [...scores.keys()].filter((id) => !tokens.has(id));
  if (missing.length > 0) {
    return { ok: false, retryable: false, type: 'MissingRollout', message: `${where}: ${missing.length} scored samples have no rollout record, e.g. ${missing[0]}` };
  }
  const bound = want.maxStaleness ?? 0;
  const fresh: TrajectoryRecord[] = [];
  const stale: Record<string, number> = {};
  for (const s of scores.values()) {
    const version = s.policyVersion;
    const age = want.fromVersion - version;
    // Never from a version the update has not reached, nor scored under another version than sampled.
    if (age < 0 || (bound === 0 && age > 0) || tokens.get(s.sampleId)!.policyVersion !== version) {
      return {
        ok: false,
        retryable: false,
        type: 'OffPolicySample',
        message: `${where}: sample ${s.sampleId} came from version ${version}, the update starts from ${want.fromVersion}` + (bound > 0 ? ` (rollout.max_staleness ${bound})` : ''),
      };
    }
    if (age > bound) stale[s.sampleId] = version;
    else fresh.push(s);
  }
  return { ok: true, scores: fresh, tokens, stale, cut };
}

/**
 * The share of replica `rank` of `world` in a data-parallel update: whole groups (a group's samples
 * share their prompt's forward pass), dealt largest first to the replica with the fewest tokens so
 * far (ties to the lowest rank), so that the replicas finish their shares at about the same time.
 * Every replica computes the same deal from the same samples.
 */
export function replicaShare<T extends { groupKey: string; sampleId: string }>(samples: T[], tokensOf: (s: T) => number, rank: number, world: number): T[] {
  const groups = new Map<string, T[]>();
  for (const s of [...samples].sort((a, b) => (a.sampleId < b.sampleId ? -1 : 1))) {
    groups.set(s.groupKey, [...(groups.get(s.groupKey) ?? []), s]);
  }
  const size = (g: T[]) => g.reduce((n, s) => n + tokensOf(s), 0);
  const ordered = [...groups.entries()].sort(([ka, a], [kb, b]) => size(b) - size(a) || (ka < kb ? -1 : 1));
  const load = new Array<number>(world).fill(0);
  const mine: T[] = [];
  for (const [, g] of ordered) {
    const to = load.indexOf(Math.min(...load));
    load[to] += size(g);
    if (to === rank) mine.push(...g);
  }
  return mine;
}
