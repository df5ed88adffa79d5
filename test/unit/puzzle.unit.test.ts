import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FAILURE_REWARDS,
  MAX_MOVES,
  PUZZLE_AGENTS,
  buildPuzzlePrompt,
  parseMoveList,
  puzzleEnv,
  type Puzzle,
  type PuzzleText,
  type ToolResult,
} from '../../envs/puzzle/index.js';
import { playEpisode } from '../../domain/episodeLoop.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import { SEED_RANGES, seedRange, splitOfSeed } from '../../envs/shared/seeds.js';
import { extractCode, textAfterAnchor } from '../../envs/shared/text.js';
import type { ProgramRun } from '../../envs/types.js';

// A toy puzzle: reach `target` by adding the numbers of a list; overshooting ends the episode.
interface Counter {
  value: number;
  target: number;
  done: boolean;
  solved: boolean;
}

const TEXT: PuzzleText = {
  subject: 'counter',
  target: 'the numbers that add up to the target',
  answer: 'number list',
  toolRules: ['Numbers are integers.'],
  example: '[1, 2]',
  listName: 'number list',
  check: 'check the sum. If it is right, adopt it; otherwise fix it.',
  solve: 'find numbers that add up to the target',
  justify: 'the sum is right',
  finalName: 'the final list of numbers',
};

const counter: Puzzle<Counter, number[]> = {
  text: () => TEXT,
  describe: (s, turn) => `Value ${s.value}, target ${s.target}, turn ${turn + 1}.`,
  parseAction: (body) => {
    const m = /^\[([\d,\s]*)\]/.exec(body);
    return m ? m[1].split(',').filter((x) => x.trim() !== '').map(Number) : null;
  },
  isEmpty: (a) => a.length === 0,
  apply: (s, a) => {
    const value = s.value + a.reduce((x, y) => x + y, 0);
    const solved = value === s.target;
    const done = value >= s.target;
    return { state: { ...s, value, solved, done }, reward: solved ? 1 : done ? -1 : 0.1, solved, done, summary: `sum ${value}` };
  },
  solution: (s) => `[${s.target - s.value}]`,
};

const env = puzzleEnv(counter, (seed: number, o: { target: number }) => ({ value: 0, target: o.target + (seed % 3), done: false, solved: false }));
const start = env.reset(0, { target: 5 });
const ALPHA = 0.5;
const run = (stdout: string, exitCode: number | null = 0, timedOut = false): ProgramRun => ({ exitCode, stdout, stderr: '', timedOut });

// ---------------------------------------------------------------- roles

test('puzzleEnv plays the two reference roles and runs only the tool agent\'s code', () => {
  assert.deepEqual([...env.agents], ['tool_call_agent', 'plan_agent']);
  assert.deepEqual([...PUZZLE_AGENTS], ['tool_call_agent', 'plan_agent']);
  assert.equal(env.program('tool_call_agent', '```python\nprint(1)\n```', start), 'print(1)');
  assert.equal(env.program('plan_agent', '```python\nprint(1)\n```', start), null);
  assert.equal(env.program('tool_call_agent', 'no code', start), null);
  assert.deepEqual(env.reset(1, { target: 5 }), { value: 0, target: 6, done: false, solved: false });
});

test('tool agent failures: local rewards, outcomes and no state change', () => {
  const cases: Array<[string, ProgramRun | null, number, string]> = [
    ['no code here', null, FAILURE_REWARDS.noCode, 'no code'],
    ['```python\nraise X\n```', run('Traceback', 1), FAILURE_REWARDS.codeError, 'code error: exit 1'],
    ['```python\nwhile 1: pass\n```', run('', null, true), FAILURE_REWARDS.codeError, 'code error: timed out'],
    ['```python\nprint()\n```', run('nothing useful'), FAILURE_REWARDS.noAction, 'no action list in output'],
    ['```python\nprint()\n```', run('**Actions List**: []'), FAILURE_REWARDS.noAction, 'empty action list'],
  ];
  assert.deepEqual(FAILURE_REWARDS, { noCode: -2, codeError: -1, noAction: -2 });
  for (const [text, r, local, outcome] of cases) {
    const s = env.score('tool_call_agent', start, text, r, ALPHA);
    assert.deepEqual([s.local, s.global, s.reward, s.outcome], [local, 0, local, outcome]);
    assert.equal(s.nextState, start);
    assert.equal(s.done, false);
  }
});

