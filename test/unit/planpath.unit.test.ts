import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { loadRunConfig } from '../../configs/load.js';
import {
  PLANPATH_AGENTS,
  PLANPATH_REWARDS,
  TOOL_HELPER_PRELUDE,
  TOOL_HELPER_NAMED_RULE,
  TOOL_HELPER_RULE,
  applyMoves,
  bfsShortestPath,
  buildPrompt,
  extractCode,
  generate,
  initialState,
  render,
  scorePlanAgent,
  scoreToolAgent,
  planPath,
  withToolHelper,
  type Coord,
  type PlanPathState,
} from '../../envs/planpath/index.js';
import { planPathEnv } from '../../envs/planpath/config.js';
import type { ProgramRun } from '../../envs/types.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import { parseMoveAnswer } from '../../envs/puzzle/index.js';
import { cpuMark, cpuMsSince } from '../support/cpuTime.js';

const close = (actual: number, expected: number, message?: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} expected ${expected}, got ${actual}`);

// A 3x3 map with one wall:   S . G
//                            . # .
//                            . . .
const ROWS = ['...', '.#.', '...'];
const corridor = (maxSteps?: number): PlanPathState => initialState(ROWS, [0, 0], [0, 2], { maxSteps });

// ---------------------------------------------------------------- generator

test('generate is deterministic by seed and varies across seeds', () => {
  const opts = { mapSize: 8, blockedRatio: 0.22 };
  assert.deepEqual(generate(42, opts), generate(42, opts));
  const layouts = new Set(Array.from({ length: 20 }, (_, seed) => JSON.stringify(generate(seed, opts))));
  assert.ok(layouts.size > 15, `only ${layouts.size} distinct maps for 20 seeds`);
});

test('generated maps are well formed and solvable over 500 seeds, 5x5 to 10x10', () => {
  let blocked = 0;
  let cells = 0;
  for (let seed = 0; seed < 500; seed++) {
    const mapSize = 5 + (seed % 6);
    const s = generate(seed, { mapSize, blockedRatio: 0.22 });
    assert.equal(s.rows.length, mapSize);
    for (const row of s.rows) assert.match(row, new RegExp(`^[.#]{${mapSize}}$`));
    assert.notDeepEqual(s.start, s.goal);
    assert.deepEqual(s.pos, s.start);
    assert.equal(s.rows[s.start[0]][s.start[1]], '.');
    assert.equal(s.rows[s.goal[0]][s.goal[1]], '.');
    const path = bfsShortestPath(s.rows, s.start, s.goal);
    assert.ok(path !== null, `seed ${seed}: goal unreachable`);
    assert.equal(s.optimalLength, path.length);
    assert.ok(s.optimalLength >= 1);
    assert.deepEqual(applyMoves(s, path).solved, true, `seed ${seed}: BFS path does not solve`);
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s, 'state is JSON-serialisable');
    for (const row of s.rows) for (const cell of row) blocked += cell === '#' ? 1 : 0;
    cells += mapSize * mapSize;
  }
  const ratio = blocked / cells;
  assert.ok(ratio > 0.17 && ratio < 0.27, `blocked ratio ${ratio}`);
});

test('generate falls back to an all-free grid when no solvable map can be drawn', () => {
  const s = generate(1, { mapSize: 4, blockedRatio: 1 });
  assert.deepEqual(s.rows, ['....', '....', '....', '....']);
  assert.deepEqual([s.start, s.goal], [[0, 0], [3, 3]]);
  assert.equal(s.optimalLength, 6);
});

test('bfsShortestPath finds shortest moves, [] for the same cell, null when walled off', () => {
  assert.deepEqual(bfsShortestPath(ROWS, [0, 0], [0, 2]), ['R', 'R']);
  assert.equal(bfsShortestPath(ROWS, [0, 0], [2, 2])?.length, 4);
  assert.deepEqual(bfsShortestPath(ROWS, [1, 0], [1, 0]), []);
  assert.equal(bfsShortestPath(['.#.', '##.', '...'], [0, 0], [2, 2]), null);
  assert.equal(bfsShortestPath(ROWS, [0, 0], [1, 1]), null, 'goal on a wall');
});

