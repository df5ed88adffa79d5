// Domain events: what happened in a run, as a discriminated union on `type`.
// They travel through the Kafka events topic and are stored, append-only, by the projector.
// Pure module: workflows import it to build events deterministically.
import type { RunConfig } from '../configs/schema.js';
import type { ChatMessage } from '../envs/types.js';

export interface SampleScore {
  sampleId: string;
  /** Index of the candidate within its group (0..K-1). */
  candidate: number;
  local: number;
  global: number;
  /** local + alpha * global: what the advantage is computed from. */
  reward: number;
  outcome: string;
  /** Audit content (absent on events recorded before it existed): the candidate's response text. */
  text?: string;
  /** Whether the episode would end (`done`) and be solved (`solved`) had it continued from this candidate. */
  done?: boolean;
  solved?: boolean;
}

/** What an evaluation measured (the EvaluationFinished event, and the evaluate workflow's result). */
export interface EvaluationResult {
  evalId: string;
  /** The run whose policies were evaluated (the evaluation's own id when started on demand). */
  runId: string;
  /** Training iterations the policies had completed (0: before training); null on demand. */
  iteration: number | null;
  versions: Record<string, number>;
  episodes: number;
  successRate: number;
  meanTurns: number;
  /** Episodes with a prompt cut to training.max_prompt_length (absent on older events: none counted). */
  truncatedEpisodes?: number;
  /** Mean reward of the chosen candidates per agent, and per agent and turn (null: the agent never acted at that turn). */
  rewardByAgent: Record<string, number>;
  rewardByAgentTurn: Record<string, (number | null)[]>;
}

/** The part of a run's config an episode is played by: enough to re-execute it from its record. */
export interface EpisodeSetup {
  /** The env config the episode was played with (an evaluation's has its held-out dataset). */
  env: RunConfig['env'];
  alpha: number;
  ifGreedy: boolean;
  turnOrder: string[];
}

export function episodeSetup(cfg: RunConfig): EpisodeSetup {
  return { env: cfg.env, alpha: cfg.alpha, ifGreedy: cfg.rollout.if_greedy, turnOrder: cfg.multi_agent_interaction.turn_order };
}

/** One group's scores: events of type TurnGroupScored. */
export type TurnGroupScoredEvent = Extract<TandemEvent, { type: 'TurnGroupScored' }>;

/**
 * How a new version reached a policy's rollout engines: how many hold it, and the seconds it took
 * (by file: the slowest engine's install; by broadcast: the round, on the trainer's engine). `by`
 * (absent on events before broadcasts existed: file); `fallback`: why a broadcast round failed, its
 * version then installed by file.
 */
export interface RolloutSync {
  engines: number;
  seconds: number;
  by?: 'file' | 'broadcast';
  fallback?: string;
}

