// Sudoku: seeded puzzles with a unique solution, validity checks and a pure reducer for
// answers (whole grids). Sizes 4 (2x2 boxes), 6 (2x3), 8 (2x4) and 9 (3x3). Pure.
//
// Generation: a random full grid (randomised backtracking), then the cells in a random order
// are emptied one by one, each removal kept only while the puzzle still has exactly one
// solution (counted by a bitmask backtracking solver with the fewest-candidates heuristic).
// Without a `holes` limit the result is minimal: no given can be removed.
//
// Rewards of one answer, Tandem's (the reference's SudukuEnvState.step, for a whole-grid answer:
// -0.01, then +2 when solved and +0.5 more when solved within as many answers as the puzzle has
// empty cells, so 2.49 for a grid solved at once; otherwise +0.5 x the change of the filled
// fraction of the grid and +0.02 x the change of the count of satisfied row, column and box
// constraints, and -0.5 when the grid breaks a rule; -1 for a grid with a value outside 1..N,
// an empty cell included. docs/ENVIRONMENTS.md lists this among the departures):
//   progress  +1 x (correct non-given cells after - before) / (empty cells of the puzzle)
//   conflict  -1 x (filled non-given cells repeating a number in their row, column or box) / (empty cells)
//   given     -0.1 per given answered with another number (the given is kept)
//   malformed -1 when the answer is not an N x N grid of numbers 0..N (the grid is unchanged)
//   win       +1 when the grid is complete and valid (the episode ends, solved)
import { mulberry32, randomInt } from '../shared/rng.js';

export interface SudokuState {
  size: number;
  boxRows: number;
  boxCols: number;
  /** The givens, row by row; 0 = empty. */
  puzzle: number[][];
  /** The current grid: the givens plus the numbers answered so far; 0 = empty. */
  grid: number[][];
  /** The unique solution. */
  solution: number[][];
  /** Answers applied so far, malformed ones included. */
  steps: number;
  done: boolean;
  solved: boolean;
  totalReward: number;
}

export interface SudokuOptions {
  /** 4 (2x2 boxes, the reference's scripts), 6 (2x3), 8 (2x4) or 9 (3x3). Default 4. */
  size?: number;
  /** At most this many empty cells; default: as many as uniqueness allows (a minimal puzzle). */
  holes?: number;
}

export const SUDOKU_DEFAULTS: Readonly<{ size: number }> = Object.freeze({ size: 4 });

export interface SudokuRewards {
  rProgress: number;
  rConflict: number;
  rGivenChanged: number;
  rMalformed: number;
  rWin: number;
}

export const SUDOKU_REWARDS: Readonly<SudokuRewards> = Object.freeze({
  rProgress: 1,
  rConflict: -1,
  rGivenChanged: -0.1,
  rMalformed: -1,
  rWin: 1,
});

/** Box height and width for a size. */
export function boxShape(size: number): [rows: number, cols: number] | null {
  switch (size) {
    case 4:
      return [2, 2];
    case 6:
      return [2, 3];
    case 8:
      return [2, 4];
    case 9:
      return [3, 3];
    default:
      return null;
  }
}

// ---------------------------------------------------------------- solver

interface Layout {
  size: number;
  rowOf: Int8Array;
  colOf: Int8Array;
  boxOf: Int8Array;
  full: number;
}

function layoutOf(size: number): Layout {
  const [br, bc] = boxShape(size) ?? [1, size];
  const n = size * size;
  const rowOf = new Int8Array(n);
  const colOf = new Int8Array(n);
  const boxOf = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    const r = Math.floor(i / size);
    const c = i % size;
    rowOf[i] = r;
    colOf[i] = c;
    boxOf[i] = Math.floor(r / br) * (size / bc) + Math.floor(c / bc);
  }
  return { size, rowOf, colOf, boxOf, full: (1 << (size + 1)) - 2 };
}

/**
 * Number of solutions of a puzzle (cells row-major, 0 = empty), counting at most `limit`;
 * 0 when the givens already break a rule. With `rng`, candidate values are tried in a random
 * order and the first solution found is written back into `cells`.
 */