test('render marks the position and goal and gives coordinates', () => {
  assert.equal(render(corridor()), 'S.G\n.#.\n...\nCurrent position (row, col): (0, 0); goal: (0, 2)');
});

// ---------------------------------------------------------------- rewards

test('a valid step costs r_step plus shaping gamma*phi(next) - phi(cur)', () => {
  // (0,0) -> (0,1): phi -2 -> -1, shaping 0.99 * -1 + 2 = 1.01.
  const { reward, state, done } = applyMoves(corridor(), ['R']);
  close(reward, -0.01 + 1.01);
  assert.deepEqual(state.pos, [0, 1]);
  assert.equal(state.steps, 1);
  assert.equal(done, false);
});

test('shaping is negative when moving away from the goal', () => {
  // (0,0) -> (1,0): phi -2 -> -3, shaping 0.99 * -3 + 2 = -0.97.
  const { reward } = applyMoves(corridor(), ['D']);
  close(reward, -0.01 - 0.97);
  assert.ok(reward < 0);
});

test('an invalid move costs r_invalid, keeps the position and counts', () => {
  // Off the grid: phi stays -2, shaping 0.99 * -2 + 2 = 0.02.
  const off = applyMoves(corridor(), ['U']);
  close(off.reward, -0.1 + 0.02);
  assert.deepEqual(off.state.pos, [0, 0]);
  assert.equal(off.invalidMoves, 1);
  assert.equal(off.state.invalidCount, 1);
  assert.equal(off.state.steps, 1);
  // Into the wall from (0,1), and unknown tokens.
  const wall = applyMoves(corridor(), ['R', 'D', 'X', 'constructor']);
  assert.equal(wall.invalidMoves, 3);
  assert.deepEqual(wall.state.pos, [0, 1]);
});

test('reaching the goal in the optimal number of steps earns r_goal + r_opt', () => {
  const first = applyMoves(corridor(), ['R']);
  const second = applyMoves(first.state, ['R']);
  // (0,1) -> (0,2): -0.01 + (0 + 1) + 1.0 + 0.5.
  close(second.reward, -0.01 + 1 + PLANPATH_REWARDS.rGoal + PLANPATH_REWARDS.rOpt);
  assert.equal(second.solved, true);
  assert.equal(second.done, true);
  close(second.state.totalReward, first.reward + second.reward);
  // Optimality counts the whole episode, across calls.
  const all = applyMoves(corridor(), ['R', 'R']);
  close(all.reward, first.reward + second.reward);
});

test('reaching the goal by a longer route earns r_goal without r_opt, and later moves are ignored', () => {
  const { reward, state } = applyMoves(corridor(), ['U', 'R', 'R', 'L', 'L']);
  const expected =
    -0.1 + 0.02 + // U: invalid
    -0.01 + 1.01 + // R
    -0.01 + 1 + PLANPATH_REWARDS.rGoal; // R: goal after 3 steps, optimal is 2
  close(reward, expected);
  assert.equal(state.steps, 3);
  assert.equal(state.solved, true);
  const after = applyMoves(state, ['L']);
  assert.equal(after.reward, 0);
  assert.deepEqual(after.state, state);
});

test('running out of steps costs r_fail and ends the episode unsolved', () => {
  const { reward, done, solved, state } = applyMoves(corridor(2), ['D', 'U', 'R']);
  // D: -0.01 - 0.97; U back: -0.01 + (0.99 * -2 + 3) = 1.01; then r_fail.
  close(reward, -0.01 - 0.97 + (-0.01 + 1.02) + PLANPATH_REWARDS.rFail);
  assert.equal(done, true);
  assert.equal(solved, false);
  assert.equal(state.steps, 2, 'the third move is not applied');
});

