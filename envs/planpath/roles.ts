// The two Plan-Path agents of the PettingLLMs reference, acting in this order each turn:
// tool_call_agent writes Python that prints a move list (its moves are only simulated), then
// plan_agent sees that code, its output and the parsed moves, and answers the moves that are
// applied to the grid. This module holds their prompts, the parsers for their answers and
// their rewards (reward = local + alpha * global). Pure: no I/O.
import type { ChatMessage, Move } from '../types.js';
import { applyMoves, render, type MoveResult, type PlanPathState } from './grid.js';

export const PLANPATH_AGENTS = ['tool_call_agent', 'plan_agent'] as const;
export type PlanPathAgent = (typeof PLANPATH_AGENTS)[number];

// What the tool agent did earlier in the same turn.
export interface ToolResult {
  code: string;
  stdout: string;
  actions: string[] | null;
}

export interface PromptContext {
  state: PlanPathState;
  // 0-based turn index within the episode.
  turn: number;
  toolResult?: ToolResult;
}

// The outcome of running the tool agent's code.
export interface ToolExecution {
  code: string | null;
  stdout: string;
  exitCode: number | null;
  timedOut: boolean;
}

export interface AgentScore {
  local: number;
  global: number;
  reward: number;
  // The parsed moves ([] when none could be parsed); 'X' marks an unrecognised entry.
  actions: string[];
  nextState: PlanPathState;
  done: boolean;
  solved: boolean;
  outcome: string;
}

// Local rewards for answers that produce no moves to evaluate.
const NO_CODE_REWARD = -2;
const CODE_ERROR_REWARD = -1;
const NO_ACTIONS_REWARD = -2;

// Longest parsed move list; the rest is dropped.
const MAX_ACTIONS = 200;
// How much of the tool agent's code and output the plan agent is shown.
const MAX_CODE_CHARS = 2000;
const MAX_STDOUT_CHARS = 1000;

// ---------------------------------------------------------------- prompts

const TOOL_SYSTEM = `You are an AI assistant specialized in solving planning problems through code generation. Your task is to analyze the given grid and write Python code that produces the sequence of moves leading to the goal.

Instructions:
1. Write Python code enclosed in \`\`\`python and \`\`\` tags.
2. Your code must print the move sequence with print().
3. Moves are the strings 'U', 'D', 'L', 'R' (Up, Down, Left, Right).
4. You may print the complete sequence to the goal, or a partial sequence if you are uncertain.
5. If your algorithm produces numbers, convert them with action_map = {0: 'U', 1: 'D', 2: 'L', 3: 'R'}.
6. Make sure the code runs as-is, using only the Python standard library.

Your code must print the final move sequence in exactly this format:
**Actions List**: ["U", "R", "D", "L"]
(the list above only shows the format; do not print it verbatim).`;

const PLAN_SYSTEM = `You are a planning and reasoning agent. You will receive the task, the code agent's code, the code's execution output and the move list parsed from it. Read the task, inspect the code, and check the moves against the grid. If they are correct and sufficient, adopt them; otherwise improve or override them with your own reasoning. Keep your reasoning brief but explicit: justify why the final moves are correct.

Formatting is mandatory: end your answer with the final list of moves after ####, for example:
#### ["U", "R", "D", "L"]`;

export function buildPrompt(agent: PlanPathAgent, ctx: PromptContext): ChatMessage[] {
  const task = describeTask(ctx);
  if (agent === 'tool_call_agent') {
    return [
      { role: 'system', content: TOOL_SYSTEM },
      { role: 'user', content: `${task}\n\nWrite the Python code now; it must print **Actions List**: followed by the move list.` },
    ];
  }
  return [
    { role: 'system', content: PLAN_SYSTEM },
    { role: 'user', content: `${task}\n\n${describeToolResult(ctx.toolResult)}\n\nGive the final list of moves after ####.` },
  ];
}

function describeTask({ state, turn }: PromptContext): string {
  const lines = [
    "You are a path planner (grid walker). Grid ('.' free, '#' blocked, 'S' your current position, 'G' the goal):",
    render(state),
    `Grid rows as a Python list (row 0 first): ${JSON.stringify(state.rows)}`,
    'Rules: moves are U (row - 1), D (row + 1), L (col - 1), R (col + 1); stay within bounds; do not enter \'#\'. ' +
      'An invalid move is penalised and leaves you in place; reaching the goal by a shortest path earns a bonus.',
  ];
  // Moves of earlier turns have already been applied, which the rendered position shows.
  if (turn > 0) {
    lines.push(`This is turn ${turn + 1}. Moves made so far: ${state.steps}; plan from the current position.`);
  }
  return lines.join('\n');
}

