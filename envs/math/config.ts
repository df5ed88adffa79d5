// Math's config section (`env.name: math`) and its registry entry; math_refine
// (envs/mathrefine/config.ts) shares its options. Dataset rows are attached by the envReset
// activity, which reads the file.
import { z } from 'zod';
import { datasetSchema, defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { mathProblemOf } from './dataset.js';
import { math } from './definition.js';
import { mathOptionIssues } from './problems.js';
import type { MathOptions } from './state.js';

export const mathOptions = {
  ...envCommon,
  // The reference lets the tool agent's code run for 20 s.
  code_timeout_s: z.number().positive().default(20),
  // The project's own generator, restricted to these templates (when no dataset is given).
  templates: z.array(z.string().min(1)).min(1).optional(),
  // Problems {question, answer}; unset: the generator makes them.
  dataset: datasetSchema.optional(),
  // Held-out problems for evaluation; unset: evaluation draws validation seeds from `dataset`
  // (seed mod size), which are not held out.
  val_dataset: datasetSchema.optional(),
};

/** The options reset takes, from a math or math_refine config section. */
export function mathOptionsOf(c: { templates?: string[]; max_turns: number }): { options: MathOptions; issues: string[] } {
  const options: MathOptions = { templates: c.templates, maxTurns: c.max_turns };
  return { options, issues: mathOptionIssues(options) };
}

export const mathEnv = defineEnv({
  config: z.strictObject({ name: z.literal('math'), ...mathOptions }),
  definition: math as EnvDefinition<unknown, unknown>,
  options: mathOptionsOf,
  problemOf: (row, where) => mathProblemOf(row, where),
});
