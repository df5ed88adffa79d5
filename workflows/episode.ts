// One episode: reset -> for each turn, for each agent in turn_order: K candidates from the
// agent's policy (prompted with the state and handoff the agents before it left) -> each
// candidate scored on its own copy of the state -> the K form one group keyed
// (problem, turn, agent) -> continue from the chosen candidate. At the end the episode's
// scored samples go to Kafka; only small summaries stay in history.
import { proxyActivities } from '@temporalio/workflow';
import type { CandidateText } from '../activities/agentTurn.js';
import type { ScoredCandidate } from '../activities/env.js';
import type { CpuActivities, PolicyActivities } from '../activities/index.js';
import type { TrajectoryRecord } from '../activities/records.js';
import { policiesOf, policyOfAgent } from '../configs/policies.js';
import { agentByName, type RunConfig } from '../configs/schema.js';
import { chooseCandidate, groupKey, trajectoryGroupKey } from '../domain/atgrpo.js';
import { envelopes, episodeSetup, episodeStream, type TandemEvent } from '../domain/events.js';
import { envOf } from '../envs/index.js';
import { policyRef } from './policyRef.js';

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
}

export interface EpisodeSummary {
  episodeId: string;
  success: boolean;
  turns: number;
  rewardByAgent: Record<string, number>;
  /** The chosen candidate's reward at every (turn, agent) that acted. */
  turnRewards: { turn: number; agent: string; reward: number }[];
  /** Scored samples published, per policy: what the update must find in Kafka. */
  samplesByPolicy: Record<string, number>;
}

// Every activity heartbeats while it runs (services/heartbeat.ts): a dead worker's attempt
// times out after heartbeatTimeout and is retried, whatever its start-to-close timeout.
const cpu = proxyActivities<CpuActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
});

// Scoring runs the candidates' programs, which may queue for the worker's sandbox slots.
const scoring = proxyActivities<CpuActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
});

export function policyActivities(taskQueue: string) {
  return proxyActivities<PolicyActivities>({
    taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
  });
}