function search(cells: Uint8Array, size: number, limit: number, rng?: () => number): number {
  const { rowOf, colOf, boxOf, full } = layoutOf(size);
  const rows = new Int32Array(size);
  const cols = new Int32Array(size);
  const boxes = new Int32Array(size);
  const empty: number[] = [];
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i];
    if (v === 0) {
      empty.push(i);
      continue;
    }
    const bit = 1 << v;
    if (rows[rowOf[i]] & bit || cols[colOf[i]] & bit || boxes[boxOf[i]] & bit) return 0;
    rows[rowOf[i]] |= bit;
    cols[colOf[i]] |= bit;
    boxes[boxOf[i]] |= bit;
  }
  let count = 0;
  let found = false;
  const solution = new Uint8Array(cells);
  const go = (left: number): void => {
    if (left === 0) {
      if (!found && rng) solution.set(cells);
      found = true;
      count++;
      return;
    }
    // The empty cell with the fewest candidates, swapped to position left - 1.
    let bestK = -1;
    let bestMask = 0;
    let bestCount = 99;
    for (let k = 0; k < left; k++) {
      const i = empty[k];
      const mask = full & ~(rows[rowOf[i]] | cols[colOf[i]] | boxes[boxOf[i]]);
      const n = popcount(mask);
      if (n < bestCount) {
        bestCount = n;
        bestMask = mask;
        bestK = k;
        if (n <= 1) break;
      }
    }
    if (bestCount === 0) return;
    const i = empty[bestK];
    empty[bestK] = empty[left - 1];
    empty[left - 1] = i;
    const values: number[] = [];
    for (let v = 1; v <= size; v++) if (bestMask & (1 << v)) values.push(v);
    if (rng) shuffle(values, rng);
    for (const v of values) {
      const bit = 1 << v;
      rows[rowOf[i]] |= bit;
      cols[colOf[i]] |= bit;
      boxes[boxOf[i]] |= bit;
      cells[i] = v;
      go(left - 1);
      cells[i] = 0;
      rows[rowOf[i]] &= ~bit;
      cols[colOf[i]] &= ~bit;
      boxes[boxOf[i]] &= ~bit;
      if (count >= limit) break;
    }
    empty[left - 1] = empty[bestK];
    empty[bestK] = i;
  };
  go(empty.length);
  if (rng && found) cells.set(solution);
  return count;
}

/** Number of solutions of a grid (0 = empty), counting at most `limit`; 0 for a malformed grid. */
export function countSolutions(grid: readonly (readonly number[])[], limit = 2): number {
  const size = grid.length;
  if (boxShape(size) === null || !grid.every((row) => row.length === size && row.every((v) => Number.isInteger(v) && v >= 0 && v <= size))) return 0;
  return search(Uint8Array.from(grid.flat()), size, limit);
}

/** One solution of a grid (0 = empty), or null; a malformed grid has none. */
export function solveSudoku(grid: readonly (readonly number[])[]): number[][] | null {
  const size = grid.length;
  if (countSolutions(grid, 1) === 0) return null;
  const cells = Uint8Array.from(grid.flat());
  search(cells, size, 1, () => 0);
  return toRows(cells, size);
}

// ---------------------------------------------------------------- generation

export function generate(seed: number, options: SudokuOptions = {}): SudokuState {
  const size = options?.size ?? SUDOKU_DEFAULTS.size;
  const shape = boxShape(size);
  if (shape === null) throw new RangeError(`size must be 4, 6, 8 or 9, got ${size}`);
  const maxHoles = options?.holes ?? size * size;
  if (!Number.isInteger(maxHoles) || maxHoles < 1 || maxHoles > size * size) throw new RangeError(`holes must be an integer in [1, ${size * size}], got ${maxHoles}`);
  const rng = mulberry32(seed);
  const cells = new Uint8Array(size * size);
  search(cells, size, 1, rng);
  const solution = toRows(cells, size);
  const order = shuffle(Array.from({ length: size * size }, (_, i) => i), rng);
  let holes = 0;
  for (const i of order) {
    if (holes >= maxHoles) break;
    const v = cells[i];
    cells[i] = 0;
    if (search(new Uint8Array(cells), size, 2) === 1) holes++;
    else cells[i] = v;
  }
  const puzzle = toRows(cells, size);
  return initialState(puzzle, solution);
}

/** A fresh episode on a puzzle and its solution. */
export function initialState(puzzle: readonly (readonly number[])[], solution: readonly (readonly number[])[]): SudokuState {
  const size = puzzle.length;
  const shape = boxShape(size);
  if (shape === null) throw new RangeError(`size must be 4, 6, 8 or 9, got ${size}`);
  return {
    size,
    boxRows: shape[0],
    boxCols: shape[1],
    puzzle: copy(puzzle),
    grid: copy(puzzle),
    solution: copy(solution),
    steps: 0,
    done: false,
    solved: false,
    totalReward: 0,
  };
}

// ---------------------------------------------------------------- checks

/** Cells (row-major indexes) holding a number repeated in their row, column or box. */
export function conflictCells(grid: readonly (readonly number[])[]): Set<number> {
  const size = grid.length;
  const { rowOf, colOf, boxOf } = layoutOf(size);
  const units = [rowOf, colOf, boxOf];
  // counts[u][unit * (size + 1) + value]: how often a value occurs in a row, column or box.
  const counts = units.map(() => new Uint8Array(size * (size + 1)));
  const cells = size * size;
  for (let i = 0; i < cells; i++) {
    const v = grid[rowOf[i]][colOf[i]];
    if (v) for (let u = 0; u < 3; u++) counts[u][units[u][i] * (size + 1) + v]++;
  }
  const conflicts = new Set<number>();
  for (let i = 0; i < cells; i++) {
    const v = grid[rowOf[i]][colOf[i]];
    if (v && (counts[0][rowOf[i] * (size + 1) + v] > 1 || counts[1][colOf[i] * (size + 1) + v] > 1 || counts[2][boxOf[i] * (size + 1) + v] > 1)) conflicts.add(i);
  }
  return conflicts;
}

