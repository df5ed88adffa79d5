// `tandem episodes verify`: checks an episode against its record. Two independent checks:
//   1. the hash chain of every stream the episode's audit rests on (the episode's own, its run's,
//      and the updates that consumed its samples): a changed or deleted event row breaks it;
//   2. re-execution (replay.ts): the environment, reset from the recorded seed and driven by the
//      recorded actions, must reproduce every recorded state, reward and termination.
import { asc, eq, like } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { createEnvActivities } from '../../activities/env.js';
import { parseRunConfig, formatIssues, type RunConfig } from '../../configs/schema.js';
import { episodeStream, runStream, updateStream, type TandemEvent } from '../../domain/events.js';
import { events, streams } from '../../infra/db/schema.js';
import { checkChain } from '../projector/hashChain.js';
import { episodeRecord, replayEpisode, type EnvFunctions } from './replay.js';

export interface EpisodeVerdict {
  episodeId: string;
  /** Every problem found, the first re-execution difference first; empty when the episode verifies. */
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
  const broken = checkChain(stream, rows, head);
  return { events: rows.map((r) => r.data as TandemEvent), chainBreak: broken?.message ?? null };
}

/** The run's config, from its RunStarted event. */
function runConfigOf(run: StoredStream, runId: string): RunConfig | string {
  const started = run.events.find((e) => e.type === 'RunStarted');
  if (!started) return `run ${runId}: no RunStarted event in the record`;
  const parsed = parseRunConfig(started.config);
  return parsed.ok ? parsed.config : `run ${runId}: the recorded config no longer parses:\n${formatIssues(parsed.issues)}`;
}

/** The env activities exactly as the CPU worker registers them. */
const defaultEnv = (): EnvFunctions => createEnvActivities();

export async function verifyEpisode(db: NodePgDatabase, episodeId: string, fns: EnvFunctions = defaultEnv(), runCache = new Map<string, StoredStream>()): Promise<EpisodeVerdict> {
  const problems: string[] = [];
  const ep = await loadStream(db, episodeStream(episodeId));
  if (ep.events.length === 0 && ep.chainBreak?.includes('no recorded stream head')) {
    return { episodeId, problems: [`episode ${episodeId} is not in the record`], steps: 0 };
  }
  if (ep.chainBreak) problems.push(`hash chain: ${ep.chainBreak}`);
  const record = episodeRecord(ep.events);
  if (typeof record === 'string') return { episodeId, problems: [...problems, `record: ${record}`], steps: 0 };

  const runId = record.started.runId;
  let run = runCache.get(runId);
  if (!run) runCache.set(runId, (run = await loadStream(db, runStream(runId))));
  if (run.chainBreak) problems.push(`hash chain: ${run.chainBreak}`);
  const updateStreams = new Set(record.groups.map((g) => updateStream(runId, g.policy, g.policyVersion)));
  for (const stream of updateStreams) {
    const u = await loadStream(db, stream);
    // Scripted players' samples, and an iteration not yet updated, have no update stream: nothing to check.
    if (u.events.length > 0 && u.chainBreak) problems.push(`hash chain: ${u.chainBreak}`);
  }

  const cfg = runConfigOf(run, runId);
  if (typeof cfg === 'string') return { episodeId, problems: [...problems, cfg], steps: 0 };
  const diff = await replayEpisode(record, cfg, fns);
  if (diff) problems.unshift(`re-execution: ${diff.message}`);
  return { episodeId, problems, steps: diff?.step ?? record.groups.length };
}

/** The episodes of a run in the record: every episode stream named after the run (`<run>/it<i>/ep<j>`). */
export async function episodesOfRun(db: NodePgDatabase, runId: string): Promise<string[]> {
  const escaped = runId.replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await db.select({ stream: streams.stream }).from(streams).where(like(streams.stream, `${episodeStream(escaped)}/it%`)).orderBy(asc(streams.stream));
  return rows.map((r) => r.stream.slice('episode:'.length));
}

export interface RunVerdict {
  episodes: EpisodeVerdict[];
  /** Problems of the run as a whole: its own chain, and episodes missing from the record. */
  problems: string[];
}

export async function verifyRun(db: NodePgDatabase, runId: string, onEpisode: (v: EpisodeVerdict) => void, fns: EnvFunctions = defaultEnv()): Promise<RunVerdict> {
  const run = await loadStream(db, runStream(runId));
  if (run.events.length === 0) return { episodes: [], problems: [`run ${runId} is not in the record`] };
  const problems = run.chainBreak ? [`hash chain: ${run.chainBreak}`] : [];
  const ids = await episodesOfRun(db, runId);
  // A whole episode stream deleted (rows and head) leaves the iteration short of the episodes it reported.
  for (const e of run.events) {
    if (e.type !== 'IterationFinished') continue;
    const found = ids.filter((id) => id.startsWith(`${runId}/it${e.iteration}/`)).length;
    if (found !== e.episodes) problems.push(`iteration ${e.iteration}: ${e.episodes} episodes reported, ${found} in the record`);
  }
  const cache = new Map([[runId, run]]);
  const episodes: EpisodeVerdict[] = [];
  for (const id of ids) {
    const v = await verifyEpisode(db, id, fns, cache);
    onEpisode(v);
    episodes.push(v);
  }
  return { episodes, problems };
}
