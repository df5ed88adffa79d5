// Environment activities (CPU worker): reset an env instance, and score the K candidates of
// one (turn, agent) group, each from the same state. A tool agent's program runs in the
// sandbox (activities/sandbox).
import type { RunConfig } from '../configs/schema.js';
import { scriptedSampleIdOf } from '../domain/ids.js';
import { envOf } from '../envs/index.js';
import type { Scored } from '../envs/types.js';
import type { CandidateText } from './agentTurn.js';
import { datasetProblems } from './datasets.js';
import { runSandboxed } from './sandbox/index.js';

export type ScoredCandidate = Scored<unknown>;

export interface ScoreInput {
  env: RunConfig['env'];
  agent: string;
  state: unknown;
  texts: string[];
  alpha: number;
}

export interface ScriptedTurnInput {
  env: RunConfig['env'];
  agent: string;
  episodeId: string;
  turn: number;
  k: number;
  state: unknown;
  handoff: unknown;
}

async function resets(env: RunConfig['env'], seeds: number[]): Promise<unknown[]> {
  const { def, options } = envOf(env);
  const problems = await datasetProblems(env);
  return seeds.map((seed) => def.reset(seed, problems ? { ...(options as object), problems } : options));
}

export function createEnvActivities() {
  return {
    /** K answers of the environment's scripted player (identical: a script does not sample). */
    async scriptedTurn(input: ScriptedTurnInput): Promise<CandidateText[]> {
      const { def } = envOf(input.env);
      const text = def.scripted!(input.agent, { state: input.state, turn: input.turn, handoff: input.handoff });
      return Array.from({ length: input.k }, (_, i) => ({
        sampleId: scriptedSampleIdOf(input.episodeId, input.turn, input.agent, i),
        text,
        finishReason: 'scripted',
        responseTokens: 0,
      }));
    },

    async envReset(input: { env: RunConfig['env']; seed: number }): Promise<unknown> {
      return (await resets(input.env, [input.seed]))[0];
    },

    /** The initial states of episodes opened together by their parent (workflows/openings.ts), in seed order. */
    async envResets(input: { env: RunConfig['env']; seeds: number[] }): Promise<unknown[]> {
      return resets(input.env, input.seeds);
    },

    async scoreCandidates(input: ScoreInput): Promise<ScoredCandidate[]> {
      const { def, options } = envOf(input.env);
      // The K candidates' programs run side by side; the sandbox bounds how many run at once.
      return Promise.all(
        input.texts.map(async (text) => {
          const program = def.program(input.agent, text, input.state);
          const run = program === null ? null : await runSandboxed(program, { timeoutMs: input.env.code_timeout_s * 1000 });
          return def.score(input.agent, input.state, text, run, input.alpha, options);
        }),
      );
    },
  };
}
