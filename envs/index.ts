// The environments a run can name in env.name, each with its options read from the config.
// Pure: imported by workflow code.
import type { RunConfig } from '../configs/schema.js';
import { code, harnessLimitsFor } from './code/index.js';
import { hanabi, hanabiOptionIssues, type HanabiOptions } from './hanabi/index.js';
import { math, mathOptionIssues, type MathOptions } from './math/index.js';
import { mathRefine } from './mathrefine/index.js';
import { planPath } from './planpath/definition.js';
import { sokoban } from './sokoban/definition.js';
import { sudoku } from './sudoku/definition.js';
import type { EnvDefinition } from './types.js';

type EnvConfig = RunConfig['env'];

export interface ConfiguredEnv {
  def: EnvDefinition<unknown, unknown>;
  options: unknown;
  /** Problems with option combinations the schema cannot see (reported under env.*). */
  issues: string[];
}

export function envOf(env: EnvConfig): ConfiguredEnv {
  switch (env.name) {
    case 'plan_path':
      return { def: planPath as EnvDefinition<unknown, unknown>, options: { mapSize: env.map_size, blockedRatio: env.blocked_ratio }, issues: [] };
    case 'sokoban':
      return {
        def: sokoban as EnvDefinition<unknown, unknown>,
        options: { size: env.map_size, boxes: env.boxes, reverseSteps: env.reverse_steps, maxSteps: env.max_steps },
        issues: [],
      };
    case 'sudoku':
      return { def: sudoku as EnvDefinition<unknown, unknown>, options: { size: env.map_size, holes: env.holes }, issues: [] };
    case 'math':
    case 'math_refine': {
      // Dataset rows are attached by the envReset activity, which reads the file.
      const options: MathOptions = { templates: env.templates, maxTurns: env.max_turns };
      const def = env.name === 'math' ? math : mathRefine;
      return { def: def as EnvDefinition<unknown, unknown>, options, issues: mathOptionIssues(options) };
    }
    case 'code':
      return { def: code as EnvDefinition<unknown, unknown>, options: harnessLimitsFor(env.code_timeout_s), issues: [] };
    case 'hanabi': {
      const options: HanabiOptions = {
        players: env.players,
        preset: env.preset,
        colors: env.colors,
        ranks: env.ranks,
        handSize: env.hand_size,
        infoTokens: env.info_tokens,
        lives: env.lives,
        zeroOnLoss: env.zero_on_loss,
      };
      return { def: hanabi as EnvDefinition<unknown, unknown>, options, issues: hanabiOptionIssues(options) };
    }
  }
}
