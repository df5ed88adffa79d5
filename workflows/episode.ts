// One episode: opened by the workflow that starts it (workflows/openings.ts: its EpisodeStarted
// event published and its env reset, so that its first workflow task schedules its first turn at
// once); then the episode loop (domain/episodeLoop.ts) played with the activities:
// K candidates from the acting agent's policy (agentTurn, or scriptedTurn for a scripted
// player), scored on the CPU worker (scoreCandidates, a local activity in the episode's workflow
// task). At the end the scored samples go to Kafka with the episode's events (publishEpisode, a
// local activity in the episode's last workflow task); only small summaries stay in history.
import { patched } from '@temporalio/workflow';
import type { CandidateText } from '../activities/agentTurn.js';
import type { TrajectoryRecord } from '../activities/records.js';
import { policiesOf, policyOfAgent, turnQueue } from '../policy/spec.js';
import { agentByName, type RunConfig } from '../configs/schema.js';
import { advantageInputs, groupKeyOf } from '../domain/atgrpo.js';
import { playEpisode } from '../domain/episodeLoop.js';
import { envelopes, episodeSetup, type EventEnvelope, type TandemEvent } from '../domain/events.js';
import { episodeStream, samplingSeed } from '../domain/ids.js';
import { mean, type EpisodeSummary } from '../domain/summaries.js';
import { envOf } from '../envs/index.js';
import { policyRef } from '../policy/ref.js';
import { proxiesOf } from './proxies.js';

export interface EpisodeInput {
  runId: string;
  iteration: number;
  episodeId: string;
  problemSeed: number;
  /**
   * train: sample with train_llm_config and publish the scored samples for the update.
   * eval: sample with val_llm_config; nothing reaches an update (events only, for the record).
   * Default: train.
   */
  phase?: 'train' | 'eval';
  /** Candidates sampled at every (turn, agent): K under at_grpo, 1 under grpo (see planIteration). */
  candidates: number;
  config: RunConfig;
  /** The version of each policy this iteration samples from. */
  versions: Record<string, number>;
  /** Per policy name: the checkpoint folder it was loaded from, when not the run's own (evaluations). */
  checkpointDirs?: Record<string, string>;
  /**
   * Set when the parent opened the episode (workflows/openings.ts): its EpisodeStarted is
   * published and `initial` is the env's initial state. Unset: the episode opens itself.
   */
  opened?: { initial: unknown };
  /**
   * What the sampling seeds derive from in place of the episode id: evaluations of different runs
   * given the same key sample their j-th episode alike (common random numbers for paired
   * comparisons). Unset: the episode id.
   */
  seedKey?: string;
}

/** An episode's first event, at position 0 of its stream. */
export function episodeStarted(input: EpisodeInput): EventEnvelope[] {
  const { runId, iteration, episodeId, problemSeed } = input;
  // The setup is audit content: what re-executing the episode from its record needs (services/audit/replay.ts).
  const setup = episodeSetup(input.config);
  return envelopes(episodeStream(episodeId), 0, [{ type: 'EpisodeStarted', runId, iteration, episodeId, problemSeed, phase: input.phase ?? 'train', setup }]);
}

