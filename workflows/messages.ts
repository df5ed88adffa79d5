// Messages of the trainingRun workflow: the lifecycle signals and the progress query.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { RolloutSync } from '../domain/events.js';

/** No new episode or update starts until `resume`; those in flight finish. */
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
/**
 * Ends the run cleanly: the current iteration's episodes, its update and checkpoint finish,
 * then the run ends with RunFinished reason 'stopped'. Stop lifts a pause. Between iterations
 * (no episode of the next one started yet), the run ends at once.
 */
export const stopSignal = defineSignal('stop');

export interface IterationSummary {
  iteration: number;
  episodes: number;
  successRate: number;
  /** Mean reward of the chosen candidates per agent. */
  rewardByAgent: Record<string, number>;
  /**
   * Update metrics per policy (tokens: response tokens trained on; absent in older runs; staleness:
   * under asynchronous training, the mean and largest age in versions of the samples it trained on;
   * dtype: the weights' dtype, with dtypeNote when placement.<base>.dtype auto fell back to float32;
   * rolloutSync: with rollout engines, how many hold the new version, how it reached them and in how long;
   * zeroAdvantage: of `samples`, those of advantage 0, whose group's scores were all equal; entropy:
   * the policy's entropy, nats a response token, the update's mean; both absent in older runs).
   */
  updates: Record<
    string,
    {
      toVersion: number; loss: number; samples: number; groups: number; tokens?: number; zeroAdvantage?: number; entropy?: number; staleness?: { mean: number; max: number }; dtype?: string; dtypeNote?: string;
      rolloutSync?: RolloutSync;
    }
  >;
  /** Workflow time from the iteration's start to its end, minus the time it spent paused. */
  durationMs: number;
  /** Episodes with a prompt cut to training.max_prompt_length (absent in older runs). */
  truncatedEpisodes?: number;
}

/** One evaluation of the run's policies on held-out problems (workflows/evaluate.ts). */
export interface EvaluationPoint {
  /** Iterations done when it ran (0: before training). */
  iteration: number;
  successRate: number;
  rewardByAgent: Record<string, number>;
}

export type RunStatus = 'running' | 'updating' | 'evaluating' | 'paused' | 'stopping' | 'completed' | 'stopped';

export interface RunProgress {
  runId: string;
  /** 'paused' and 'stopping' take precedence over what the run is doing ('running' episodes, 'updating', 'evaluating'). */
  status: RunStatus;
  /** The iteration in progress (0-based); equals the iterations done once the run has ended. */
  iteration: number;
  totalIterations: number;
  /** Episodes of the current iteration that have finished. */
  episodesDone: number;
  /** Episodes of the current iteration started and not finished (they finish during a pause). */
  episodesInFlight: number;
  episodesPerIteration: number;
  /** Each policy's newest version: the one new episodes generate with. */
  versions: Record<string, number>;
  /** The version each policy's update in flight starts from (absent in older runs; empty: none in flight). */
  training?: Record<string, number>;
  /**
   * Asynchronous training (rollout.max_staleness > 0): the iteration whose episodes play, which the
   * episode counters are of, while `iteration` counts the iterations finished (updates included).
   */
  playingIteration?: number;
  updatesApplied: number;
  /** Response tokens the run's updates have trained on, all iterations (absent in runs carried from before the count existed). */
  tokensTrained?: number;
  lastCheckpoint: string | null;
  /** The most recent iterations, oldest first. */
  recent: IterationSummary[];
  /** The most recent evaluations, oldest first. */
  evaluations: EvaluationPoint[];
  /** Workflow time (epoch ms) at which the current iteration started. */
  iterationStartedAt: number;
  /** Time the current iteration has spent paused, not counting a pause still going on. */
  iterationPausedMs: number;
  /** Workflow time (epoch ms) since which the run is paused, or null. */
  pausedSince: number | null;
}

export const progressQuery = defineQuery<RunProgress>('progress');
