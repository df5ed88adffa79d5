// `tandem episodes verify`: checks an episode against its record.
//   1. The hash chain of every stream the episode's audit rests on: the episode's own, its
//      run's, and the updates that consumed its samples. A changed or deleted event row breaks it.
//   2. Re-execution (replay.ts): the environment, reset from the recorded seed and driven by the
//      recorded actions, must reproduce every recorded state, reward and termination.
//   3. The advantages the consuming update recorded, recomputed from the recorded rewards
//      (advantages.ts), and the age of every sample it trained on (the update's from-version minus
//      the generating version) within [0, rollout.max_staleness].
import { asc, eq, like } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { createEnvActivities } from '../../activities/env.js';
import { checkRunConfig } from '../../configs/check.js';
import { formatIssues, type RunConfig } from '../../configs/schema.js';
import { episodeSetup, type TandemEvent } from '../../domain/events.js';
import { episodeOfStream, episodeStream, iterationEpisodesPrefix, runStream, updateStream } from '../../domain/ids.js';
import { readEvent } from '../../domain/upcast.js';
import { events, streams } from '../../infra/db/schema.js';
import { checkChain } from '../eventStore/hashChain.js';
import { expectedAdvantages, likePrefix, sameAdvantage } from './advantages.js';
import { episodeRecord, replayEpisode, type EnvFunctions, type EpisodeRecord } from './replay.js';

export interface EpisodeVerdict {
  episodeId: string;
  /** Every problem found, the re-execution's first difference first; empty when the episode verifies. */
  problems: string[];
  /** Groups re-executed. */
  steps: number;
}

interface StoredStream {
  events: TandemEvent[];
  /** The first break of its hash chain, or null. */
  chainBreak: string | null;
}

async function loadStream(db: NodePgDatabase, stream: string): Promise<StoredStream> {
  const rows = await db.select().from(events).where(eq(events.stream, stream)).orderBy(asc(events.position));
  const [head] = await db.select().from(streams).where(eq(streams.stream, stream));
  if (rows.length === 0 && !head) return { events: [], chainBreak: null };
  const broken = checkChain(stream, rows, head);
  return { events: rows.map((r) => readEvent(r.data)), chainBreak: broken?.message ?? null };
}

/** The run's config from its RunStarted event; null when the run has none (an on-demand evaluation). */
function runConfigOf(run: StoredStream, runId: string): RunConfig | null | string {
  const started = run.events.find((e) => e.type === 'RunStarted');
  if (!started) return null;
  const parsed = checkRunConfig(started.config);
  return parsed.ok ? parsed.config : `run ${runId}: the recorded config no longer parses:\n${formatIssues(parsed.issues)}`;
}

/** What verifying several episodes of a run shares: the run's stream, the updates' streams and their expected advantages. */
export class VerifyCache {
  readonly streams = new Map<string, Promise<StoredStream>>();
  readonly advantages = new Map<string, Promise<Map<string, number>>>();
  stream(db: NodePgDatabase, name: string): Promise<StoredStream> {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = loadStream(db, name)));
    return s;
  }
}

/** The first sample of the episode whose recorded advantage differs from the recomputed one. */
async function checkAdvantages(db: NodePgDatabase, cfg: RunConfig, record: EpisodeRecord, cache: VerifyCache): Promise<string | null> {
  const runId = record.started.runId;
  const run = await cache.stream(db, runStream(runId));
  for (const [step, g] of record.groups.entries()) {
    const stream = consumingUpdate(run.events, runId, g);
    const consumed = (await cache.stream(db, stream)).events.find((e) => e.type === 'SamplesConsumed');
    if (!consumed || consumed.iteration !== g.iteration) continue; // not (yet) consumed, or an evaluation's samples
    let expected = cache.advantages.get(stream);
    if (!expected) cache.advantages.set(stream, (expected = expectedAdvantages(db, cfg, runId, consumed.iteration, g.policy, Object.keys(consumed.stale ?? {}))));
    const want = await expected;
    const update = `update ${g.policy} v${consumed.fromVersion}->v${consumed.toVersion}`;
    for (const s of g.samples) {
      const at = `step ${step} (turn ${g.turn}, ${g.agent}): candidate ${s.candidate}`;
      const staleFrom = consumed.stale?.[s.sampleId];
      if (staleFrom !== undefined) {
        // Set apart as stale: right only if it is older than the run's bound allows, and from the version the group records.
        const bound = cfg.rollout.max_staleness;
        if (staleFrom !== g.policyVersion || consumed.fromVersion - staleFrom <= bound)
          return `${at} was set apart as stale from v${staleFrom} by ${update}, but it came from v${g.policyVersion} and rollout.max_staleness is ${bound}`;
        continue;
      }
      if (!(s.sampleId in consumed.advantages)) return `${at} is not among the samples of ${update}`;
      // Trained on: its age (versions between the one that generated it and the update's start) within the run's bound.
      const age = consumed.fromVersion - g.policyVersion;
      if (age < 0 || age > cfg.rollout.max_staleness)
        return `${at} came from v${g.policyVersion} and was trained by ${update}: age ${age}, outside [0, ${cfg.rollout.max_staleness}] (rollout.max_staleness)`;
      // null: the update left the sample's group out (the group filter, or zero variance with 'drop'), as groupAdvantages does.
      const recorded = consumed.advantages[s.sampleId];
      const recomputed = want.get(s.sampleId) ?? null;
      const agree = recorded !== null && recomputed !== null ? sameAdvantage(recorded, recomputed) : recorded === recomputed;
      if (!agree) return `${at} advantage differs: recorded ${recorded ?? 'dropped'} (${update}), recomputed ${recomputed ?? 'dropped'}`;
    }
  }
  return null;
}