test('tool agent: the action is simulated (global counts) but the state does not advance', () => {
  const s = env.score('tool_call_agent', start, '```python\nprint(...)\n```', run('thinking\n**Actions List**: [2, 3]\n'), ALPHA);
  assert.deepEqual([s.local, s.global, s.reward], [1, 1, 1 + ALPHA]);
  assert.equal(s.outcome, 'simulated sum 5');
  assert.equal(s.nextState, start);
  assert.equal(s.done, false);
  assert.equal(s.solved, false);
  assert.deepEqual(s.handoff, { code: 'print(...)', stdout: 'thinking\n**Actions List**: [2, 3]\n', actions: [2, 3] } satisfies ToolResult<number[]>);
  // Without a run there is nothing to show; with unparseable output the action is null.
  assert.deepEqual(env.score('tool_call_agent', start, 'text', null, ALPHA).handoff, { code: '', stdout: '', actions: null });
  assert.deepEqual(env.score('tool_call_agent', start, '```python\nx\n```', run('oops', 1), ALPHA).handoff, { code: 'x', stdout: 'oops', actions: null });
});

test('plan agent: failures, then an action applied for real, reward = local + alpha * global', () => {
  for (const [text, outcome] of [
    ['I do not know', 'no action list after ####'],
    ['#### []', 'empty action list'],
  ]) {
    const s = env.score('plan_agent', start, text, null, ALPHA);
    assert.deepEqual([s.local, s.global, s.reward, s.outcome], [-2, 0, -2, outcome]);
    assert.equal(s.nextState, start);
  }
  const partial = env.score('plan_agent', start, '#### [1]', null, ALPHA);
  assert.deepEqual([partial.local, partial.global, partial.reward, partial.done, partial.nextState.value], [0.1, 0, 0.1, false, 1]);
  assert.equal(partial.handoff, undefined);
  const solved = env.score('plan_agent', start, 'The tool is right.\n#### [2, 3]', null, ALPHA);
  assert.deepEqual([solved.local, solved.global, solved.reward, solved.done, solved.solved, solved.outcome], [1, 1, 1 + ALPHA, true, true, 'sum 5']);
  const over = env.score('plan_agent', start, '#### [9]', null, ALPHA);
  assert.deepEqual([over.reward, over.done, over.solved], [-1, true, false]);
  assert.equal(start.value, 0, 'input state untouched');
  // Any other agent name is played as the plan agent.
  assert.equal(env.score('someone', start, '#### [2, 3]', null, ALPHA).solved, true);
});

// ---------------------------------------------------------------- reward formulas

// One hand-computed transcript of the counter (target 5), K = 2, greedy, played by the one episode
// loop under each env.reward_formula. The tool's code prints its list; 'raise' fails.
async function transcript(rewardFormula: 'tandem' | 'reference') {
  const tool = (list: string) => `\`\`\`python\nprint('**Actions List**: ${list}')\n\`\`\``;
  const answers: Record<string, string[][]> = {
    tool_call_agent: [[tool('[1]'), '```python\nraise\n```'], [tool('[3]'), tool('[9]')]],
    plan_agent: [['#### [2]', 'I do not know'], ['#### [3]', '#### [4]']],
  };
  const runOf = (text: string): ProgramRun => (text.includes('raise') ? run('', 1) : run(/print\('(.*)'\)/.exec(text)![1]));
  const options = { target: 5, rewardFormula };
  return playEpisode({ def: env, options }, { maxTurns: 2, turnOrder: ['tool_call_agent', 'plan_agent'], ifGreedy: true }, env.reset(0, options), {
    act: async (r) => answers[r.agent][r.turn].map((text) => ({ text })),
    score: async (r, texts) => texts.map((t) => env.score(r.agent, r.state as Counter, t, r.agent === 'tool_call_agent' ? runOf(t) : null, ALPHA, options)),
  });
}
const table = (played: Awaited<ReturnType<typeof transcript>>) =>
  played.groups.map((g) => [g.turn, g.agent, g.chosen, g.scored.map((s) => [s.local, s.global, s.reward])]);

test('reward_formula tandem: local + alpha x [solved], each candidate on its own', async () => {
  const played = await transcript('tandem');
  // turn 0: tool [1] simulates 1 (0.1), raise: code error -1; plan [2] reaches 2 (0.1), no list -2.
  // turn 1: tool [3] would solve (1 + 0.5), [9] overshoots (-1); plan [3] solves (1 + 0.5), [4] overshoots (-1).
  assert.deepEqual(table(played), [
    [0, 'tool_call_agent', 0, [[0.1, 0, 0.1], [-1, 0, -1]]],
    [0, 'plan_agent', 0, [[0.1, 0, 0.1], [-2, 0, -2]]],
    [1, 'tool_call_agent', 0, [[1, 1, 1.5], [-1, 0, -1]]],
    [1, 'plan_agent', 0, [[1, 1, 1.5], [-1, 0, -1]]],
  ]);
  assert.deepEqual([played.success, played.chosenRewards], [true, { tool_call_agent: [0.1, 1.5], plan_agent: [0.1, 1.5] }]);
});

