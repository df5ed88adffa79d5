import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  SOKOBAN_DEFAULTS,
  SOKOBAN_REWARDS,
  applyMoves,
  deadSquares,
  generate,
  parseLevel,
  render,
  renderRoom,
  sokoban,
  solve,
  targetsOf,
  type SokobanOptions,
  type SokobanState,
} from '../../envs/sokoban/index.js';
import { sokobanEnv } from '../../envs/sokoban/config.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';

const close = (actual: number, expected: number, message?: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} expected ${expected}, got ${actual}`);

// Shaping as the reference: lambda * (gamma * phi(next) - phi(current)), phi = -(sum of box distances).
const shaping = (distBefore: number, distAfter: number) => SOKOBAN_REWARDS.lambdaPot * (SOKOBAN_REWARDS.gamma * -distAfter + distBefore);

// A corridor: player, floor, box, floor, target.
const CORRIDOR = ['#######', '#@_$_.#', '#######'];

// ---------------------------------------------------------------- rules and rewards

test('the reward constants are the reference\'s', () => {
  assert.deepEqual(SOKOBAN_REWARDS, { rStep: -0.01, rInvalid: -0.05, rBoxOnTarget: 1, rBoxOffTarget: -0.5, rWin: 10, rFail: -5, gamma: 0.99, lambdaPot: 0.1 });
  assert.deepEqual(SOKOBAN_DEFAULTS, { size: 6, boxes: 1, walkSteps: 25, searchDepth: 200, maxSteps: 200, deadlock: 'end' });
});

test('a plain step costs r_step plus shaping and moves the player', () => {
  const r = applyMoves(parseLevel(CORRIDOR), ['R']);
  close(r.reward, -0.01 + shaping(2, 2));
  assert.deepEqual(r.state.player, [1, 2]);
  assert.deepEqual(r.state.boxes, [[1, 3]]);
  assert.equal(r.state.steps, 1);
  assert.equal(r.done, false);
});

test('a push moves the box; shaping rewards getting it closer', () => {
  const r = applyMoves(parseLevel(CORRIDOR), ['R', 'R']);
  close(r.reward, -0.01 + shaping(2, 2) + (-0.01 + shaping(2, 1)));
  assert.deepEqual(r.state.player, [1, 3]);
  assert.deepEqual(r.state.boxes, [[1, 4]]);
});

test('the last box onto a target earns r_box_on_target + r_win and ends the episode; later moves are ignored', () => {
  const s = applyMoves(parseLevel(CORRIDOR), ['R', 'R']).state;
  const r = applyMoves(s, ['R', 'L', 'L']);
  close(r.reward, -0.01 + 1 + shaping(1, 0) + 10);
  assert.equal(r.solved, true);
  assert.equal(r.done, true);
  assert.equal(r.applied, 1);
  assert.equal(r.state.steps, 3);
  assert.equal(r.state.boxesOnTargets, 1);
  assert.deepEqual(renderRoom(r.state), ['#######', '#___@*#', '#######']);
  const after = applyMoves(r.state, ['L']);
  assert.equal(after.reward, 0);
  assert.deepEqual(after.state, r.state);
});

test('walking into a wall or an unknown move is invalid: r_invalid, no movement, counted', () => {
  const wall = applyMoves(parseLevel(CORRIDOR), ['L']);
  close(wall.reward, -0.05 + shaping(2, 2));
  assert.deepEqual(wall.state.player, [1, 1]);
  assert.equal(wall.invalidMoves, 1);
  assert.equal(wall.state.invalidCount, 1);
  assert.equal(wall.state.steps, 1, 'invalid moves count as steps, as the reference');
  const unknown = applyMoves(parseLevel(CORRIDOR), ['X', 'constructor', '', 'u']);
  assert.equal(unknown.invalidMoves, 4);
  assert.deepEqual(unknown.state.player, [1, 1]);
});

test('pushing a box into a wall or into another box is invalid', () => {
  const intoWall = applyMoves(parseLevel(['#######', '#@$#__#', '#___._#', '#######']), ['R']);
  close(intoWall.reward, -0.05 + shaping(3, 3));
  assert.deepEqual(intoWall.state.player, [1, 1]);
  assert.deepEqual(intoWall.state.boxes, [[1, 2]]);
  const intoBox = applyMoves(parseLevel(['########', '#@$$_._#', '#____._#', '########']), ['R']);
  assert.equal(intoBox.invalidMoves, 1);
  assert.deepEqual(intoBox.state.boxes, [[1, 2], [1, 3]]);
  assert.deepEqual(intoBox.state.player, [1, 1]);
});

test('pushing a box off a target costs r_box_off_target; target to target is neutral', () => {
  const off = applyMoves(parseLevel(['#######', '#@*__.#', '#######']), ['R']);
  close(off.reward, -0.01 - 0.5 + shaping(0, 1));
  assert.equal(off.state.boxesOnTargets, 0);
  assert.equal(off.done, false);
  const across = applyMoves(parseLevel(['########', '#@*._$_#', '########']), ['R']);
  close(across.reward, -0.01 + shaping(2, 2));
  assert.equal(across.state.boxesOnTargets, 1);
  assert.equal(across.done, false);
});

test('running out of steps costs r_fail and ends the episode unsolved', () => {
  const r = applyMoves(parseLevel(CORRIDOR, 2), ['L', 'L', 'R']);
  close(r.reward, 2 * (-0.05 + shaping(2, 2)) - 5);
  assert.equal(r.done, true);
  assert.equal(r.solved, false);
  assert.equal(r.state.failure, 'step limit');
  assert.equal(r.state.steps, 2, 'the third move is not applied');
});

test('a box pushed into a non-target corner is a deadlock: r_fail, episode over', () => {
  const level = ['######', '#_@$_#', '#____#', '#____#', '#.___#', '######'];
  const r = applyMoves(parseLevel(level), ['R', 'D']);
  close(r.reward, -0.01 + shaping(5, 6) - 5);
  assert.equal(r.done, true);
  assert.equal(r.solved, false);
  assert.equal(r.state.failure, 'deadlock');
  assert.equal(r.applied, 1);
  // The same corner holding a target is a win, not a deadlock.
  const win = applyMoves(parseLevel(['######', '#_@$.#', '#____#', '######']), ['R']);
  assert.equal(win.solved, true);
});

test('a box pushed against a wall with no target along it is a deadlock', () => {
  const level = ['######', '#____#', '#_@$_#', '#____#', '#.___#', '######'];
  const r = applyMoves(parseLevel(level), ['R']);
  assert.equal(r.state.failure, 'deadlock');
  const dead = deadSquares(parseLevel(level).room);
  const width = level[0].length;
  assert.equal(dead[2 * width + 4], 1, 'right wall side is dead');
  assert.equal(dead[4 * width + 1], 0, 'a target is live');
  assert.equal(dead[4 * width + 4], 1, 'bottom-right corner is dead');
  assert.equal(dead[2 * width + 2], 0, 'the middle is live');
  assert.equal(dead[0], 0, 'walls are not floor');
});

test('two boxes frozen side by side against a wall are a deadlock', () => {
  // Targets at both ends of the top row keep every top-row cell live on its own.
  const level = ['#######', '#._$_.#', '#_$___#', '#_@___#', '#######'];
  const r = applyMoves(parseLevel(level), ['U']);
  close(r.reward, -0.01 + shaping(4, 3) - 5);
  assert.equal(r.state.failure, 'deadlock');
  assert.deepEqual(r.state.boxes, [[1, 2], [1, 3]]);
});

test("env.deadlock: 'end' ends a deadlocked room with r_fail; 'continue' plays on as the reference, to a win or the step budget", () => {
  // The box goes into the top-right corner (no target there), then the player steps down.
  const level = ['######', '#_@$_#', '#____#', '#____#', '#.___#', '######'];
  const moves = ['R', 'D'];
  const ended = applyMoves(parseLevel(level), moves);
  close(ended.reward, -0.01 + shaping(5, 6) - 5);
  assert.deepEqual([ended.done, ended.solved, ended.state.failure, ended.applied], [true, false, 'deadlock', 1]);

  const room = { ...parseLevel(level, 4), deadlock: 'continue' as const };
  const goesOn = applyMoves(room, moves);
  close(goesOn.reward, -0.01 + shaping(5, 6) + (-0.01 + shaping(6, 6)), 'the ordinary step rewards, no r_fail');
  assert.deepEqual([goesOn.done, goesOn.solved, goesOn.state.failure, goesOn.applied], [false, false, null, 2]);
  assert.deepEqual(goesOn.state.player, [2, 3]);
  // Only the step budget (4 moves here) ends it, with r_fail as the reference's max_steps does.
  const out = applyMoves(goesOn.state, ['L', 'L', 'L']);
  close(out.reward, -0.01 + shaping(6, 6) + (-0.01 + shaping(6, 6) - 5));
  assert.deepEqual([out.done, out.solved, out.state.failure, out.applied], [true, false, 'step limit', 2]);
  // The same as a room the generator makes, and through the environment.
  assert.equal(generate(3, { deadlock: 'continue' }).deadlock, 'continue');
  assert.equal(generate(3).deadlock, 'end');
  const stuck = sokoban.score('plan_agent', room, '#### ["R", "D"]', null, 0.4);
  assert.deepEqual([stuck.done, stuck.outcome], [false, '2 moves, 0 of 1 boxes on targets, ended at (2, 3)']);
});

test('applyMoves does not mutate its input', () => {
  const s = parseLevel(CORRIDOR);
  const snapshot = structuredClone(s);
  applyMoves(deepFreeze(structuredClone(s)), ['R', 'R', 'R']);
  const r = applyMoves(s, ['R', 'R']);
  r.state.boxes[0][0] = 99;
  r.state.player[0] = 99;
  assert.deepEqual(s, snapshot);
});

test('render shows the standard symbols and coordinates', () => {
  const s = parseLevel(['######', '#+$_.#', '#_*__#', '######']);
  assert.deepEqual(renderRoom(s), ['######', '#+$_.#', '#_*__#', '######']);
  assert.deepEqual(s.room, ['######', '#.__.#', '#_.__#', '######']);
  assert.equal(s.boxesOnTargets, 1);
  assert.equal(render(s).split('\n').at(-1), 'Player (row, col): (1, 1); boxes: [(1, 2), (2, 2)]; targets: [(1, 1), (1, 4), (2, 2)]');
});

// ---------------------------------------------------------------- solver

test('solve finds shortest solutions, [] when solved, null when impossible', () => {
  assert.deepEqual(solve(parseLevel(CORRIDOR)), ['R', 'R', 'R']);
  assert.deepEqual(solve(parseLevel(['#####', '#@*_#', '#####'])), []);
  assert.equal(solve(parseLevel(['######', '#@_$#', '#.__#', '######'])), null, 'box in a corner');
  assert.equal(solve(parseLevel(['#######', '#@$_#.#', '#######'])), null, 'target walled off');
  const twoBoxes = parseLevel(['#######', '#.$@$.#', '#_____#', '#######']);
  const moves = solve(twoBoxes);
  assert.ok(moves !== null && applyMoves(twoBoxes, moves).solved);
});

// ---------------------------------------------------------------- generator

function checkRoom(s: SokobanState, size: number, boxes: number, label: string) {
  assert.equal(s.room.length, size, label);
  for (const row of s.room) assert.match(row, new RegExp(`^#[#_.]{${size - 2}}#$`), label);
  assert.equal(s.room[0], '#'.repeat(size));
  assert.equal(s.room[size - 1], '#'.repeat(size));
  assert.equal(s.boxes.length, boxes, label);
  assert.equal(targetsOf(s.room).length, boxes, label);
  assert.equal(s.boxesOnTargets, 0, `${label}: every box starts off target`);
  const [pr, pc] = s.player;
  assert.notEqual(s.room[pr][pc], '#', label);
  assert.ok(!s.boxes.some(([r, c]) => r === pr && c === pc), label);
  const dead = deadSquares(s.room);
  for (const [r, c] of s.boxes) {
    assert.notEqual(s.room[r][c], '#', `${label}: box on a wall`);
    assert.equal(dead[r * size + c], 0, `${label}: box on a dead square`);
  }
  // The reference's min_box_distance: each box is at least 2 cells (Manhattan) from the target
  // it was pulled off. The state does not say which one that is, so some assignment must fit.
  assert.ok(
    permutations(targetsOf(s.room)).some((ts) => ts.every((t, i) => manhattan(t, s.boxes[i]) >= 2)),
    `${label}: a box is next to its target`,
  );
  assert.deepEqual([s.steps, s.done, s.solved, s.failure, s.totalReward], [0, false, false, null, 0]);
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s, 'JSON-serialisable');
}

