// The math environment (tool_generator -> reasoning_generator) and its problem generator:
// determinism and self-consistency of generated problems, the problem source, rewards and
// termination from hand-written transcripts, prompts, scripted players, and garbage answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answersEqual, evaluateText, formatRational } from '../../envs/answers/index.js';
import {
  GENERATOR_TEMPLATES,
  MATH_AGENTS,
  MATH_REWARDS,
  generateProblem,
  math,
  mathOptionIssues,
  problemFor,
  type MathOptions,
  type MathProblem,
  type MathState,
  type MathToolHandoff,
} from '../../envs/math/index.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import type { ProgramRun } from '../../envs/types.js';

const ok = (stdout: string): ProgramRun => ({ exitCode: 0, stdout, stderr: '', timedOut: false });
const failed = (exitCode: number, stderr = 'Traceback ...'): ProgramRun => ({ exitCode, stdout: '', stderr, timedOut: false });
const timedOut: ProgramRun = { exitCode: null, stdout: '', stderr: '', timedOut: true };
const py = (code: string) => `Here is my program:\n\`\`\`python\n${code}\n\`\`\``;

const PROBLEM: MathProblem = { id: 'p1', question: 'What is 7/2 + 1?', answer: '\\frac{9}{2}' };
const given = (extra: Partial<MathOptions> = {}): MathOptions => ({ problems: [PROBLEM], ...extra });
const fresh = (extra: Partial<MathOptions> = {}) => math.reset(0, given(extra));
const tool = (s: MathState, text: string, run: ProgramRun | null, alpha = 1) => math.score('tool_generator', s, text, run, alpha);
const reason = (s: MathState, text: string, alpha = 1) => math.score('reasoning_generator', s, text, null, alpha);

// ---------------------------------------------------------------- generator

test('the generator has at least 10 templates and draws every one of them', () => {
  assert.ok(GENERATOR_TEMPLATES.length >= 10, `${GENERATOR_TEMPLATES.length} templates`);
  const seen = new Set<string>();
  for (let seed = 0; seed < 600; seed++) seen.add(generateProblem(seed).template);
  assert.deepEqual([...seen].sort(), [...GENERATOR_TEMPLATES].sort());
});

test('generated problems are deterministic by seed and vary across seeds', () => {
  for (let seed = 0; seed < 200; seed++) assert.deepEqual(generateProblem(seed), generateProblem(seed));
  const questions = new Set(Array.from({ length: 200 }, (_, seed) => generateProblem(seed).question));
  assert.ok(questions.size > 190, `${questions.size} distinct questions of 200`);
  assert.deepEqual(math.reset(12345, {}), math.reset(12345, {}));
});

test("every generated answer equals the value of the problem's own formula, in canonical form", () => {
  for (let seed = 0; seed < 3000; seed++) {
    const g = generateProblem(seed);
    const value = evaluateText(g.formula);
    assert.ok(value !== null, `seed ${seed}: formula ${g.formula} does not evaluate`);
    const exact = formatRational(value);
    assert.ok(answersEqual(exact, g.answer), `seed ${seed} (${g.template}): formula gives ${exact}, answer ${g.answer}`);
    assert.ok(answersEqual(g.formula, g.answer), `seed ${seed}: formula vs answer`);
    // Canonical forms: -12, 7/3, 1157.625, 12.5%.
    const pattern = { integer: /^-?\d+$/, fraction: /^-?\d+(\/\d+)?$/, decimal: /^-?\d+(\.\d*[1-9])?$/, percent: /^-?\d+(\.\d*[1-9])?%$/, number: /^-?\d+((\.\d*[1-9])|(\/\d+))?$/ }[g.format];
    assert.match(g.answer, pattern, `seed ${seed} (${g.template}): ${g.answer} is not a canonical ${g.format}`);
    if (g.format === 'fraction' && g.answer.includes('/')) {
      const [n, d] = g.answer.split('/').map(Number);
      assert.equal(formatRational(value), `${n}/${d}`, 'fractions are in lowest terms');
    }
    assert.ok(!g.question.includes('undefined') && !g.question.includes('NaN'), g.question);
  }
});

