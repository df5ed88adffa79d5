// Environment activities (CPU worker): reset an env instance, and score the K candidates of
// one (turn, agent) group, each on its own copy of the state.
import type { RunConfig } from '../configs/schema.js';
import type { EnvState, Handoff } from '../envs/index.js';
import * as planpath from '../envs/planpath/index.js';
import { runPython } from './runPython.js';

export interface ScoredCandidate {
  local: number;
  global: number;
  reward: number;
  outcome: string;
  /** The state after this candidate's action (the same state when the action only simulates). */
  nextState: EnvState;
  done: boolean;
  solved: boolean;
  /** What the next agent in the turn is shown if the episode continues from this candidate. */
  handoff: Handoff;
}

export interface ScoreInput {
  env: RunConfig['env'];
  agent: string;
  state: EnvState;
  texts: string[];
  alpha: number;
}

export function createEnvActivities() {
  return {
    async envReset(input: { env: RunConfig['env']; seed: number }): Promise<EnvState> {
      const { env, seed } = input;
      return planpath.generate(seed, { mapSize: env.map_size, blockedRatio: env.blocked_ratio });
    },

    async scoreCandidates(input: ScoreInput): Promise<ScoredCandidate[]> {
      // Candidates are scored one after another: each may run code, and the worker's
      // activity slots already bound how many run at once.
      const scored: ScoredCandidate[] = [];
      for (const text of input.texts) scored.push(await scorePlanPath(input, text));
      return scored;
    },
  };
}

async function scorePlanPath(input: ScoreInput, text: string): Promise<ScoredCandidate> {
  const { state, alpha, env } = input;
  if (input.agent === 'tool_call_agent') {
    const code = planpath.extractCode(text);
    const run = code === null ? null : await runPython(code, env.code_timeout_s * 1000);
    const score = planpath.scoreToolAgent(
      state,
      { code, stdout: run?.stdout ?? '', exitCode: run?.exitCode ?? null, timedOut: run?.timedOut ?? false },
      alpha,
    );
    return { ...pick(score), handoff: { code: code ?? '', stdout: run?.stdout ?? '', actions: run ? planpath.parseActionList(run.stdout) : null } };
  }
  return { ...pick(planpath.scorePlanAgent(state, text, alpha)), handoff: undefined };
}

function pick(s: planpath.AgentScore): Omit<ScoredCandidate, 'handoff'> {
  return { local: s.local, global: s.global, reward: s.reward, outcome: s.outcome, nextState: s.nextState, done: s.done, solved: s.solved };
}
