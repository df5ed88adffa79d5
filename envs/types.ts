// Types shared by every Tandem environment.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

// A grid move: U = row - 1, D = row + 1, L = col - 1, R = col + 1.
export type Move = 'U' | 'D' | 'L' | 'R';

/** What running an agent's program produced (see EnvDefinition.program). */
export interface ProgramRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** What an agent sees when it is prompted. */
export interface TurnContext<S> {
  state: S;
  /** 0-based turn of the episode. */
  turn: number;
  /** What the agents before this one handed over in the same turn (JSON; undefined for the first). */
  handoff: unknown;
}

/**
 * One candidate answer, scored. reward = local + alpha * global, unless the environment's
 * formula says otherwise (the puzzles' `env.reward_formula: reference`: local + global).
 */
export interface Scored<S> {
  local: number;
  global: number;
  reward: number;
  /** Short human-readable account, e.g. "3 moves, reached goal". */
  outcome: string;
  /** The state after this answer (unchanged when the answer only simulates). */
  nextState: S;
  /** The episode ends here (solved, failed, or out of moves). */
  done: boolean;
  solved: boolean;
  /** What the next agent in the same turn is shown if the episode continues from this answer. */
  handoff: unknown;
}

/** One (turn, agent) group of a turn, as settleTurn sees it. */
export interface TurnScores<S> {
  agent: string;
  scored: Scored<S>[];
  /** The candidate the episode continued from. */
  chosen: number;
}

/** What settling a turn may change in a candidate's score. */
export type TeamTerm = Pick<Scored<unknown>, 'global' | 'reward'>;

/**
 * An environment with its agent roles, as the episode workflow and the env activities use it.
 * Every function is pure and deterministic; states are JSON-serialisable. Model output of any
 * shape must map to a score (an invalid answer is a penalty), never to an exception.
 */
export interface EnvDefinition<S, Options> {
  /** The roles this environment defines, in their usual turn order. */
  agents: readonly string[];
  /** The instance for a problem seed. */
  reset(seed: number, options: Options): S;
  prompt(agent: string, ctx: TurnContext<S>): ChatMessage[];
  /**
   * The Python program an agent's answer asks to run, or null: a tool agent's code, or a test
   * harness built around the answer and the state's problem.
   */
  program(agent: string, text: string, state: S): string | null;
  /**
   * Scores an answer from `state`; `run` is the result of running `program(...)` when it was not
   * null; `options` are the environment's options as `reset` takes them (unset: its defaults).
   */
  score(agent: string, state: S, text: string, run: ProgramRun | null, alpha: number, options?: Options): Scored<S>;
  /**
   * The team term of one turn's rewards, once every agent of the turn has acted: the turn's
   * groups in acting order -> each candidate's final `global` and `reward`. What an agent earns
   * from what came after it in the turn (the reference's `calculate_reward`, called after every
   * agent's step). Unset: the scores stand as scored.
   */
  settleTurn?(groups: TurnScores<S>[], options: Options): TeamTerm[][];
  /**
   * Whether `agent` takes part from `state` (e.g. only the role whose move it is); the episode
   * skips, without sampling, an agent that does not. Unset: every agent of turn_order acts.
   */
  acts?(agent: string, state: S): boolean;
  /** A scripted player's answer (a policy with `scripted: true`); envs without one cannot have scripted policies. */
  scripted?(agent: string, ctx: TurnContext<S>): string;
}
