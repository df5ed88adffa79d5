// Plan-Path as an EnvDefinition: the grid reducer played by the two puzzle roles.
import { puzzleEnv } from '../puzzle/definition.js';
import type { PuzzleOptions } from '../puzzle/types.js';
import type { EnvDefinition } from '../types.js';
import { generate, type GenerateOptions, type PlanPathState } from './grid.js';
import { planPathPuzzle } from './roles.js';

export const planPath: EnvDefinition<PlanPathState, GenerateOptions & PuzzleOptions> = puzzleEnv(planPathPuzzle, generate);
