import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePuzzleAnswer } from '../../envs/puzzle/index.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import {
  SUDOKU_REWARDS,
  applyAnswer,
  boxShape,
  conflictCells,
  countSolutions,
  generate,
  initialState,
  isSolvedGrid,
  parseSudokuAnswer,
  renderGrid,
  solveSudoku,
  sudoku,
  sudokuPuzzle,
  type SudokuState,
} from '../../envs/sudoku/index.js';
import { cpuMark, cpuMsSince } from '../support/cpuTime.js';

const close = (actual: number, expected: number, message?: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} expected ${expected}, got ${actual}`);

const SOLUTION = [
  [1, 2, 3, 4],
  [3, 4, 1, 2],
  [2, 1, 4, 3],
  [4, 3, 2, 1],
];
// The diagonal emptied: 4 blanks, each forced by its row.
const PUZZLE = SOLUTION.map((row, r) => row.map((v, c) => (r === c ? 0 : v)));
const fresh = (): SudokuState => initialState(PUZZLE, SOLUTION);
const withCell = (grid: number[][], r: number, c: number, v: number) => grid.map((row, i) => row.map((x, j) => (i === r && j === c ? v : x)));

// ---------------------------------------------------------------- rewards

test('the reward constants', () => {
  assert.deepEqual(SUDOKU_REWARDS, { rProgress: 1, rConflict: -1, rGivenChanged: -0.1, rMalformed: -1, rWin: 1 });
});

test('a complete, valid grid: progress for every blank plus r_win, episode solved', () => {
  const r = applyAnswer(fresh(), SOLUTION);
  close(r.reward, 1 + 1);
  assert.deepEqual([r.solved, r.done, r.state.solved, r.state.done, r.newlyCorrect, r.conflicts, r.empty], [true, true, true, true, 4, 0, 0]);
  assert.deepEqual(r.state.grid, SOLUTION);
  assert.equal(r.state.steps, 1);
  close(r.state.totalReward, 2);
  const after = applyAnswer(r.state, PUZZLE);
  assert.equal(after.reward, 0, 'answers after the end are ignored');
  assert.deepEqual(after.state, r.state);
});

test('partial grids: progress is the fraction of blanks newly correct; undoing it costs the same', () => {
  const one = applyAnswer(fresh(), withCell(PUZZLE, 0, 0, 1));
  close(one.reward, 1 / 4);
  assert.deepEqual([one.solved, one.done, one.newlyCorrect, one.empty], [false, false, 1, 3]);
  assert.equal(one.state.grid[0][0], 1);
  const again = applyAnswer(one.state, withCell(PUZZLE, 0, 0, 1));
  close(again.reward, 0, 'resubmitting earns nothing');
  const undo = applyAnswer(one.state, PUZZLE);
  close(undo.reward, -1 / 4);
  assert.equal(undo.state.grid[0][0], 0);
});

test('a number repeating in its row, column or box is penalised each time it stays', () => {
  const wrong = withCell(PUZZLE, 0, 0, 2); // 2 is already in row 0 and the top-left box
  const r = applyAnswer(fresh(), wrong);
  close(r.reward, -1 / 4);
  assert.equal(r.conflicts, 1, 'only non-given cells are counted');
  assert.equal(r.state.grid[0][0], 2, 'the fill is kept for the agent to fix');
  close(applyAnswer(r.state, wrong).reward, -1 / 4);
  close(applyAnswer(r.state, SOLUTION).reward, 1 + 1, 'fixing it solves');
});

test('changing a given is penalised and ignored; 0 on a given is not a change', () => {
  const changed = withCell(SOLUTION, 0, 1, 3);
  const r = applyAnswer(fresh(), changed);
  close(r.reward, 1 + 1 - 0.1);
  assert.equal(r.changedGivens, 1);
  assert.equal(r.state.grid[0][1], 2, 'the given is kept');
  assert.equal(r.solved, true);
  const blanked = applyAnswer(fresh(), withCell(withCell(SOLUTION, 0, 1, 0), 3, 2, 0));
  assert.equal(blanked.changedGivens, 0);
  assert.equal(blanked.solved, true);
});

test('malformed answers cost r_malformed and leave the grid unchanged', () => {
  const malformed: number[][][] = [
    SOLUTION.slice(0, 3),
    [...SOLUTION, [1, 2, 3, 4]],
    withCell(SOLUTION, 1, 1, 5),
    withCell(SOLUTION, 1, 1, -1),
    withCell(SOLUTION, 1, 1, 1.5),
    SOLUTION.map((row) => row.slice(0, 3)),
    [],
  ];
  for (const answer of malformed) {
    const r = applyAnswer(fresh(), answer);
    close(r.reward, -1, JSON.stringify(answer));
    assert.equal(r.malformed, true);
    assert.deepEqual(r.state.grid, PUZZLE);
    assert.equal(r.state.steps, 1);
    assert.equal(r.done, false);
  }
});

test('applyAnswer does not mutate its input and shares no arrays with it', () => {
  const s = fresh();
  const snapshot = structuredClone(s);
  const r = applyAnswer(s, SOLUTION);
  r.state.grid[0][0] = 9;
  r.state.puzzle[0][1] = 9;
  r.state.solution[0][2] = 9;
  const m = applyAnswer(s, [[1]]);
  m.state.grid[0][1] = 9;
  assert.deepEqual(s, snapshot);
});

// ---------------------------------------------------------------- checks and solver

test('conflicts, validity, solution counting and solving', () => {
  assert.deepEqual([...conflictCells(SOLUTION)], []);
  assert.deepEqual([...conflictCells(withCell(PUZZLE, 0, 0, 2))].sort((a, b) => a - b), [0, 1, 8], 'row 0 and column 0');
  assert.deepEqual([...conflictCells(withCell(PUZZLE, 0, 0, 4))].sort((a, b) => a - b), [0, 3, 12]);
  assert.equal(isSolvedGrid(SOLUTION), true);
  assert.equal(isSolvedGrid(PUZZLE), false);
  assert.equal(isSolvedGrid(withCell(SOLUTION, 0, 0, 2)), false);
  const empty4 = Array.from({ length: 4 }, () => [0, 0, 0, 0]);
  assert.equal(countSolutions(empty4, 1000), 288, 'the number of 4x4 Sudoku grids');
  assert.equal(countSolutions(PUZZLE), 1);
  assert.equal(countSolutions(withCell(PUZZLE, 0, 1, 1)), 0, 'givens breaking a rule');
  assert.equal(countSolutions([[1, 2], [2, 1]]), 0, 'unsupported size');
  assert.equal(countSolutions([[1, 2, 3, 4]]), 0, 'not square');
  assert.deepEqual(solveSudoku(PUZZLE), SOLUTION);
  assert.equal(solveSudoku(withCell(PUZZLE, 0, 1, 1)), null);
  assert.deepEqual(boxShape(6), [2, 3]);
  assert.equal(boxShape(5), null);
});

test('renderGrid draws box lines and dots for empty cells', () => {
  assert.equal(renderGrid(PUZZLE, 2, 2), '. 2 | 3 4\n3 . | 1 2\n----+----\n2 1 | . 3\n4 3 | 2 .');
  const six = generate(1, { size: 6 });
  const lines = renderGrid(six.puzzle, 2, 3).split('\n');
  assert.equal(lines.length, 8);
  assert.equal(lines[2], '------+------');
});

// ---------------------------------------------------------------- generator

function checkPuzzle(s: SudokuState, size: number, label: string) {
  assert.equal(s.size, size);
  assert.deepEqual([s.boxRows, s.boxCols], boxShape(size));
  assert.equal(s.puzzle.length, size);
  assert.ok(isSolvedGrid(s.solution), `${label}: solution invalid`);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      if (s.puzzle[r][c] !== 0) assert.equal(s.puzzle[r][c], s.solution[r][c], `${label}: given differs from the solution`);
    }
  }
  assert.equal(countSolutions(s.puzzle, 2), 1, `${label}: solution not unique`);
  assert.deepEqual(s.grid, s.puzzle);
  assert.deepEqual([s.steps, s.done, s.solved, s.totalReward], [0, false, false, 0]);
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
}

test('generated puzzles have a unique solution: 4x4, 6x6, 8x8 and 9x9 over many seeds', () => {
  for (const [size, seeds] of [
    [4, 300],
    [6, 100],
    [8, 20],
    [9, 40],
  ]) {
    for (let seed = 0; seed < seeds; seed++) checkPuzzle(generate(seed, { size }), size, `size ${size} seed ${seed}`);
  }
});

test('without a holes limit the puzzles are minimal: no given can be removed', () => {
  for (const [size, seeds] of [
    [4, 50],
    [9, 2],
  ]) {
    for (let seed = 0; seed < seeds; seed++) {
      const { puzzle } = generate(seed, { size });
      for (let r = 0; r < size; r++) {
        for (let c = 0; c < size; c++) {
          if (puzzle[r][c] === 0) continue;
          const fewer = withCell(puzzle, r, c, 0);
          assert.ok(countSolutions(fewer, 2) > 1, `size ${size} seed ${seed}: given (${r}, ${c}) is redundant`);
        }
      }
    }
  }
});

test('generate: deterministic, varied, default 4x4, holes limit, options checked', () => {
  assert.deepEqual(generate(42), generate(42));
  assert.deepEqual(generate(42), generate(42, { size: 4 }));
  assert.equal(generate(42).size, 4);
  const distinct = new Set(Array.from({ length: 50 }, (_, seed) => JSON.stringify(generate(seed, { size: 9 }).puzzle).slice(0, 200)));
  assert.ok(distinct.size >= 49);
  for (let seed = 0; seed < 10; seed++) {
    const easy = generate(seed, { size: 9, holes: 40 });
    assert.equal(easy.puzzle.flat().filter((v) => v === 0).length, 40);
    assert.equal(countSolutions(easy.puzzle), 1);
  }
  for (const opts of [{ size: 5 }, { size: 16 }, { size: 4, holes: 0 }, { size: 4, holes: 17 }, { size: 4, holes: 2.5 }]) {
    assert.throws(() => generate(1, opts), RangeError, JSON.stringify(opts));
  }
});

// ---------------------------------------------------------------- parser

test('parseSudokuAnswer reads the formats models produce', () => {
  const cases: Array<[string, number[][] | null]> = [
    ['[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]', SOLUTION],
    ['[\n  [1, 2, 3, 4],\n  [3, 4, 1, 2],\n  [2, 1, 4, 3],\n  [4, 3, 2, 1]\n]\nDone.', SOLUTION],
    ['[["1", "2"], [\'3\', \'4\']]', [[1, 2], [3, 4]]],
    ['[1, 2, 3, 4, 3, 4, 1, 2, 2, 1, 4, 3, 4, 3, 2, 1]', SOLUTION],
    ['[1, 2, 3]', [[1, 2, 3]]],
    ['[[0, None, ".", "_", null]]', [[0, 0, 0, 0, 0]]],
    ['[[1, "x", 3]]', [[1, -1, 3]]],
    ['[[1234], [3412]]', [[1, 2, 3, 4], [3, 4, 1, 2]]],
    ['[[[1]], [2]]', [[-1], [2]]],
    ['[[1, 2], [3, 4', [[1, 2], [3, 4]]],
    ['[1, [2]]', [[2], [1]]],
    ['Final grid:\n[[1, 2], [3, 4]]', [[1, 2], [3, 4]]],
    ['1 2 | 3 4\n3 4 | 1 2\n----+----\n2 1 | 4 3\n4 3 | 2 1\n\nThat is all.', SOLUTION],
    ['1234\n3412\n2143\n4321', SOLUTION],
    ['1 . | . 4\n_ 0 3 2', [[1, 0, 0, 4], [0, 0, 3, 2]]],
    ['1,2,3,4\nThe rest is obvious.', [[1, 2, 3, 4]]],
    ['[]', []],
    ['I could not solve it.', null],
    ['', null],
    ['   \n\n', null],
  ];
  for (const [input, expected] of cases) assert.deepEqual(parseSudokuAnswer(input), expected, JSON.stringify(input));
});

test('answers are read after #### or **Actions List**:, fenced or not', () => {
  const grid = '[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]';
  for (const text of [`#### ${grid}`, `reasoning\n####\n\`\`\`python\n${grid}\n\`\`\``, `**Actions List**: ${grid}`, `#### **${grid}**`, `#### [[9]]\nno, wait\n#### ${grid}`]) {
    assert.deepEqual(parsePuzzleAnswer(sudokuPuzzle, text), SOLUTION, text);
  }
  assert.equal(parsePuzzleAnswer(sudokuPuzzle, grid), null, 'no anchor');
});

