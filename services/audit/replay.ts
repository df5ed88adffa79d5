// Re-executing an episode from its record: the environment is reset from the recorded seed and
// the one episode loop (domain/episodeLoop.ts) is played again, its candidates being the
// recorded texts and its scoring the scoreCandidates activity's own function (sandboxed code
// included). Every state, prompt, score, choice and termination is compared with the record as
// the loop goes; the first difference is returned, naming its step.
import type { ScoredCandidate, ScoreInput } from '../../activities/env.js';
import type { RunConfig } from '../../configs/schema.js';
import { playEpisode } from '../../domain/episodeLoop.js';
import type { EpisodeSetup, TandemEvent, TurnGroupScoredEvent } from '../../domain/events.js';
import { mean } from '../../domain/summaries.js';
import { envOf } from '../../envs/index.js';
import type { Scored } from '../../envs/types.js';
import { canonicalJson } from '../eventStore/hashChain.js';

type EpisodeStarted = Extract<TandemEvent, { type: 'EpisodeStarted' }>;
type EpisodeFinished = Extract<TandemEvent, { type: 'EpisodeFinished' }>;

/** An episode's events, in stream order. */
export interface EpisodeRecord {
  started: EpisodeStarted;
  groups: TurnGroupScoredEvent[];
  finished: EpisodeFinished | null;
}

/** The env activities the workflow uses: the verifier is handed the very same functions. */
export interface EnvFunctions {
  envReset(input: { env: RunConfig['env']; seed: number }): Promise<unknown>;
  scoreCandidates(input: ScoreInput): Promise<ScoredCandidate[]>;
}

export interface Difference {
  /** 0-based index of the group in the episode, or null for the episode as a whole. */
  step: number | null;
  message: string;
}

/** Thrown from the loop's callbacks at the first difference, to stop the re-execution there. */
class Differs extends Error {
  constructor(readonly difference: Difference) {
    super(difference.message);
  }
}

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
const show = (x: unknown) => {
  const text = canonicalJson(x ?? null);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

/** Splits an episode stream's events; null with the reason when its shape is not an episode's. */
export function episodeRecord(events: TandemEvent[]): EpisodeRecord | string {
  const [first, ...rest] = events;
  if (first?.type !== 'EpisodeStarted') return 'the episode stream does not start with EpisodeStarted';
  const last = rest[rest.length - 1];
  const finished = last?.type === 'EpisodeFinished' ? last : null;
  const groups: TurnGroupScoredEvent[] = [];
  for (const e of finished ? rest.slice(0, -1) : rest) {
    if (e.type !== 'TurnGroupScored') return `unexpected ${e.type} inside the episode stream`;
    groups.push(e);
  }
  return { started: first, groups, finished };
}

export async function replayEpisode(record: EpisodeRecord, setup: EpisodeSetup, fns: EnvFunctions): Promise<Difference | null> {
  let step = 0; // the group being re-executed
  const at = (turn: number, agent: string) => `step ${step} (turn ${turn}, ${agent})`;
  const differs = (message: string) => new Differs({ step, message });
  const initial = await fns.envReset({ env: setup.env, seed: record.started.problemSeed });
  const rules = { maxTurns: setup.env.max_turns, turnOrder: setup.turnOrder, ifGreedy: setup.ifGreedy };
  const compare = (turn: number, agent: string, g: TurnGroupScoredEvent, scored: Scored<unknown>[], fields: readonly (keyof Scored<unknown> & keyof TurnGroupScoredEvent['samples'][number])[], index = step) => {
    for (const [i, s] of g.samples.entries()) {
      for (const field of fields) {
        if (s[field] !== scored[i][field]) {
          throw new Differs({ step: index, message: `step ${index} (turn ${turn}, ${agent}): candidate ${i} ${field} differs: recorded ${show(s[field])}, re-executed ${show(scored[i][field])}` });
        }
      }
    }
  };
  const env = envOf(setup.env);
  // An env that settles its turns (settleTurn) may change global and reward after the turn: those
  // two are compared then; every other field, and all of them for other envs, at once.
  const settledFields = ['global', 'reward'] as const;
  const atOnce = env.def.settleTurn ? (['local', 'outcome', 'done', 'solved'] as const) : ([...settledFields, 'local', 'outcome', 'done', 'solved'] as const);
  let played;
  try {
    played = await playEpisode(env, rules, initial, {
      // The recorded candidates, once the record agrees on who acts, from what and shown what.
      act: async ({ turn, agent, state, handoff, prompt }) => {
        const g = record.groups[step];
        if (!g) throw differs(`${at(turn, agent)}: the episode goes on here, but the record has no more groups`);
        if (g.turn !== turn || g.agent !== agent) throw differs(`${at(turn, agent)}: the record has turn ${g.turn}, ${g.agent} here`);
        if (g.state === undefined || g.prompt === undefined || g.samples.some((s) => s.text === undefined)) {
          throw differs(`${at(turn, agent)}: the record has no audit content (state, prompt, texts): recorded before it existed`);
        }
        if (!same(g.state, state)) throw differs(`${at(turn, agent)}: observation differs: recorded ${show(g.state)}, re-executed ${show(state)}`);
        if (!same(g.handoff, handoff)) throw differs(`${at(turn, agent)}: handoff differs: recorded ${show(g.handoff)}, re-executed ${show(handoff)}`);
        if (!same(g.prompt, prompt)) throw differs(`${at(turn, agent)}: prompt differs from the one the env gives for this state`);
        return g.samples.map((s, i) => {
          if (s.candidate !== i) throw differs(`${at(turn, agent)}: candidate ${i} is recorded as candidate ${s.candidate}`);
          return { text: s.text! };
        });
      },
      score: async ({ turn, agent, state }, texts) => {
        const scored = await fns.scoreCandidates({ env: setup.env, agent, state, texts, alpha: setup.alpha });
        compare(turn, agent, record.groups[step], scored, atOnce);
        return scored;
      },
      played: ({ turn, agent, chosen }) => {
        const g = record.groups[step];
        if (g.chosen !== chosen) throw differs(`${at(turn, agent)}: the episode continued from candidate ${g.chosen}, re-execution chooses ${chosen}`);
        step++;
      },
      settled: (groups, first) => {
        if (env.def.settleTurn) groups.forEach((g, j) => compare(g.turn, g.agent, record.groups[first + j], g.scored, settledFields, first + j));
      },
    });
  } catch (err) {
    if (err instanceof Differs) return err.difference;
    throw err;
  }

  if (step < record.groups.length) {
    const g = record.groups[step];
    return { step, message: `step ${step} (turn ${g.turn}, ${g.agent}): recorded, but the episode had ended before it` };
  }
  const f = record.finished;
  if (!f) return { step: null, message: 'the record has no EpisodeFinished' };
  const rewardByAgent = Object.fromEntries(Object.entries(played.chosenRewards).map(([a, rs]) => [a, mean(rs)]));
  const end: [string, unknown, unknown][] = [
    ['success', f.success, played.success],
    ['turns', f.turns, played.turns],
    ['rewardByAgent', f.rewardByAgent, rewardByAgent],
    ['final state', f.finalState, played.finalState],
  ];
  for (const [what, recorded, replayed] of end) {
    if (!same(recorded, replayed)) return { step: null, message: `episode end: ${what} differs: recorded ${show(recorded)}, re-executed ${show(replayed)}` };
  }
  return null;
}
