// Public API of the Sudoku environment.
export { sudoku } from './definition.js';
export {
  SUDOKU_DEFAULTS,
  SUDOKU_REWARDS,
  applyAnswer,
  boxShape,
  conflictCells,
  countSolutions,
  generate,
  initialState,
  isSolvedGrid,
  renderGrid,
  solveSudoku,
  type SudokuAnswerResult,
  type SudokuOptions,
  type SudokuRewards,
  type SudokuState,
} from './grid.js';
export { parseSudokuAnswer, type SudokuAnswer } from './parse.js';
export { sudokuPuzzle, sudokuText } from './puzzle.js';