test("reward_formula reference: the reference's calculate_reward, local + the env reward at the end of the turn", async () => {
  const played = await transcript('reference');
  // Plan: its own env reward twice (no list: -2 + 0, the env stepped with []). Tool: its simulated
  // reward (or failure value) + the chosen plan action's env reward (0.1 in turn 0, 1 in turn 1).
  assert.deepEqual(table(played), [
    [0, 'tool_call_agent', 0, [[0.1, 0.1, 0.2], [-1, 0.1, -0.9]]],
    [0, 'plan_agent', 0, [[0.1, 0.1, 0.2], [-2, 0, -2]]],
    [1, 'tool_call_agent', 0, [[1, 1, 2], [-1, 1, 0]]],
    [1, 'plan_agent', 0, [[1, 1, 2], [-1, -1, -2]]],
  ]);
  assert.deepEqual([played.success, played.chosenRewards], [true, { tool_call_agent: [0.2, 2], plan_agent: [0.2, 2] }]);
});

test('reward_formula: a turn without a plan agent adds 0 under the reference; unset options score as tandem', () => {
  const tool = env.score('tool_call_agent', start, '```python\nx\n```', run('**Actions List**: [5]'), ALPHA, { target: 5, rewardFormula: 'reference' });
  assert.deepEqual([tool.local, tool.global, tool.reward], [1, 0, 1]);
  assert.deepEqual(env.settleTurn!([{ agent: 'tool_call_agent', scored: [tool], chosen: 0 }], { target: 5, rewardFormula: 'reference' }), [[{ global: 0, reward: 1 }]]);
  const plain = env.score('plan_agent', start, '#### [5]', null, ALPHA);
  assert.deepEqual([plain.global, plain.reward], [1, 1 + ALPHA]);
  assert.deepEqual(env.settleTurn!([{ agent: 'plan_agent', scored: [plain], chosen: 0 }], { target: 5 }), [[{ global: 1, reward: 1 + ALPHA }]]);
});

