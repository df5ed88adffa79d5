// Sudoku as a Puzzle for the two PettingLLMs roles (envs/puzzle/roles.ts): the task text, the
// grid parser and the answer reducer. The answer is the whole grid, the reference's format:
//   #### [[1, 2, 3, 4], [3, 4, 1, 2], [2, 1, 4, 3], [4, 3, 2, 1]]
// (0 for a cell left empty; see parse.ts for the other accepted forms). Pure.
import type { Puzzle, PuzzleText } from '../puzzle/types.js';
import { applyAnswer, conflictCells, renderGrid, type SudokuAnswerResult, type SudokuState } from './grid.js';
import { parseSudokuAnswer, type SudokuAnswer } from './parse.js';

/** The roles' words for a size; the example is a valid grid of that size (format only). */
export function sudokuText(size: number, boxRows: number, boxCols: number): PuzzleText {
  return Object.freeze({
    subject: `${size}x${size} Sudoku puzzle`,
    target: 'the completed grid',
    answer: 'completed grid',
    toolRules: [
      `The grid is a list of ${size} rows, each a list of ${size} integers from 1 to ${size}; keep every given number of the puzzle.`,
      `Each row, each column and each ${boxRows}x${boxCols} box must contain every number from 1 to ${size} exactly once; backtracking search over the empty cells solves it.`,
      'Print the whole grid on one line, as a Python list of lists.',
    ],
    example: JSON.stringify(patternGrid(size, boxRows, boxCols)).replaceAll(',', ', '),
    listName: 'grid',
    check:
      'check the grid against the puzzle: every given kept, every cell filled, no number repeated in a row, column or box. If it is correct, adopt it; otherwise correct it with your own reasoning.',
    solve: 'fill in every empty cell so that no number repeats in a row, column or box',
    justify: 'the final grid is correct',
    finalName: 'the completed grid',
  });
}

export const sudokuPuzzle: Puzzle<SudokuState, SudokuAnswer> = {
  text: (state) => sudokuText(state.size, state.boxRows, state.boxCols),
  describe: describeTask,
  parseAction: parseSudokuAnswer,
  isEmpty: (answer) => answer.length === 0,
  apply(state, answer) {
    const result = applyAnswer(state, answer);
    return { state: result.state, reward: result.reward, solved: result.solved, done: result.done, summary: describeAnswer(state, result) };
  },
  solution: (state) => JSON.stringify(state.solution),
};

function describeTask(state: SudokuState, turn: number): string {
  const { size, boxRows, boxCols } = state;
  const lines = [
    `You are a Sudoku solver. Fill the ${size}x${size} grid so that every row, every column and every ${boxRows}x${boxCols} box (${boxRows} rows by ${boxCols} columns) contains each number from 1 to ${size} exactly once. '.' is an empty cell; the given numbers cannot change.`,
    'Puzzle:',
    renderGrid(state.puzzle, boxRows, boxCols),
    `Puzzle as a Python list of rows (row 0 first, 0 = empty): ${JSON.stringify(state.puzzle)}`,
  ];
  if (turn > 0 || state.steps > 0) {
    const conflicts = [...conflictCells(state.grid)].map((i) => `(${Math.floor(i / size)}, ${i % size})`);
    const empty = state.grid.flat().filter((v) => v === 0).length;
    lines.push(
      `This is turn ${turn + 1}. Your grid so far:`,
      renderGrid(state.grid, boxRows, boxCols),
      `As a Python list: ${JSON.stringify(state.grid)}`,
      `Empty cells: ${empty}; cells (row, col) repeating a number in their row, column or box: ${conflicts.length > 0 ? conflicts.join(', ') : 'none'}.`,
    );
  }
  lines.push(
    `Rules: answer with the whole ${size}x${size} grid (0 for a cell you leave empty). Changing a given number is penalised and ignored; ` +
      'a number that repeats in its row, column or box is penalised; every correct new number earns progress; a complete, valid grid wins.',
  );
  return lines.join('\n');
}

// E.g. "grid: 5 new correct cells, 1 conflicting, 0 empty" or "malformed grid".
function describeAnswer(state: SudokuState, r: SudokuAnswerResult): string {
  if (r.malformed) return `malformed grid (expected ${state.size} rows of ${state.size} numbers 0-${state.size})`;
  const parts = [
    `${r.newlyCorrect} new correct cell${Math.abs(r.newlyCorrect) === 1 ? '' : 's'}`,
    `${r.conflicts} conflicting`,
    `${r.empty} empty`,
  ];
  if (r.changedGivens > 0) parts.push(`${r.changedGivens} given${r.changedGivens === 1 ? '' : 's'} changed (ignored)`);
  return `grid: ${parts.join(', ')}${r.solved ? ', solved' : ''}`;
}

// A valid grid of the size: row r is 1..size shifted by (r % boxRows) * boxCols + floor(r / boxRows).
function patternGrid(size: number, boxRows: number, boxCols: number): number[][] {
  return Array.from({ length: size }, (_, r) => {
    const shift = (r % boxRows) * boxCols + Math.floor(r / boxRows);
    return Array.from({ length: size }, (_, c) => ((c + shift) % size) + 1);
  });
}