export type TandemEvent =
  | { type: 'RunStarted'; runId: string; config: unknown; totalIterations: number }
  | {
      type: 'EpisodeStarted';
      runId: string;
      iteration: number;
      episodeId: string;
      problemSeed: number;
      /** eval: an evaluation episode (held-out seed, validation sampling, never trained on). */
      phase: 'train' | 'eval';
      /** Audit content (absent on older events): what re-executing the episode needs. */
      setup?: EpisodeSetup;
    }
  | {
      type: 'TurnGroupScored';
      runId: string;
      iteration: number;
      episodeId: string;
      groupKey: string;
      turn: number;
      agent: string;
      policy: string;
      policyVersion: number;
      samples: SampleScore[];
      /** The candidate the episode continued from. */
      chosen: number;
      /** Audit content (absent on events recorded before it existed): the env state the K candidates acted from (the observation), */
      state?: unknown;
      /** what the agents before this one handed over in the same turn, */
      handoff?: unknown;
      /** and the messages the agent was shown (the same for all K candidates). */
      prompt?: ChatMessage[];
      /**
       * The rendered prompt was longer than training.max_prompt_length and was cut (training.truncation
       * keep_system or left): from `tokens` to `limit`. Absent: it fitted.
       */
      promptTruncated?: { tokens: number; limit: number; truncation: 'keep_system' | 'left'; reason: string };
    }
  | {
      type: 'EpisodeFinished';
      runId: string;
      iteration: number;
      episodeId: string;
      success: boolean;
      turns: number;
      /** Mean reward of the chosen candidates, per agent. */
      rewardByAgent: Record<string, number>;
      /** Audit content: the env state after the last chosen candidate (absent on older events). */
      finalState?: unknown;
      /** Turns whose prompt was cut (their TurnGroupScored events say how); absent: none. */
      promptsTruncated?: number;
    }
  | {
      type: 'UpdateApplied';
      runId: string;
      iteration: number;
      policy: string;
      fromVersion: number;
      toVersion: number;
      samples: number;
      groups: number;
      replayed: boolean;
      metrics: Record<string, number>;
      /** A step over replicas: how many, and the checksum of the weights they all hold after it. */
      replicas?: { count: number; checksum: string };
      /** The weights' dtype, and why auto fell back to float32 (absent on older events). */
      dtype?: string;
      dtypeNote?: string;
      /** Rollout engines (placement.<base>.rollout): how many hold toVersion now, and how it reached them. */
      rolloutSync?: RolloutSync;
    }
  | {
      /** Published by the update itself (not the workflow): which samples one update consumed, with their advantages. */
      type: 'SamplesConsumed';
      runId: string;
      iteration: number;
      policy: string;
      fromVersion: number;
      toVersion: number;
      /** Advantage of each consumed sample, by sample id; null when its zero-variance group was dropped. */
      advantages: Record<string, number | null>;
      /**
       * Samples older than rollout.max_staleness allows (asynchronous training), by sample id ->
       * the version that generated them: consumed by this update, never trained on. Absent: none.
       */
      stale?: Record<string, number>;
    }
  | ({ type: 'EvaluationFinished' } & EvaluationResult)
  | {
      type: 'CheckpointSaved';
      runId: string;
      iteration: number;
      policy: string;
      version: number;
      path: string;
      /** The policy's versions still on disk once this one was written (checkpoints.keep_last set); absent: all. */
      keptVersions?: number[];
    }
  | {
      type: 'IterationFinished';
      runId: string;
      iteration: number;
      episodes: number;
      successRate: number;
      rewardByAgent: Record<string, number>;
      /** Episodes with a prompt cut to training.max_prompt_length (absent on older events). */
      truncatedEpisodes?: number;
    }
  | { type: 'RunFinished'; runId: string; iterations: number; reason: 'completed' | 'stopped' };

/** What goes on the wire: the event plus its identity and place in its stream. */
export interface EventEnvelope {
  /** Deterministic id: a re-delivered or re-published event has the same id. */
  eventId: string;
  /** `run:<runId>`, `episode:<episodeId>`, `update:<runId>/<policy>/v<fromVersion>` or `eval:<evalId>`. */
  stream: string;
  /** Position within the stream, from 0. */
  position: number;
  event: TandemEvent;
}

/** Builds envelopes for one stream, numbering positions from `start`. */
export function envelopes(stream: string, start: number, events: TandemEvent[]): EventEnvelope[] {
  return events.map((event, i) => ({ eventId: `${stream}#${start + i}`, stream, position: start + i, event }));
}

// Texts of the record hold no U+0000: Postgres' text and jsonb cannot store it (error 22P05), and
// an event it refuses would stop the projector on its partition. A model can sample the NUL byte
// and a program can print it, so the sampled text and a program's output are made recordable
// where they enter (activities/agentTurn.ts, activities/sandbox/run.ts): the environment then sees
// the string the record keeps, and an audit replay scores what was scored. The projector applies
// `recordable` to whole events as the last guard (an event from another source, or recorded before).
/** U+0000 shown as U+FFFD (the replacement character). */
export function recordableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** Whether any string in a value (keys too) holds U+0000; allocates nothing. */
function holdsNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) return v.some(holdsNul);
  if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => k.includes('\u0000') || holdsNul(x));
  return false;
}

/**
 * A value with `recordableText` applied to every string in it (keys too); `changed` when one held
 * U+0000. The projector calls it on every event: a value without U+0000 is returned as it is, uncopied.
 */
export function recordable<T>(value: T): { value: T; changed: boolean } {
  if (!holdsNul(value)) return { value, changed: false };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return recordableText(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [recordableText(k), walk(x)]));
    return v;
  };
  return { value: walk(value) as T, changed: true };
}