export async function episode(input: EpisodeInput): Promise<EpisodeSummary> {
  const { config: cfg, runId, iteration, episodeId, problemSeed } = input;
  const phase = input.phase ?? 'train';
  const policies = policiesOf(cfg);
  const stream = episodeStream(episodeId);
  const { cpu, localCpu, localScoring, policyWorker, scoring } = proxiesOf(cfg.recovery);
  const initial = input.opened ? input.opened.initial : await openItself(input);
  // The patch checks below tell old histories apart; an episode its parent opened was started by
  // today's code, so it skips them (each would add a marker and a search attribute update).
  const openedByParent = input.opened !== undefined;
  // Episodes started before scoring became a local activity replay with the scoring activity.
  const scorer = openedByParent || patched('scoring-as-local-activity') ? localScoring : scoring;
  const rules = { maxTurns: cfg.env.max_turns, turnOrder: cfg.multi_agent_interaction.turn_order, ifGreedy: cfg.rollout.if_greedy };
  const played = await playEpisode<CandidateText>(envOf(cfg.env), rules, initial, {
    act: ({ turn, agent, state, handoff, prompt }) => {
      const spec = policyOfAgent(policies, agent);
      const k = input.candidates;
      if (spec.kind === 'scripted') return cpu.scriptedTurn({ env: cfg.env, agent, episodeId, turn, k, state, handoff });
      const config = agentByName(cfg, agent);
      return policyWorker(turnQueue(spec), cfg.rollout.turn_timeout_s).agentTurn({
        policy: policyRef(runId, spec, cfg, input.checkpointDirs?.[spec.name]),
        policyVersion: input.versions[spec.name] ?? 0,
        iteration,
        episodeId,
        turn,
        agent,
        messages: prompt,
        k,
        sampling: phase === 'train' ? config.train_llm_config : config.val_llm_config,
        record: phase === 'train',
        maxNewTokens: cfg.training.max_response_length,
        maxPromptTokens: cfg.training.max_prompt_length,
        truncation: cfg.training.truncation,
        seed: samplingSeed(input.seedKey ?? episodeId, turn, agent),
        newerWithin: phase === 'train' ? cfg.rollout.max_staleness : 0,
      });
    },
    score: ({ agent, state }, texts) => scorer.scoreCandidates({ env: cfg.env, agent, state, texts, alpha: cfg.alpha }),
  });

  // Each group as the update sees it, and each sample's group member and score (at_grpo or grpo).
  // Its version is the one that generated it: the episode's, or under asynchronous training
  // (rollout.max_staleness) possibly a newer one an update made since the episode opened.
  const groups = played.groups.map((g) => {
    const spec = policyOfAgent(policies, g.agent);
    const policyVersion = g.candidates[0]?.policyVersion ?? input.versions[spec.name] ?? 0;
    return { ...g, policy: spec.name, policyVersion, groupKey: groupKeyOf(cfg.algorithm, problemSeed, g.turn, g.agent) };
  });
  const members = new Map(advantageInputs(
    cfg.algorithm,
    groups.map((g) => ({ episodeId, groupKey: g.groupKey, agent: g.agent, chosen: g.chosen, samples: g.candidates.map((c, i) => ({ sampleId: c.sampleId, reward: g.scored[i].reward })) })),
  ).map((m) => [m.sampleId, m]));
  const samples: TrajectoryRecord[] = groups.flatMap((g) =>
    g.candidates.map((c, i) => ({
      sampleId: c.sampleId,
      runId,
      iteration,
      episodeId,
      problemSeed,
      turn: g.turn,
      agent: g.agent,
      policy: g.policy,
      policyVersion: g.policyVersion,
      groupKey: g.groupKey,
      member: members.get(c.sampleId)!.member,
      score: members.get(c.sampleId)!.score,
      candidate: i,
      local: g.scored[i].local,
      global: g.scored[i].global,
      reward: g.scored[i].reward,
      chosen: i === g.chosen,
    })),
  );

  const rewardByAgent = Object.fromEntries(Object.entries(played.chosenRewards).map(([a, rs]) => [a, mean(rs)]));
  // A prompt cut to max_prompt_length (training.truncation keep_system or left): recorded with its turn.
  const { max_prompt_length: limit, truncation } = cfg.training;
  const cut = (g: (typeof groups)[number]) => {
    const tokens = g.candidates[0]?.promptTruncatedFrom;
    if (tokens === undefined || truncation === 'error') return {};
    const kept = truncation === 'keep_system' ? 'the system prompt (when shorter than the limit) and the last tokens' : 'the last tokens';
    return { promptTruncated: { tokens, limit, truncation, reason: `the prompt has ${tokens} tokens, more than the ${limit} of training.max_prompt_length; kept ${kept} (training.truncation ${truncation})` } };
  };
  const promptsTruncated = groups.filter((g) => g.candidates[0]?.promptTruncatedFrom !== undefined).length;
  const events: TandemEvent[] = [
    ...groups.map((g): TandemEvent => ({
      type: 'TurnGroupScored',
      runId,
      iteration,
      episodeId,
      groupKey: g.groupKey,
      turn: g.turn,
      agent: g.agent,
      policy: g.policy,
      policyVersion: g.policyVersion,
      chosen: g.chosen,
      samples: g.candidates.map((c, i) => ({
        sampleId: c.sampleId,
        candidate: i,
        local: g.scored[i].local,
        global: g.scored[i].global,
        reward: g.scored[i].reward,
        outcome: g.scored[i].outcome,
        text: c.text,
        done: g.scored[i].done,
        solved: g.scored[i].solved,
      })),
      // Audit content: what the agent acted from and was shown.
      state: g.state,
      handoff: g.handoff,
      prompt: g.prompt,
      ...cut(g),
    })),
    { type: 'EpisodeFinished', runId, iteration, episodeId, success: played.success, turns: played.turns, rewardByAgent, finalState: played.finalState, ...(promptsTruncated ? { promptsTruncated } : {}) },
  ];
  const published = phase === 'train' ? samples : [];
  // Episodes started before the closing became a local activity replay with the activity.
  const publisher = openedByParent || patched('episode-closing-as-local-activity') ? localCpu : cpu;
  await publisher.publishEpisode({ samples: published, events: envelopes(stream, 1, events) });

  const samplesByPolicy: Record<string, number> = {};
  for (const s of published) samplesByPolicy[s.policy] = (samplesByPolicy[s.policy] ?? 0) + 1;
  const turnRewards = played.groups.map((g) => ({ turn: g.turn, agent: g.agent, reward: g.scored[g.chosen].reward }));
  return { episodeId, success: played.success, turns: played.turns, rewardByAgent, turnRewards, samplesByPolicy, ...(promptsTruncated ? { promptsTruncated } : {}) };
}

/** The opening of an episode started without one (by a parent recorded before parents opened their episodes). */
async function openItself(input: EpisodeInput): Promise<unknown> {
  const started = episodeStarted(input);
  const reset = { env: input.config.env, seed: input.problemSeed };
  const { cpu, localCpu } = proxiesOf(input.config.recovery);
  // Episodes started before the opening became local activities replay with the two activities.
  const [, initial] = patched('episode-opening-as-local-activities')
    ? await Promise.all([localCpu.publishEvents(started), localCpu.envReset(reset)])
    : [await cpu.publishEvents(started), await cpu.envReset(reset)];
  return initial;
}