test('templates restrict the generator; unknown ones are ignored', () => {
  for (let seed = 0; seed < 50; seed++) assert.equal(generateProblem(seed, ['ages']).template, 'ages');
  assert.ok(GENERATOR_TEMPLATES.includes(generateProblem(3, ['no_such_template']).template));
  assert.equal(math.reset(7, { templates: ['mixture'] }).problem.template, 'mixture');
});

// ---------------------------------------------------------------- problem source

test('given problems: problem = problems[seed mod length], including large and negative seeds', () => {
  const problems: MathProblem[] = [0, 1, 2].map((i) => ({ id: `q${i}`, question: `Q${i}`, answer: String(i) }));
  assert.equal(problemFor(0, { problems }).id, 'q0');
  assert.equal(problemFor(4, { problems }).id, 'q1');
  assert.equal(problemFor(1_100_000_002, { problems }).id, `q${1_100_000_002 % 3}`);
  assert.equal(problemFor(-1, { problems }).id, 'q2');
  const s = math.reset(5, { problems });
  assert.deepEqual(s.problem, { id: 'q2', question: 'Q2', answer: '2', source: 'given', template: null });
  // No or empty list: the generator.
  assert.equal(math.reset(5, {}).problem.source, 'generated');
  assert.equal(math.reset(5, { problems: [] }).problem.source, 'generated');
  assert.equal(math.reset(5, undefined as unknown as MathOptions).problem.source, 'generated');
});

test('mathOptionIssues reports unusable options', () => {
  assert.deepEqual(mathOptionIssues({}), []);
  assert.deepEqual(mathOptionIssues({ problems: [PROBLEM], maxTurns: 4 }), []);
  assert.equal(mathOptionIssues({ problems: [] }).length, 1);
  assert.equal(mathOptionIssues({ problems: [{ id: 'x', question: '', answer: '1' }] }).length, 1);
  assert.equal(mathOptionIssues({ templates: ['nope'] }).length, 1);
  assert.equal(mathOptionIssues({ maxTurns: 0 }).length, 1);
});

// ---------------------------------------------------------------- rewards

test('tool rewards: +1 correct, 0 wrong or silent, -1 execution error; global = [code answer correct]', () => {
  const s = fresh();
  const cases: [string, ProgramRun | null, number, number, string][] = [
    [py('print(4.5)'), ok('4.5\n'), MATH_REWARDS.toolCorrect, 1, 'code answer 4.5 (correct)'],
    [py('from fractions import Fraction\nprint(Fraction(9, 2))'), ok('9/2\n'), MATH_REWARDS.toolCorrect, 1, 'code answer 9/2 (correct)'],
    [py('print("x =", 4.5)'), ok('x = 4.5\n'), MATH_REWARDS.toolCorrect, 1, 'correct'],
    [py('print(4)'), ok('4\n'), MATH_REWARDS.toolWrong, 0, 'code answer 4 (wrong)'],
    [py('x = 1'), ok(''), MATH_REWARDS.toolWrong, 0, 'code printed no answer'],
    ['I would compute 4.5', null, MATH_REWARDS.toolError, 0, 'no code'],
    [py('1/0'), failed(1), MATH_REWARDS.toolError, 0, 'code error: exit 1'],
    [py('while True: pass'), timedOut, MATH_REWARDS.toolError, 0, 'code error: timed out'],
    [py('print(4.5)'), null, MATH_REWARDS.toolError, 0, 'code error: not run'],
  ];
  for (const [text, run, local, global, outcome] of cases) {
    const r = tool(s, text, run, 0.5);
    assert.equal(r.local, local, outcome);
    assert.equal(r.global, global, outcome);
    assert.equal(r.reward, local + 0.5 * global, outcome);
    assert.ok(r.outcome.includes(outcome), `${r.outcome} should include ${outcome}`);
    assert.equal(r.done, false, 'the tool of the first turn never ends the episode');
    assert.equal(r.nextState.tool.length, 1);
  }
  const any = math.reset(0, {});
  assert.equal(math.program('tool_generator', py('print(4.5)'), any), 'print(4.5)');
  assert.equal(math.program('tool_generator', 'no code', any), null);
  assert.equal(math.program('reasoning_generator', py('print(1)'), any), null);
});