function describeToolResult(result: ToolResult | undefined): string {
  if (result === undefined) return 'The code agent produced no result this turn.';
  const actions = result.actions === null ? 'none (no list could be parsed from the output)' : JSON.stringify(result.actions);
  return [
    "Code agent's code (this turn):",
    '```python',
    clip(result.code, MAX_CODE_CHARS) || '(no code)',
    '```',
    "Code agent's execution output:",
    '```',
    clip(result.stdout, MAX_STDOUT_CHARS) || '(no output)',
    '```',
    `Code agent's action list: ${actions}`,
  ].join('\n');
}

// Keeps the head and tail of a long string, like the reference's truncatefn.
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n...(truncated)...\n${text.slice(-half)}`;
}

// ---------------------------------------------------------------- parsers

// A closed fenced block: info string on the opening line, then the body.
const FENCED_BLOCK = /```([^\n`]*)\n([\s\S]*?)```/g;
const PYTHON_TAG = /^(python3?|py)$/i;
// A ```python fence that is never closed (the generation hit its length limit).
const OPEN_PYTHON_BLOCK = /```(?:python3?|py)[ \t]*\n([\s\S]*)$/i;

// The code of the last ```python block, else of the last untagged ``` block, else of an
// unclosed ```python block at the end; null when there is none or it is empty.
export function extractCode(text: string): string | null {
  if (typeof text !== 'string') return null;
  let python: string | null = null;
  let untagged: string | null = null;
  let closedEnd = 0;
  for (const m of text.matchAll(FENCED_BLOCK)) {
    closedEnd = m.index + m[0].length;
    const tag = m[1].trim().split(/\s+/)[0];
    const body = m[2].trim();
    if (body === '') continue;
    if (PYTHON_TAG.test(tag)) python = body;
    else if (tag === '') untagged = body;
  }
  const found = python ?? untagged;
  if (found !== null) return found;
  const open = OPEN_PYTHON_BLOCK.exec(text.slice(closedEnd));
  const body = open?.[1].trim();
  return body ? body : null;
}

// "**Actions List**:" and looser spellings ("Actions List:", "actions list **:"). One
// quantifier after "list" keeps matching linear on long runs of spaces.
const ACTIONS_LABEL = /actions\s*list[\s*]*:/gi;
// Markdown between an anchor and its list: whitespace, emphasis, code fences.
const LEADING_MARKUP = /^(?:\s|\*|```[A-Za-z]*|`)+/;
const TOKEN = /[A-Za-z0-9]+/g;
// The reference's action_map for numeric moves.
const NUMBER_MOVES: ReadonlyMap<string, Move> = new Map([
  ['0', 'U'],
  ['1', 'D'],
  ['2', 'L'],
  ['3', 'R'],
]);
const WORD_MOVES: ReadonlyMap<string, Move> = new Map([
  ['u', 'U'],
  ['d', 'D'],
  ['l', 'L'],
  ['r', 'R'],
  ['up', 'U'],
  ['down', 'D'],
  ['left', 'L'],
  ['right', 'R'],
]);

// The move list after the last "####" (plan answer) or, if there is none, after the last
// "**Actions List**:" (tool output). A bracketed list may hold JSON or Python strings, bare
// letters, words or the numbers 0-3, in any case; an entry that is none of these becomes 'X'
// (an invalid move). Without brackets, the first line must consist of moves only. Returns null
// when nothing parseable follows the anchor, [] for an explicit empty list, and at most
// MAX_ACTIONS moves. Never throws.
export function parseActionList(text: string): string[] | null {
  if (typeof text !== 'string') return null;
  const hashes = text.lastIndexOf('####');
  let start = hashes >= 0 ? hashes + 4 : -1;
  if (start < 0) {
    for (const m of text.matchAll(ACTIONS_LABEL)) start = m.index + m[0].length;
  }
  if (start < 0) return null;
  const body = text.slice(start).replace(LEADING_MARKUP, '');
  const lineEnd = body.indexOf('\n');
  const line = lineEnd < 0 ? body : body.slice(0, lineEnd);
  const open = line.indexOf('[');
  if (open < 0) return parseBareMoves(line);
  // A list may span lines; an unclosed one (truncated output) is read to the end of the line.
  const close = closingBracket(body, open);
  return parseListEntries(body.slice(open + 1, close < 0 ? line.length : close));
}

function parseListEntries(inner: string): string[] {
  const moves: string[] = [];
  for (const [token] of inner.matchAll(TOKEN)) {
    moves.push(...tokenMoves(token) ?? ['X']);
    if (moves.length >= MAX_ACTIONS) break;
  }
  return moves.slice(0, MAX_ACTIONS);
}

function parseBareMoves(line: string): string[] | null {
  const moves: string[] = [];
  for (const [token] of line.matchAll(TOKEN)) {
    const parsed = tokenMoves(token);
    if (parsed === null) return null;
    moves.push(...parsed);
    if (moves.length >= MAX_ACTIONS) break;
  }
  return moves.length > 0 ? moves.slice(0, MAX_ACTIONS) : null;
}

// The moves one token stands for: a letter, word or number, or a run of capitals such as
// "RRDD" (a path printed with ''.join); null when it is not a move.
function tokenMoves(token: string): Move[] | null {
  const single = WORD_MOVES.get(token.toLowerCase()) ?? NUMBER_MOVES.get(token);
  if (single !== undefined) return [single];
  if (/^[UDLR]+$/.test(token)) return Array.from(token.slice(0, MAX_ACTIONS), (ch) => ch as Move);
  return null;
}

// Index of the ']' closing the '[' at `open`, or -1.
function closingBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) return i;
  }
  return -1;
}

