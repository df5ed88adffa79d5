// Three-role math refinement's config section (`env.name: math_refine`): math's options.
import { z } from 'zod';
import { mathOptions, mathOptionsOf } from '../math/config.js';
import { mathProblemOf } from '../math/dataset.js';
import { defineEnv } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { mathRefine } from './definition.js';

export const mathRefineEnv = defineEnv({
  config: z.strictObject({ name: z.literal('math_refine'), ...mathOptions }),
  definition: mathRefine as EnvDefinition<unknown, unknown>,
  options: mathOptionsOf,
  problemOf: (row, where) => mathProblemOf(row, where),
});
