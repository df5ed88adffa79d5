// Environment activities (CPU worker): reset an env instance, and score the K candidates of
// one (turn, agent) group, each from the same state. A tool agent's program runs in a
// subprocess with a timeout.
import type { RunConfig } from '../configs/schema.js';
import { envOf } from '../envs/index.js';
import type { Scored } from '../envs/types.js';
import { runPython } from './runPython.js';

export type ScoredCandidate = Scored<unknown>;

export interface ScoreInput {
  env: RunConfig['env'];
  agent: string;
  state: unknown;
  texts: string[];
  alpha: number;
}

export function createEnvActivities() {
  return {
    async envReset(input: { env: RunConfig['env']; seed: number }): Promise<unknown> {
      const { def, options } = envOf(input.env);
      return def.reset(input.seed, options);
    },

    async scoreCandidates(input: ScoreInput): Promise<ScoredCandidate[]> {
      const { def } = envOf(input.env);
      // One candidate after another: each may run a program, and the worker's activity
      // slots already bound how many run at once.
      const scored: ScoredCandidate[] = [];
      for (const text of input.texts) {
        const program = def.program(input.agent, text);
        const run = program === null ? null : await runPython(program, input.env.code_timeout_s * 1000);
        scored.push(def.score(input.agent, input.state, text, run, input.alpha));
      }
      return scored;
    },
  };
}
