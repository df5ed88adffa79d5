// The Plan-Path grid world as a pure, JSON-serialisable reducer, faithful to the PettingLLMs
// PlanPathGridEnvState: '.' free, '#' blocked, moves U/D/L/R, step/invalid penalties plus
// potential-based shaping, a goal reward with a bonus for an optimal-length episode, and a
// failure penalty when the step budget runs out. The state also carries the tool agent's
// setting (toolHelper and helperGrid, helper.ts), which its prompt and program depend on, and what
// an invalid move does (invalidMove: the reference's 'stay', or Tandem's stricter 'end').
import type { Move } from '../types.js';
import { moveDelta } from '../puzzle/moves.js';
import { mulberry32, randomInt } from '../shared/rng.js';

export type Coord = [row: number, col: number];

export interface PlanPathState {
  rows: string[];
  start: Coord;
  goal: Coord;
  pos: Coord;
  // Moves attempted so far in the episode, valid or not.
  steps: number;
  invalidCount: number;
  done: boolean;
  solved: boolean;
  totalReward: number;
  // BFS shortest-path length from start to goal, in moves.
  optimalLength: number;
  maxSteps: number;
  // The tool agent's program runs with the shortest_path helper (env.tool_helper, helper.ts).
  toolHelper: boolean;
  /** With the helper: whether the program finds the grid rows defined as `rows` (a state recorded before this field existed: 'literal'). */
  helperGrid?: HelperGrid;
  /** What an invalid move does (a state recorded before this field existed: 'stay', as then). */
  invalidMove?: InvalidMoveRule;
}

/**
 * What a move into a wall or off the grid does: 'stay' (the reference's: rInvalid, the walker
 * stays, the moves after it still run) or 'end' (Tandem's: rInvalid + rFail and the episode
 * ends unsolved). Under 'stay' a long list of random moves reaches the goal of a small grid by
 * chance (bench/learning/chance.ts); under 'end' only a list whose every move is legal can.
 */
export type InvalidMoveRule = 'stay' | 'end';

/**
 * How the tool agent's call of the helper gets the grid (env.helper_grid): 'literal' (it copies
 * the rows from its prompt into the call) or 'named' (its program also finds them defined as
 * `rows`, so the call copies only the position and the goal).
 */
export type HelperGrid = 'literal' | 'named';

/** The per-episode rules a map is played under. */
export interface PlanPathRules {
  maxSteps?: number;
  toolHelper?: boolean;
  helperGrid?: HelperGrid;
  invalidMove?: InvalidMoveRule;
}

export interface PlanPathRewards {
  rStep: number;
  rInvalid: number;
  rGoal: number;
  rOpt: number;
  rFail: number;
  gamma: number;
  lambdaPot: number;
}

// The reference's DEFAULT_R_* constants.
export const PLANPATH_REWARDS: Readonly<PlanPathRewards> = Object.freeze({
  rStep: -0.01,
  rInvalid: -0.1,
  rGoal: 1.0,
  rOpt: 0.5,
  rFail: -1.0,
  gamma: 0.99,
  lambdaPot: 1.0,
});

// The reference's DEFAULT_MAX_STEPS: a guard against endless episodes, not a difficulty knob.
export const DEFAULT_MAX_STEPS = 10_000;

const MAX_GENERATION_TRIES = 2000;

// Also the order in which BFS tries neighbours.
const MOVES: readonly Move[] = ['U', 'D', 'L', 'R'];

export interface GenerateOptions extends PlanPathRules {
  mapSize: number;
  blockedRatio: number;
}

export interface MoveResult {
  state: PlanPathState;
  // Sum of the per-move rewards of the moves applied by this call.
  reward: number;
  solved: boolean;
  done: boolean;
  invalidMoves: number;
  /** This call's invalid move ended the episode (invalidMove 'end'). */
  endedByInvalid: boolean;
}

// A fresh episode on the given map.
export function initialState(rows: string[], start: Coord, goal: Coord, rules: PlanPathRules = {}): PlanPathState {
  const { maxSteps = DEFAULT_MAX_STEPS, toolHelper = false, helperGrid = 'literal', invalidMove = 'stay' } = rules;
  if (invalidMove !== 'stay' && invalidMove !== 'end') throw new RangeError(`invalidMove must be 'stay' or 'end', got ${String(invalidMove)}`);
  if (helperGrid !== 'literal' && helperGrid !== 'named') throw new RangeError(`helperGrid must be 'literal' or 'named', got ${String(helperGrid)}`);
  const path = bfsShortestPath(rows, start, goal);
  if (path === null) throw new RangeError('goal is not reachable from start');
  return {
    rows: [...rows],
    start: [start[0], start[1]],
    goal: [goal[0], goal[1]],
    pos: [start[0], start[1]],
    steps: 0,
    invalidCount: 0,
    done: false,
    solved: false,
    totalReward: 0,
    optimalLength: path.length,
    maxSteps,
    toolHelper,
    helperGrid,
    invalidMove,
  };
}

