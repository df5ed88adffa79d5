// The two agents of the PettingLLMs puzzle environments, acting in this order each turn:
// tool_call_agent writes Python that prints an action after "**Actions List**:" (the action is
// only simulated on a copy of the state), then plan_agent sees that code, its output and the
// parsed action, and answers the action after "####" that is applied to the puzzle. Played
// alone (an L0 single agent), plan_agent gets instructions that do not mention a code agent.
// This module holds their prompts and rewards; the puzzle supplies the rest (types.ts). Pure: no
// I/O. Rewards follow env.reward_formula (types.ts RewardFormula): tandem, reward = local +
// alpha * global with global = 1 when the action solves the puzzle; or reference, reward = local +
// the env reward at the end of the turn (global), which for the tool agent is known only once the
// plan agent has acted (definition.ts settleTurn).
import type { ChatMessage } from '../types.js';
import { clip, textAfterAnchor } from '../shared/text.js';
import type { Puzzle, PuzzleStatus, PuzzleStep, PuzzleText, RewardFormula, ToolResult } from './types.js';

export const PUZZLE_AGENTS = ['tool_call_agent', 'plan_agent'] as const;
export type PuzzleAgent = (typeof PUZZLE_AGENTS)[number];

export interface PromptContext<S, A = unknown> {
  state: S;
  /** 0-based turn index within the episode. */
  turn: number;
  /** What the tool agent did earlier in the same turn; undefined when it did not act. */
  toolResult?: ToolResult<A>;
}

/** The outcome of running the tool agent's code. */
export interface ToolExecution {
  code: string | null;
  stdout: string;
  exitCode: number | null;
  timedOut: boolean;
}

export interface PuzzleScore<S, A> {
  local: number;
  global: number;
  reward: number;
  /** The parsed action; null when none could be evaluated. */
  action: A | null;
  nextState: S;
  done: boolean;
  solved: boolean;
  outcome: string;
}

/** Local rewards for answers that give no action to evaluate. */
export const FAILURE_REWARDS = Object.freeze({ noCode: -2, codeError: -1, noAction: -2 });

// How much of the tool agent's code and output the plan agent is shown.
const MAX_CODE_CHARS = 2000;
const MAX_STDOUT_CHARS = 1000;

// ---------------------------------------------------------------- prompts

export function toolSystemPrompt(t: PuzzleText): string {
  const rules = [
    'Write Python code enclosed in ```python and ``` tags.',
    `Your code must print the ${t.answer} with print().`,
    ...t.toolRules,
    'Make sure the code runs as-is, using only the Python standard library.',
  ];
  return `You are an AI assistant specialized in solving planning problems through code generation. Your task is to analyze the given ${t.subject} and write Python code that produces ${t.target}.

Instructions:
${rules.map((rule, i) => `${i + 1}. ${rule}`).join('\n')}

Your code must print the final ${t.answer} in exactly this format:
**Actions List**: ${t.example}
(the list above only shows the format; do not print it verbatim).`;
}

/** The plan agent's instructions; `withTool` false when no code agent acts before it (L0). */
export function planSystemPrompt(t: PuzzleText, withTool: boolean): string {
  const intro = withTool
    ? `You will receive the task, the code agent's code, the code's execution output and the ${t.listName} parsed from it. Read the task, inspect the code, and ${t.check}`
    : `Read the task and ${t.solve}.`;
  return `You are a planning and reasoning agent. ${intro} Keep your reasoning brief but explicit: justify why ${t.justify}.

Formatting is mandatory: end your answer with ${t.finalName} after ####, for example:
#### ${t.example}`;
}

export function buildPuzzlePrompt<S extends PuzzleStatus, A>(puzzle: Puzzle<S, A>, agent: string, ctx: PromptContext<S, A>): ChatMessage[] {
  const t = puzzle.text(ctx.state);
  const task = puzzle.describe(ctx.state, ctx.turn);
  if (agent === 'tool_call_agent') {
    return [
      { role: 'system', content: toolSystemPrompt(t) },
      { role: 'user', content: `${task}\n\nWrite the Python code now; it must print **Actions List**: followed by the ${t.listName}.` },
    ];
  }
  if (ctx.toolResult === undefined) {
    return [
      { role: 'system', content: planSystemPrompt(t, false) },
      { role: 'user', content: `${task}\n\nGive ${t.finalName} after ####.` },
    ];
  }
  return [
    { role: 'system', content: planSystemPrompt(t, true) },
    { role: 'user', content: `${task}\n\n${describeToolResult(ctx.toolResult)}\n\nGive ${t.finalName} after ####.` },
  ];
}

