// What episodes report, and the summaries over many of them: an iteration's success rate and
// reward per agent, and an evaluation's result. Pure: workflows compute them deterministically.
import type { EvaluationResult } from './events.js';

/** What one episode workflow returns: small, it stays in the parent's history. */
export interface EpisodeSummary {
  episodeId: string;
  success: boolean;
  turns: number;
  rewardByAgent: Record<string, number>;
  /** The chosen candidate's reward at every (turn, agent) that acted. */
  turnRewards: { turn: number; agent: string; reward: number }[];
  /** Scored samples published, per policy: what the update must find in Kafka. */
  samplesByPolicy: Record<string, number>;
  /** Turns whose prompt was cut to training.max_prompt_length (training.truncation); absent: none. */
  promptsTruncated?: number;
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * Over a set of episodes: the share that succeeded, each agent's mean reward (over the episodes it
 * acted in), and how many had a prompt cut to training.max_prompt_length.
 */
export function episodeStats(episodes: EpisodeSummary[]): { successRate: number; rewardByAgent: Record<string, number>; truncatedEpisodes: number } {
  const agents = [...new Set(episodes.flatMap((e) => Object.keys(e.rewardByAgent)))];
  return {
    successRate: mean(episodes.map((e) => (e.success ? 1 : 0))),
    rewardByAgent: Object.fromEntries(agents.map((a) => [a, mean(episodes.filter((e) => a in e.rewardByAgent).map((e) => e.rewardByAgent[a]))])),
    truncatedEpisodes: episodes.filter((e) => (e.promptsTruncated ?? 0) > 0).length,
  };
}

/** Success rate, mean reward per agent and per (agent, turn), and mean turns, over the episodes. */
export function summariseEvaluation(
  evalId: string,
  runId: string,
  iteration: number | null,
  versions: Record<string, number>,
  episodes: EpisodeSummary[],
): EvaluationResult {
  const byAgentTurn: Record<string, number[][]> = {};
  for (const e of episodes) for (const t of e.turnRewards) ((byAgentTurn[t.agent] ??= [])[t.turn] ??= []).push(t.reward);
  const agents = Object.keys(byAgentTurn).sort();
  const turns = Math.max(0, ...agents.map((a) => byAgentTurn[a].length)); // every agent's list spans every turn played
  return {
    evalId,
    runId,
    iteration,
    versions,
    episodes: episodes.length,
    ...episodeStats(episodes),
    meanTurns: mean(episodes.map((e) => e.turns)),
    rewardByAgentTurn: Object.fromEntries(agents.map((a) => [a, Array.from({ length: turns }, (_, t) => (byAgentTurn[a][t] ? mean(byAgentTurn[a][t]) : null))])),
  };
}
