// Sokoban as a pure, JSON-serialisable reducer, with the rewards of the PettingLLMs
// SokobanGridEnvState: step -0.01, invalid move -0.05, box onto a target +1, box off a target
// -0.5, win +10, failure -5 (step budget spent, or a detected deadlock unless the state's
// `deadlock` rule is 'continue', the reference's behaviour), plus the reference's
// potential-based shaping (lambda 0.1, gamma 0.99, phi = -sum over boxes of the Manhattan
// distance to the nearest target).
//
// Symbols (the standard XSB set, with '_' for floor so that rows are easy to count):
//   '#' wall   '_' floor   '.' target   '$' box   '*' box on a target   '@' player   '+' player on a target
import { moveDelta } from '../puzzle/moves.js';

export type Coord = [row: number, col: number];

/**
 * What a box pushed into a deadlock does: 'end' the episode with rFail (Tandem's default), or
 * 'continue' it (the reference, which ends only on a win or when the step budget is spent).
 */
export type DeadlockRule = 'end' | 'continue';

export interface SokobanState {
  /** The fixed room, one string per row: '#' wall, '_' floor, '.' target. */
  room: string[];
  player: Coord;
  /** Box positions, sorted by row then column. As many boxes as targets. */
  boxes: Coord[];
  /** Moves attempted so far in the episode, valid or not. */
  steps: number;
  invalidCount: number;
  boxesOnTargets: number;
  done: boolean;
  solved: boolean;
  /** Why the episode was lost, when it was. */
  failure: 'deadlock' | 'step limit' | null;
  totalReward: number;
  maxSteps: number;
  /** What a box pushed into a deadlock does (a state recorded before this field existed ends, as then). */
  deadlock: DeadlockRule;
}

export interface SokobanRewards {
  rStep: number;
  rInvalid: number;
  rBoxOnTarget: number;
  rBoxOffTarget: number;
  rWin: number;
  rFail: number;
  gamma: number;
  lambdaPot: number;
}

// The reference's DEFAULT_R_* constants.
export const SOKOBAN_REWARDS: Readonly<SokobanRewards> = Object.freeze({
  rStep: -0.01,
  rInvalid: -0.05,
  rBoxOnTarget: 1.0,
  rBoxOffTarget: -0.5,
  rWin: 10.0,
  rFail: -5.0,
  gamma: 0.99,
  lambdaPot: 0.1,
});

// The reference's DEFAULT_MAX_STEPS.
export const DEFAULT_MAX_STEPS = 200;

export interface SokobanMoveResult {
  state: SokobanState;
  /** Sum of the per-move rewards of the moves applied by this call. */
  reward: number;
  solved: boolean;
  done: boolean;
  invalidMoves: number;
  /** Moves applied before the episode ended (later ones are ignored). */
  applied: number;
}

/** A fresh episode. `room` holds the fixed part ('#', '_', '.'; '@', '$', '*', '+' are read too). */
export function initialState(
  room: readonly string[],
  player: Coord,
  boxes: readonly Coord[],
  maxSteps: number = DEFAULT_MAX_STEPS,
  deadlock: DeadlockRule = 'end',
): SokobanState {
  const fixed = room.map((row) => Array.from(row, fixedCell).join(''));
  const sorted = sortCoords(boxes.map(([r, c]) => [r, c] as Coord));
  return {
    room: fixed,
    player: [player[0], player[1]],
    boxes: sorted,
    steps: 0,
    invalidCount: 0,
    boxesOnTargets: sorted.filter(([r, c]) => fixed[r][c] === '.').length,
    done: false,
    solved: false,
    failure: null,
    totalReward: 0,
    maxSteps,
    deadlock,
  };
}

