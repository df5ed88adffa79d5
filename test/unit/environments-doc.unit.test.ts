// docs/ENVIRONMENTS.md is checked against the code: every reward constant of every environment
// appears in its section's table with the value the code uses, and the table has no others.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CODE_REWARDS } from '../../envs/code/index.js';
import { HANABI_REWARDS } from '../../envs/hanabi/definition.js';
import { MATH_REWARDS } from '../../envs/math/index.js';
import { MATHREFINE_REWARDS } from '../../envs/mathrefine/index.js';
import { PLANPATH_REWARDS } from '../../envs/planpath/grid.js';
import { FAILURE_REWARDS } from '../../envs/puzzle/roles.js';
import { SOKOBAN_REWARDS } from '../../envs/sokoban/room.js';
import { SUDOKU_REWARDS } from '../../envs/sudoku/grid.js';

const doc = readFileSync('docs/ENVIRONMENTS.md', 'utf8');

/** The `| \`name\` | value |` rows of the table that follows the line mentioning `constants`. */
function documentedTable(constants: string): Map<string, number> {
  const at = doc.indexOf(`(\`${constants}\`)`);
  assert.ok(at >= 0, `docs/ENVIRONMENTS.md names ${constants}`);
  const rows = new Map<string, number>();
  const lines = doc.slice(at).split('\n').slice(1);
  let inTable = false;
  for (const line of lines) {
    if (line.startsWith('|')) inTable = true;
    else if (inTable) break;
    const m = /^\| `(\w+)` \| (-?[\d.]+) \|/.exec(line);
    if (m) rows.set(m[1], Number(m[2]));
  }
  return rows;
}

const TABLES: [string, Record<string, number>][] = [
  ['FAILURE_REWARDS', FAILURE_REWARDS],
  ['PLANPATH_REWARDS', { ...PLANPATH_REWARDS }],
  ['SOKOBAN_REWARDS', { ...SOKOBAN_REWARDS }],
  ['SUDOKU_REWARDS', { ...SUDOKU_REWARDS }],
  ['MATH_REWARDS', { ...MATH_REWARDS }],
  ['MATHREFINE_REWARDS', { ...MATHREFINE_REWARDS }],
  ['CODE_REWARDS', { ...CODE_REWARDS }],
  ['HANABI_REWARDS', HANABI_REWARDS],
];

for (const [name, constants] of TABLES) {
  test(`docs/ENVIRONMENTS.md documents ${name} as the code has it`, () => {
    assert.deepEqual(Object.fromEntries(documentedTable(name)), { ...constants });
  });
}
