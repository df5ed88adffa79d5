// A training run: validate the config, then for each iteration run its planned episodes
// (planIteration: one per problem under at_grpo, K per problem under grpo) as child workflows
// (at most episode_window at once), then one update per trainable policy on that policy's
// worker. With val_freq > 0, an evaluation child (evaluate.ts) runs before training, after
// every val_freq-th iteration and after the last. Signals pause, resume and stop it
// (runLifecycle.ts); the progress query shows where it is. Continues as new when Temporal suggests it, carrying only RunState.
// Asynchronous training (rollout.max_staleness N >= 1): an iteration's updates (and its record and
// evaluation) run while the next iterations' episodes play; iteration it's episodes start once the
// iterations before it - N are finished, so every sample is at most N versions older than the
// update that consumes it. Updates stay in iteration order, one after the other. A stop and the end
// first let the updates in flight finish; continue-as-new carries the iterations still finishing
// (their episodes' summaries, the run's state as it was before the first of them began to finish),
// and the new run finishes them again: an update already applied is replayed by the engine
// (idempotent by version), an event already published is stored once (same id). N = 0: each
// iteration's episodes wait for the previous iteration's updates, as before.
import { ApplicationFailure, condition, continueAsNew, executeChild, log, patched, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { policiesOf, trainable, workerQueues } from '../policy/spec.js';
import { checkRunConfig } from '../configs/check.js';
import { formatIssues } from '../configs/schema.js';
import { planIteration } from '../domain/atgrpo.js';
import { envelopes, type TandemEvent } from '../domain/events.js';
import { episodeIdOf, evaluationIdOf, runStream } from '../domain/ids.js';
import { episodeStats, type EpisodeSummary } from '../domain/summaries.js';
import { episode } from './episode.js';
import { evaluate } from './evaluate.js';
import { inWindow } from './inWindow.js';
import { episodeOpener } from './openings.js';
import { progressQuery, type EvaluationPoint, type IterationSummary, type RunProgress } from './messages.js';
import { policyRef } from '../policy/ref.js';
import { proxiesOf } from './proxies.js';
import { syncRollouts, updatePolicyOf } from './updates.js';
import { RunLifecycle, type LifecycleState } from './runLifecycle.js';

export interface TrainingRunInput {
  /** The run config as written (YAML turned into JSON); validated here with the same schema as the CLI. */
  config: unknown;
}

/** An iteration whose episodes are done and whose updates and record are not (asynchronous training). */
export interface UnfinishedIteration {
  iteration: number;
  summaries: EpisodeSummary[];
  /** When its episodes began (Date.now() in the workflow): its duration is read when it is finished. */
  startedAt: number;
}

/** What a run carries across continue-as-new: small by construction. */
export interface RunState {
  iteration: number;
  versions: Record<string, number>;
  /** Next position in the run's event stream. */
  eventPosition: number;
  updatesApplied: number;
  /** Response tokens the updates trained on, over the whole run; absent in state carried by runs started before the count existed. */
  tokensTrained?: number;
  lastCheckpoint: string | null;
  recent: IterationSummary[];
  /** Absent in state carried by runs started before evaluations existed. */
  evaluations?: EvaluationPoint[];
  lifecycle: LifecycleState;
  /** Asynchronous training: the iterations still finishing when the run continued as new, in order
   * (the state above is the run's before the first of them began to finish); absent: none. */
  unfinished?: UnfinishedIteration[];
}

/** What finishing an iteration changes in the run's state: kept as it was when it began, to be carried. */
type Finishable = Pick<RunState, 'iteration' | 'versions' | 'eventPosition' | 'updatesApplied' | 'tokensTrained' | 'lastCheckpoint' | 'recent' | 'evaluations'>;

const RECENT_ITERATIONS = 20;

export async function trainingRun(input: TrainingRunInput, carried?: RunState): Promise<RunProgress> {
  const state: RunState = carried ?? {
    iteration: 0,
    versions: {},
    eventPosition: 0,
    updatesApplied: 0,
    tokensTrained: 0,
    lastCheckpoint: null,
    recent: [],
    evaluations: [],
    lifecycle: { pausedSince: null, stopRequested: false },
  };
  state.evaluations ??= [];
  const carriedUnfinished = state.unfinished ?? [];
  delete state.unfinished;
  // Handlers first, so that no signal or query finds the run without them.
  const life = new RunLifecycle(state.lifecycle);
  const runId = workflowInfo().workflowId;
  let phase: 'running' | 'updating' | 'evaluating' = 'running';
  let ended: 'completed' | 'stopped' | null = null;
  let evaluating = false; // an evaluation due or in flight (continue-as-new waits for it)
  // The episode counters of the iteration in progress; the rest of what the query shows is read
  // from the run's state when asked, so that the figures it shows are always of one moment.
  const episodes = { totalIterations: 0, episodesDone: 0, episodesInFlight: 0, episodesPerIteration: 0 };
  // The updates in flight (policy -> from version), and (asynchronous training) the iteration whose episodes play.
  const training: Record<string, number> = {};
  let playing: number | null = null;
  const view = (status: RunProgress['status']): RunProgress => ({
    runId,
    status,
    iteration: state.iteration,
    ...episodes,
    versions: state.versions,
    training: { ...training },
    ...(staleness > 0 && playing !== null ? { playingIteration: playing } : {}),
    updatesApplied: state.updatesApplied,
    ...(state.tokensTrained !== undefined ? { tokensTrained: state.tokensTrained } : {}),
    lastCheckpoint: state.lastCheckpoint,
    recent: state.recent,
    evaluations: state.evaluations!,
    iterationStartedAt: life.iterationStartedAt,
    iterationPausedMs: life.iterationPausedMs,
    pausedSince: life.pausedSince,
  });
  setHandler(progressQuery, () => view(ended ?? (life.stopRequested ? 'stopping' : life.paused ? 'paused' : phase)));

  const parsed = checkRunConfig(input?.config);
  if (!parsed.ok) {
    throw ApplicationFailure.nonRetryable(`invalid run config:\n${formatIssues(parsed.issues)}`, 'InvalidConfig', parsed.issues);
  }
  const cfg = parsed.config;
  const proxies = proxiesOf(cfg.recovery);
  const { cpu, policyWorker } = proxies;
  const policies = trainable(policiesOf(cfg));
  const total = cfg.training.total_training_steps;
  const batch = cfg.training.train_batch_size;
  const plan = (it: number) => planIteration(cfg.algorithm, cfg.training.seed, it, batch, cfg.training.train_sample_num);
  const ref = (spec: (typeof policies)[number]) => policyRef(runId, spec, cfg);
  episodes.totalIterations = total;
  episodes.episodesPerIteration = plan(0).length;

  const emit = async (...events: TandemEvent[]) => {
    await cpu.publishEvents(envelopes(runStream(runId), state.eventPosition, events));
    state.eventPosition += events.length;
  };

  /** The iteration's episodes as child workflows, opened here (openings.ts); none starts while the run is paused. */
  const runEpisodes = (it: number): Promise<EpisodeSummary[]> => {
    episodes.episodesDone = 0;
    const planned = plan(it);
    const open = episodeOpener(cfg.env, proxies.localCpu);
    return inWindow(planned.length, cfg.rollout.episode_window ?? planned.length, async (j) => {
      await life.untilResumed();
      const { problemSeed, candidates } = planned[j];
      const episodeId = episodeIdOf(runId, it, j);
      const input = await open({ runId, iteration: it, episodeId, problemSeed, candidates, config: cfg, versions: { ...state.versions } });
      episodes.episodesInFlight++;
      const summary = await executeChild(episode, { workflowId: episodeId, args: [input] });
      episodes.episodesInFlight--;
      episodes.episodesDone++;
      return summary;
    });
  };

  /** One update per trainable policy, from this iteration's samples; none starts while paused. */
  const applyUpdates = async (it: number, summaries: EpisodeSummary[]) => {
    const updates: IterationSummary['updates'] = {};
    const events: TandemEvent[] = [];
    for (const p of policies) {
      await life.untilResumed();
      const expectedSamples = summaries.reduce((n, s) => n + (s.samplesByPolicy[p.name] ?? 0), 0);
      training[p.name] = state.versions[p.name];
      const upd = await updatePolicyOf(p, {
        policy: ref(p),
        iteration: it,
        fromVersion: state.versions[p.name],
        expectedSamples,
        update: cfg.update,
        checkpoints: cfg.checkpoints,
        ...(staleness > 0 ? { maxStaleness: staleness } : {}),
      }, proxies);
      // No turn asks for the new version before every rollout engine holds it.
      const rolloutSync = await syncRollouts(p, ref(p), upd.toVersion, proxies);
      delete training[p.name];
      state.versions[p.name] = upd.toVersion;
      state.updatesApplied++;
      if (state.tokensTrained !== undefined) state.tokensTrained += upd.metrics.tokens ?? 0;
      state.lastCheckpoint = upd.checkpoint;
      const stale = upd.metrics.staleness_max === undefined ? {} : { staleness: { mean: upd.metrics.staleness_mean, max: upd.metrics.staleness_max } };
      const precision = { ...(upd.dtype ? { dtype: upd.dtype } : {}), ...(upd.dtypeNote ? { dtypeNote: upd.dtypeNote } : {}) };
      const zero = upd.metrics.zero_advantage_samples === undefined ? {} : { zeroAdvantage: upd.metrics.zero_advantage_samples };
      const entropy = upd.metrics.entropy === undefined ? {} : { entropy: upd.metrics.entropy };
      updates[p.name] = { toVersion: upd.toVersion, loss: upd.metrics.loss, samples: upd.samples, groups: upd.groups, tokens: upd.metrics.tokens, ...zero, ...entropy, ...stale, ...precision, ...(rolloutSync ? { rolloutSync } : {}) };
      events.push(
        { type: 'UpdateApplied', runId, iteration: it, policy: p.name, fromVersion: upd.fromVersion, toVersion: upd.toVersion, samples: upd.samples, groups: upd.groups, replayed: upd.replayed, metrics: upd.metrics, ...(upd.replicas ? { replicas: upd.replicas } : {}), ...precision, ...(rolloutSync ? { rolloutSync } : {}) },
        { type: 'CheckpointSaved', runId, iteration: it, policy: p.name, version: upd.toVersion, path: upd.checkpoint, ...(upd.keptVersions ? { keptVersions: upd.keptVersions } : {}) },
      );
    }
    return { updates, events };
  };

  /** The policies as they are after `done` iterations, on held-out problems. */
  const evaluateNow = async (done: number) => {
    // Due from here: a continue-as-new waits for it, also while a pause holds it back (the new run
    // would not know it was due). patched: runs recorded before replay as they ran.
    if (patched('evaluation-due-through-a-pause')) evaluating = true;
    // An evaluation plays episodes too: none starts while paused (one already running finishes).
    await life.untilResumed();
    phase = 'evaluating';
    evaluating = true;
    const result = await executeChild(evaluate, {
      workflowId: evaluationIdOf(runId, done),
      args: [{ config: cfg, runId, iteration: done, versions: { ...state.versions } }],
    }).finally(() => (evaluating = false));
    const point = { iteration: done, successRate: result.successRate, rewardByAgent: result.rewardByAgent };
    state.evaluations = [...state.evaluations!, point].slice(-RECENT_ITERATIONS);
    phase = 'running';
  };
  const valFreq = cfg.training.val_freq;
  const staleness = cfg.rollout.max_staleness;

  /**
   * What ends iteration `it` once its episodes are done: its updates, its record, and (val_freq)
   * the evaluation after it. `durationMs`: the iteration's time, read when its updates are done;
   * `recorded`: called once its record is published, before the evaluation.
   */
  const finishIteration = async (it: number, summaries: EpisodeSummary[], durationMs: () => number, recorded = () => {}) => {
    if (staleness === 0) phase = 'updating';
    const { updates, events } = await applyUpdates(it, summaries);
    const summary: IterationSummary = { iteration: it, episodes: summaries.length, ...episodeStats(summaries), updates, durationMs: durationMs() };
    await emit(...events, {
      type: 'IterationFinished',
      runId,
      iteration: it,
      episodes: summary.episodes,
      successRate: summary.successRate,
      rewardByAgent: summary.rewardByAgent,
      truncatedEpisodes: summary.truncatedEpisodes,
    });
    state.recent = [...state.recent, summary].slice(-RECENT_ITERATIONS);
    state.iteration = it + 1;
    if (staleness === 0) {
      phase = 'running';
      episodes.episodesDone = 0;
    }
    recorded();
    if (valFreq > 0 && (state.iteration % valFreq === 0 || state.iteration === total)) await evaluateNow(state.iteration);
  };
  // Asynchronous training: the iterations being finished, in order, and the first failure among them;
  // those whose record is not published yet (the first of them finishing, from the state in `before`).
  let finishing: Promise<void> = Promise.resolve();
  const failures: unknown[] = [];
  const unfinished: UnfinishedIteration[] = [];
  let before: Finishable | null = null;
  const finishLater = (u: UnfinishedIteration) => {
    unfinished.push(u);
    finishing = finishing.then(() => {
      const { iteration, versions, eventPosition, updatesApplied, tokensTrained, lastCheckpoint, recent, evaluations } = state;
      before = { iteration, versions: { ...versions }, eventPosition, updatesApplied, tokensTrained, lastCheckpoint, recent, evaluations };
      return finishIteration(u.iteration, u.summaries, () => Date.now() - u.startedAt, () => {
        unfinished.shift();
        before = null;
      });
    });
    finishing.catch((error) => failures.push(error));
  };
  const drain = async () => {
    await finishing.catch(() => undefined);
    if (failures.length > 0) throw failures[0];
  };

  // The run's update groups in Kafka (activities/updateGroups.ts). patched: runs recorded before
  // them replay without (their first update reads the topics from the start, as it did then).
  const groupsOf = { runId, policies: policies.map((p) => ({ name: p.name, replicas: p.replicas?.count ?? 1 })) };
  if (!carried) {
    // Loading each policy first makes a bad model path fail the run at once, with its reason.
    for (const p of policies) {
      state.versions[p.name] = await policyWorker(p.taskQueue).policyVersion(ref(p));
      // Its rollout engines load it too (a bad placement fails here), at the trainer's version.
      await syncRollouts(p, ref(p), state.versions[p.name], proxies, true);
    }
    // Before any episode publishes: the first update reads from here.
    if (policies.length > 0 && patched('update-groups-start-with-the-run')) await cpu.startUpdateGroups(groupsOf);
    await emit({ type: 'RunStarted', runId, config: cfg, totalIterations: total });
    if (valFreq > 0) await evaluateNow(0);
  }

  // Iterations a run that continued as new left finishing: finished again here (the updates already
  // applied are replayed, the events already published stored once), while the next ones play.
  for (const u of carriedUnfinished) finishLater(u);
  // The next iteration whose episodes start (ahead of state.iteration, the finished ones, while updates are in flight).
  let next = state.iteration + carriedUnfinished.length;
  while (next < total) {
    // Asynchronous training: this iteration's episodes wait for the iterations before it - N.
    if (staleness > 0) {
      await condition(() => failures.length > 0 || state.iteration >= next - staleness);
      if (failures.length > 0) throw failures[0];
    }
    await life.untilResumed();
    // A stop between iterations ends the run before the next one starts.
    if (life.stopRequested) break;
    const it = next++;
    life.startIteration();
    const startedAt = Date.now();
    playing = it;
    const summaries = await runEpisodes(it);
    playing = null;
    if (staleness === 0) {
      await finishIteration(it, summaries, () => life.activeMs());
    } else {
      finishLater({ iteration: it, summaries, startedAt });
      // End this workflow task here, so that the update's activity is scheduled now: the next
      // iteration's opening runs local activities, which would hold the task (and the update) open
      // until they finish (bench/notes/async-history.md, "synchronous against max_staleness 1": about 1 s per iteration).
      await sleep(1);
    }

    if (life.stopRequested) break;
    if (next < total && workflowInfo().continueAsNewSuggested) {
      if (staleness > 0 && patched('continue-as-new-carries-unfinished-iterations')) {
        // The iterations still finishing go with the run, from the state before the first of them
        // began to; an evaluation due or in flight (a child, which the new run could not start again
        // while it is being ended) finishes first.
        await condition(() => !evaluating || failures.length > 0);
        if (failures.length > 0) throw failures[0];
        await continueAsNew<typeof trainingRun>(input, { ...state, ...(before ?? {}), unfinished: [...unfinished], lifecycle: life.carry() });
      }
      await drain();
      await continueAsNew<typeof trainingRun>(input, { ...state, lifecycle: life.carry() });
    }
  }
  await drain();

  // A stop that came during the last iteration changes nothing: the run did all it was asked.
  const reason = state.iteration < total ? 'stopped' : 'completed';
  await emit({ type: 'RunFinished', runId, iterations: state.iteration, reason });
  if (policies.length > 0 && patched('update-groups-released-at-end')) {
    // The run's work is done whatever Kafka says: groups left behind are shown by `tandem kafka groups`
    // and deleted by `tandem kafka release`.
    await cpu.releaseUpdateGroups({ ...groupsOf, iterations: state.iteration }).catch((err) => log.warn('update groups not deleted', { error: String(err) }));
  }
  // The run's weights leave the engines; its checkpoints stay (an evaluation reloads the newest).
  // patched: runs recorded before this step existed replay without it.
  if (patched('release-policies-at-end')) {
    for (const p of policies) for (const q of workerQueues(p)) await policyWorker(q).releasePolicy(ref(p));
  }
  ended = reason;
  return { ...view(reason), pausedSince: null };
}
