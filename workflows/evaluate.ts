// An evaluation: every held-out problem (validation seeds; the env's val_dataset when it has
// one) played validate_sample_num times with each agent's val_llm_config, as eval-phase episode
// children that publish nothing for updates. The result is recorded as an EvaluationFinished
// event on the evaluation's own stream. Started by a training run (before training, every
// val_freq iterations, after the last) or on demand by `tandem eval`.
import { ApplicationFailure, executeChild, workflowInfo } from '@temporalio/workflow';
import { policiesOf, rolloutQueues, trainable } from '../policy/spec.js';
import { checkRunConfig } from '../configs/check.js';
import { formatIssues } from '../configs/schema.js';
import { envelopes, type EvaluationResult } from '../domain/events.js';
import { evaluationEpisodeIdOf, evaluationStream } from '../domain/ids.js';
import { summariseEvaluation } from '../domain/summaries.js';
import { heldOutEnv, heldOutSeed } from '../envs/index.js';
import { episode } from './episode.js';
import { inWindow } from './inWindow.js';
import { episodeOpener } from './openings.js';
import { policyRef } from '../policy/ref.js';
import { proxiesOf } from './proxies.js';

export interface EvaluateInput {
  /** The run config (validated here with the same schema as the CLI). */
  config: unknown;
  /** Whose policies are evaluated: a training run's id, or the evaluation's own for `tandem eval`. */
  runId: string;
  /** The training iteration the policies have completed (0: before training); null on demand. */
  iteration: number | null;
  /**
   * Policy versions to sample from. Unset: each policy's current version, loaded on its worker
   * (from checkpointDirs when given, else from the run's checkpoints, else the base model).
   */
  versions?: Record<string, number>;
  /** Per policy name: a checkpoint folder (<dir>/v<N>/...) to load the newest version from. */
  checkpointDirs?: Record<string, string>;
  /** Which held-out problems: the validation seeds (default) or the test seeds (envs/index.ts heldOutSeed). */
  split?: 'validation' | 'test';
  /**
   * Sample episode j with the seeds of `<samplingKey>/ep<j>` instead of its own id, so that
   * evaluations of different runs given the same key draw alike (paired comparisons). Unset: each
   * evaluation its own.
   */
  samplingKey?: string;
  /**
   * Free the policies' engine copies at the end: they were loaded for this evaluation alone (a
   * run that has ended, evaluated afterwards). Default: only for an evaluation on demand (runId is
   * its own id).
   */
  release?: boolean;
}

export async function evaluate(input: EvaluateInput): Promise<EvaluationResult> {
  const parsed = checkRunConfig(input?.config);
  if (!parsed.ok) {
    throw ApplicationFailure.nonRetryable(`invalid run config:\n${formatIssues(parsed.issues)}`, 'InvalidConfig', parsed.issues);
  }
  // Data-backed environments play their held-out problems (val_dataset) when they have some.
  const cfg = { ...parsed.config, env: heldOutEnv(parsed.config.env) };
  const { cpu, localCpu, policyWorker } = proxiesOf(cfg.recovery);
  const evalId = workflowInfo().workflowId;
  const versions = { ...input.versions };
  for (const spec of trainable(policiesOf(cfg))) {
    if (versions[spec.name] !== undefined) continue;
    const ref = policyRef(input.runId, spec, cfg, input.checkpointDirs?.[spec.name]);
    versions[spec.name] = await policyWorker(spec.taskQueue).policyVersion(ref);
  }

  const { val_problems: problems, validate_sample_num: repeats } = cfg.training;
  const open = episodeOpener(cfg.env, localCpu);
  const episodes = await inWindow(problems * repeats, cfg.rollout.episode_window ?? problems * repeats, async (j) => {
    const episodeId = evaluationEpisodeIdOf(evalId, j);
    const opened = await open({
      runId: input.runId,
      iteration: input.iteration ?? 0,
      episodeId,
      problemSeed: heldOutSeed(Math.floor(j / repeats), input.split),
      phase: 'eval',
      candidates: 1,
      config: cfg,
      versions,
      checkpointDirs: input.checkpointDirs,
      ...(input.samplingKey === undefined ? {} : { seedKey: `${input.samplingKey}/ep${j}` }),
    });
    return executeChild(episode, { workflowId: episodeId, args: [opened] });
  });

  const result = summariseEvaluation(evalId, input.runId, input.iteration, versions, episodes);
  await cpu.publishEvents(envelopes(evaluationStream(evalId), 0, [{ type: 'EvaluationFinished', ...result }]));
  // An evaluation on demand (or of a run that has ended) loaded its own copies of the policies: free them.
  if (input.release ?? input.runId === evalId) {
    for (const spec of trainable(policiesOf(cfg))) {
      const ref = policyRef(input.runId, spec, cfg, input.checkpointDirs?.[spec.name]);
      for (const q of [spec.taskQueue, ...rolloutQueues(spec)]) await policyWorker(q).releasePolicy(ref);
    }
  }
  return result;
}
