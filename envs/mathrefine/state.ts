// The state of a three-role math refinement episode: the problem, the shared history every role
// sees, whose move it is, and the answer under judgment. JSON-serialisable.
import type { EpisodeProblem, ProblemSource } from '../math/types.js';
import type { Verdict } from './verdict.js';

// The roles of three-role-math-lora-status.md ("Agent Roles"), one LoRA adapter each at L2.
export const MATHREFINE_AGENTS = ['generator_initial', 'evaluator_critique', 'generator_refinement'] as const;
export type MathRefineRole = (typeof MATHREFINE_AGENTS)[number];

export interface MathRefineOptions extends ProblemSource {
  /** The episode ends at the maxTurns-th critique (set it to env.max_turns; default 4). */
  maxTurns?: number;
}

export interface MathRefineEntry {
  role: MathRefineRole;
  /** The role's text (clipped). */
  text: string;
  /** Generators: the final answer read from the text (null when none). Evaluator: null. */
  answer: string | null;
  /** Generators: whether that answer is correct. Evaluator: whether the judged answer was. */
  correct: boolean;
  /** Evaluator: its verdict (null when none could be read). Generators: null. */
  verdict: Verdict | null;
}

export interface MathRefineState {
  problem: EpisodeProblem;
  maxTurns: number;
  /** Everything said so far, oldest first; every role is shown all of it. */
  history: MathRefineEntry[];
  /** The role whose move it is; any other role's answer is ignored (neutral score). */
  next: MathRefineRole;
  /** The answer under judgment: the latest generator's. null before the first solution. */
  current: { answer: string | null; correct: boolean } | null;
  /** Critiques so far. */
  critiques: number;
  done: boolean;
  solved: boolean;
  /** The team's final answer once the episode is over (the last judged answer); else null. */
  finalAnswer: string | null;
}
