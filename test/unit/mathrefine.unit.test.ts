// Three-role math refinement (generator_initial -> evaluator_critique -> generator_refinement ->
// evaluator_critique ...): verdict parsing, rewards and termination from hand-written
// transcripts, the shared history in prompts, out-of-turn agents, scripted players, garbage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MathProblem } from '../../envs/math/index.js';
import {
  MATHREFINE_AGENTS,
  MATHREFINE_REWARDS,
  mathRefine,
  mathRefineActs,
  parseVerdict,
  type MathRefineOptions,
  type MathRefineState,
  type Verdict,
} from '../../envs/mathrefine/index.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';

const PROBLEM: MathProblem = { id: 'p', question: 'Compute 2^5 - 1.', answer: '31' };
const fresh = (options: Partial<MathRefineOptions> = {}) => mathRefine.reset(0, { problems: [PROBLEM], ...options });
const act = (agent: string, s: MathRefineState, text: string, alpha = 1) => mathRefine.score(agent, s, text, null, alpha);
const prompt = (agent: string, s: MathRefineState) => mathRefine.prompt(agent, { state: s, turn: 0, handoff: undefined });

const RIGHT = '2^5 = 32, minus 1 is \\boxed{31}.';
const WRONG = '2^5 = 25, minus 1 is \\boxed{24}.';
const SAYS_CORRECT = 'Each step is right.\nVerdict: Correct';
const SAYS_INCORRECT = '2^5 is 32, not 25.\nVerdict: Incorrect';

test('parseVerdict reads the many ways of writing a verdict', () => {
  const table: [string, Verdict | null][] = [
    ['Verdict: Correct', 'correct'],
    ['Verdict: Incorrect', 'incorrect'],
    ['verdict:correct', 'correct'],
    ['**Verdict:** Incorrect', 'incorrect'],
    ['**Verdict**: **Correct**', 'correct'],
    ['VERDICT = INCORRECT', 'incorrect'],
    ['Final verdict - [Correct]', 'correct'],
    ['Verdict: the solution is not correct.', 'incorrect'],
    ['Verdict: wrong', 'incorrect'],
    ['Verdict: right', 'correct'],
    ['Verdict: Correct\n...on reflection...\nVerdict: Incorrect', 'incorrect'],
    ['Verdict: Correct|Incorrect', null],
    ['Verdict: Correct or Incorrect\nVerdict: Correct', 'correct'],
    ['\\boxed{Correct}', 'correct'],
    ['\\boxed{\\text{Incorrect}}', 'incorrect'],
    ['Feedback...\n\n**Incorrect**', 'incorrect'],
    ['Feedback...\nCorrect.', 'correct'],
    ['The answer looks correct to me but I am not sure about step 2.', null],
    ['', null],
  ];
  for (const [text, want] of table) assert.equal(parseVerdict(text), want, JSON.stringify(text));
  assert.equal(parseVerdict(undefined), null);
  assert.equal(parseVerdict(42), null);
});

test('initial correct, evaluator says Correct: done and solved; rewards of both', () => {
  const s0 = fresh();
  assert.equal(s0.next, 'generator_initial');
  const g = act('generator_initial', s0, RIGHT, 0.5);
  assert.deepEqual([g.local, g.global, g.reward, g.done], [MATHREFINE_REWARDS.correct, 1, 1.5, false]);
  assert.equal(g.nextState.next, 'evaluator_critique');
  const e = act('evaluator_critique', g.nextState, SAYS_CORRECT, 0.5);
  assert.deepEqual([e.local, e.global, e.reward], [MATHREFINE_REWARDS.verdictAccurate, 1, 1.5]);
  assert.deepEqual([e.done, e.solved, e.nextState.finalAnswer], [true, true, '31']);
  assert.ok(e.outcome.includes('accepted'));
});

test('wrong -> Incorrect -> fixed -> Correct: the refinement is rewarded for the fix', () => {
  const g = act('generator_initial', fresh(), WRONG);
  assert.deepEqual([g.local, g.global], [0, 0]);
  const e1 = act('evaluator_critique', g.nextState, SAYS_INCORRECT);
  assert.deepEqual([e1.local, e1.global, e1.done], [MATHREFINE_REWARDS.verdictAccurate, 0, false]);
  assert.equal(e1.nextState.next, 'generator_refinement');
  const r = act('generator_refinement', e1.nextState, RIGHT);
  assert.equal(r.local, MATHREFINE_REWARDS.correct + MATHREFINE_REWARDS.fixed);
  assert.equal(r.global, 1);
  assert.ok(r.outcome.includes('fixed'));
  const e2 = act('evaluator_critique', r.nextState, SAYS_CORRECT);
  assert.deepEqual([e2.local, e2.done, e2.solved], [MATHREFINE_REWARDS.verdictAccurate, true, true]);
  assert.equal(e2.nextState.history.length, 4);
  assert.deepEqual(e2.nextState.history.map((h) => h.role), ['generator_initial', 'evaluator_critique', 'generator_refinement', 'evaluator_critique']);
});

