// Sudoku's config section (`env.name: sudoku`) and its registry entry.
import { z } from 'zod';
import { puzzleCommon, puzzleOptions } from '../puzzle/config.js';
import { defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { sudoku } from './definition.js';

export const sudokuEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('sudoku'),
    ...envCommon,
    ...puzzleCommon,
    // 4 (2x2 boxes, the reference's scripts), 6 (2x3), 8 (2x4) or 9 (3x3).
    map_size: z.union([z.literal(4), z.literal(6), z.literal(8), z.literal(9)]).default(4),
    // Tandem: at most this many empty cells; unset: as many as a unique solution allows.
    holes: z.number().int().min(1).optional(),
  }),
  definition: sudoku as EnvDefinition<unknown, unknown>,
  options: (c) => ({ options: { size: c.map_size, holes: c.holes, ...puzzleOptions(c) }, issues: [] }),
});
