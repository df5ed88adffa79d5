// A training run: validate the config, then for each iteration run its planned episodes
// (planIteration: one per problem under at_grpo, K per problem under grpo) as child workflows (at most episode_window at once), then one update per trainable policy on
// that policy's worker. Continues as new when Temporal suggests it, carrying only RunState.
import { ApplicationFailure, continueAsNew, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CpuActivities } from '../activities/index.js';
import { policiesOf, trainable } from '../configs/policies.js';
import { formatIssues, parseRunConfig } from '../configs/schema.js';
import { planIteration } from '../domain/atgrpo.js';
import { envelopes, runStream, type TandemEvent } from '../domain/events.js';
import { episode, mean, policyActivities, type EpisodeSummary } from './episode.js';
import { progressQuery, type IterationSummary, type RunProgress } from './messages.js';
import { policyRef } from './policyRef.js';

export interface TrainingRunInput {
  /** The run config as written (YAML turned into JSON); validated here with the same schema as the CLI. */
  config: unknown;
}

/** What a run carries across continue-as-new: small by construction. */
export interface RunState {
  iteration: number;
  versions: Record<string, number>;
  /** Next position in the run's event stream. */
  eventPosition: number;
  updatesApplied: number;
  lastCheckpoint: string | null;
  recent: IterationSummary[];
}

const RECENT_ITERATIONS = 20;

const cpu = proxyActivities<CpuActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
});

export async function trainingRun(input: TrainingRunInput, carried?: RunState): Promise<RunProgress> {
  const parsed = parseRunConfig(input?.config);
  if (!parsed.ok) {
    throw ApplicationFailure.nonRetryable(`invalid run config:\n${formatIssues(parsed.issues)}`, 'InvalidConfig', parsed.issues);
  }
  const cfg = parsed.config;
  const runId = workflowInfo().workflowId;
  const policies = trainable(policiesOf(cfg));
  const total = cfg.training.total_training_steps;
  const batch = cfg.training.train_batch_size;
  const plan = (it: number) => planIteration(cfg.algorithm, cfg.training.seed, it, batch, cfg.training.train_sample_num);
  const ref = (spec: (typeof policies)[number]) => policyRef(runId, spec, cfg);

  const state: RunState = carried ?? { iteration: 0, versions: {}, eventPosition: 0, updatesApplied: 0, lastCheckpoint: null, recent: [] };
  const progress: RunProgress = {
    runId,
    status: 'running',
    iteration: state.iteration,
    totalIterations: total,
    episodesDone: 0,
    episodesPerIteration: plan(0).length,
    versions: state.versions,
    updatesApplied: state.updatesApplied,
    lastCheckpoint: state.lastCheckpoint,
    recent: state.recent,
  };
  setHandler(progressQuery, () => progress);

  const emit = async (...events: TandemEvent[]) => {
    await cpu.publishEvents(envelopes(runStream(runId), state.eventPosition, events));
    state.eventPosition += events.length;
  };

  if (!carried) {
    // Loading each policy first makes a bad model path fail the run at once, with its reason.
    for (const p of policies) state.versions[p.name] = await policyActivities(p.taskQueue).policyVersion(ref(p));
    await emit({ type: 'RunStarted', runId, config: cfg, totalIterations: total });
  }

  while (state.iteration < total) {
    const it = state.iteration;
    progress.iteration = it;
    progress.episodesDone = 0;
    progress.status = 'running';
    const planned = plan(it);
    const summaries = await inWindow(planned.length, cfg.rollout.episode_window, async (j) => {
      const { problemSeed, candidates } = planned[j];
      const summary = await executeChild(episode, {
        workflowId: `${runId}/it${it}/ep${j}`,
        args: [
          {
            runId,
            iteration: it,
            episodeId: `${runId}/it${it}/ep${j}`,
            problemSeed,
            candidates,
            config: cfg,
            versions: { ...state.versions },
          },
        ],
      });
      progress.episodesDone++;
      return summary;
    });

    progress.status = 'updating';
    const updates: IterationSummary['updates'] = {};
    const updateEvents: TandemEvent[] = [];
    for (const p of policies) {
      const expectedSamples = summaries.reduce((n, s) => n + (s.samplesByPolicy[p.name] ?? 0), 0);
      const upd = await policyActivities(p.taskQueue).updatePolicy({
        policy: ref(p),
        iteration: it,
        fromVersion: state.versions[p.name],
        expectedSamples,
        update: cfg.update,
      });
      state.versions[p.name] = upd.toVersion;
      state.updatesApplied++;
      state.lastCheckpoint = upd.checkpoint;
      updates[p.name] = { toVersion: upd.toVersion, loss: upd.metrics.loss, samples: upd.samples, groups: upd.groups };
      updateEvents.push(
        { type: 'UpdateApplied', runId, iteration: it, policy: p.name, fromVersion: upd.fromVersion, toVersion: upd.toVersion, samples: upd.samples, groups: upd.groups, replayed: upd.replayed, metrics: upd.metrics },
        { type: 'CheckpointSaved', runId, iteration: it, policy: p.name, version: upd.toVersion, path: upd.checkpoint },
      );
    }

    const summary = summarise(it, summaries, updates);
    await emit(...updateEvents, {
      type: 'IterationFinished',
      runId,
      iteration: it,
      episodes: summary.episodes,
      successRate: summary.successRate,
      rewardByAgent: summary.rewardByAgent,
    });
    state.recent = [...state.recent, summary].slice(-RECENT_ITERATIONS);
    state.iteration = it + 1;
    Object.assign(progress, { recent: state.recent, updatesApplied: state.updatesApplied, lastCheckpoint: state.lastCheckpoint });

    if (state.iteration < total && workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof trainingRun>(input, state);
    }
  }

  await emit({ type: 'RunFinished', runId, iterations: total, reason: 'completed' });
  Object.assign(progress, { status: 'completed', iteration: total });
  return progress;
}

function summarise(iteration: number, episodes: EpisodeSummary[], updates: IterationSummary['updates']): IterationSummary {
  const agents = [...new Set(episodes.flatMap((e) => Object.keys(e.rewardByAgent)))];
  return {
    iteration,
    episodes: episodes.length,
    successRate: mean(episodes.map((e) => (e.success ? 1 : 0))),
    rewardByAgent: Object.fromEntries(agents.map((a) => [a, mean(episodes.filter((e) => a in e.rewardByAgent).map((e) => e.rewardByAgent[a]))])),
    updates,
  };
}

/** Runs fn(0..n-1) with at most `window` in flight; results in index order. */
async function inWindow<T>(n: number, window: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, n) }, lane));
  return results;
}