// ---------------------------------------------------------------- rewards

// The tool agent's moves are simulated on the current state; the environment does not advance.
export function scoreToolAgent(state: PlanPathState, exec: ToolExecution, alpha: number): AgentScore {
  const unchanged = { nextState: state, done: state.done, solved: state.solved };
  if (exec.code === null) return { ...failure(NO_CODE_REWARD, 'no code'), ...unchanged };
  if (exec.timedOut) return { ...failure(CODE_ERROR_REWARD, 'code error: timed out'), ...unchanged };
  if (exec.exitCode !== 0) {
    return { ...failure(CODE_ERROR_REWARD, `code error: exit ${exec.exitCode ?? 'unknown'}`), ...unchanged };
  }
  const actions = parseActionList(exec.stdout);
  if (actions === null) return { ...failure(NO_ACTIONS_REWARD, 'no action list in output'), ...unchanged };
  if (actions.length === 0) return { ...failure(NO_ACTIONS_REWARD, 'empty action list'), ...unchanged };
  const simulated = applyMoves(state, actions);
  const global = simulated.solved ? 1 : 0;
  return {
    local: simulated.reward,
    global,
    reward: simulated.reward + alpha * global,
    actions,
    outcome: `simulated ${describeMoves(actions.length, simulated)}`,
    ...unchanged,
  };
}

// The plan agent's moves are applied for real.
export function scorePlanAgent(state: PlanPathState, text: string, alpha: number): AgentScore {
  const unchanged = { nextState: state, done: state.done, solved: state.solved };
  const actions = parseActionList(text);
  if (actions === null) return { ...failure(NO_ACTIONS_REWARD, 'no action list after ####'), ...unchanged };
  if (actions.length === 0) return { ...failure(NO_ACTIONS_REWARD, 'empty action list'), ...unchanged };
  const applied = applyMoves(state, actions);
  const global = applied.solved ? 1 : 0;
  return {
    local: applied.reward,
    global,
    reward: applied.reward + alpha * global,
    actions,
    nextState: applied.state,
    // Solved, or the step budget ran out (the state then takes no more moves).
    done: applied.done,
    solved: applied.solved,
    outcome: describeMoves(actions.length, applied),
  };
}

// A failed answer earns no global reward, so reward = local whatever alpha is.
function failure(local: number, outcome: string): Pick<AgentScore, 'local' | 'global' | 'reward' | 'actions' | 'outcome'> {
  return { local, global: 0, reward: local, actions: [], outcome };
}

// E.g. "3 moves (1 invalid), reached goal".
function describeMoves(count: number, result: MoveResult): string {
  const invalid = result.invalidMoves > 0 ? ` (${result.invalidMoves} invalid)` : '';
  const [r, c] = result.state.pos;
  const end = result.solved ? 'reached goal' : result.done ? 'step limit reached' : `ended at (${r}, ${c})`;
  return `${count} move${count === 1 ? '' : 's'}${invalid}, ${end}`;
}
