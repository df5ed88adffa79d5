// Hanabi as an EnvDefinition: one agent per seat, player_0 ... player_4 (the options' `players`
// says how many sit at the table). In Tandem's episode loop one episode turn is one round of the
// table: every agent of turn_order acts once, in order, so turn_order should be player_0 ...
// player_{n-1}.
//
// Rewards (reward = local + alpha * global):
//   local  = +1 per card added to the fireworks, -1 per life lost (a misplay), and -1 for an
//            unreadable or illegal answer (the turn is then forfeited: nothing else changes, but
//            the turn counts, also in the final round). A clue or a discard scores 0.
//   global = the final score / the maximum score (colours x ranks) on the action that ends the
//            game, else 0. The final score is 0 after the last life is lost (zeroOnLoss).
// An agent that acts when the game is over, out of turn, or at a seat the game does not have
// gets a neutral score (0, 0, 0) and the state is returned unchanged.
import type { ChatMessage, EnvDefinition, Scored } from '../types.js';
import { parseAction } from './parse.js';
import { buildPrompt } from './prompt.js';
import { COLOR_NAMES, forfeit, maxScore, newGame, step, type HanabiOptions, type HanabiState } from './rules.js';
import { scriptedAnswer } from './scripted.js';

export const HANABI_AGENTS = ['player_0', 'player_1', 'player_2', 'player_3', 'player_4'] as const;
export type HanabiAgent = (typeof HANABI_AGENTS)[number];

export const HANABI_REWARDS = {
  /** Per card added to the fireworks. */
  play: 1,
  /** Per life lost. */
  lifeLost: -1,
  /** An unreadable or illegal answer (turn forfeited). */
  invalid: -1,
} as const;

/** The seat of an agent name ("player_2" -> 2), or -1. */
export function seatOf(agent: string): number {
  return (HANABI_AGENTS as readonly string[]).indexOf(agent);
}

function neutral(state: HanabiState, outcome: string): Scored<HanabiState> {
  return { local: 0, global: 0, reward: 0, outcome, nextState: state, done: state.over, solved: state.over && state.score === maxScore(state.rules), handoff: undefined };
}

/** Scores `text` as the answer of `agent` from `state`. Pure; never throws for any text. */
export function scoreHanabi(agent: string, state: HanabiState, text: string, alpha: number): Scored<HanabiState> {
  const seat = seatOf(agent);
  const max = maxScore(state.rules);
  if (state.over) return neutral(state, 'game already over');
  if (seat < 0 || seat >= state.rules.players) return neutral(state, `${agent} is not seated (${state.rules.players} players)`);
  if (seat !== state.current) return neutral(state, `not ${agent}'s turn (player ${state.current} to act)`);

  let next: HanabiState;
  let local: number;
  let outcome: string;
  const parsed = parseAction(text, seat, state.rules.players);
  if (!parsed.ok) {
    next = forfeit(state, seat, parsed.reason);
    local = HANABI_REWARDS.invalid;
    outcome = `invalid: ${parsed.reason}; turn forfeited`;
  } else {
    const r = step(state, seat, parsed.action);
    next = r.state;
    if (!r.legal) {
      local = HANABI_REWARDS.invalid;
      outcome = `illegal: ${r.reason}; turn forfeited`;
    } else {
      local = HANABI_REWARDS.play * r.played + HANABI_REWARDS.lifeLost * r.livesLost;
      const e = next.log[next.log.length - 1];
      switch (e.kind) {
        case 'play':
          outcome = e.ok ? `played ${e.card} (slot ${e.slot + 1})` : `misplayed ${e.card} (slot ${e.slot + 1}), life lost, ${next.lives} left`;
          break;
        case 'discard':
          outcome = `discarded ${e.card} (slot ${e.slot + 1})`;
          break;
        case 'color_clue':
        case 'rank_clue':
          outcome = `clued player ${e.target} ${e.kind === 'color_clue' ? COLOR_NAMES[e.color] : `rank ${e.rank}`} (${e.slots.length} card${e.slots.length === 1 ? '' : 's'})`;
          break;
        default:
          outcome = 'acted';
      }
    }
  }
  const global = next.over ? next.score / max : 0;
  outcome += next.over ? `; game over (${next.end}), score ${next.score}/${max}` : `; fireworks ${fireworksOf(next)}/${max}`;
  return {
    local,
    global,
    reward: local + alpha * global,
    outcome,
    nextState: next,
    done: next.over,
    solved: next.over && next.score === max,
    handoff: undefined,
  };
}

const fireworksOf = (s: HanabiState) => s.fireworks.reduce((a, b) => a + b, 0);

function promptFor(agent: string, state: HanabiState, turn: number): ChatMessage[] {
  const seat = seatOf(agent);
  if (seat < 0 || seat >= state.rules.players) {
    return [
      { role: 'system', content: `This Hanabi game has ${state.rules.players} players (player_0 to player_${state.rules.players - 1}); ${agent} does not play.` },
      { role: 'user', content: 'You have no turn in this game. Answer #### pass.' },
    ];
  }
  return buildPrompt(state, seat, turn);
}

export const hanabi: EnvDefinition<HanabiState, HanabiOptions> = {
  agents: HANABI_AGENTS,
  reset: (seed, options) => newGame(seed, options),
  prompt: (agent, ctx) => promptFor(agent, ctx.state, ctx.turn),
  program: () => null,
  score: (agent, state, text, _run, alpha) => scoreHanabi(agent, state, text, alpha),
  scripted: (agent, ctx) => {
    const seat = seatOf(agent);
    return seat < 0 || seat >= ctx.state.rules.players ? '#### pass' : scriptedAnswer(ctx.state, seat);
  },
};