export async function episode(input: EpisodeInput): Promise<EpisodeSummary> {
  const { config: cfg, runId, iteration, episodeId, problemSeed } = input;
  const phase = input.phase ?? 'train';
  const policies = policiesOf(cfg);
  const { def: env } = envOf(cfg.env);
  const stream = episodeStream(episodeId);
  // The setup is audit content: what re-executing the episode from its record needs (services/audit/replay.ts).
  const setup = episodeSetup(cfg);
  await cpu.publishEvents(envelopes(stream, 0, [{ type: 'EpisodeStarted', runId, iteration, episodeId, problemSeed, phase, setup }]));

  let state = await cpu.envReset({ env: cfg.env, seed: problemSeed });
  const samples: TrajectoryRecord[] = [];
  const events: TandemEvent[] = [];
  const chosenRewards: Record<string, number[]> = {};
  const turnRewards: EpisodeSummary['turnRewards'] = [];
  let success = false;
  let turns = 0;
  let done = false;

  for (let turn = 0; turn < cfg.env.max_turns && !done; turn++) {
    turns = turn + 1;
    let handoff: unknown = undefined; // what the agents before this one did in this turn
    for (const agentName of cfg.multi_agent_interaction.turn_order) {
      if (env.acts && !env.acts(agentName, state)) continue; // not this agent's move
      const agent = agentByName(cfg, agentName);
      const spec = policyOfAgent(policies, agentName);
      const policy = policyRef(runId, spec, cfg, input.checkpointDirs?.[spec.name]);
      const policyVersion = input.versions[spec.name] ?? 0; // scripted players have no versions
      const k = input.candidates;
      const messages = env.prompt(agentName, { state, turn, handoff });
      const candidates: CandidateText[] =
        spec.kind === 'scripted'
          ? await cpu.scriptedTurn({ env: cfg.env, agent: agentName, episodeId, turn, k, state, handoff })
          : await policyActivities(spec.taskQueue).agentTurn({
              policy,
              policyVersion,
              iteration,
              episodeId,
              turn,
              agent: agentName,
              messages,
              k,
              sampling: phase === 'train' ? agent.train_llm_config : agent.val_llm_config,
              record: phase === 'train',
              maxNewTokens: cfg.training.max_response_length,
              seed: fnv1a(`${episodeId}/${turn}/${agentName}`),
            });
      // Every candidate is scored from the same state: the group's only difference is the action.
      const scored: ScoredCandidate[] = await scoring.scoreCandidates({ env: cfg.env, agent: agentName, state, texts: candidates.map((c) => c.text), alpha: cfg.alpha });
      const chosen = chooseCandidate(scored.map((s) => s.reward), cfg.rollout.if_greedy);
      const atGrpo = cfg.algorithm === 'at_grpo';
      const key = atGrpo ? groupKey(problemSeed, turn, agentName) : trajectoryGroupKey(problemSeed, agentName);
      samples.push(
        ...candidates.map((c, i) => ({
          sampleId: c.sampleId,
          runId,
          iteration,
          episodeId,
          problemSeed,
          turn,
          agent: agentName,
          policy: spec.name,
          policyVersion,
          groupKey: key,
          // grpo: the whole trajectory is one group member; its score (the return) is set at the end.
          member: atGrpo ? c.sampleId : episodeId,
          score: scored[i].reward,
          candidate: i,
          local: scored[i].local,
          global: scored[i].global,
          reward: scored[i].reward,
          chosen: i === chosen,
        })),
      );
      events.push({
        type: 'TurnGroupScored',
        runId,
        iteration,
        episodeId,
        groupKey: key,
        turn,
        agent: agentName,
        policy: spec.name,
        policyVersion,
        chosen,
        samples: candidates.map((c, i) => ({
          sampleId: c.sampleId,
          candidate: i,
          local: scored[i].local,
          global: scored[i].global,
          reward: scored[i].reward,
          outcome: scored[i].outcome,
          text: c.text,
          done: scored[i].done,
          solved: scored[i].solved,
        })),
        // Audit content: what the agent acted from and was shown (the prompt is rebuilt: pure and deterministic).
        state,
        handoff,
        prompt: messages,
      });
      (chosenRewards[agentName] ??= []).push(scored[chosen].reward);
      turnRewards.push({ turn, agent: agentName, reward: scored[chosen].reward });
      // Continue from the chosen candidate: its state, and what it hands to the next agent.
      state = scored[chosen].nextState;
      handoff = scored[chosen].handoff;
      success = scored[chosen].solved; // as of the last action, also when max_turns ends the episode
      if (scored[chosen].done) {
        done = true;
        break;
      }
    }
  }

  if (cfg.algorithm === 'grpo') {
    // Plain GRPO scores every turn of an agent by its trajectory return: the sum of its rewards.
    const returns = Object.fromEntries(Object.entries(chosenRewards).map(([a, rs]) => [a, rs.reduce((x, y) => x + y, 0)]));
    for (const s of samples) s.score = returns[s.agent];
  }
  const rewardByAgent = Object.fromEntries(Object.entries(chosenRewards).map(([a, rs]) => [a, mean(rs)]));
  events.push({ type: 'EpisodeFinished', runId, iteration, episodeId, success, turns, rewardByAgent, finalState: state });
  const published = phase === 'train' ? samples : [];
  await cpu.publishEpisode({ samples: published, events: envelopes(stream, 1, events) });

  const samplesByPolicy: Record<string, number> = {};
  for (const s of published) samplesByPolicy[s.policy] = (samplesByPolicy[s.policy] ?? 0) + 1;
  return { episodeId, success, turns, rewardByAgent, turnRewards, samplesByPolicy };
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Over a set of episodes: the share that succeeded, and each agent's mean reward (over the episodes it acted in). */
export function episodeStats(episodes: EpisodeSummary[]): { successRate: number; rewardByAgent: Record<string, number> } {
  const agents = [...new Set(episodes.flatMap((e) => Object.keys(e.rewardByAgent)))];
  return {
    successRate: mean(episodes.map((e) => (e.success ? 1 : 0))),
    rewardByAgent: Object.fromEntries(agents.map((a) => [a, mean(episodes.filter((e) => a in e.rewardByAgent).map((e) => e.rewardByAgent[a]))])),
  };
}

/** FNV-1a: a stable 31-bit sampling seed from a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 0x7fffffff;
}
