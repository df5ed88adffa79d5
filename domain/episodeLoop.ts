// The one episode loop. For each turn (up to max_turns), for each agent of turn_order that acts
// from the state: its prompt (the state, and the handoff the agents before it left in this turn)
// -> K candidates (`act`) -> each scored from the same state (`score`) -> the K form one group ->
// the episode continues from the chosen candidate (the best under if_greedy, else candidate 0),
// until one ends it (`done`) or the turns run out. Once every agent of a turn has acted, the
// environment may settle the turn's rewards (`settleTurn`: a team term that depends on what came
// later in the turn); the groups keep the settled scores.
//
// Pure and deterministic given its callbacks: the episode workflow (workflows/episode.ts) plays
// it with its activities; the audit (services/audit/replay.ts) re-executes it with the recorded
// texts and the CPU worker's own scoring, comparing as it goes.
import type { ChatMessage, EnvDefinition, Scored } from '../envs/types.js';
import { chooseCandidate } from './atgrpo.js';

/** What plays an episode besides the environment: enough to re-execute it from its record. */
export interface EpisodeRules {
  maxTurns: number;
  turnOrder: readonly string[];
  ifGreedy: boolean;
}

/** One (turn, agent) about to act. */
export interface TurnRequest {
  turn: number;
  agent: string;
  /** The state the agent acts from (the observation), the same for its K candidates. */
  state: unknown;
  /** What the agents before this one handed over in the same turn (undefined for the first). */
  handoff: unknown;
  /** The messages the agent is shown: env.prompt(agent, {state, turn, handoff}). */
  prompt: ChatMessage[];
}

export interface PlayedGroup<C> extends TurnRequest {
  /** What `act` returned, one per candidate. */
  candidates: C[];
  scored: Scored<unknown>[];
  /** The candidate the episode continued from. */
  chosen: number;
}

export interface EpisodeCallbacks<C extends { text: string }> {
  /** The K candidates of one (turn, agent). */
  act(request: TurnRequest): Promise<C[]>;
  /** The candidates' texts, each scored from the request's state. */
  score(request: TurnRequest, texts: string[]): Promise<Scored<unknown>[]>;
  /** Each group once its candidate is chosen, before the episode goes on (its index in the episode). */
  played?(group: PlayedGroup<C>, index: number): void;
  /** A turn's groups once their rewards are settled (the index of the first in the episode). */
  settled?(groups: PlayedGroup<C>[], first: number): void;
}

export interface PlayedEpisode<C> {
  groups: PlayedGroup<C>[];
  /** Whether the last chosen candidate solved it (also when max_turns ended the episode). */
  success: boolean;
  /** Turns begun. */
  turns: number;
  /** The chosen candidates' rewards per agent, in the order the agents first acted. */
  chosenRewards: Record<string, number[]>;
  finalState: unknown;
}

/** The environment as the loop uses it, with its options (envs/index.ts envOf). */
export interface EpisodeEnv {
  def: Pick<EnvDefinition<unknown, unknown>, 'prompt' | 'acts' | 'settleTurn'>;
  options: unknown;
}

export async function playEpisode<C extends { text: string }>(
  env: EpisodeEnv,
  rules: EpisodeRules,
  initialState: unknown,
  callbacks: EpisodeCallbacks<C>,
): Promise<PlayedEpisode<C>> {
  const { def } = env;
  const groups: PlayedGroup<C>[] = [];
  let state = initialState;
  let success = false;
  let turns = 0;
  let done = false;

  for (let turn = 0; turn < rules.maxTurns && !done; turn++) {
    turns = turn + 1;
    let handoff: unknown = undefined;
    const first = groups.length;
    for (const agent of rules.turnOrder) {
      if (def.acts && !def.acts(agent, state)) continue; // not this agent's move
      const request: TurnRequest = { turn, agent, state, handoff, prompt: def.prompt(agent, { state, turn, handoff }) };
      const candidates = await callbacks.act(request);
      // Every candidate is scored from the same state: the group's only difference is the action.
      const scored = await callbacks.score(request, candidates.map((c) => c.text));
      const chosen = chooseCandidate(scored.map((s) => s.reward), rules.ifGreedy);
      const group = { ...request, candidates, scored, chosen };
      callbacks.played?.(group, groups.length);
      groups.push(group);
      // Continue from the chosen candidate: its state, and what it hands to the next agent.
      state = scored[chosen].nextState;
      handoff = scored[chosen].handoff;
      success = scored[chosen].solved;
      if (scored[chosen].done) {
        done = true;
        break;
      }
    }
    const turnGroups = groups.slice(first);
    if (def.settleTurn && turnGroups.length > 0) {
      const terms = def.settleTurn(turnGroups, env.options);
      turnGroups.forEach((g, j) => {
        g.scored = g.scored.map((s, i) => ({ ...s, global: terms[j][i].global, reward: terms[j][i].reward }));
      });
    }
    callbacks.settled?.(turnGroups, first);
  }
  const chosenRewards: Record<string, number[]> = {};
  for (const g of groups) (chosenRewards[g.agent] ??= []).push(g.scored[g.chosen].reward);
  return { groups, success, turns, chosenRewards, finalState: state };
}
