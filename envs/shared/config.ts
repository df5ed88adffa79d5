// What every environment's config section and registry entry are made of (pure, zod): the
// options all environments share, the problem-file (dataset) options, and `defineEnv`, which
// ties an environment's schema, definition, option mapping and problem-file rows together.
import { z } from 'zod';
import type { EnvDefinition } from '../types.js';
import type { RowLocation, RowResult } from './rows.js';

// Options of every environment, beside `name` and its own.
export const envCommon = {
  benchmark: z.string().optional(),
  // Episode length in turns; in each turn every agent of turn_order acts once.
  max_turns: z.number().int().min(1).default(4),
  // Tandem: wall-clock limit for running a tool agent's code.
  code_timeout_s: z.number().positive().default(5),
};

// A problem file (JSON Lines or Parquet) for the data-backed environments (math, code).
export const datasetSchema = z.strictObject({
  // Relative paths resolve against the project root.
  path: z.string().min(1),
  // A malformed row is reported with file and line, then skipped, or fails the run.
  on_bad_row: z.enum(['skip', 'fail']).default('skip'),
  // Read at most this many problems.
  limit: z.number().int().min(1).optional(),
});

type Schema = z.ZodObject<{ name: z.ZodLiteral<string> } & z.ZodRawShape>;

/** One environment as the registry (envs/index.ts) knows it. */
export interface EnvModule<S extends Schema = Schema> {
  /** Its section of the run config (`env`), discriminated by `name`. */
  config: S;
  definition: EnvDefinition<unknown, unknown>;
  /** Its config section -> the options `reset` takes, and problems the schema cannot see. */
  options(config: z.output<S>): { options: unknown; issues: string[] };
  /** A data-backed environment: one row of its problem file (config.dataset) as a problem. */
  problemOf?(row: Record<string, unknown>, where: RowLocation, config: z.output<S>): RowResult<{ id: string }>;
}

export const defineEnv = <S extends Schema>(m: EnvModule<S>) => m;
