// Puzzle environment throughput: generator instances per second, env steps per second (one
// scored plan-agent answer: parse + apply, as the env activity does per candidate), single
// moves per second for the grid reducers, and prompts built per second. Prints a table.
//   node --import tsx bench/env_puzzles.ts [seconds-per-case]
import os from 'node:os';
import { planPath, generate as planPathGenerate, applyMoves as planPathMoves, bfsShortestPath, type PlanPathState } from '../envs/planpath/index.js';
import { sokoban, generate as sokobanGenerate, applyMoves as sokobanMoves, solve, type SokobanOptions, type SokobanState } from '../envs/sokoban/index.js';
import { sudoku, generate as sudokuGenerate, type SudokuState } from '../envs/sudoku/index.js';
import type { EnvDefinition } from '../envs/types.js';

const SECONDS = Number(process.argv[2] ?? 1);
const INSTANCES = 200;

interface Row {
  name: string;
  opsPerSec: number;
}
const rows: Row[] = [];

/** Runs `op(i)` for about SECONDS (after a short warm-up) and records operations per second. */
function measure(name: string, op: (i: number) => unknown): void {
  let sink = 0;
  const warmEnd = performance.now() + 100 * SECONDS;
  for (let i = 0; performance.now() < warmEnd; i++) sink += op(i) ? 1 : 0;
  let n = 0;
  const start = performance.now();
  const end = start + 1000 * SECONDS;
  while (performance.now() < end) {
    for (let k = 0; k < 16; k++, n++) sink += op(n) ? 1 : 0;
  }
  const elapsed = (performance.now() - start) / 1000;
  rows.push({ name, opsPerSec: n / elapsed });
  if (sink < 0) console.log(sink);
}

const list = (moves: readonly string[]) => `[${moves.map((m) => `"${m}"`).join(', ')}]`;

// ---------------------------------------------------------------- generators

for (const mapSize of [5, 10]) {
  measure(`plan_path ${mapSize}x${mapSize}: generate`, (i) => planPathGenerate(i, { mapSize, blockedRatio: 0.22 }));
}
const sokobanSettings: Array<[string, SokobanOptions]> = [
  ['6x6, 1 box', {}],
  ['6x6, 2 boxes', { boxes: 2 }],
  ['8x8, 2 boxes', { size: 8, boxes: 2 }],
];
for (const [label, opts] of sokobanSettings) measure(`sokoban ${label}: generate`, (i) => sokobanGenerate(i, opts));
const sokobanRooms = Array.from({ length: INSTANCES }, (_, i) => sokobanGenerate(i));
measure('sokoban 6x6, 1 box: solve (BFS)', (i) => solve(sokobanRooms[i % INSTANCES]));
for (const size of [4, 6, 9]) measure(`sudoku ${size}x${size}: generate`, (i) => sudokuGenerate(i, { size }));

// ---------------------------------------------------------------- env steps

function stepCase<S>(name: string, env: EnvDefinition<S, unknown>, instances: Array<{ state: S; answer: string }>): void {
  measure(`${name}: env step (plan answer scored)`, (i) => {
    const { state, answer } = instances[i % instances.length];
    return env.score('plan_agent', state, answer, null, 0.5).done;
  });
  measure(`${name}: prompt built`, (i) => env.prompt('plan_agent', { state: instances[i % instances.length].state, turn: 1, handoff: undefined }).length);
}

const planPathInstances = Array.from({ length: INSTANCES }, (_, i) => {
  const state = planPathGenerate(i, { mapSize: 10, blockedRatio: 0.22 });
  return { state, answer: `The path avoids the walls.\n#### ${list(bfsShortestPath(state.rows, state.pos, state.goal) ?? [])}` };
});
stepCase('plan_path 10x10', planPath as EnvDefinition<PlanPathState, unknown>, planPathInstances);
const planPathStates = planPathInstances.map((x) => x.state);
measure('plan_path 10x10: single move', (i) => planPathMoves(planPathStates[i % INSTANCES], ['URDL'[i % 4]]).reward);

const sokobanInstances = sokobanRooms.map((state) => {
  return { state, answer: `Push the box onto the target.\n#### ${list(solve(state) ?? [])}` };
});
stepCase('sokoban 6x6', sokoban as EnvDefinition<SokobanState, unknown>, sokobanInstances);
const sokobanStates = sokobanInstances.map((x) => x.state);
measure('sokoban 6x6: single move', (i) => sokobanMoves(sokobanStates[i % INSTANCES], ['URDL'[i % 4]]).reward);

for (const size of [4, 9]) {
  const instances = Array.from({ length: INSTANCES }, (_, i) => {
    const state = sudokuGenerate(i, { size });
    return { state, answer: `Every row, column and box checked.\n#### ${JSON.stringify(state.solution)}` };
  });
  stepCase(`sudoku ${size}x${size}`, sudoku as EnvDefinition<SudokuState, unknown>, instances);
}

// ---------------------------------------------------------------- report

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Puzzle environments, ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${cpu} (${os.cpus().length} threads), single thread, ${SECONDS} s per case\n`);
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`${'case'.padEnd(width)}  ${'per second'.padStart(12)}  ${'µs each'.padStart(9)}`);
for (const { name, opsPerSec } of rows) {
  console.log(`${name.padEnd(width)}  ${Math.round(opsPerSec).toLocaleString('en-US').padStart(12)}  ${(1e6 / opsPerSec).toFixed(1).padStart(9)}`);
}