/** Parses a level drawn with the symbols above (e.g. for tests). */
export function parseLevel(lines: readonly string[], maxSteps?: number): SokobanState {
  let player: Coord | null = null;
  const boxes: Coord[] = [];
  lines.forEach((row, r) =>
    Array.from(row).forEach((ch, c) => {
      if (ch === '@' || ch === '+') player = [r, c];
      if (ch === '$' || ch === '*') boxes.push([r, c]);
    }),
  );
  if (player === null) throw new RangeError('level has no player');
  return initialState(lines, player, boxes, maxSteps);
}

function fixedCell(ch: string): string {
  switch (ch) {
    case '#':
      return '#';
    case '.':
    case '*':
    case '+':
      return '.';
    default:
      return '_';
  }
}

/**
 * Applies moves in order until the episode ends; later moves are ignored. Returns a new state;
 * the input is never mutated. Any string other than U/D/L/R is an invalid move.
 */
export function applyMoves(state: SokobanState, moves: readonly string[], rewards: Readonly<SokobanRewards> = SOKOBAN_REWARDS): SokobanMoveResult {
  const { room } = state;
  const width = room[0]?.length ?? 0;
  const boxes = new Set(state.boxes.map(([r, c]) => r * width + c));
  let [pr, pc] = state.player;
  let { steps, boxesOnTargets, done, solved, failure } = state;
  let reward = 0;
  let invalidMoves = 0;
  let applied = 0;
  const targets = targetsOf(room);
  let phi = potential(targets, boxes, width);
  let dead: Uint8Array | null = null; // computed on the first push
  for (const move of moves) {
    if (done) break;
    applied++;
    steps++;
    const delta = moveDelta(move);
    let valid = false;
    let r = 0;
    let pushedTo = -1;
    if (delta !== null) {
      const [dr, dc] = delta;
      const nr = pr + dr;
      const nc = pc + dc;
      if (isOpen(room, nr, nc)) {
        const next = nr * width + nc;
        if (!boxes.has(next)) {
          valid = true;
        } else if (isOpen(room, nr + dr, nc + dc) && !boxes.has(next + dr * width + dc)) {
          valid = true;
          pushedTo = next + dr * width + dc;
          boxes.delete(next);
          boxes.add(pushedTo);
          const fromTarget = room[nr][nc] === '.';
          const toTarget = room[nr + dr][nc + dc] === '.';
          if (toTarget && !fromTarget) {
            r += rewards.rBoxOnTarget;
            boxesOnTargets++;
          } else if (fromTarget && !toTarget) {
            r += rewards.rBoxOffTarget;
            boxesOnTargets--;
          }
        }
        if (valid) [pr, pc] = [nr, nc];
      }
    }
    if (valid) r += rewards.rStep;
    else {
      r += rewards.rInvalid;
      invalidMoves++;
    }
    const nextPhi = pushedTo >= 0 ? potential(targets, boxes, width) : phi;
    r += rewards.lambdaPot * (rewards.gamma * nextPhi - phi);
    phi = nextPhi;
    if (boxesOnTargets === boxes.size) {
      r += rewards.rWin;
      done = true;
      solved = true;
    } else if (state.deadlock !== 'continue' && pushedTo >= 0 && isDeadlocked(room, boxes, width, pushedTo, (dead ??= deadSquares(room)))) {
      r += rewards.rFail;
      done = true;
      failure = 'deadlock';
    } else if (steps >= state.maxSteps) {
      r += rewards.rFail;
      done = true;
      failure = 'step limit';
    }
    reward += r;
  }
  const next: SokobanState = {
    ...state,
    room: [...room],
    player: [pr, pc],
    boxes: sortCoords([...boxes].map((i) => [Math.floor(i / width), i % width] as Coord)),
    steps,
    invalidCount: state.invalidCount + invalidMoves,
    boxesOnTargets,
    done,
    solved,
    failure,
    totalReward: state.totalReward + reward,
  };
  return { state: next, reward, solved, done, invalidMoves, applied };
}