test('the tool hands its code, output and answer to the reasoner', () => {
  const r = tool(fresh(), py('print(9/2)'), ok('4.5\n'));
  const handoff = r.handoff as MathToolHandoff;
  assert.deepEqual(handoff, { code: 'print(9/2)', stdout: '4.5\n', answer: '4.5' });
  assert.deepEqual(r.nextState.tool[0], { code: 'print(9/2)', status: 'ok', exitCode: 0, stdout: '4.5\n', stderr: '', answer: '4.5', correct: true });
});

test('reasoner rewards: 2 * [correct]; global = [correct]', () => {
  const afterTool = tool(fresh(), py('print(1)'), ok('1\n')).nextState; // a wrong code answer, so no agreement
  const cases: [string, number, string][] = [
    ['So the sum is \\boxed{4.5}.', MATH_REWARDS.reasonerCorrect, 'answer 4.5 (correct)'],
    ['\\boxed{\\dfrac{9}{2}}', MATH_REWARDS.reasonerCorrect, 'correct'],
    ['#### 9/2', MATH_REWARDS.reasonerCorrect, 'correct'],
    ['The answer is 4.5', MATH_REWARDS.reasonerCorrect, 'correct'],
    ['\\boxed{5}', 0, 'answer 5 (wrong)'],
    ['I am not sure.', 0, 'no final answer'],
  ];
  for (const [text, local, outcome] of cases) {
    const r = reason(afterTool, text, 0.7);
    assert.equal(r.local, local, outcome);
    assert.equal(r.global, local > 0 ? 1 : 0, outcome);
    assert.ok(Math.abs(r.reward - (local + 0.7 * r.global)) < 1e-12);
    assert.ok(r.outcome.includes(outcome), `${r.outcome} should include ${outcome}`);
    assert.equal(r.done, false, 'no agreement, turns left');
    assert.equal(r.handoff, undefined);
  }
});

// ---------------------------------------------------------------- termination

test('agreement ends the episode: solved when the agreed answer is right', () => {
  const t = tool(fresh(), py('print(4.5)'), ok('4.5\n'));
  const r = reason(t.nextState, 'It is \\boxed{\\frac{9}{2}}');
  assert.equal(r.done, true);
  assert.equal(r.solved, true);
  assert.equal(r.nextState.finalAnswer, '\\frac{9}{2}');
  assert.ok(r.outcome.includes('agrees'));
  // Agreeing on a wrong answer also ends it, unsolved.
  const w = reason(tool(fresh(), py('print(5)'), ok('5\n')).nextState, '\\boxed{5}');
  assert.equal(w.done, true);
  assert.equal(w.solved, false);
  assert.equal(w.local, 0);
  // An episode that is over scores any further answer neutral.
  const after = tool(r.nextState, py('print(4.5)'), ok('4.5\n'));
  assert.deepEqual([after.local, after.global, after.reward, after.done], [0, 0, 0, true]);
  assert.equal(after.nextState, r.nextState);
});

