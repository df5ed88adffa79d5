// Sudoku as an EnvDefinition: the answer reducer played by the two puzzle roles.
import { puzzleEnv } from '../puzzle/definition.js';
import type { PuzzleOptions } from '../puzzle/types.js';
import type { EnvDefinition } from '../types.js';
import { generate, type SudokuOptions, type SudokuState } from './grid.js';
import { sudokuPuzzle } from './puzzle.js';

export const sudoku: EnvDefinition<SudokuState, SudokuOptions & PuzzleOptions> = puzzleEnv(sudokuPuzzle, generate);