test('prompts: tool instructions, plan with the handoff, plan alone (L0)', () => {
  const [toolSys, toolUser] = env.prompt('tool_call_agent', { state: start, turn: 0, handoff: undefined });
  assert.match(toolSys.content, /analyze the given counter and write Python code that produces the numbers that add up to the target\./);
  assert.match(toolSys.content, /\n3\. Numbers are integers\.\n4\. Make sure the code runs as-is/);
  assert.match(toolSys.content, /\*\*Actions List\*\*: \[1, 2\]\n/);
  assert.equal(toolUser.content, 'Value 0, target 5, turn 1.\n\nWrite the Python code now; it must print **Actions List**: followed by the number list.');

  const handoff: ToolResult<number[]> = { code: 'print("**Actions List**: [5]")', stdout: '**Actions List**: [5]', actions: [5] };
  const [planSys, planUser] = env.prompt('plan_agent', { state: start, turn: 1, handoff });
  assert.match(planSys.content, /the code agent's code, the code's execution output and the number list parsed from it\. Read the task, inspect the code, and check the sum\./);
  assert.match(planSys.content, /end your answer with the final list of numbers after ####, for example:\n#### \[1, 2\]$/);
  assert.ok(planUser.content.startsWith('Value 0, target 5, turn 2.\n\n'));
  assert.ok(planUser.content.includes(handoff.code));
  assert.ok(planUser.content.includes("Code agent's action list: [5]"));
  assert.ok(planUser.content.endsWith('Give the final list of numbers after ####.'));
  const clipped = env.prompt('plan_agent', { state: start, turn: 0, handoff: { code: 'x'.repeat(10_000), stdout: 'y'.repeat(10_000), actions: null } });
  assert.ok(clipped[1].content.length < 4000, 'long code and output are clipped');
  assert.match(clipped[1].content, /\.\.\.\(truncated\)\.\.\./);
  assert.match(clipped[1].content, /action list: none/);

  const [soloSys, soloUser] = buildPuzzlePrompt(counter, 'plan_agent', { state: start, turn: 0 });
  assert.equal(
    soloSys.content,
    'You are a planning and reasoning agent. Read the task and find numbers that add up to the target. Keep your reasoning brief but explicit: justify why the sum is right.\n\n' +
      'Formatting is mandatory: end your answer with the final list of numbers after ####, for example:\n#### [1, 2]',
  );
  assert.equal(soloUser.content, 'Value 0, target 5, turn 1.\n\nGive the final list of numbers after ####.');
});

// ---------------------------------------------------------------- text helpers

test('textAfterAnchor: last ####, else last Actions List label, markup stripped', () => {
  const cases: Array<[unknown, string | null]> = [
    ['#### [1]', '[1]'],
    ['a #### x\n#### **`y`**', 'y`**'],
    ['####\n```json\n[1]\n```', '[1]\n```'],
    ['**Actions List**: [a]\nActions list: [b]', '[b]'],
    ['**Actions List**: [a]\n#### [c]', '[c]'],
    ['#####', ''],
    ['no anchor', null],
    ['', null],
    [null, null],
    [17, null],
  ];
  for (const [input, expected] of cases) assert.equal(textAfterAnchor(input as string), expected, JSON.stringify(input));
});

test('parseMoveList reads a body; MAX_MOVES caps it', () => {
  const cases: Array<[string, string[] | null]> = [
    ['["U", "R"]', ['U', 'R']],
    ['[0, 3, "left", down]', ['U', 'R', 'L', 'D']],
    ['RRDD trailing', null],
    ['RRDD', ['R', 'R', 'D', 'D']],
    ['[fly]', ['X']],
    ['[]', []],
    ['', null],
    ['[U,\nD]', ['U', 'D']],
  ];
  for (const [input, expected] of cases) assert.deepEqual(parseMoveList(input), expected, JSON.stringify(input));
  assert.equal(parseMoveList(`[${'U,'.repeat(1000)}]`)?.length, MAX_MOVES);
  assert.equal(parseMoveList(null as unknown as string), null);
});

test('extractCode is shared with Plan-Path', () => {
  assert.equal(extractCode('```py\nprint(4)\n```'), 'print(4)');
  assert.equal(extractCode(undefined as unknown as string), null);
});

// ---------------------------------------------------------------- seeds

test('seed ranges: disjoint, documented, int32-safe, and checked', () => {
  const splits = ['train', 'validation', 'test'] as const;
  assert.deepEqual(
    splits.map((s) => [SEED_RANGES[s].start, SEED_RANGES[s].size]),
    [
      [0, 1_000_000_000],
      [1_000_000_000, 100_000_000],
      [1_100_000_000, 100_000_000],
    ],
  );
  for (let a = 0; a < splits.length; a++) {
    const ra = SEED_RANGES[splits[a]];
    assert.ok(ra.start + ra.size <= 2 ** 31);
    for (let b = a + 1; b < splits.length; b++) {
      const rb = SEED_RANGES[splits[b]];
      assert.ok(ra.start + ra.size <= rb.start || rb.start + rb.size <= ra.start, `${splits[a]} and ${splits[b]} overlap`);
    }
  }
  assert.equal(seedRange('train', 0), 0);
  assert.equal(seedRange('train', 41), 41);
  assert.equal(seedRange('validation', 0), 1_000_000_000);
  assert.equal(seedRange('test', 7), 1_100_000_007);
  assert.equal(seedRange('test', 99_999_999), 1_199_999_999);
  for (const split of splits) {
    for (const index of [0, 1, 12345, SEED_RANGES[split].size - 1]) assert.equal(splitOfSeed(seedRange(split, index)), split);
  }
  assert.equal(splitOfSeed(1_200_000_000), null);
  assert.equal(splitOfSeed(-1), null);
  assert.throws(() => seedRange('train', -1), RangeError);
  assert.throws(() => seedRange('validation', 100_000_000), RangeError);
  assert.throws(() => seedRange('test', 1.5), RangeError);
  assert.throws(() => seedRange('dev' as 'train', 0), RangeError);
});

// ---------------------------------------------------------------- properties

/** Random model-like text: fragments of answers, markup, code fences, numbers and noise. */
function randomText(rng: () => number): string {
  const fragments = ['####', '**Actions List**:', 'actions list', '[', ']', '[[', ']]', ',', ' ', '\n', '"U"', "'R'", 'D', 'left', '0', '7', '42', '-1',
    '```python\n', '```', 'print(', ')', 'None', '.', '_', '|', '---+---', '\u0000', '\uffff', '🙂', 'constructor', '__proto__', 'x'.repeat(50)];
  let text = '';
  const n = randomInt(rng, 40);
  for (let i = 0; i < n; i++) text += fragments[randomInt(rng, fragments.length)];
  return text;
}

test('random text never throws in the generic roles', () => {
  const rng = mulberry32(7);
  for (let i = 0; i < 2000; i++) {
    const text = randomText(rng);
    const r = run(randomText(rng), rng() < 0.8 ? 0 : 1, rng() < 0.1);
    for (const agent of env.agents) {
      const s = env.score(agent, start, text, rng() < 0.5 ? r : null, ALPHA);
      assert.ok(Number.isFinite(s.reward) && typeof s.outcome === 'string');
      assert.equal(s.reward, s.local + ALPHA * s.global);
    }
    env.prompt('plan_agent', { state: start, turn: 0, handoff: { code: text, stdout: text, actions: null } });
  }
});
