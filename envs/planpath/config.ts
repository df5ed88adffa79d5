// Plan-Path's config section (`env.name: plan_path`) and its registry entry.
import { z } from 'zod';
import { puzzleCommon, puzzleOptions } from '../puzzle/config.js';
import { defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { planPath } from './definition.js';

export const planPathEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('plan_path'),
    ...envCommon,
    ...puzzleCommon,
    map_size: z.number().int().min(3).max(32).default(5),
    // Tandem: fraction of blocked cells (the reference generates ~22%).
    blocked_ratio: z.number().min(0).max(0.6).default(0.22),
    // Tandem: a miniature of the paper's mechanism, not the reference's setting (envs/planpath/helper.ts):
    // the tool agent's program runs with a BFS helper, shortest_path(rows, start, goal), that its
    // prompt names. false (the default) is the faithful setting.
    tool_helper: z.boolean().default(false),
    // Tandem, with tool_helper: how the helper's call gets the grid. `literal` (the default): the
    // program copies the rows from the prompt; `named`: the program also finds them defined as
    // `rows`, so the call copies only the position and the goal (helper.ts).
    helper_grid: z.enum(['literal', 'named']).default('literal'),
    // What a move into a wall or off the grid does (grid.ts InvalidMoveRule): `stay` (the
    // reference's: penalised, the walker stays, later moves still run) or `end` (Tandem's: the
    // episode ends unsolved, so a long random move list no longer reaches the goal by chance).
    invalid_move: z.enum(['stay', 'end']).default('stay'),
  }),
  definition: planPath as EnvDefinition<unknown, unknown>,
  options: (c) => ({
    options: { mapSize: c.map_size, blockedRatio: c.blocked_ratio, toolHelper: c.tool_helper, helperGrid: c.helper_grid, invalidMove: c.invalid_move, ...puzzleOptions(c) },
    issues: c.helper_grid === 'named' && !c.tool_helper ? ['helper_grid named needs tool_helper: true (the grid is named for the helper)'] : [],
  }),
});