function describeToolResult(result: ToolResult): string {
  const actions = result.actions === null ? 'none (no list could be parsed from the output)' : JSON.stringify(result.actions);
  return [
    "Code agent's code (this turn):",
    '```python',
    clip(String(result.code ?? ''), MAX_CODE_CHARS) || '(no code)',
    '```',
    "Code agent's execution output:",
    '```',
    clip(String(result.stdout ?? ''), MAX_STDOUT_CHARS) || '(no output)',
    '```',
    `Code agent's action list: ${actions}`,
  ].join('\n');
}

// ---------------------------------------------------------------- parsing

/** The action of an answer or tool output: puzzle.parseAction of the text after its anchor. */
export function parsePuzzleAnswer<S extends PuzzleStatus, A>(puzzle: Puzzle<S, A>, text: string): A | null {
  const body = textAfterAnchor(text);
  return body === null ? null : puzzle.parseAction(body);
}

// ---------------------------------------------------------------- rewards

/**
 * The tool agent's action is simulated on the current state; the environment does not advance.
 * Under the reference formula its team term waits for the plan agent's action (global 0 here).
 */
export function scoreTool<S extends PuzzleStatus, A>(
  puzzle: Puzzle<S, A>,
  state: S,
  exec: ToolExecution,
  alpha: number,
  formula: RewardFormula = 'tandem',
): PuzzleScore<S, A> {
  const unchanged = unchangedOf(state);
  if (exec.code === null) return { ...failure(FAILURE_REWARDS.noCode, 'no code'), ...unchanged };
  if (exec.timedOut) return { ...failure(FAILURE_REWARDS.codeError, 'code error: timed out'), ...unchanged };
  if (exec.exitCode !== 0) {
    return { ...failure(FAILURE_REWARDS.codeError, `code error: exit ${exec.exitCode ?? 'unknown'}`), ...unchanged };
  }
  const action = parsePuzzleAnswer(puzzle, exec.stdout);
  if (action === null) return { ...failure(FAILURE_REWARDS.noAction, 'no action list in output'), ...unchanged };
  if (puzzle.isEmpty(action)) return { ...failure(FAILURE_REWARDS.noAction, 'empty action list'), ...unchanged };
  const simulated = puzzle.apply(state, action);
  return {
    ...mixed(simulated, alpha, formula, 0),
    action,
    outcome: `simulated ${simulated.summary}`,
    ...unchanged,
  };
}

/**
 * The plan agent's action is applied for real. Under the reference formula its team term is the
 * env reward of its own action (the state's reward at the end of the turn it ends): 2 x local.
 */
export function scorePlan<S extends PuzzleStatus, A>(
  puzzle: Puzzle<S, A>,
  state: S,
  text: string,
  alpha: number,
  formula: RewardFormula = 'tandem',
): PuzzleScore<S, A> {
  const action = parsePuzzleAnswer(puzzle, text);
  if (action === null) return { ...failure(FAILURE_REWARDS.noAction, 'no action list after ####'), ...unchangedOf(state) };
  if (puzzle.isEmpty(action)) return { ...failure(FAILURE_REWARDS.noAction, 'empty action list'), ...unchangedOf(state) };
  const applied: PuzzleStep<S> = puzzle.apply(state, action);
  return {
    ...mixed(applied, alpha, formula, applied.reward),
    action,
    nextState: applied.state,
    done: applied.done,
    solved: applied.solved,
    outcome: applied.summary,
  };
}

/**
 * An evaluated action's rewards: local is its env reward; global is [solved] under the tandem
 * formula (reward = local + alpha * global), or the reference formula's team term as far as it is
 * known when scored, `team` (reward = local + global).
 */
function mixed(step: PuzzleStep<unknown>, alpha: number, formula: RewardFormula, team: number): { local: number; global: number; reward: number } {
  if (formula === 'reference') return { local: step.reward, global: team, reward: step.reward + team };
  const global = step.solved ? 1 : 0;
  return { local: step.reward, global, reward: step.reward + alpha * global };
}

function unchangedOf<S extends PuzzleStatus>(state: S): { nextState: S; done: boolean; solved: boolean } {
  return { nextState: state, done: state.done, solved: state.solved };
}

// A failed answer earns no global reward, so reward = local whatever alpha is. Under the reference
// formula a plan agent without an action steps the env with an empty list, whose env reward is 0
// in all three of the reference's puzzles: global 0 there too.
function failure(local: number, outcome: string): { local: number; global: number; reward: number; action: null; outcome: string } {
  return { local, global: 0, reward: local, action: null, outcome };
}
