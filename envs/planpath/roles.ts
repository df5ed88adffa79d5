// Plan-Path as a Puzzle for the two PettingLLMs roles (envs/puzzle/roles.ts): the task text
// (the tool agent's rules name the shortest_path helper when the state has it, helper.ts),
// and the move-list puzzle (envs/puzzle/moves.ts) around the grid reducer. The functions below
// keep Plan-Path's own API (moves as string lists). Pure: no I/O.
import { countMoves, moveListPuzzle } from '../puzzle/moves.js';
import {
  buildPuzzlePrompt,
  PUZZLE_AGENTS,
  scorePlan,
  scoreTool,
  type PromptContext as PuzzlePromptContext,
  type PuzzleScore,
  type ToolExecution,
} from '../puzzle/roles.js';
import type { Puzzle, PuzzleText, ToolResult as PuzzleToolResult } from '../puzzle/types.js';
import type { ChatMessage } from '../types.js';
import { applyMoves, bfsShortestPath, render, type MoveResult, type PlanPathState } from './grid.js';
import { TOOL_HELPER_NAMED_RULE, TOOL_HELPER_RULE } from './helper.js';

export { extractCode } from '../shared/text.js';
export type { ToolExecution } from '../puzzle/roles.js';

export const PLANPATH_AGENTS = PUZZLE_AGENTS;
export type PlanPathAgent = (typeof PLANPATH_AGENTS)[number];

/** What the tool agent did earlier in the same turn. */
export type ToolResult = PuzzleToolResult<string[]>;
export type PromptContext = PuzzlePromptContext<PlanPathState, string[]>;

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

export const PLANPATH_TEXT: Readonly<PuzzleText> = Object.freeze({
  subject: 'grid',
  target: 'the sequence of moves leading to the goal',
  answer: 'move sequence',
  toolRules: [
    "Moves are the strings 'U', 'D', 'L', 'R' (Up, Down, Left, Right).",
    'You may print the complete sequence to the goal, or a partial sequence if you are uncertain.',
    "If your algorithm produces numbers, convert them with action_map = {0: 'U', 1: 'D', 2: 'L', 3: 'R'}.",
  ],
  example: '["U", "R", "D", "L"]',
  listName: 'move list',
  check:
    'check the moves against the grid. If they are correct and sufficient, adopt them; otherwise improve or override them with your own reasoning.',
  solve: "work out a sequence of moves from your current position to the goal that never enters a '#' cell",
  justify: 'the final moves are correct',
  finalName: 'the final list of moves',
});

/** PLANPATH_TEXT with the tool agent's rule about the helper (env.tool_helper; env.helper_grid named: the named rows' rule). */
const PLANPATH_HELPER_TEXT: Readonly<PuzzleText> = Object.freeze({ ...PLANPATH_TEXT, toolRules: [...PLANPATH_TEXT.toolRules, TOOL_HELPER_RULE] });
const PLANPATH_HELPER_NAMED_TEXT: Readonly<PuzzleText> = Object.freeze({ ...PLANPATH_TEXT, toolRules: [...PLANPATH_TEXT.toolRules, TOOL_HELPER_NAMED_RULE] });

export const planPathPuzzle: Puzzle<PlanPathState, string[]> = moveListPuzzle({
  text: (state: PlanPathState) => (!state.toolHelper ? PLANPATH_TEXT : state.helperGrid === 'named' ? PLANPATH_HELPER_NAMED_TEXT : PLANPATH_HELPER_TEXT),
  describe: describeTask,
  applyMoves,
  summarise: describeMoves,
  solution(state: PlanPathState) {
    const path = bfsShortestPath(state.rows, state.pos, state.goal);
    return path === null ? null : JSON.stringify(path);
  },
});

export function buildPrompt(agent: PlanPathAgent, ctx: PromptContext): ChatMessage[] {
  return buildPuzzlePrompt(planPathPuzzle, agent, ctx);
}

/** The tool agent's moves are simulated on the current state; the environment does not advance. */
export function scoreToolAgent(state: PlanPathState, exec: ToolExecution, alpha: number): AgentScore {
  return withActions(scoreTool(planPathPuzzle, state, exec, alpha));
}

/** The plan agent's moves are applied for real. */
export function scorePlanAgent(state: PlanPathState, text: string, alpha: number): AgentScore {
  return withActions(scorePlan(planPathPuzzle, state, text, alpha));
}

function withActions({ action, ...rest }: PuzzleScore<PlanPathState, string[]>): AgentScore {
  return { ...rest, actions: action ?? [] };
}

function describeTask(state: PlanPathState, turn: number): string {
  const lines = [
    "You are a path planner (grid walker). Grid ('.' free, '#' blocked, 'S' your current position, 'G' the goal):",
    render(state),
    `Grid rows as a Python list (row 0 first): ${JSON.stringify(state.rows)}`,
    'Rules: moves are U (row - 1), D (row + 1), L (col - 1), R (col + 1); stay within bounds; do not enter \'#\'. ' +
      (state.invalidMove === 'end' ? 'An invalid move ends the episode unsolved' : 'An invalid move is penalised and leaves you in place') +
      '; reaching the goal by a shortest path earns a bonus.',
  ];
  // Moves of earlier turns have already been applied, which the rendered position shows.
  if (turn > 0) {
    lines.push(`This is turn ${turn + 1}. Moves made so far: ${state.steps}; plan from the current position.`);
  }
  return lines.join('\n');
}

// E.g. "3 moves (1 invalid), reached goal".
function describeMoves(count: number, result: MoveResult): string {
  const [r, c] = result.state.pos;
  const end = result.solved
    ? 'reached goal'
    : result.endedByInvalid
      ? 'an invalid move ended the episode'
      : result.done
        ? 'step limit reached'
        : `ended at (${r}, ${c})`;
  return `${countMoves(count, result.invalidMoves)}, ${end}`;
}
