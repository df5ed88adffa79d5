// Sokoban's config section (`env.name: sokoban`) and its registry entry.
import { z } from 'zod';
import { puzzleCommon, puzzleOptions } from '../puzzle/config.js';
import { defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { sokoban } from './definition.js';

export const sokobanEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('sokoban'),
    ...envCommon,
    ...puzzleCommon,
    // Side of the square room, outer walls included (the reference's scripts use 6).
    map_size: z.number().int().min(5).max(16).default(6),
    // Boxes (and targets); the reference's environment uses 1.
    boxes: z.number().int().min(1).max(4).default(1),
    // Steps of the random walk that carves the room's floor: the reference's generate_room
    // num_steps (25).
    walk_steps: z.number().int().min(1).max(1000).default(25),
    // Depth limit of the reverse-play search that pulls the boxes off their targets: the
    // reference's search_depth (200).
    search_depth: z.number().int().min(4).max(1000).default(200),
    // Removed: it read the reference's num_steps (a topology-walk length) as a reverse-play depth.
    reverse_steps: z
      .never({ error: 'reverse_steps was removed: use walk_steps (floor walk length, the reference\'s num_steps, default 25) and search_depth (reverse-play depth, default 200)' })
      .optional(),
    // Tandem: the move budget.
    max_steps: z.number().int().min(1).default(200),
    // What a box pushed into a deadlock does: `end` the episode with rFail (Tandem's default), or
    // `continue` it to a win or the move/turn limit, as the reference does.
    deadlock: z.enum(['end', 'continue']).default('end'),
  }),
  definition: sokoban as EnvDefinition<unknown, unknown>,
  options: (c) => ({
    options: { size: c.map_size, boxes: c.boxes, walkSteps: c.walk_steps, searchDepth: c.search_depth, maxSteps: c.max_steps, deadlock: c.deadlock, ...puzzleOptions(c) },
    issues: [],
  }),
});
