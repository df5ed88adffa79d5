// The environments a run can name in env.name. Pure: imported by workflow code.
import type { RunConfig } from '../configs/schema.js';
import { planPath } from './planpath/definition.js';
import type { EnvDefinition } from './types.js';

type EnvConfig = RunConfig['env'];

/** The definition of the configured environment, with its options taken from the config. */
export function envOf(env: EnvConfig): { def: EnvDefinition<unknown, unknown>; options: unknown } {
  switch (env.name) {
    case 'plan_path':
      return {
        def: planPath as EnvDefinition<unknown, unknown>,
        options: { mapSize: env.map_size, blockedRatio: env.blocked_ratio },
      };
  }
}