test('refinement rewards: wrong->right 2, right->right 1, wrong->wrong 0, right->wrong -1', () => {
  const judged = (first: string) => act('evaluator_critique', act('generator_initial', fresh(), first).nextState, SAYS_INCORRECT).nextState;
  const cases: [string, string, number][] = [
    [WRONG, RIGHT, MATHREFINE_REWARDS.correct + MATHREFINE_REWARDS.fixed],
    [RIGHT, RIGHT, MATHREFINE_REWARDS.correct],
    [WRONG, WRONG, 0],
    [RIGHT, WRONG, MATHREFINE_REWARDS.broken],
    [RIGHT, 'no idea', MATHREFINE_REWARDS.broken],
    ['no idea', RIGHT, MATHREFINE_REWARDS.correct + MATHREFINE_REWARDS.fixed],
  ];
  for (const [first, refined, local] of cases) {
    const r = act('generator_refinement', judged(first), refined, 0);
    assert.equal(r.local, local, `${first} -> ${refined}`);
    assert.equal(r.reward, local);
  }
  assert.deepEqual([2, 1, 0, -1], [cases[0][2], cases[1][2], cases[2][2], cases[3][2]]);
});

test('evaluator rewards: accurate 1, inaccurate 0, no verdict -1 (counted as Incorrect)', () => {
  const right = act('generator_initial', fresh(), RIGHT).nextState;
  const wrong = act('generator_initial', fresh(), WRONG).nextState;
  const cases: [MathRefineState, string, number, boolean][] = [
    [right, SAYS_CORRECT, MATHREFINE_REWARDS.verdictAccurate, true],
    [right, SAYS_INCORRECT, MATHREFINE_REWARDS.verdictWrong, false],
    [wrong, SAYS_INCORRECT, MATHREFINE_REWARDS.verdictAccurate, false],
    [wrong, SAYS_CORRECT, MATHREFINE_REWARDS.verdictWrong, true],
    [right, 'Looks fine.', MATHREFINE_REWARDS.noVerdict, false],
    [wrong, '', MATHREFINE_REWARDS.noVerdict, false],
  ];
  for (const [state, text, local, done] of cases) {
    const e = act('evaluator_critique', state, text, 1);
    assert.equal(e.local, local, text);
    assert.equal(e.global, state.current!.correct ? 1 : 0);
    assert.equal(e.done, done, text);
    // A wrong answer accepted ends the episode unsolved.
    assert.equal(e.solved, done && state.current!.correct);
  }
});

test('max turns: the maxTurns-th critique ends the episode with the last judged answer', () => {
  let s = fresh({ maxTurns: 2 });
  s = act('generator_initial', s, WRONG).nextState;
  s = act('evaluator_critique', s, SAYS_INCORRECT).nextState;
  s = act('generator_refinement', s, RIGHT).nextState;
  const last = act('evaluator_critique', s, SAYS_INCORRECT);
  assert.deepEqual([last.done, last.solved, last.nextState.finalAnswer, last.local], [true, true, '31', MATHREFINE_REWARDS.verdictWrong]);
  assert.ok(last.outcome.includes('out of turns'));
  assert.equal(mathRefine.reset(0, {}).maxTurns, 4);
});

test('out-of-turn agents and finished episodes score neutral and leave the state unchanged', () => {
  const s0 = fresh();
  for (const agent of ['evaluator_critique', 'generator_refinement', 'stranger']) {
    const r = act(agent, s0, RIGHT);
    assert.deepEqual([r.local, r.global, r.reward, r.done], [0, 0, 0, false], agent);
    assert.equal(r.nextState, s0);
  }
  const s1 = act('generator_initial', s0, WRONG).nextState;
  const again = act('generator_initial', s1, RIGHT);
  assert.equal(again.reward, 0);
  assert.equal(again.nextState, s1);
  assert.match(again.outcome, /waiting for evaluator_critique/);
  assert.equal(mathRefineActs('evaluator_critique', s1), true);
  assert.equal(mathRefineActs('generator_initial', s1), false);
  const over = act('evaluator_critique', act('generator_initial', s0, RIGHT).nextState, SAYS_CORRECT).nextState;
  for (const agent of MATHREFINE_AGENTS) {
    assert.equal(act(agent, over, RIGHT).reward, 0);
    assert.equal(mathRefineActs(agent, over), false);
  }
  assert.match(prompt('generator_initial', s1)[1].content, /not your turn.*pass/s);
});