test("invalid_move 'end': an invalid move costs r_invalid + r_fail, ends the episode unsolved there, and says so", () => {
  const strict = initialState(ROWS, [0, 0], [0, 2], { invalidMove: 'end' });
  // R to (0,1): -0.01 + 1.01; D into the wall: r_invalid + shaping 0.99 * -1 + 1 = 0.01, then r_fail.
  const { reward, done, solved, state, invalidMoves, endedByInvalid } = applyMoves(strict, ['R', 'D', 'R']);
  close(reward, -0.01 + 1.01 + (-0.1 + 0.01) + PLANPATH_REWARDS.rFail);
  assert.deepEqual([done, solved, endedByInvalid, invalidMoves], [true, false, true, 1]);
  assert.deepEqual(state.pos, [0, 1], 'the last R, which would reach the goal, is not applied');
  assert.equal(state.steps, 2);
  // The same list under the reference's 'stay' (the default, and a state recorded without the field) reaches the goal.
  const legacy: PlanPathState = { ...corridor() };
  delete legacy.invalidMove;
  for (const stay of [corridor(), legacy]) {
    const r = applyMoves(stay, ['R', 'D', 'R']);
    assert.deepEqual([r.solved, r.endedByInvalid], [true, false]);
  }
  // A legal list is scored alike under both rules.
  close(applyMoves(strict, ['R', 'R']).reward, applyMoves(corridor(), ['R', 'R']).reward);
  // The plan agent's outcome and both agents' rules name the ending.
  assert.match(scorePlanAgent(strict, '#### ["D", "R"]', 0.5).outcome, /an invalid move ended the episode/);
  const prompt = (s: PlanPathState) => buildPrompt('plan_agent', { state: s, turn: 0 }).map((m) => m.content).join('\n');
  assert.match(prompt(strict), /An invalid move ends the episode unsolved/);
  assert.match(prompt(corridor()), /An invalid move is penalised and leaves you in place/);
  assert.throws(() => initialState(ROWS, [0, 0], [0, 2], { invalidMove: 'skip' as never }), /invalidMove must be 'stay' or 'end', got skip/);
});

test('custom reward constants are honoured', () => {
  const noShaping = { ...PLANPATH_REWARDS, lambdaPot: 0 };
  close(applyMoves(corridor(), ['R'], noShaping).reward, -0.01);
  close(applyMoves(corridor(), ['U'], noShaping).reward, -0.1);
});

