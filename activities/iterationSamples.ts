// Which records one update may use: the on-policy filter of updatePolicy, as a pure function.
// Only this (run, policy, iteration) counts; each sample id once (a retried publish repeats
// records); rollouts that were never scored (a retried agent turn's first attempt) are left
// out by the join; and every sample must come from the version the update starts from.
import { TOPICS } from '../infra/settings.js';
import { rolloutOf, type RolloutRecord, type TrajectoryRecord } from './records.js';

export interface IterationWanted {
  runId: string;
  policy: string;
  iteration: number;
  fromVersion: number;
  /** How many scored samples the iteration's episodes published for this policy. */
  expected: number;
}

export type IterationSamples =
  | { ok: true; scores: TrajectoryRecord[]; tokens: Map<string, RolloutRecord> }
  /** retryable: the iteration is not all in Kafka yet; otherwise the records can never make a valid update. */
  | { ok: false; retryable: boolean; type: 'IncompleteIteration' | 'MissingRollout' | 'OffPolicySample'; message: string };

export function selectIterationSamples(records: { topic: string; value: string }[], want: IterationWanted): IterationSamples {
  const scores = new Map<string, TrajectoryRecord>();
  const tokens = new Map<string, RolloutRecord>();
  for (const { topic, value } of records) {
    // Other runs' and policies' records are skipped before their token arrays are unpacked.
    const r = JSON.parse(value) as Pick<TrajectoryRecord, 'runId' | 'policy' | 'iteration' | 'sampleId'>;
    if (r.runId !== want.runId || r.policy !== want.policy || r.iteration !== want.iteration) continue;
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
  for (const s of scores.values()) {
    if (s.policyVersion !== want.fromVersion || tokens.get(s.sampleId)!.policyVersion !== want.fromVersion) {
      return {
        ok: false,
        retryable: false,
        type: 'OffPolicySample',
        message: `${where}: sample ${s.sampleId} came from version ${s.policyVersion}, the update starts from ${want.fromVersion}`,
      };
    }
  }
  return { ok: true, scores: [...scores.values()], tokens };
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
