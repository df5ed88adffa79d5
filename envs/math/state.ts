// The state of a math episode (tool_generator + reasoning_generator): the problem and both
// agents' histories. JSON-serialisable; texts are clipped so histories stay small.
import type { EpisodeProblem, ProblemSource } from './types.js';

export const MATH_AGENTS = ['tool_generator', 'reasoning_generator'] as const;
export type MathAgent = (typeof MATH_AGENTS)[number];

/** The options of the math environment. */
export interface MathOptions extends ProblemSource {
  /** The episode ends after the reasoner's maxTurns-th answer (set it to env.max_turns; default 4). */
  maxTurns?: number;
}

/** How the tool agent's program went. */
export type ToolStatus = 'ok' | 'no_code' | 'not_run' | 'exit_error' | 'timeout';

export interface MathToolEntry {
  /** The program (clipped); null when the answer had no code block. */
  code: string | null;
  status: ToolStatus;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The answer read from the output (extractOutputAnswer); null when none. */
  answer: string | null;
  correct: boolean;
}

export interface MathReasoningEntry {
  /** The reasoner's text (clipped). */
  solution: string;
  /** The final answer read from it (extractAnswer); null when none. */
  answer: string | null;
  correct: boolean;
}

export interface MathState {
  problem: EpisodeProblem;
  maxTurns: number;
  /** The tool agent's attempts, one per turn it acted, oldest first. */
  tool: MathToolEntry[];
  /** The reasoner's answers, one per turn it acted, oldest first. */
  reasoning: MathReasoningEntry[];
  done: boolean;
  solved: boolean;
  /** The team's answer once the episode is over (the agreed answer, or the reasoner's last); else null. */
  finalAnswer: string | null;
}

/** What the tool agent hands to the reasoner of the same turn. */
export interface MathToolHandoff {
  code: string;
  stdout: string;
  answer: string | null;
}
