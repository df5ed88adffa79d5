// Code's config section (`env.name: code`) and its registry entry: APPS, CodeContests or Tandem
// problem files, or the project's own problems.
import { z } from 'zod';
import { datasetSchema, defineEnv, envCommon } from '../shared/config.js';
import type { EnvDefinition } from '../types.js';
import { codeProblemOf } from './dataset.js';
import { code, harnessLimitsFor } from './definition.js';

const codeDatasetSchema = datasetSchema.extend({
  format: z.enum(['auto', 'apps', 'codecontests', 'tandem']).default('auto'),
  // Hidden tests kept per problem, and their size cap (problems travel in workflow history).
  max_tests: z.number().int().min(1).default(16),
  max_test_chars: z.number().int().min(1).default(4096),
});

export const codeEnv = defineEnv({
  config: z.strictObject({
    name: z.literal('code'),
    ...envCommon,
    max_turns: z.number().int().min(1).default(5),
    // Unset: the project's own problems.
    dataset: codeDatasetSchema.optional(),
    // Held-out problems for evaluation; unset: as for math.
    val_dataset: codeDatasetSchema.optional(),
  }),
  definition: code as EnvDefinition<unknown, unknown>,
  options: (c) => ({ options: harnessLimitsFor(c.code_timeout_s), issues: [] }),
  problemOf: (row, where, c) => {
    const d = c.dataset!;
    const r = codeProblemOf(row, where, { format: d.format, maxTests: d.max_tests, maxTestChars: d.max_test_chars });
    return r.ok ? { ok: true, item: r.item.problem } : r;
  },
});
