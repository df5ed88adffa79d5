// What a single-player puzzle supplies to be played by the two PettingLLMs roles
// (tool_call_agent, then plan_agent; see roles.ts). Pure types.

/** The result of applying one action (e.g. a whole move list, or a whole grid) to a state. */
export interface PuzzleStep<S> {
  /** A new state; the input state is never mutated. */
  state: S;
  /** The environment reward of this action (the agent's local reward). */
  reward: number;
  /** The puzzle is solved (global reward 1). */
  solved: boolean;
  /** The episode is over: solved, failed, or out of steps. */
  done: boolean;
  /** Short account for the outcome string, e.g. "3 moves (1 invalid), reached goal". */
  summary: string;
}

/**
 * The puzzle-specific words of the two roles' instructions. roles.ts builds the system prompts
 * from these; the comments show Plan-Path's values.
 */
export interface PuzzleText {
  /** What the tool agent analyses: "grid" ("...analyze the given grid and..."). */
  subject: string;
  /** What its code produces: "the sequence of moves leading to the goal". */
  target: string;
  /** The printed answer: "move sequence" ("Your code must print the move sequence with print()"). */
  answer: string;
  /** The tool agent's numbered rules about the answer, after the two standard ones. */
  toolRules: readonly string[];
  /** An answer showing the format only, e.g. '["U", "R", "D", "L"]'. */
  example: string;
  /** The parsed answer's name: "move list". */
  listName: string;
  /** The plan agent's advice with a tool result, a sentence or more ending in '.'. */
  check: string;
  /** The plan agent's advice without one (single agent), after "Read the task and ". */
  solve: string;
  /** After "justify why ": "the final moves are correct". */
  justify: string;
  /** After "end your answer with ": "the final list of moves". */
  finalName: string;
}

/** Every puzzle state says whether its episode is over and whether it was solved. */
export interface PuzzleStatus {
  done: boolean;
  solved: boolean;
}

export interface Puzzle<S extends PuzzleStatus, A> {
  /** The words of the roles' instructions; may depend on the instance (e.g. the Sudoku size). */
  text(state: S): PuzzleText;
  /** The task: the instance as text, its rules and how far the episode has got. */
  describe(state: S, turn: number): string;
  /**
   * The action in an answer body (the text after "####" or "**Actions List**:", see
   * textAfterAnchor); null when nothing parseable is there. Must never throw.
   */
  parseAction(body: string): A | null;
  /** An explicit empty answer ("[]"), penalised like a missing one. */
  isEmpty(action: A): boolean;
  /** Applies an action; the input state is not mutated. Must never throw for a parsed action. */
  apply(state: S, action: A): PuzzleStep<S>;
  /** A correct answer body from this state, in the example's format (the scripted player); null if none. */
  solution(state: S): string | null;
}

/** What the tool agent hands to the plan agent of the same turn. */
export interface ToolResult<A = unknown> {
  code: string;
  stdout: string;
  /** The action parsed from the output; null when none could be parsed. */
  actions: A | null;
}

/**
 * How a puzzle agent's reward mixes its own term with the team's (`env.reward_formula`):
 * - tandem: local + alpha x [the action solves the puzzle], every candidate scored on its own;
 * - reference: the reference's `calculate_reward`: local + the env reward of the last action
 *   applied in the turn (the plan agent's, when every agent of the turn has acted); alpha unused.
 */
export type RewardFormula = 'tandem' | 'reference';

/** The options every puzzle takes beside its own (envs/<puzzle>/config.ts maps them). */
export interface PuzzleOptions {
  rewardFormula?: RewardFormula;
}
