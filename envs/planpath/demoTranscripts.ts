// Plan-Path's demonstration transcripts for the default tiny model's warm start
// (envs/puzzle/demos.ts): maps of 4x4 and 5x5, answered from the shortest path. Pure and seeded.
// With the tool helper (the miniature of helper.ts, env.tool_helper), half of the tool agent's
// programs call shortest_path instead of printing a list: half of those rightly, the others with
// start and goal swapped, one coordinate off by one, or without printing the result. Its tool
// agent's reading corpus (envs/puzzle/demos.ts, 'read-tool') has the right call for every prompt.
// Under helper_grid named (helper.ts) every call passes the grid as `rows`.
import type { ChatMessage } from '../types.js';
import { literalToolDemo, moveListDemos, type DemoKind, type MoveListDemoSource, type ToolDemo } from '../puzzle/demos.js';
import { mulberry32, randomInt } from '../shared/rng.js';
import { bfsShortestPath, generate, type Coord, type HelperGrid, type PlanPathState } from './grid.js';
import { planPathPuzzle } from './roles.js';

export function demoSource(seed: number, toolHelper = false, helperGrid: HelperGrid = 'literal'): MoveListDemoSource<PlanPathState> {
  return {
    puzzle: planPathPuzzle,
    instance: (i, rng) => generate(seed * 100_003 + i, { mapSize: 4 + randomInt(rng, 2), blockedRatio: 0.22, toolHelper, helperGrid }),
    solve: (state) => bfsShortestPath(state.rows, state.pos, state.goal),
    rationale: 'The moves follow the open cells to the goal.',
    maxTurns: 2,
    tool: toolHelper ? helperToolDemo : undefined,
    readTool: toolHelper ? (state) => helperProgram(state, state.pos, state.goal, true) : undefined,
  };
}

export function demoTranscripts(count: number, seed: number, kind: DemoKind = 'task'): Generator<ChatMessage[]> {
  return moveListDemos(demoSource(seed), count, mulberry32(seed), kind);
}

export function helperDemoTranscripts(count: number, seed: number, kind: DemoKind = 'task', helperGrid: HelperGrid = 'literal'): Generator<ChatMessage[]> {
  return moveListDemos(demoSource(seed, true, helperGrid), count, mulberry32(seed), kind);
}

/** How a demonstrated call of the helper goes wrong, if it does. */
type HelperMistake = 'none' | 'swapped' | 'off by one' | 'not printed';
const MISTAKES: readonly HelperMistake[] = ['swapped', 'off by one', 'not printed'];

const tuple = ([r, c]: Coord) => `(${r}, ${c})`;
const pythonList = (moves: readonly string[]) => `[${moves.map((m) => `'${m}'`).join(', ')}]`;

/** The tool agent's program: the noisy list printed as it is (half the time), or a call of the helper. */
function helperToolDemo(state: PlanPathState, moves: string[], rng: () => number): ToolDemo {
  if (rng() < 0.5) return literalToolDemo(moves);
  return helperCall(state, rng() < 0.5 ? 'none' : MISTAKES[randomInt(rng, MISTAKES.length)], rng);
}

/** A call of shortest_path with the current position and the goal as the prompt shows them, or as `mistake` gets them wrong. */
function helperCall(state: PlanPathState, mistake: HelperMistake, rng: () => number): ToolDemo {
  let start: Coord = [state.pos[0], state.pos[1]];
  let goal: Coord = [state.goal[0], state.goal[1]];
  if (mistake === 'swapped') [start, goal] = [goal, start];
  if (mistake === 'off by one') {
    const end = rng() < 0.5 ? start : goal;
    end[randomInt(rng, 2)] += rng() < 0.5 ? -1 : 1;
  }
  return helperProgram(state, start, goal, mistake !== 'not printed');
}

/** The call of shortest_path with the grid rows (as `rows` under helper_grid named), `start` and `goal` (the right one: the state's position and goal). */
export function helperCallText(state: PlanPathState, start: Coord = state.pos, goal: Coord = state.goal): string {
  return `shortest_path(${state.helperGrid === 'named' ? 'rows' : JSON.stringify(state.rows)}, ${tuple(start)}, ${tuple(goal)})`;
}

/**
 * A program calling shortest_path with the grid rows, `start` and `goal`, and the output it prints
 * (the helper's moves are bfsShortestPath's, printed as Python prints a list or None).
 */
function helperProgram(state: PlanPathState, start: Coord, goal: Coord, printed: boolean): ToolDemo {
  // One line, beginning unlike a printed list ("moves = [...]"), so that the two forms do not mix.
  const call = helperCallText(state, start, goal);
  if (!printed) return { code: call, stdout: '' };
  const path = bfsShortestPath(state.rows, start, goal);
  return { code: `print("**Actions List**:", ${call})`, stdout: `**Actions List**: ${path === null ? 'None' : pythonList(path)}\n` };
}