// A random map for `seed`: each cell blocked with probability blockedRatio, start and goal
// distinct free cells with the goal reachable. Unlucky draws are retried from the same RNG
// stream; after MAX_GENERATION_TRIES the reference's fallback (an all-free grid, corner to
// corner) is used.
export function generate(seed: number, opts: GenerateOptions): PlanPathState {
  const { mapSize, blockedRatio, ...rules } = opts;
  if (!Number.isInteger(mapSize) || mapSize < 2) throw new RangeError(`mapSize must be an integer >= 2, got ${mapSize}`);
  if (!(blockedRatio >= 0 && blockedRatio <= 1)) throw new RangeError(`blockedRatio must be in [0, 1], got ${blockedRatio}`);
  const rng = mulberry32(seed);
  for (let attempt = 0; attempt < MAX_GENERATION_TRIES; attempt++) {
    const rows: string[] = [];
    const free: Coord[] = [];
    for (let r = 0; r < mapSize; r++) {
      let row = '';
      for (let c = 0; c < mapSize; c++) {
        const blocked = rng() < blockedRatio;
        row += blocked ? '#' : '.';
        if (!blocked) free.push([r, c]);
      }
      rows.push(row);
    }
    if (free.length < 2) continue;
    const start = free[randomInt(rng, free.length)];
    let goal = free[randomInt(rng, free.length)];
    while (sameCell(goal, start)) goal = free[randomInt(rng, free.length)];
    if (bfsShortestPath(rows, start, goal) !== null) return initialState(rows, start, goal, rules);
  }
  const rows = Array.from({ length: mapSize }, () => '.'.repeat(mapSize));
  return initialState(rows, [0, 0], [mapSize - 1, mapSize - 1], rules);
}

// Applies moves in order until the episode ends; moves after that are ignored. Returns a new
// state; the input is never mutated. Any string other than U/D/L/R is an invalid move.
export function applyMoves(
  state: PlanPathState,
  moves: readonly string[],
  rewards: Readonly<PlanPathRewards> = PLANPATH_REWARDS,
): MoveResult {
  let pos: Coord = [state.pos[0], state.pos[1]];
  let { steps, invalidCount, done, solved } = state;
  let reward = 0;
  let invalidMoves = 0;
  let endedByInvalid = false;
  for (const move of moves) {
    if (done) break;
    const target = moveTarget(state.rows, pos, move);
    // Like the reference, shaping uses the attempted position, which for an invalid move is
    // the unchanged one (so an invalid move still earns (1 - gamma) * distance).
    const next = target ?? pos;
    let r = target === null ? rewards.rInvalid : rewards.rStep;
    if (target === null) invalidMoves++;
    r += rewards.lambdaPot * (rewards.gamma * potential(next, state.goal) - potential(pos, state.goal));
    pos = next;
    steps++;
    if (sameCell(pos, state.goal)) {
      r += rewards.rGoal;
      if (steps === state.optimalLength) r += rewards.rOpt;
      done = true;
      solved = true;
    } else if (target === null && state.invalidMove === 'end') {
      r += rewards.rFail;
      done = true;
      endedByInvalid = true;
    } else if (steps >= state.maxSteps) {
      r += rewards.rFail;
      done = true;
    }
    reward += r;
  }
  const next: PlanPathState = {
    ...state,
    rows: [...state.rows],
    start: [state.start[0], state.start[1]],
    goal: [state.goal[0], state.goal[1]],
    pos,
    steps,
    invalidCount: invalidCount + invalidMoves,
    done,
    solved,
    totalReward: state.totalReward + reward,
  };
  return { state: next, reward, solved, done, invalidMoves, endedByInvalid };
}

// The grid with 'S' at the current position and 'G' at the goal, then a coordinates line.
export function render(state: PlanPathState): string {
  const [pr, pc] = state.pos;
  const [gr, gc] = state.goal;
  const lines = state.rows.map((row, r) =>
    Array.from(row, (cell, c) => (r === pr && c === pc ? 'S' : r === gr && c === gc ? 'G' : cell)).join(''),
  );
  lines.push(`Current position (row, col): (${pr}, ${pc}); goal: (${gr}, ${gc})`);
  return lines.join('\n');
}

// Moves of a shortest path, [] when from equals to,
// null when to is unreachable or either end is not a free cell.
export function bfsShortestPath(rows: readonly string[], from: Coord, to: Coord): Move[] | null {
  if (!isFree(rows, from[0], from[1]) || !isFree(rows, to[0], to[1])) return null;
  const width = rows[0].length;
  const index = (r: number, c: number) => r * width + c;
  // How each visited cell was entered: the predecessor's index and the move taken.
  const cameFrom = new Map<number, { prev: number; move: Move } | null>([[index(from[0], from[1]), null]]);
  const queue: Coord[] = [from];
  for (let head = 0; head < queue.length; head++) {
    const cur = queue[head];
    if (sameCell(cur, to)) return unwindPath(cameFrom, index(to[0], to[1]));
    for (const move of MOVES) {
      const next = moveTarget(rows, cur, move);
      if (next === null || cameFrom.has(index(next[0], next[1]))) continue;
      cameFrom.set(index(next[0], next[1]), { prev: index(cur[0], cur[1]), move });
      queue.push(next);
    }
  }
  return null;
}

function unwindPath(cameFrom: Map<number, { prev: number; move: Move } | null>, end: number): Move[] {
  const moves: Move[] = [];
  for (let step = cameFrom.get(end); step; step = cameFrom.get(step.prev)) moves.push(step.move);
  return moves.reverse();
}

// The cell a move leads to, or null when the move is unknown, off the grid or into a wall.
function moveTarget(rows: readonly string[], [r, c]: Coord, move: string): Coord | null {
  const delta = moveDelta(move);
  if (delta === null) return null;
  const next: Coord = [r + delta[0], c + delta[1]];
  return isFree(rows, next[0], next[1]) ? next : null;
}

function isFree(rows: readonly string[], r: number, c: number): boolean {
  return Number.isInteger(r) && Number.isInteger(c) && r >= 0 && r < rows.length && c >= 0 && c < rows[r].length && rows[r][c] !== '#';
}

// phi = -(Manhattan distance to the goal).
function potential([r, c]: Coord, [gr, gc]: Coord): number {
  return -(Math.abs(r - gr) + Math.abs(c - gc));
}

function sameCell(a: Coord, b: Coord): boolean {
  return a[0] === b[0] && a[1] === b[1];
}