/** The room with the player and boxes drawn in. */
export function renderRoom(state: SokobanState): string[] {
  const rows = state.room.map((row) => Array.from(row));
  for (const [r, c] of state.boxes) rows[r][c] = rows[r][c] === '.' ? '*' : '$';
  const [pr, pc] = state.player;
  rows[pr][pc] = rows[pr][pc] === '.' ? '+' : '@';
  return rows.map((row) => row.join(''));
}

/** Target cells, row-major. */
export function targetsOf(room: readonly string[]): Coord[] {
  const targets: Coord[] = [];
  room.forEach((row, r) => Array.from(row).forEach((ch, c) => ch === '.' && targets.push([r, c])));
  return targets;
}

/**
 * Cells where a box can never reach a target, whatever the other boxes do: 1 = dead. A box on
 * cell y can be pushed towards x when x and the cell behind y are open; a cell is live when a
 * target can be reached that way (so a non-target corner, or a wall side without targets, is
 * dead). Indexed row * width + col; walls are 0.
 */
export function deadSquares(room: readonly string[]): Uint8Array {
  const height = room.length;
  const width = room[0]?.length ?? 0;
  const live = new Uint8Array(width * height);
  const queue: number[] = [];
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      if (room[r][c] === '.') {
        live[r * width + c] = 1;
        queue.push(r * width + c);
      }
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const x = queue[head];
    const xr = Math.floor(x / width);
    const xc = x % width;
    for (const [dr, dc] of DELTAS) {
      // The box was at y = x + d, pushed by a player standing at x + 2d.
      if (!isOpen(room, xr + dr, xc + dc) || !isOpen(room, xr + 2 * dr, xc + 2 * dc)) continue;
      const y = (xr + dr) * width + xc + dc;
      if (live[y]) continue;
      live[y] = 1;
      queue.push(y);
    }
  }
  const dead = new Uint8Array(width * height);
  for (let r = 0; r < height; r++) for (let c = 0; c < width; c++) dead[r * width + c] = isOpen(room, r, c) && !live[r * width + c] ? 1 : 0;
  return dead;
}

/**
 * Whether the box just pushed to `box` makes the position unsolvable: it stands on a dead
 * square, or it is part of a 2x2 block of walls and boxes holding a box off target (no box of
 * such a block can ever move).
 */
export function isDeadlocked(room: readonly string[], boxes: ReadonlySet<number>, width: number, box: number, dead: Uint8Array): boolean {
  if (dead[box]) return true;
  const br = Math.floor(box / width);
  const bc = box % width;
  const blocked = (r: number, c: number) => !isOpen(room, r, c) || boxes.has(r * width + c);
  const offTarget = (r: number, c: number) => boxes.has(r * width + c) && room[r][c] !== '.';
  for (const r0 of [br - 1, br]) {
    for (const c0 of [bc - 1, bc]) {
      const cells: Coord[] = [[r0, c0], [r0, c0 + 1], [r0 + 1, c0], [r0 + 1, c0 + 1]];
      if (cells.every(([r, c]) => blocked(r, c)) && cells.some(([r, c]) => offTarget(r, c))) return true;
    }
  }
  return false;
}

const DELTAS: readonly Coord[] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

/** Inside the room and not a wall. */
export function isOpen(room: readonly string[], r: number, c: number): boolean {
  return r >= 0 && r < room.length && c >= 0 && c < room[r].length && room[r][c] !== '#';
}

// phi = -(sum over boxes of the Manhattan distance to the nearest target), as the reference.
function potential(targets: readonly Coord[], boxes: ReadonlySet<number>, width: number): number {
  let total = 0;
  for (const b of boxes) {
    const br = Math.floor(b / width);
    const bc = b % width;
    let best = Infinity;
    for (const [tr, tc] of targets) best = Math.min(best, Math.abs(br - tr) + Math.abs(bc - tc));
    total += Number.isFinite(best) ? best : 0;
  }
  return -total;
}

function sortCoords(coords: Coord[]): Coord[] {
  return coords.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}