/**
 * The stream of the update that consumed a group's iteration: the run records it (UpdateApplied,
 * by iteration and policy); before that update is recorded, the one from the group's own version
 * (which it is when rollout.max_staleness is 0).
 */
function consumingUpdate(runEvents: readonly TandemEvent[], runId: string, g: { iteration: number; policy: string; policyVersion: number }): string {
  const applied = runEvents.find((e) => e.type === 'UpdateApplied' && e.iteration === g.iteration && e.policy === g.policy);
  return updateStream(runId, g.policy, applied?.type === 'UpdateApplied' ? applied.fromVersion : g.policyVersion);
}

/** The env activities exactly as the CPU worker registers them. */
const defaultEnv = (): EnvFunctions => createEnvActivities();

export async function verifyEpisode(db: NodePgDatabase, episodeId: string, fns: EnvFunctions = defaultEnv(), cache = new VerifyCache()): Promise<EpisodeVerdict> {
  const ep = await cache.stream(db, episodeStream(episodeId));
  if (ep.events.length === 0 && !ep.chainBreak) return { episodeId, problems: [`episode ${episodeId} is not in the record`], steps: 0 };
  const problems: string[] = [];
  if (ep.chainBreak) problems.push(`hash chain: ${ep.chainBreak}`);
  const record = episodeRecord(ep.events);
  if (typeof record === 'string') return { episodeId, problems: [...problems, `record: ${record}`], steps: 0 };

  const runId = record.started.runId;
  const run = await cache.stream(db, runStream(runId));
  if (run.chainBreak) problems.push(`hash chain: ${run.chainBreak}`);
  for (const stream of new Set(record.groups.map((g) => consumingUpdate(run.events, runId, g)))) {
    // Scripted players' samples, and an iteration not yet updated, have no update stream: nothing to check.
    const u = await cache.stream(db, stream);
    if (u.chainBreak) problems.push(`hash chain: ${u.chainBreak}`);
  }

  const cfg = runConfigOf(run, runId);
  if (typeof cfg === 'string') return { episodeId, problems: [...problems, cfg], steps: 0 };
  // Older episodes do not carry their setup: their run's config does.
  const setup = record.started.setup ?? (cfg ? episodeSetup(cfg) : null);
  if (!setup) return { episodeId, problems: [...problems, `record: neither the episode nor its run ${runId} records the config it was played with`], steps: 0 };
  const diff = await replayEpisode(record, setup, fns);
  if (diff) problems.unshift(`re-execution: ${diff.message}`);
  // Evaluation episodes are never trained on: no update consumed their samples.
  const advantage = cfg && record.started.phase !== 'eval' ? await checkAdvantages(db, cfg, record, cache) : null;
  if (advantage) problems.push(`advantages: ${advantage}`);
  return { episodeId, problems, steps: diff?.step ?? record.groups.length };
}

/** The episodes of a run in the record, evaluations' included: every episode stream named `<run>/…`. */
export async function episodesOfRun(db: NodePgDatabase, runId: string): Promise<string[]> {
  const rows = await db.select({ stream: streams.stream }).from(streams).where(like(streams.stream, likePrefix(`${episodeStream(runId)}/`))).orderBy(asc(streams.stream));
  return rows.map((r) => episodeOfStream(r.stream)!);
}

export interface RunVerdict {
  episodes: EpisodeVerdict[];
  /** Problems of the run as a whole: its own chain, and training episodes missing from the record. */
  problems: string[];
}

export async function verifyRun(db: NodePgDatabase, runId: string, onEpisode: (v: EpisodeVerdict) => void, fns: EnvFunctions = defaultEnv()): Promise<RunVerdict> {
  const cache = new VerifyCache();
  const run = await cache.stream(db, runStream(runId));
  const ids = await episodesOfRun(db, runId);
  if (run.events.length === 0 && ids.length === 0) return { episodes: [], problems: [`run ${runId} is not in the record`] };
  const problems = run.chainBreak ? [`hash chain: ${run.chainBreak}`] : [];
  // A whole episode stream deleted (rows and head) leaves the iteration short of the episodes it reported.
  for (const e of run.events) {
    if (e.type !== 'IterationFinished') continue;
    const found = ids.filter((id) => id.startsWith(iterationEpisodesPrefix(runId, e.iteration))).length;
    if (found !== e.episodes) problems.push(`iteration ${e.iteration}: ${e.episodes} episodes reported, ${found} in the record`);
  }
  const episodes: EpisodeVerdict[] = [];
  for (const id of ids) {
    const v = await verifyEpisode(db, id, fns, cache);
    onEpisode(v);
    episodes.push(v);
  }
  return { episodes, problems };
}