test('disagreement continues; the next turn shows both histories and asks to select or refine', () => {
  const t1 = tool(fresh(), py('print(5)'), ok('5\n'));
  const r1 = reason(t1.nextState, 'Adding: 7/2 + 1 = 9/2. \\boxed{9/2}');
  assert.equal(r1.done, false);
  const s = r1.nextState;
  assert.equal(s.tool.length, 1);
  assert.equal(s.reasoning.length, 1);
  const toolMsgs = math.prompt('tool_generator', { state: s, turn: 1, handoff: undefined });
  const user = toolMsgs[1].content;
  assert.ok(user.includes('print(5)') && user.includes('9/2') && user.includes('Adding: 7/2'), user);
  assert.match(user, /select the answer you trust or refine your program/);
  // Turn 2: the tool now agrees with the reasoner's previous answer: done (as the reference's tool agent).
  const t2 = tool(s, py('print("9/2")'), ok('9/2\n'));
  assert.equal(t2.done, true);
  assert.equal(t2.solved, true);
  assert.equal(t2.nextState.finalAnswer, '9/2');
  // Or the tool keeps its answer, and the reasoner sees this turn's code and the earlier turns.
  const t2b = tool(s, py('print(5)'), ok('5\n'));
  assert.equal(t2b.done, false);
  const reasonMsgs = math.prompt('reasoning_generator', { state: t2b.nextState, turn: 1, handoff: t2b.handoff });
  const ru = reasonMsgs[1].content;
  assert.ok(ru.includes('### Turn 1') && ru.includes("The code agent's work in this turn") && ru.includes('select the answer you trust or refine'), ru);
});

test('max turns: the reasoner of the last turn ends the episode; solved iff its answer is right', () => {
  let s = fresh({ maxTurns: 2 });
  s = reason(tool(s, py('print(1)'), ok('1\n')).nextState, '\\boxed{2}').nextState;
  assert.equal(s.done, false);
  const t = tool(s, py('print(3)'), ok('3\n')).nextState;
  const right = reason(t, '\\boxed{4.5}');
  assert.deepEqual([right.done, right.solved, right.nextState.finalAnswer], [true, true, '4.5']);
  assert.ok(right.outcome.includes('out of turns'));
  const wrong = reason(t, '\\boxed{7}');
  assert.deepEqual([wrong.done, wrong.solved], [true, false]);
  // Default max turns: 4 (the reference's).
  assert.equal(math.reset(0, {}).maxTurns, 4);
});

test('a reasoner alone (L0) ends with its first final answer', () => {
  const s = fresh();
  const none = reason(s, 'hmm');
  assert.equal(none.done, false);
  assert.match(math.prompt('reasoning_generator', { state: none.nextState, turn: 1, handoff: undefined })[1].content, /gave no final answer/);
  const r = reason(none.nextState, '\\boxed{4.5}');
  assert.deepEqual([r.done, r.solved], [true, true]);
  const first = math.prompt('reasoning_generator', { state: s, turn: 0, handoff: undefined });
  assert.ok(!first[0].content.includes('code agent'), 'the solo prompt does not mention a code agent');
});

test('first-turn prompts: the tool sees the problem, the reasoner also sees the code of its turn', () => {
  const s = fresh();
  const t = math.prompt('tool_generator', { state: s, turn: 0, handoff: undefined });
  assert.equal(t.length, 2);
  assert.ok(t[0].content.includes('```python') && t[1].content.includes(PROBLEM.question));
  const after = tool(s, py('print(4.5)'), ok('4.5\n'));
  const r = math.prompt('reasoning_generator', { state: after.nextState, turn: 0, handoff: after.handoff });
  assert.ok(r[1].content.includes('print(4.5)') && r[1].content.includes("The code agent's answer: 4.5") && r[0].content.includes('\\boxed{}'));
});

test('failed code is shown to the tool with its error output next turn', () => {
  const t = tool(fresh(), py('print(1/0)'), failed(1, 'ZeroDivisionError: division by zero'));
  const s = reason(t.nextState, '\\boxed{3}').nextState;
  const u = math.prompt('tool_generator', { state: s, turn: 1, handoff: undefined })[1].content;
  assert.ok(u.includes('ZeroDivisionError') && u.includes('exit code 1') && u.includes('gave no answer'), u);
});

test('states stay JSON-serialisable through an episode', () => {
  let s = fresh();
  s = tool(s, py('print(5)'), ok('5\n')).nextState;
  s = reason(s, '\\boxed{4}').nextState;
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
});

