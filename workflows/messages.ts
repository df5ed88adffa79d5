// Messages of the trainingRun workflow. (pause/resume/stop signals arrive with lifecycle work.)
import { defineQuery } from '@temporalio/workflow';

export interface IterationSummary {
  iteration: number;
  episodes: number;
  successRate: number;
  /** Mean reward of the chosen candidates per agent. */
  rewardByAgent: Record<string, number>;
  /** Update metrics per policy. */
  updates: Record<string, { toVersion: number; loss: number; samples: number; groups: number }>;
}

export interface RunProgress {
  runId: string;
  status: 'running' | 'updating' | 'completed';
  /** The iteration in progress (0-based); equals totalIterations once done. */
  iteration: number;
  totalIterations: number;
  episodesDone: number;
  episodesPerIteration: number;
  versions: Record<string, number>;
  updatesApplied: number;
  lastCheckpoint: string | null;
  /** The most recent iterations, oldest first. */
  recent: IterationSummary[];
}

export const progressQuery = defineQuery<RunProgress>('progress');
