// The scripted players of the puzzles solve them: the plan agent's scripted answer solves the
// instance, and the tool agent's scripted program prints an action list that does too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planPath } from '../../envs/planpath/definition.js';
import { sokoban } from '../../envs/sokoban/definition.js';
import { sudoku } from '../../envs/sudoku/definition.js';
import type { EnvDefinition } from '../../envs/types.js';

const PUZZLES: [string, EnvDefinition<any, any>, unknown][] = [
  ['plan_path', planPath, { mapSize: 6, blockedRatio: 0.22 }],
  ['sokoban', sokoban, { size: 6, boxes: 1 }],
  ['sudoku 4x4', sudoku, { size: 4 }],
  ['sudoku 9x9', sudoku, { size: 9, holes: 40 }],
];

for (const [name, env, options] of PUZZLES) {
  test(`${name}: the scripted players solve 20 instances`, () => {
    for (let seed = 0; seed < 20; seed++) {
      const state = env.reset(seed, options);
      const ctx = { state, turn: 0, handoff: undefined };
      const plan = env.score('plan_agent', state, env.scripted!('plan_agent', ctx), null, 1);
      assert.equal(plan.solved, true, `${name} seed ${seed}: ${plan.outcome}`);

      const tool = env.scripted!('tool_call_agent', ctx);
      const program = env.program('tool_call_agent', tool, state);
      assert.ok(program && program.includes('**Actions List**'));
      // What running it prints: the literal string the program concatenates.
      const printed = /print\('(\*\*Actions List\*\*: )' \+ '(.*)'\)/.exec(program)!;
      const run = { exitCode: 0, stdout: `${printed[1]}${printed[2]}\n`, stderr: '', timedOut: false };
      const scored = env.score('tool_call_agent', state, tool, run, 1);
      assert.equal(scored.global, 1, `${name} seed ${seed}: ${scored.outcome}`);
    }
  });
}
