// Sokoban as an EnvDefinition: the room reducer played by the two puzzle roles.
import { puzzleEnv } from '../puzzle/definition.js';
import type { PuzzleOptions } from '../puzzle/types.js';
import type { EnvDefinition } from '../types.js';
import { generate, type SokobanOptions } from './generate.js';
import { sokobanPuzzle } from './puzzle.js';
import type { SokobanState } from './room.js';

export const sokoban: EnvDefinition<SokobanState, SokobanOptions & PuzzleOptions> = puzzleEnv(sokobanPuzzle, generate);