/** Every cell filled and no rule broken. */
export function isSolvedGrid(grid: readonly (readonly number[])[]): boolean {
  return grid.every((row) => row.every((v) => v > 0)) && conflictCells(grid).size === 0;
}

// ---------------------------------------------------------------- answers

export interface SudokuAnswerResult {
  state: SudokuState;
  reward: number;
  solved: boolean;
  done: boolean;
  malformed: boolean;
  /** Givens the answer tried to change. */
  changedGivens: number;
  /** Non-given cells breaking a rule in the new grid. */
  conflicts: number;
  /** Correct non-given cells in the new grid, and how many that is more than before. */
  correct: number;
  newlyCorrect: number;
  /** Empty cells left. */
  empty: number;
}

/**
 * Applies an answer: a whole grid, 0 (or an empty marker) for a cell left empty. A malformed
 * answer (not N rows of N numbers 0..N) leaves the grid as it was. Givens are never changed.
 * The input state is not mutated; after the episode ends, answers are ignored (reward 0).
 */
export function applyAnswer(state: SudokuState, answer: readonly (readonly number[])[], rewards: Readonly<SudokuRewards> = SUDOKU_REWARDS): SudokuAnswerResult {
  const { size, puzzle } = state;
  const blanks = Math.max(1, puzzle.flat().filter((v) => v === 0).length);
  const before = correctCells(state, state.grid);
  const summary = (grid: number[][]) => ({ correct: correctCells(state, grid), empty: grid.flat().filter((v) => v === 0).length });
  if (state.done) {
    return { state, reward: 0, solved: state.solved, done: true, malformed: false, changedGivens: 0, conflicts: 0, newlyCorrect: 0, ...summary(state.grid) };
  }
  const wellFormed =
    Array.isArray(answer) &&
    answer.length === size &&
    answer.every((row) => Array.isArray(row) && row.length === size && row.every((v) => Number.isInteger(v) && v >= 0 && v <= size));
  if (!wellFormed) {
    const next = { ...state, grid: copy(state.grid), puzzle: copy(puzzle), solution: copy(state.solution), steps: state.steps + 1, totalReward: state.totalReward + rewards.rMalformed };
    return { state: next, reward: rewards.rMalformed, solved: false, done: false, malformed: true, changedGivens: 0, conflicts: 0, newlyCorrect: 0, ...summary(next.grid) };
  }
  let changedGivens = 0;
  const grid = puzzle.map((row, r) =>
    row.map((given, c) => {
      const v = answer[r][c];
      if (given === 0) return v;
      if (v !== 0 && v !== given) changedGivens++;
      return given;
    }),
  );
  let conflicts = 0;
  for (const i of conflictCells(grid)) if (puzzle[Math.floor(i / size)][i % size] === 0) conflicts++;
  const after = correctCells(state, grid);
  const solved = isSolvedGrid(grid);
  const reward =
    (rewards.rProgress * (after - before)) / blanks +
    (rewards.rConflict * conflicts) / blanks +
    rewards.rGivenChanged * changedGivens +
    (solved ? rewards.rWin : 0);
  const next: SudokuState = {
    ...state,
    puzzle: copy(puzzle),
    solution: copy(state.solution),
    grid,
    steps: state.steps + 1,
    done: solved,
    solved,
    totalReward: state.totalReward + reward,
  };
  return { state: next, reward, solved, done: solved, malformed: false, changedGivens, conflicts, correct: after, newlyCorrect: after - before, empty: grid.flat().filter((v) => v === 0).length };
}

// Non-given cells equal to the solution.
function correctCells(state: SudokuState, grid: readonly (readonly number[])[]): number {
  let n = 0;
  for (let r = 0; r < state.size; r++) for (let c = 0; c < state.size; c++) if (state.puzzle[r][c] === 0 && grid[r][c] === state.solution[r][c]) n++;
  return n;
}

/** The grid with '.' for empty cells and lines between the boxes. */
export function renderGrid(grid: readonly (readonly number[])[], boxRows: number, boxCols: number): string {
  const size = grid.length;
  const lines: string[] = [];
  const rule = Array.from({ length: size / boxCols }, () => '-'.repeat(boxCols * 2 - 1)).join('-+-');
  grid.forEach((row, r) => {
    if (r > 0 && r % boxRows === 0) lines.push(rule);
    const groups: string[] = [];
    for (let c = 0; c < size; c += boxCols) groups.push(row.slice(c, c + boxCols).map((v) => (v ? String(v) : '.')).join(' '));
    lines.push(groups.join(' | '));
  });
  return lines.join('\n');
}

function toRows(cells: Uint8Array, size: number): number[][] {
  return Array.from({ length: size }, (_, r) => Array.from(cells.subarray(r * size, r * size + size)));
}

function copy(grid: readonly (readonly number[])[]): number[][] {
  return grid.map((row) => [...row]);
}

function popcount(x: number): number {
  let n = 0;
  while (x) {
    x &= x - 1;
    n++;
  }
  return n;
}

function shuffle<T>(items: T[], rng: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
