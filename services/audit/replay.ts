// Re-executing an episode from its record: the environment is reset from the recorded seed and
// driven by the recorded candidate texts, through the same loop as the episode workflow and the
// same scoring function as the scoreCandidates activity (sandboxed code included). Every state,
// prompt, score, choice and termination is compared with the record; the first difference is
// returned, naming its step.
import { chooseCandidate } from '../../domain/atgrpo.js';
import type { EpisodeSetup, TandemEvent, TurnGroupScoredEvent } from '../../domain/events.js';
import type { ScoredCandidate, ScoreInput } from '../../activities/env.js';
import type { RunConfig } from '../../configs/schema.js';
import { envOf } from '../../envs/index.js';
import { canonicalJson } from '../projector/hashChain.js';

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
  const { def: env } = envOf(setup.env);
  const seed = record.started.problemSeed;
  let state = await fns.envReset({ env: setup.env, seed });
  const chosenRewards: Record<string, number[]> = {};
  let success = false;
  let turns = 0;
  let done = false;
  let step = 0;

  for (let turn = 0; turn < setup.env.max_turns && !done; turn++) {
    turns = turn + 1;
    let handoff: unknown = undefined;
    for (const agent of setup.turnOrder) {
      if (env.acts && !env.acts(agent, state)) continue;
      const g = record.groups[step];
      const at = `step ${step} (turn ${turn}, ${agent})`;
      if (!g) return { step, message: `${at}: the episode goes on here, but the record has no more groups` };
      if (g.turn !== turn || g.agent !== agent) return { step, message: `${at}: the record has turn ${g.turn}, ${g.agent} here` };
      if (g.state === undefined || g.prompt === undefined || g.samples.some((s) => s.text === undefined)) {
        return { step, message: `${at}: the record has no audit content (state, prompt, texts): recorded before it existed` };
      }
      if (!same(g.state, state)) return { step, message: `${at}: observation differs: recorded ${show(g.state)}, re-executed ${show(state)}` };
      if (!same(g.handoff, handoff)) return { step, message: `${at}: handoff differs: recorded ${show(g.handoff)}, re-executed ${show(handoff)}` };
      const prompt = env.prompt(agent, { state, turn, handoff });
      if (!same(g.prompt, prompt)) return { step, message: `${at}: prompt differs from the one the env gives for this state` };

      const scored = await fns.scoreCandidates({ env: setup.env, agent, state, texts: g.samples.map((s) => s.text!), alpha: setup.alpha });
      for (const [i, s] of g.samples.entries()) {
        if (s.candidate !== i) return { step, message: `${at}: candidate ${i} is recorded as candidate ${s.candidate}` };
        const r = scored[i];
        for (const field of ['local', 'global', 'reward', 'outcome', 'done', 'solved'] as const) {
          if (s[field] !== r[field]) {
            return { step, message: `${at}: candidate ${i} ${field} differs: recorded ${show(s[field])}, re-executed ${show(r[field])}` };
          }
        }
      }
      const chosen = chooseCandidate(scored.map((s) => s.reward), setup.ifGreedy);
      if (g.chosen !== chosen) return { step, message: `${at}: the episode continued from candidate ${g.chosen}, re-execution chooses ${chosen}` };

      (chosenRewards[agent] ??= []).push(scored[chosen].reward);
      state = scored[chosen].nextState;
      handoff = scored[chosen].handoff;
      success = scored[chosen].solved;
      step++;
      if (scored[chosen].done) {
        done = true;
        break;
      }
    }
  }

  if (step < record.groups.length) {
    const g = record.groups[step];
    return { step, message: `step ${step} (turn ${g.turn}, ${g.agent}): recorded, but the episode had ended before it` };
  }
  const f = record.finished;
  if (!f) return { step: null, message: 'the record has no EpisodeFinished' };
  const rewardByAgent = Object.fromEntries(Object.entries(chosenRewards).map(([a, rs]) => [a, rs.reduce((x, y) => x + y, 0) / rs.length]));
  const end: [string, unknown, unknown][] = [
    ['success', f.success, success],
    ['turns', f.turns, turns],
    ['rewardByAgent', f.rewardByAgent, rewardByAgent],
    ['final state', f.finalState, state],
  ];
  for (const [what, recorded, replayed] of end) {
    if (!same(recorded, replayed)) return { step: null, message: `episode end: ${what} differs: recorded ${show(recorded)}, re-executed ${show(replayed)}` };
  }
  return null;
}