test('every role sees the whole shared history', () => {
  let s = fresh();
  assert.ok(!prompt('generator_initial', s)[1].content.includes('Conversation so far'));
  s = act('generator_initial', s, WRONG).nextState;
  const ev = prompt('evaluator_critique', s);
  assert.ok(ev[1].content.includes(PROBLEM.question) && ev[1].content.includes('2^5 = 25'));
  assert.match(ev[0].content, /Verdict: Correct/);
  s = act('evaluator_critique', s, SAYS_INCORRECT).nextState;
  const ref = prompt('generator_refinement', s)[1].content;
  assert.ok(ref.includes('[Solution 1 (generator_initial)]') && ref.includes('[Critique 1 (evaluator_critique)]') && ref.includes('not 25'), ref);
  s = act('generator_refinement', s, RIGHT).nextState;
  const ev2 = prompt('evaluator_critique', s)[1].content;
  for (const piece of ['2^5 = 25', 'not 25', '[Refined solution 2 (generator_refinement)]', '\\boxed{31}']) assert.ok(ev2.includes(piece), piece);
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
});

test('with turn_order [initial, critique, refinement] an episode runs turn by turn as the workflow runs it', () => {
  // The workflow's loop: each turn every agent of turn_order acts once; an agent out of turn is neutral.
  const order = ['generator_initial', 'evaluator_critique', 'generator_refinement'];
  const script: Record<string, string[]> = {
    generator_initial: [WRONG],
    evaluator_critique: [SAYS_INCORRECT, SAYS_INCORRECT, SAYS_CORRECT],
    generator_refinement: [WRONG, RIGHT],
  };
  const used: Record<string, number> = {};
  let s = fresh();
  const log: string[] = [];
  let done = false;
  for (let turn = 0; turn < 4 && !done; turn++) {
    for (const agent of order) {
      const text = mathRefineActs(agent, s) ? script[agent][(used[agent] = (used[agent] ?? 0) + 1) - 1] : 'pass';
      const r = act(agent, s, text);
      log.push(`${turn}:${agent}:${r.reward}`);
      s = r.nextState;
      if (r.done) {
        done = true;
        assert.equal(r.solved, true);
        break;
      }
    }
  }
  assert.deepEqual(log, [
    '0:generator_initial:0',
    '0:evaluator_critique:1',
    '0:generator_refinement:0',
    '1:generator_initial:0',
    '1:evaluator_critique:1',
    '1:generator_refinement:3',
    '2:generator_initial:0',
    '2:evaluator_critique:2',
  ]);
});

test('the scripted players solve 100 generated problems, with accurate verdicts', () => {
  for (let seed = 0; seed < 100; seed++) {
    let s = mathRefine.reset(seed, {});
    for (const agent of MATHREFINE_AGENTS) {
      const text = mathRefine.scripted!(agent, { state: s, turn: 0, handoff: undefined });
      const r = mathRefine.score(agent, s, text, null, 1);
      s = r.nextState;
      if (r.done) break;
    }
    assert.deepEqual([s.done, s.solved], [true, true], `seed ${seed}: ${s.problem.question} -> ${s.problem.answer}`);
  }
  // Judging a wrong answer, the scripted evaluator says Incorrect.
  const wrong = act('generator_initial', fresh(), WRONG).nextState;
  assert.equal(parseVerdict(mathRefine.scripted!('evaluator_critique', { state: wrong, turn: 0, handoff: undefined })), 'incorrect');
  assert.equal(mathRefine.program('generator_initial', '```python\nprint(1)\n```', wrong), null);
});

test('random garbage never throws and stays within the reward range', () => {
  const rng = mulberry32(5);
  const pieces = ['Verdict', ':', ' Correct', ' Incorrect', '\\boxed{', '}', '31', '24', '\n', '**', '|', 'or', '{', 'not'];
  const agents = [...MATHREFINE_AGENTS, 'nobody'];
  let s = fresh();
  for (let i = 0; i < 2000; i++) {
    let text = '';
    for (let j = randomInt(rng, 16); j > 0; j--) text += pieces[randomInt(rng, pieces.length)];
    const agent = agents[randomInt(rng, agents.length)];
    const r = act(agent, s, text);
    assert.ok(Number.isFinite(r.reward) && r.reward >= -1 && r.reward <= 3, `${agent}: ${r.reward}`);
    assert.doesNotThrow(() => prompt(agent, r.nextState));
    s = r.done ? fresh() : r.nextState;
  }
  for (const bad of [undefined, null, 7, {}] as unknown as string[]) {
    for (const agent of MATHREFINE_AGENTS) assert.doesNotThrow(() => act(agent, fresh(), bad));
  }
});