const manhattan = ([r1, c1]: readonly number[], [r2, c2]: readonly number[]) => Math.abs(r1 - r2) + Math.abs(c1 - c2);

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest]));
}

test('generate is deterministic by seed and varies across seeds', () => {
  assert.deepEqual(generate(42), generate(42));
  assert.deepEqual(generate(42, {}), generate(42, { size: 6, boxes: 1, walkSteps: 25, searchDepth: 200, maxSteps: 200, deadlock: 'end' }));
  const layouts = new Set(Array.from({ length: 50 }, (_, seed) => JSON.stringify(generate(seed))));
  assert.ok(layouts.size > 45, `only ${layouts.size} distinct rooms for 50 seeds`);
});

test('default rooms (6x6, 1 box) are well formed and solvable over 500 seeds', () => {
  for (let seed = 0; seed < 500; seed++) {
    const s = generate(seed);
    checkRoom(s, 6, 1, `seed ${seed}`);
    const moves = solve(s);
    assert.ok(moves !== null && moves.length > 0, `seed ${seed}: no solution`);
    const played = applyMoves(s, moves);
    assert.ok(played.solved && played.done, `seed ${seed}: solution does not solve`);
    assert.ok(played.reward > 10, 'a win is worth more than 10');
  }
});

// The reference's generator (PettingLLMs utils.generate_room with its SokobanGridEnvState
// arguments: 6x6, 1 box, num_steps 25, tries 20, search_depth 200, min_box_distance 2,
// min_difficulty_score 1), run with Python on seeds 0..2999 (all 3,000 generated):
//   box-to-target distance: 2: 1543, 3: 1086, 4: 371 (none below 2; mean 2.609, sd 0.70)
//   optimal solution length (BFS): mean 5.111, sd 2.01, min 2, max 15
//   player-to-box distance: 1: 1859, 2: 1058, 3: 79, 4: 4 (mean 1.409, sd 0.55)
//   floor cells (targets included): mean 12.11, sd 2.51
// (On seeds 0..299 alone: solution length mean 4.92, box distance 2/3/4: 163/102/35.)
// Tandem draws from its own PRNG, so it can match the distribution, not the rooms. Each
// tolerance is about 3.5 standard errors of a 300-room mean or share (sd / sqrt(300)), so a
// generator with the reference's distribution passes whatever its seeds, and a visibly
// different one (the old generator: 74 of 300 boxes one step from their target) fails.
test("default rooms follow the reference's statistics over 300 seeds (6x6, 1 box)", () => {
  const N = 300;
  const boxDistance: number[] = [];
  const playerDistance: number[] = [];
  const solutionLength: number[] = [];
  const floorCells: number[] = [];
  for (let seed = 0; seed < N; seed++) {
    const s = generate(seed);
    const [target] = targetsOf(s.room);
    boxDistance.push(manhattan(s.boxes[0], target));
    playerDistance.push(manhattan(s.player, s.boxes[0]));
    floorCells.push(s.room.join('').replace(/#/g, '').length);
    const moves = solve(s);
    assert.ok(moves !== null, `seed ${seed}: unsolvable`);
    solutionLength.push(moves.length);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const share = (xs: number[], d: number) => xs.filter((x) => x === d).length / xs.length;
  const near = (name: string, actual: number, expected: number, tolerance: number) =>
    assert.ok(Math.abs(actual - expected) <= tolerance, `${name}: ${actual.toFixed(3)}, the reference's ${expected} +- ${tolerance}`);
  assert.equal(boxDistance.filter((d) => d < 2).length, 0, 'no box starts next to its target');
  near('mean box-to-target distance', mean(boxDistance), 2.609, 0.15); // SE 0.040
  near('share of boxes 2 from their target', share(boxDistance, 2), 0.514, 0.1); // SE 0.029
  near('mean optimal solution length', mean(solutionLength), 5.111, 0.4); // SE 0.116
  near('mean player-to-box distance', mean(playerDistance), 1.409, 0.12); // SE 0.032
  near('share of players next to the box', share(playerDistance, 1), 0.62, 0.1); // SE 0.028
  near('mean floor cells', mean(floorCells), 12.11, 0.5); // SE 0.145
});

test('walkSteps is the length of the floor walk, searchDepth the depth of reverse play', () => {
  const floorOf = (opts: SokobanOptions) => {
    let total = 0;
    for (let seed = 0; seed < 100; seed++) total += generate(seed, opts).room.join('').replace(/#/g, '').length;
    return total / 100;
  };
  const short = floorOf({ size: 8, walkSteps: 10 });
  const long = floorOf({ size: 8, walkSteps: 60 });
  assert.ok(long > short + 5, `walkSteps 10: ${short} floor cells on average, walkSteps 60: ${long}`);
  // searchDepth 4 explores positions up to 2 reverse moves deep: the only usable ones are 2
  // pulls straight away from the target, so the box starts exactly 2 cells from it.
  for (let seed = 0; seed < 50; seed++) {
    const s = generate(seed, { searchDepth: 4 });
    checkRoom(s, 6, 1, `searchDepth 4 seed ${seed}`);
    assert.equal(manhattan(s.boxes[0], targetsOf(s.room)[0]), 2);
  }
});

test('larger rooms and more boxes are solvable too', () => {
  const settings: { opts: SokobanOptions; size: number; seeds: number }[] = [
    { opts: { boxes: 2 }, size: 6, seeds: 60 },
    { opts: { size: 7, boxes: 3 }, size: 7, seeds: 20 },
    { opts: { size: 8, boxes: 2, searchDepth: 40 }, size: 8, seeds: 20 },
    { opts: { size: 5, walkSteps: 10, maxSteps: 50 }, size: 5, seeds: 60 },
  ];
  for (const { opts, size, seeds } of settings) {
    for (let seed = 0; seed < seeds; seed++) {
      const s = generate(1000 + seed, opts);
      const label = `${JSON.stringify(opts)} seed ${1000 + seed}`;
      checkRoom(s, size, opts.boxes ?? 1, label);
      assert.equal(s.maxSteps, opts.maxSteps ?? 200);
      const moves = solve(s);
      assert.ok(moves !== null && applyMoves(s, moves).solved, `${label}: not solvable`);
    }
  }
});

test('generate rejects unusable options', () => {
  const bad: SokobanOptions[] = [{ size: 4 }, { size: 17 }, { boxes: 0 }, { boxes: 5 }, { walkSteps: 0 }, { searchDepth: 3 }, { searchDepth: 1001 }, { size: 6.5 }, { maxSteps: 0 }, { deadlock: 'stop' as 'end' }];
  for (const opts of bad) assert.throws(() => generate(1, opts), RangeError, JSON.stringify(opts));
});

test('the config section maps walk_steps, search_depth and deadlock; the removed reverse_steps is named', () => {
  for (const file of readdirSync('configs/sokoban').filter((f) => f.startsWith('sokoban_') && f.endsWith('.yaml'))) {
    const env = sokobanEnv.config.parse(parseYaml(readFileSync(`configs/sokoban/${file}`, 'utf8')).env);
    assert.deepEqual(sokobanEnv.options(env), { options: { size: 6, boxes: 1, walkSteps: 25, searchDepth: 200, maxSteps: 200, deadlock: 'end', rewardFormula: 'tandem' }, issues: [] }, file);
  }
  assert.deepEqual(sokobanEnv.options(sokobanEnv.config.parse({ name: 'sokoban', walk_steps: 30, search_depth: 100, deadlock: 'continue' })).options, {
    size: 6, boxes: 1, walkSteps: 30, searchDepth: 100, maxSteps: 200, deadlock: 'continue', rewardFormula: 'tandem',
  });
  const badRule = sokobanEnv.config.safeParse({ name: 'sokoban', deadlock: 'stop' });
  assert.ok(!badRule.success);
  assert.deepEqual(badRule.error.issues.map((i) => i.path), [['deadlock']]);
  const old = sokobanEnv.config.safeParse({ name: 'sokoban', reverse_steps: 25 });
  assert.ok(!old.success);
  assert.deepEqual(old.error.issues.map((i) => i.path), [['reverse_steps']]);
  assert.match(old.error.issues[0].message, /reverse_steps was removed: use walk_steps .* and search_depth/);
});

// ---------------------------------------------------------------- properties

test('random move sequences never break the invariants', () => {
  const rng = mulberry32(11);
  const MOVES = ['U', 'D', 'L', 'R', 'U', 'D', 'L', 'R', 'X'];
  for (let seed = 0; seed < 150; seed++) {
    const deadlock = seed % 2 === 0 ? 'end' : 'continue';
    let s = generate(seed, { boxes: 1 + (seed % 3), maxSteps: 40 + (seed % 40), deadlock });
    const room = [...s.room];
    const boxCount = s.boxes.length;
    let total = 0;
    while (!s.done) {
      const moves = Array.from({ length: randomInt(rng, 12) }, () => MOVES[randomInt(rng, MOVES.length)]);
      const before = structuredClone(s);
      const r = applyMoves(s, moves);
      assert.deepEqual(s, before, 'input not mutated');
      total += r.reward;
      s = r.state;
      assert.deepEqual(s.room, room);
      assert.equal(s.boxes.length, boxCount, 'box count constant');
      const keys = new Set(s.boxes.map(([br, bc]) => `${br},${bc}`));
      assert.equal(keys.size, boxCount, 'boxes distinct');
      for (const [br, bc] of s.boxes) assert.notEqual(room[br][bc], '#', 'box on a wall');
      assert.notEqual(room[s.player[0]][s.player[1]], '#', 'player in a wall');
      assert.ok(!keys.has(`${s.player[0]},${s.player[1]}`), 'player on a box');
      assert.equal(s.boxesOnTargets, s.boxes.filter(([br, bc]) => room[br][bc] === '.').length);
      assert.ok(s.steps <= s.maxSteps);
      assert.equal(s.solved, s.boxesOnTargets === boxCount);
      assert.ok(Number.isFinite(r.reward));
      close(s.totalReward, total);
    }
    assert.ok(s.solved || s.failure !== null);
    if (deadlock === 'continue') assert.notEqual(s.failure, 'deadlock');
  }
});

test('random text never throws through the environment and keeps states valid', () => {
  const rng = mulberry32(5);
  const fragments = ['####', '**Actions List**:', '[', ']', ',', ' ', '\n', '"U"', "'R'", 'D', 'left', '0', '3', '9', 'RRUL', 'jump',
    '```python\n', '```', 'None', '\u0000', '🙂', 'constructor', '__proto__'];
  const s0 = generate(3);
  for (let i = 0; i < 1500; i++) {
    let text = '';
    for (let n = randomInt(rng, 30); n > 0; n--) text += fragments[randomInt(rng, fragments.length)];
    for (const agent of sokoban.agents) {
      const run = { exitCode: 0, stdout: text, stderr: '', timedOut: false };
      const scored = sokoban.score(agent, s0, text, run, 0.4);
      assert.ok(Number.isFinite(scored.reward));
      assert.equal(scored.reward, scored.local + 0.4 * scored.global);
      const next = scored.nextState;
      assert.equal(next.boxes.length, 1);
      for (const [r, c] of next.boxes) assert.notEqual(next.room[r][c], '#');
    }
  }
});

// ---------------------------------------------------------------- roles

test('the environment plays the two roles; the plan agent applies, the tool agent simulates', () => {
  const s = parseLevel(CORRIDOR);
  const plan = sokoban.score('plan_agent', s, 'Push right three times.\n#### ["R", "R", "R"]', null, 0.4);
  assert.equal(plan.solved, true);
  assert.equal(plan.global, 1);
  close(plan.reward, plan.local + 0.4);
  assert.equal(plan.outcome, '3 moves, 1 of 1 boxes on targets, solved');
  const tool = sokoban.score('tool_call_agent', s, '```python\nprint("**Actions List**: RRL")\n```', { exitCode: 0, stdout: '**Actions List**: RRL', stderr: '', timedOut: false }, 0.4);
  assert.equal(tool.outcome, 'simulated 3 moves, 0 of 1 boxes on targets, ended at (1, 2)');
  assert.equal(tool.nextState, s);
  assert.deepEqual(tool.handoff, { code: 'print("**Actions List**: RRL")', stdout: '**Actions List**: RRL', actions: ['R', 'R', 'L'] });
  const stuck = sokoban.score('plan_agent', parseLevel(['######', '#_@$_#', '#____#', '#.___#', '######']), '#### [R]', null, 0.4);
  assert.equal(stuck.outcome, '1 move, 0 of 1 boxes on targets, deadlock');
  assert.equal(stuck.done, true);
});

test('prompts show the room, symbols, coordinates and rules; the L0 plan prompt stands alone', () => {
  const s = generate(0);
  const [toolSys, toolUser] = sokoban.prompt('tool_call_agent', { state: s, turn: 0, handoff: undefined });
  assert.match(toolSys.content, /Sokoban room/);
  assert.match(toolSys.content, /\*\*Actions List\*\*: \["U", "R", "D", "L"\]/);
  assert.ok(toolUser.content.includes(renderRoom(s).join('\n')));
  assert.ok(toolUser.content.includes("'#' wall, '_' floor, '.' target, '$' box, '*' box on a target, '@' you, '+' you on a target"));
  assert.ok(toolUser.content.includes(`Room rows as a Python list (row 0 first): ${JSON.stringify(renderRoom(s))}`));
  assert.match(toolUser.content, /lost after 200 moves/);
  const [soloSys, soloUser] = sokoban.prompt('plan_agent', { state: s, turn: 0, handoff: undefined });
  assert.doesNotMatch(soloSys.content + soloUser.content, /code agent/i);
  assert.match(soloSys.content, /pushes every box onto a target/);
  const later = sokoban.prompt('plan_agent', { state: applyMoves(s, ['U']).state, turn: 1, handoff: { code: 'x', stdout: '', actions: null } });
  assert.match(later[1].content, /This is turn 2\. Moves made so far: 1; boxes on targets: 0 of 1/);
  assert.match(later[1].content, /Code agent's action list: none/);
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