test('the parser never throws and stays linear on huge or hostile input', () => {
  const hostile = [
    '['.repeat(1_000_000),
    ']'.repeat(1_000_000),
    `[${'1,'.repeat(500_000)}]`,
    `[${'[1],'.repeat(200_000)}]`,
    '1 '.repeat(500_000),
    '9\n'.repeat(200_000),
    `${'-+'.repeat(300_000)}`,
    null as unknown as string,
    undefined as unknown as string,
    42 as unknown as string,
  ];
  for (const input of hostile) {
    const started = cpuMark();
    const parsed = parseSudokuAnswer(input);
    assert.ok(parsed === null || (parsed.length <= 17 && parsed.every((row) => row.length <= 17)));
    assert.doesNotThrow(() => sudoku.score('plan_agent', fresh(), `#### ${input}`, null, 0.6));
    assert.ok(cpuMsSince(started) < 2000, 'parsing is not super-linear');
  }
});

// ---------------------------------------------------------------- properties

test('random answers never throw nor break the invariants', () => {
  const rng = mulberry32(3);
  for (let seed = 0; seed < 60; seed++) {
    const size = [4, 6, 9][seed % 3];
    let s = generate(seed, { size });
    const givens = structuredClone(s.puzzle);
    let total = 0;
    for (let step = 0; step < 8 && !s.done; step++) {
      // Mostly well formed grids mixing solution values, random values and blanks.
      const rows = rng() < 0.9 ? size : randomInt(rng, size + 2);
      const answer = Array.from({ length: rows }, (_, r) =>
        Array.from({ length: rng() < 0.95 ? size : randomInt(rng, size + 2) }, (_, c) => {
          const p = rng();
          return p < 0.5 ? (s.solution[r]?.[c] ?? 1) : p < 0.8 ? 1 + randomInt(rng, size) : p < 0.97 ? 0 : randomInt(rng, size + 3) - 1;
        }),
      );
      const before = structuredClone(s);
      const r = applyAnswer(s, answer);
      assert.deepEqual(s, before, 'input not mutated');
      total += r.reward;
      s = r.state;
      assert.ok(Number.isFinite(r.reward));
      assert.equal(s.grid.length, size);
      for (let i = 0; i < size; i++) {
        assert.equal(s.grid[i].length, size);
        for (let j = 0; j < size; j++) {
          const v = s.grid[i][j];
          assert.ok(Number.isInteger(v) && v >= 0 && v <= size, `value ${v} out of range`);
          if (givens[i][j] !== 0) assert.equal(v, givens[i][j], 'givens never change');
        }
      }
      assert.deepEqual(s.puzzle, givens);
      assert.equal(s.solved, isSolvedGrid(s.grid));
      close(s.totalReward, total);
    }
  }
});