test('applyMoves does not mutate its input', () => {
  const s = corridor();
  const snapshot = structuredClone(s);
  const frozen = deepFreeze(structuredClone(s));
  applyMoves(s, ['R', 'D', 'R', 'R']);
  applyMoves(frozen, ['R', 'R']);
  assert.deepEqual(s, snapshot);
  const result = applyMoves(s, ['R']);
  result.state.pos[0] = 99;
  result.state.rows[0] = 'xxx';
  assert.deepEqual(s, snapshot, 'the result shares no arrays with the input');
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// ---------------------------------------------------------------- parsers

test('parseMoveAnswer handles the formats models produce', () => {
  const cases: Array<[string, string[] | null]> = [
    ['**Actions List**: ["U", "R", "D", "L"]', ['U', 'R', 'D', 'L']],
    ["**Actions List**: ['U', 'R']\n", ['U', 'R']],
    ['searching...\nActions List: [u, r]\ndone', ['U', 'R']],
    ['**actions list:** [\n  "D",\n  "D"\n]', ['D', 'D']],
    ['**Actions List**: RRDD', ['R', 'R', 'D', 'D']],
    ['**Actions List**: [0, 1, 2, 3]', ['U', 'D', 'L', 'R']],
    ['Reasoning...\n#### ["U","R"]', ['U', 'R']],
    ['#### [U,R,D,L]', ['U', 'R', 'D', 'L']],
    ['#### up, Down, LEFT, right', ['U', 'D', 'L', 'R']],
    ['#### R R D', ['R', 'R', 'D']],
    ['#### **["R"]**', ['R']],
    ['####\n```json\n["L", "U"]\n```', ['L', 'U']],
    ['#### Final answer: ["R"]', ['R']],
    ['#### ["R", "jump", 7]', ['R', 'X', 'X']],
    ['#### ["R", "D"', ['R', 'D']],
    ['#### []', []],
    ['**Actions List**: []', []],
    ['#### [U]\nsome thought\n#### [D, D]', ['D', 'D']],
    ['**Actions List**: ["U"]\n#### ["R"]', ['R']],
    ['##### [L]', ['L']],
    ['', null],
    ['just some text with no list [U, R]', null],
    ['#### I am not sure', null],
    ['####', null],
    ['**Actions List**:', null],
    ['garbage \u0000\uffff ### [[[', null],
  ];
  for (const [input, expected] of cases) {
    assert.deepEqual(parseMoveAnswer(input), expected, JSON.stringify(input));
  }
});

test('parseMoveAnswer caps lists and never throws, even on huge or hostile input', () => {
  assert.equal(parseMoveAnswer(`#### [${'"U",'.repeat(100_000)}"D"]`)?.length, 200);
  assert.equal(parseMoveAnswer(`#### ${'R'.repeat(5000)}`)?.length, 200);
  const hostile = [
    '#'.repeat(1_000_000),
    '['.repeat(1_000_000),
    `#### ${'['.repeat(100_000)}`,
    `actions list${' '.repeat(200_000)}`,
    '```'.repeat(100_000),
    `**Actions List**: ${'x'.repeat(1_000_000)}`,
    null as unknown as string,
    undefined as unknown as string,
    42 as unknown as string,
  ];
  for (const input of hostile) {
    const started = cpuMark();
    assert.doesNotThrow(() => parseMoveAnswer(input));
    assert.doesNotThrow(() => extractCode(input));
    assert.ok(cpuMsSince(started) < 2000, 'parsing is not super-linear');
  }
});

test('extractCode takes the last python block, else a bare block', () => {
  assert.equal(extractCode('```python\nprint(1)\n```\ntext\n```python\nprint(2)\n```'), 'print(2)');
  assert.equal(extractCode('```python\nprint(1)\n```\n```\nnot preferred\n```'), 'print(1)');
  assert.equal(extractCode('```\nprint(3)\n```'), 'print(3)');
  assert.equal(extractCode('```py\nprint(4)\n```'), 'print(4)');
  assert.equal(extractCode('```json\n["U"]\n```'), null);
  assert.equal(extractCode('no code here'), null);
  assert.equal(extractCode('```python\n\n```'), null);
  assert.equal(extractCode('Here:\n```python\nprint("cut off'), 'print("cut off');
});

// ---------------------------------------------------------------- scoring

const ALPHA = 0.5;
const ok = (stdout: string) => ({ code: 'print(...)', stdout, exitCode: 0, timedOut: false });

test('tool agent: no code, crashing code, timeouts and empty output', () => {
  const s = corridor();
  const cases: Array<[Parameters<typeof scoreToolAgent>[1], number, string]> = [
    [{ code: null, stdout: '', exitCode: null, timedOut: false }, -2, 'no code'],
    [{ code: 'raise X', stdout: 'Traceback', exitCode: 1, timedOut: false }, -1, 'code error: exit 1'],
    [{ code: 'while 1: pass', stdout: '', exitCode: null, timedOut: true }, -1, 'code error: timed out'],
    [ok(''), -2, 'no action list in output'],
    [ok('**Actions List**: []'), -2, 'empty action list'],
  ];
  for (const [exec, local, outcome] of cases) {
    const score = scoreToolAgent(s, exec, ALPHA);
    assert.equal(score.local, local, outcome);
    assert.equal(score.global, 0);
    assert.equal(score.reward, local);
    assert.equal(score.outcome, outcome);
    assert.deepEqual(score.actions, []);
    assert.equal(score.nextState, s);
    assert.equal(score.done, false);
  }
});

test('tool agent: a correct path is simulated, rewarded with the optimal bonus, and not applied', () => {
  const s = corridor();
  const score = scoreToolAgent(s, ok('path found\n**Actions List**: ["R", "R"]\n'), ALPHA);
  close(score.local, applyMoves(s, ['R', 'R']).reward);
  close(score.local, -0.01 + 1.01 + (-0.01 + 1) + 1.0 + 0.5);
  assert.equal(score.global, 1);
  close(score.reward, score.local + ALPHA);
  assert.deepEqual(score.actions, ['R', 'R']);
  assert.equal(score.nextState, s, 'the environment is not advanced');
  assert.equal(score.done, false);
  assert.equal(score.solved, false);
  assert.equal(score.outcome, 'simulated 2 moves, reached goal');
});

test('plan agent: missing or empty list', () => {
  const s = corridor();
  for (const [text, outcome] of [
    ['I think we should go right.', 'no action list after ####'],
    ['#### []', 'empty action list'],
  ]) {
    const score = scorePlanAgent(s, text, ALPHA);
    assert.equal(score.local, -2);
    assert.equal(score.reward, -2);
    assert.equal(score.outcome, outcome);
    assert.equal(score.nextState, s);
    assert.equal(score.nextState.steps, 0, 'nothing is counted');
  }
});

test('plan agent: a correct path solves the grid for real', () => {
  const s = corridor();
  const score = scorePlanAgent(s, 'The tool agent is right: two steps right.\n#### ["R", "R"]', ALPHA);
  close(score.local, 3.49);
  assert.equal(score.global, 1);
  close(score.reward, 3.49 + ALPHA);
  assert.equal(score.done, true);
  assert.equal(score.solved, true);
  assert.deepEqual(score.nextState.pos, [0, 2]);
  assert.equal(score.outcome, '2 moves, reached goal');
  assert.deepEqual(s.pos, [0, 0], 'input state untouched');
});

test('plan agent: a wrong path advances the state without solving', () => {
  const s = corridor();
  const score = scorePlanAgent(s, '#### [D, R, U]', ALPHA);
  // D: -0.98; R into the wall: -0.1 + (0.99 * -3 + 3) = -0.07; U: -0.01 + (0.99 * -2 + 3) = 1.01.
  close(score.local, -0.98 - 0.07 + 1.01);
  assert.equal(score.global, 0);
  assert.equal(score.reward, score.local);
  assert.equal(score.done, false);
  assert.deepEqual(score.nextState.pos, [0, 0]);
  assert.equal(score.nextState.steps, 3);
  assert.equal(score.outcome, '3 moves (1 invalid), ended at (0, 0)');
});

// ---------------------------------------------------------------- prompts

test('agents run in the reference order', () => {
  assert.deepEqual([...PLANPATH_AGENTS], ['tool_call_agent', 'plan_agent']);
});

test('tool agent prompt asks for python printing an Actions List and shows the grid', () => {
  const [system, user] = buildPrompt('tool_call_agent', { state: corridor(), turn: 0 });
  assert.equal(system.role, 'system');
  assert.match(system.content, /```python/);
  assert.match(system.content, /\*\*Actions List\*\*/);
  assert.equal(user.role, 'user');
  assert.ok(user.content.includes('S.G\n.#.\n...'));
  assert.ok(user.content.includes('Current position (row, col): (0, 0); goal: (0, 2)'));
});

test('plan agent prompt contains the tool agent code, output and actions of the same turn', () => {
  const toolResult = {
    code: 'print("**Actions List**: [\\"R\\", \\"R\\"]")',
    stdout: '**Actions List**: ["R", "R"]',
    actions: ['R', 'R'],
  };
  const messages = buildPrompt('plan_agent', { state: corridor(), turn: 1, toolResult });
  assert.equal(messages.length, 2);
  const [system, user] = messages;
  assert.match(system.content, /####/);
  assert.ok(user.content.includes(toolResult.code));
  assert.ok(user.content.includes(toolResult.stdout));
  assert.ok(user.content.includes(`action list: ${JSON.stringify(['R', 'R'])}`));
  assert.match(user.content, /turn 2/);
  const none = buildPrompt('plan_agent', { state: corridor(), turn: 0, toolResult: { ...toolResult, actions: null } });
  assert.match(none[1].content, /action list: none/);
});

test('plan agent alone (L0): instructions and task do not mention a code agent', () => {
  const [system, user] = buildPrompt('plan_agent', { state: corridor(), turn: 0 });
  assert.doesNotMatch(system.content + user.content, /code agent|code's|tool/i);
  assert.match(system.content, /^You are a planning and reasoning agent\. Read the task and work out a sequence of moves/);
  assert.match(system.content, /#### \["U", "R", "D", "L"\]$/);
  assert.ok(user.content.includes('S.G\n.#.\n...'));
  assert.match(user.content, /Give the final list of moves after ####\.$/);
});

// ---------------------------------------------------------------- properties

test('random move sequences never leave the grid nor enter a wall', () => {
  const rng = mulberry32(21);
  const MOVES = ['U', 'D', 'L', 'R', 'X'];
  for (let seed = 0; seed < 100; seed++) {
    let s = generate(seed, { mapSize: 4 + (seed % 4), blockedRatio: 0.22, maxSteps: 30 });
    let total = 0;
    while (!s.done) {
      const before = structuredClone(s);
      const r = applyMoves(s, Array.from({ length: randomInt(rng, 8) }, () => MOVES[randomInt(rng, MOVES.length)]));
      assert.deepEqual(s, before, 'input not mutated');
      total += r.reward;
      s = r.state;
      const [pr, pc] = s.pos;
      assert.ok(pr >= 0 && pr < s.rows.length && pc >= 0 && pc < s.rows.length, 'inside the grid');
      assert.equal(s.rows[pr][pc], '.', 'on a free cell');
      assert.ok(s.steps <= s.maxSteps);
      assert.equal(s.solved, pr === s.goal[0] && pc === s.goal[1]);
      close(s.totalReward, total);
    }
  }
});

test('random text never throws through the environment', () => {
  const rng = mulberry32(8);
  const fragments = ['####', '**Actions List**:', '[', ']', ',', ' ', '\n', '"U"', "'R'", 'D', 'left', '0', '3', '9', 'RRUL', 'jump',
    '```python\n', '```', 'None', '\u0000', '🙂', 'constructor', '__proto__'];
  const s = generate(4, { mapSize: 5, blockedRatio: 0.22 });
  for (let i = 0; i < 1500; i++) {
    let text = '';
    for (let n = randomInt(rng, 30); n > 0; n--) text += fragments[randomInt(rng, fragments.length)];
    for (const agent of planPath.agents) {
      const scored = planPath.score(agent, s, text, { exitCode: 0, stdout: text, stderr: '', timedOut: false }, 0.5);
      assert.ok(Number.isFinite(scored.reward));
      close(scored.reward, scored.local + 0.5 * scored.global);
      assert.equal(scored.nextState.rows[scored.nextState.pos[0]][scored.nextState.pos[1]], '.');
    }
  }
});

// ---------------------------------------------------------------- the tool helper (a miniature)

/** Runs a program with the sandbox's python (/usr/bin/python3 -I), unsandboxed. */
function runPython(program: string): ProgramRun {
  const r = spawnSync('/usr/bin/python3', ['-I', '-'], { input: program, encoding: 'utf8', timeout: 20_000 });
  return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined };
}

test("the tool helper's shortest_path returns bfsShortestPath's moves: hand-built grids, S and G cells, ends off the grid or in a wall, and generated maps", () => {
  const cases: Array<[string[], Coord, Coord]> = [
    [ROWS, [0, 0], [0, 2]], // around the wall: R, R
    [ROWS, [0, 0], [2, 2]],
    [ROWS, [1, 0], [1, 0]], // start is the goal: []
    [['S.#', '.##', '#.G'], [0, 0], [2, 2]], // walled off: None
    [['S..', '##.', 'G..'], [0, 0], [2, 0]], // S and G count as free
    [ROWS, [1, 1], [0, 0]], // start in a wall: None
    [ROWS, [0, 0], [3, 0]], // goal off the grid: None
    [ROWS, [-1, 0], [0, 0]], // start off the grid: None
  ];
  const rng = mulberry32(31);
  for (let seed = 0; seed < 60; seed++) {
    const s = generate(seed, { mapSize: 4 + (seed % 4), blockedRatio: 0.3 });
    const cell = (): Coord => [randomInt(rng, s.rows.length), randomInt(rng, s.rows.length)];
    cases.push([s.rows, s.pos, s.goal], [s.rows, cell(), cell()]);
  }
  const calls = cases.map(([rows, from, to]) => `print(json.dumps(shortest_path(${JSON.stringify(rows)}, (${from[0]}, ${from[1]}), (${to[0]}, ${to[1]}))))`);
  const run = runPython(`${TOOL_HELPER_PRELUDE}\nimport json\n${calls.join('\n')}\n`);
  assert.equal(run.exitCode, 0, run.stderr);
  const printed = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(printed.slice(0, 8), [['R', 'R'], ['D', 'D', 'R', 'R'], [], null, ['R', 'R', 'D', 'D', 'L', 'L'], null, null, null]);
  cases.forEach(([rows, from, to], i) => assert.deepEqual(printed[i], bfsShortestPath(rows, from, to), `case ${i}: ${JSON.stringify([rows, from, to])}`));
});

test('the tool helper: env.tool_helper runs the code after the prelude; a right call solves the grid, a swapped one does not', () => {
  const on = initialState(ROWS, [0, 0], [2, 2], { toolHelper: true });
  const off = corridor();
  const call = (from: string, to: string) => `\`\`\`python\nrows = ${JSON.stringify(ROWS)}\nprint("**Actions List**:", shortest_path(rows, ${from}, ${to}))\n\`\`\``;
  const right = call('(0, 0)', '(2, 2)');
  assert.equal(planPath.program('tool_call_agent', right, on), withToolHelper(extractCode(right)!, on));
  assert.ok(planPath.program('tool_call_agent', right, on)!.startsWith(`${TOOL_HELPER_PRELUDE}\n`));
  assert.equal(planPath.program('tool_call_agent', right, off), extractCode(right), 'off: the code alone');
  assert.equal(planPath.program('plan_agent', right, on), null);
  assert.equal(planPath.program('tool_call_agent', 'no code', on), null);

  const solved = planPath.score('tool_call_agent', on, right, runPython(planPath.program('tool_call_agent', right, on)!), ALPHA);
  assert.equal(solved.outcome, 'simulated 4 moves, reached goal');
  assert.equal(solved.global, 1);
  const wrong = call('(2, 2)', '(0, 0)');
  const swapped = planPath.score('tool_call_agent', on, wrong, runPython(planPath.program('tool_call_agent', wrong, on)!), ALPHA);
  assert.deepEqual(swapped.handoff, { code: extractCode(wrong), stdout: "**Actions List**: ['U', 'U', 'L', 'L']\n", actions: ['U', 'U', 'L', 'L'] });
  assert.equal(swapped.global, 0);
  // Without the helper the same code has nothing to call: a code error.
  const missing = planPath.score('tool_call_agent', off, right, runPython(planPath.program('tool_call_agent', right, off)!), ALPHA);
  assert.equal(missing.outcome, 'code error: exit 1');
});

test('env.helper_grid named: the program finds the grid as rows, so a call that copies only position and goal solves; under literal it has no rows', () => {
  const named = initialState(ROWS, [0, 0], [2, 2], { toolHelper: true, helperGrid: 'named' });
  const literal = initialState(ROWS, [0, 0], [2, 2], { toolHelper: true });
  assert.equal(literal.helperGrid, 'literal');
  const reply = '```python\nprint("**Actions List**:", shortest_path(rows, (0, 0), (2, 2)))\n```';
  const program = planPath.program('tool_call_agent', reply, named)!;
  assert.equal(program, `${TOOL_HELPER_PRELUDE}\nrows = ${JSON.stringify(ROWS)}\n\n${extractCode(reply)}`);
  const solved = planPath.score('tool_call_agent', named, reply, runPython(program), ALPHA);
  assert.equal(solved.outcome, 'simulated 4 moves, reached goal');
  assert.deepEqual(solved.handoff, { code: extractCode(reply), stdout: "**Actions List**: ['D', 'D', 'R', 'R']\n", actions: ['D', 'D', 'R', 'R'] });
  // Under literal the program is the prelude and the code only: `rows` is undefined.
  assert.equal(planPath.program('tool_call_agent', reply, literal), `${TOOL_HELPER_PRELUDE}\n\n${extractCode(reply)}`);
  assert.equal(planPath.score('tool_call_agent', literal, reply, runPython(planPath.program('tool_call_agent', reply, literal)!), ALPHA).outcome, 'code error: exit 1');
  // The tool agent's rule says the rows are defined; the plan agent's prompt still never names the helper.
  const text = (state: PlanPathState, agent: string) => planPath.prompt(agent, { state, turn: 0, handoff: undefined }).map((m) => m.content).join('\n');
  assert.ok(text(named, 'tool_call_agent').includes(`${TOOL_HELPER_NAMED_RULE}\n`));
  assert.ok(!text(named, 'tool_call_agent').includes(TOOL_HELPER_RULE));
  assert.doesNotMatch(text(named, 'plan_agent'), /shortest_path|helper/);
  assert.throws(() => initialState(ROWS, [0, 0], [2, 2], { toolHelper: true, helperGrid: 'inline' as never }), /helperGrid must be 'literal' or 'named'/);
});

test('the prompts mention the tool helper only when it is on, and only to the tool agent', () => {
  const on = generate(5, { mapSize: 5, blockedRatio: 0.22, toolHelper: true });
  const off = generate(5, { mapSize: 5, blockedRatio: 0.22 });
  assert.deepEqual({ ...on, toolHelper: false }, off, 'the same instance');
  const text = (state: PlanPathState, agent: string, handoff?: unknown) => planPath.prompt(agent, { state, turn: 0, handoff }).map((m) => m.content).join('\n');
  const handoff = { code: 'print(1)', stdout: '1', actions: null };
  assert.ok(text(on, 'tool_call_agent').includes(`${TOOL_HELPER_RULE}\n`), 'a numbered rule of the tool agent');
  assert.match(text(on, 'tool_call_agent'), /shortest_path\(rows, start, goal\)/);
  // The start and goal to pass are shown as (row, col) tuples, and the rows as a Python list.
  const [[r, c], [gr, gc]] = [on.pos, on.goal];
  assert.ok(text(on, 'tool_call_agent').includes(`Current position (row, col): (${r}, ${c}); goal: (${gr}, ${gc})`));
  assert.ok(text(on, 'tool_call_agent').includes(`Grid rows as a Python list (row 0 first): ${JSON.stringify(on.rows)}`));
  for (const [state, agent, h] of [[off, 'tool_call_agent'], [on, 'plan_agent', handoff], [on, 'plan_agent'], [off, 'plan_agent', handoff]] as const) {
    assert.doesNotMatch(text(state, agent, h), /shortest_path|helper/, `${agent}, helper ${state.toolHelper}`);
  }
  assert.equal(text({ ...on, toolHelper: false }, 'tool_call_agent'), text(off, 'tool_call_agent'));
});

test('the config section maps tool_helper, helper_grid and invalid_move (defaults false, literal, stay); every configs/planpath file loads, the helper ones with it on and their own model', () => {
  const options = (env: Record<string, unknown>) => planPathEnv.options(planPathEnv.config.parse({ name: 'plan_path', ...env })).options;
  assert.deepEqual(options({}), { mapSize: 5, blockedRatio: 0.22, toolHelper: false, helperGrid: 'literal', invalidMove: 'stay', rewardFormula: 'tandem' });
  assert.deepEqual(options({ tool_helper: true, helper_grid: 'named', invalid_move: 'end' }), { mapSize: 5, blockedRatio: 0.22, toolHelper: true, helperGrid: 'named', invalidMove: 'end', rewardFormula: 'tandem' });
  const bad = planPathEnv.config.safeParse({ name: 'plan_path', tool_helper: 'yes', helper_grid: 'inline', invalid_move: 'skip' });
  assert.ok(!bad.success);
  assert.deepEqual(bad.error.issues.map((i) => i.path), [['tool_helper'], ['helper_grid'], ['invalid_move']]);
  // helper_grid named without the helper: an issue naming both keys, in the loaded config's issues under env.
  const unhelped = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['env.helper_grid=named']);
  assert.ok(!unhelped.ok);
  assert.deepEqual(unhelped.issues, [{ path: 'env', message: 'helper_grid named needs tool_helper: true (the grid is named for the helper)' }]);
  const files = readdirSync('configs/planpath').filter((f) => f.startsWith('planpath_') && f.endsWith('.yaml')).sort();
  const helpers = files.filter((f) => f.startsWith('planpath_helper_'));
  assert.deepEqual(helpers, ['planpath_helper_L0_single_agent.yaml', 'planpath_helper_L1_prompt.yaml', 'planpath_helper_L2_lora.yaml']);
  for (const file of files) {
    const r = loadRunConfig(`configs/planpath/${file}`);
    assert.ok(r.ok, `${file}: ${JSON.stringify(!r.ok && r.issues)}`);
    const helper = helpers.includes(file);
    assert.equal(r.config.env.name === 'plan_path' && r.config.env.tool_helper, helper, file);
    const models = Object.values(r.config.base_models).map((m) => m.path);
    assert.ok(models.every((path) => path === (helper ? '.tools/models/tandem-tiny-helper' : '.tools/models/tandem-tiny')), `${file}: ${models}`);
    if (helper) assert.match(readFileSync(`configs/planpath/${file}`, 'utf8'), /^# A MINIATURE of the paper's mechanism, not the reference's setting/, `${file}: the head comment`);
  }
});
