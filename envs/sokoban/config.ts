// Sokoban's config section (`env.name: sokoban`) and its registry entry.
import { z } from 'zod';
import { defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { sokoban } from './definition.js';

export const sokobanEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('sokoban'),
    ...envCommon,
    // Side of the square room, outer walls included (the reference's scripts use 6).
    map_size: z.number().int().min(5).max(16).default(6),
    // Tandem: boxes (and targets), the depth of the reverse-play generation, and the move budget.
    boxes: z.number().int().min(1).max(4).default(1),
    reverse_steps: z.number().int().min(1).max(1000).default(25),
    max_steps: z.number().int().min(1).default(200),
  }),
  definition: sokoban as EnvDefinition<unknown, unknown>,
  options: (c) => ({ options: { size: c.map_size, boxes: c.boxes, reverseSteps: c.reverse_steps, maxSteps: c.max_steps }, issues: [] }),
});