test('random text never throws through the environment', () => {
  const rng = mulberry32(9);
  const fragments = ['####', '**Actions List**:', '[', ']', '[[', ']]', ',', ' ', '\n', '1', '2', '3', '4', '0', '9', '12', '.', '_', '|', '---+---',
    'None', 'null', '"', "'", 'x', '```python\n', '```', '\u0000', '🙂', 'constructor', '__proto__'];
  const s = generate(1, { size: 4 });
  for (let i = 0; i < 2000; i++) {
    let text = '';
    for (let n = randomInt(rng, 50); n > 0; n--) text += fragments[randomInt(rng, fragments.length)];
    for (const agent of sudoku.agents) {
      const scored = sudoku.score(agent, s, text, { exitCode: 0, stdout: text, stderr: '', timedOut: false }, 0.6);
      assert.ok(Number.isFinite(scored.reward));
      close(scored.reward, scored.local + 0.6 * scored.global);
      assert.deepEqual(scored.nextState.puzzle, s.puzzle);
    }
  }
});

// ---------------------------------------------------------------- roles

test('the environment: plan answers apply, tool answers simulate, outcomes describe', () => {
  const grid = JSON.stringify(SOLUTION);
  const plan = sudoku.score('plan_agent', fresh(), `Checked every row.\n#### ${grid}`, null, 0.6);
  assert.deepEqual([plan.local, plan.global, plan.solved, plan.done], [2, 1, true, true]);
  close(plan.reward, 2.6);
  assert.equal(plan.outcome, 'grid: 4 new correct cells, 0 conflicting, 0 empty, solved');
  const tool = sudoku.score('tool_call_agent', fresh(), '```python\nprint(grid)\n```', { exitCode: 0, stdout: `**Actions List**: ${grid}\n`, stderr: '', timedOut: false }, 0.6);
  assert.equal(tool.outcome, 'simulated grid: 4 new correct cells, 0 conflicting, 0 empty, solved');
  assert.deepEqual(tool.nextState, fresh());
  assert.equal(tool.done, false);
  assert.deepEqual(tool.handoff, { code: 'print(grid)', stdout: `**Actions List**: ${grid}\n`, actions: SOLUTION });
  const bad = sudoku.score('plan_agent', fresh(), '#### [[1, 2], [3, 4]]', null, 0.6);
  assert.deepEqual([bad.reward, bad.outcome], [-1, 'malformed grid (expected 4 rows of 4 numbers 0-4)']);
  const given = sudoku.score('plan_agent', fresh(), `#### ${JSON.stringify(withCell(withCell(PUZZLE, 0, 1, 4), 0, 0, 1))}`, null, 0.6);
  assert.equal(given.outcome, 'grid: 1 new correct cell, 0 conflicting, 3 empty, 1 given changed (ignored)');
  assert.deepEqual(sudoku.score('plan_agent', fresh(), '#### []', null, 0.6).outcome, 'empty action list');
});

