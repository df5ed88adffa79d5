// The registry: every environment a run can name in env.name, once. Each lives in its own folder
// (envs/<env>/config.ts: its config section, definition, option mapping and problem-file rows);
// configs/schema.ts builds the `env` section from ENV_CONFIGS. Adding an environment: its folder,
// and one line here. Pure: imported by workflow code.
import type { z } from 'zod';
import { codeEnv } from './code/config.js';
import { hanabiEnv } from './hanabi/config.js';
import { mathEnv } from './math/config.js';
import { mathRefineEnv } from './mathrefine/config.js';
import { planPathEnv } from './planpath/config.js';
import { seedRange } from './shared/seeds.js';
import { sokobanEnv } from './sokoban/config.js';
import { sudokuEnv } from './sudoku/config.js';
import type { EnvModule } from './shared/config.js';
import type { RowLocation, RowResult } from './shared/rows.js';
import type { EnvDefinition } from './types.js';

const ENVS = [planPathEnv, sokobanEnv, sudokuEnv, mathEnv, mathRefineEnv, codeEnv, hanabiEnv] as const;

// A generic mapped type keeps the tuple: z.discriminatedUnion needs one.
type Configs<T extends readonly EnvModule<any>[]> = { -readonly [K in keyof T]: T[K] extends EnvModule<infer S> ? S : never };
/** Each environment's config schema, in registry order: the members of the `env` union. */
export const ENV_CONFIGS = ENVS.map((e) => e.config) as Configs<typeof ENVS>;
/** The `env` section of a run config: one environment's options. */
export type EnvConfig = z.output<(typeof ENVS)[number]['config']>;

const moduleOf = (env: EnvConfig) => ENVS.find((e) => e.config.shape.name.value === env.name) as unknown as EnvModule;

export interface ConfiguredEnv {
  def: EnvDefinition<unknown, unknown>;
  options: unknown;
  /** Problems with option combinations the schema cannot see (reported under env.*). */
  issues: string[];
}

export function envOf(env: EnvConfig): ConfiguredEnv {
  const m = moduleOf(env);
  return { def: m.definition, ...m.options(env) };
}

/** The row mapper of a data-backed environment's problem file (env.dataset), or null. */
export function problemRows(env: EnvConfig): ((row: Record<string, unknown>, where: RowLocation) => RowResult<{ id: string }>) | null {
  const m = moduleOf(env);
  return m.problemOf ? (row, where) => m.problemOf!(row, where, env) : null;
}

/** The env config an evaluation plays: a data-backed environment's held-out problems (val_dataset) when it has some. */
export function heldOutEnv(env: EnvConfig): EnvConfig {
  return 'val_dataset' in env && env.val_dataset !== undefined ? ({ ...env, dataset: env.val_dataset } as EnvConfig) : env;
}

/**
 * The problem seed of an evaluation's j-th held-out problem: the validation range, or the test
 * range for final figures kept apart from whatever was tuned on validation. (A data-backed
 * environment draws both from its val_dataset.)
 */
export const heldOutSeed = (j: number, split: 'validation' | 'test' = 'validation') => seedRange(split, j);