// ---------------------------------------------------------------- scripted players and garbage

/** What running the scripted tool's program prints: print("<answer>") prints the string. */
function runScriptedProgram(program: string): ProgramRun {
  const m = /^print\((".*")\)$/.exec(program);
  assert.ok(m, program);
  return ok(`${JSON.parse(m[1])}\n`);
}

test('the scripted players solve 200 generated problems in one turn', () => {
  for (let seed = 0; seed < 200; seed++) {
    const state = math.reset(seed, {});
    const ctx = { state, turn: 0, handoff: undefined };
    const text = math.scripted!('tool_generator', ctx);
    const program = math.program('tool_generator', text, state)!;
    const t = math.score('tool_generator', state, text, runScriptedProgram(program), 1);
    assert.equal(t.local, MATH_REWARDS.toolCorrect, `seed ${seed}: ${t.outcome}`);
    const r = math.score('reasoning_generator', t.nextState, math.scripted!('reasoning_generator', { state: t.nextState, turn: 0, handoff: t.handoff }), null, 1);
    assert.deepEqual([r.local, r.done, r.solved], [MATH_REWARDS.reasonerCorrect, true, true], `seed ${seed}: ${r.outcome}`);
  }
});

test('the scripted players solve given problems with LaTeX answers', () => {
  const problems: MathProblem[] = [
    { id: 'a', question: 'q', answer: '\\frac{\\sqrt{3}}{2}' },
    { id: 'b', question: 'q', answer: '(1, 2]' },
    { id: 'c', question: 'q', answer: '"quoted" \\text{cm}' },
  ];
  for (let seed = 0; seed < problems.length; seed++) {
    const state = math.reset(seed, { problems });
    const text = math.scripted!('tool_generator', { state, turn: 0, handoff: undefined });
    const t = math.score('tool_generator', state, text, runScriptedProgram(math.program('tool_generator', text, state)!), 1);
    const r = math.score('reasoning_generator', t.nextState, math.scripted!('reasoning_generator', { state: t.nextState, turn: 0, handoff: t.handoff }), null, 1);
    assert.equal(r.solved, true, `${problems[seed].answer}: ${t.outcome} / ${r.outcome}`);
  }
});

test('random garbage never throws and scores as a wrong or failed answer', () => {
  const rng = mulberry32(11);
  const pieces = ['```python\n', '```', '\\boxed{', '}', '####', 'print(', ')', '4.5', '9/2', '\n', ' ', 'The answer is', '{', '\\frac', 'x', '\u0000', '$'];
  const agents = [...MATH_AGENTS, 'stranger'];
  let state = fresh();
  for (let i = 0; i < 1500; i++) {
    let text = '';
    for (let j = randomInt(rng, 20); j > 0; j--) text += pieces[randomInt(rng, pieces.length)];
    const run: ProgramRun | null = randomInt(rng, 3) === 0 ? null : { exitCode: randomInt(rng, 2), stdout: text, stderr: text, timedOut: randomInt(rng, 5) === 0 };
    const agent = agents[randomInt(rng, agents.length)];
    const r = math.score(agent, state, text, run, 1);
    assert.ok(Number.isFinite(r.reward) && r.reward >= -1 && r.reward <= 3, `${agent}: ${r.reward}`);
    assert.doesNotThrow(() => math.prompt(agent, { state: r.nextState, turn: 1, handoff: r.handoff }));
    state = r.done ? fresh() : r.nextState;
  }
  for (const bad of [undefined, null, 42, {}] as unknown as string[]) {
    assert.doesNotThrow(() => math.score('tool_generator', fresh(), bad, null, 1));
    assert.doesNotThrow(() => math.score('reasoning_generator', fresh(), bad, null, 1));
  }
  assert.equal(math.score('stranger', fresh(), '\\boxed{4.5}', null, 1).reward, 0);
});