test('prompts: the puzzle, its rules and the grid so far; the L0 plan prompt stands alone', () => {
  const s = generate(2, { size: 9 });
  const [toolSys, toolUser] = sudoku.prompt('tool_call_agent', { state: s, turn: 0, handoff: undefined });
  assert.match(toolSys.content, /9x9 Sudoku puzzle/);
  assert.match(toolSys.content, /each 3x3 box/);
  assert.match(toolSys.content, /\*\*Actions List\*\*: \[\[1, 2, 3, 4, 5, 6, 7, 8, 9\], \[4, 5, 6/);
  assert.ok(toolUser.content.includes(renderGrid(s.puzzle, 3, 3)));
  assert.ok(toolUser.content.includes(`(row 0 first, 0 = empty): ${JSON.stringify(s.puzzle)}`));
  assert.doesNotMatch(toolUser.content, /grid so far/);
  const [soloSys, soloUser] = sudoku.prompt('plan_agent', { state: s, turn: 0, handoff: undefined });
  assert.doesNotMatch(soloSys.content + soloUser.content, /code agent/i);
  assert.match(soloUser.content, /Give the completed grid after ####\.$/);
  const wrong = withCell(PUZZLE, 0, 0, 2);
  const later = applyAnswer(fresh(), wrong).state;
  const [, user] = sudoku.prompt('plan_agent', { state: later, turn: 1, handoff: { code: '', stdout: '', actions: SOLUTION } });
  assert.match(user.content, /This is turn 2\. Your grid so far:\n2 2 \| 3 4/);
  assert.match(user.content, /Empty cells: 3; cells \(row, col\) repeating a number in their row, column or box: \(0, 0\), \(0, 1\), \(2, 0\)\./);
  assert.ok(user.content.includes(`Code agent's action list: ${JSON.stringify(SOLUTION)}`));
});
