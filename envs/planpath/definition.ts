// Plan-Path as an EnvDefinition: the grid reducer played by the two puzzle roles. With the
// tool helper on (state.toolHelper, env.tool_helper), the tool agent's program runs with the
// shortest_path helper defined before its code (helper.ts).
import { puzzleEnv } from '../puzzle/definition.js';
import type { PuzzleOptions } from '../puzzle/types.js';
import type { EnvDefinition } from '../types.js';
import { generate, type GenerateOptions, type PlanPathState } from './grid.js';
import { withToolHelper } from './helper.js';
import { planPathPuzzle } from './roles.js';

const puzzle = puzzleEnv(planPathPuzzle, generate);

export const planPath: EnvDefinition<PlanPathState, GenerateOptions & PuzzleOptions> = {
  ...puzzle,
  program(agent, text, state) {
    const code = puzzle.program(agent, text, state);
    return code !== null && state.toolHelper ? withToolHelper(code, state) : code;
  },
};
