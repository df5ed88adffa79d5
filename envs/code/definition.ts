// The code environment as an EnvDefinition: code_generator writes a Python program that reads
// stdin and writes stdout, then test_generator writes ONE input/output test case; every turn,
// in that order (the reference runs at most 5 turns).
//
// Scoring runs programs: program(agent, text, state) returns a harness (harness.ts) that embeds
// the answer, the cases to run and the golden solution where needed; score() reads its report.
//   code_generator: its program on every ground-truth test ("truth:i") and on every test case
//                   generated so far ("gen:j").
//   test_generator: the golden solution on its case ("golden": is the case valid?) and the
//                   current program on it ("code", when there is a program).
//
// Rewards (reward = local + alpha * global; constants CODE_REWARDS):
//   code_generator local = passRate * (its program's pass rate on the ground-truth tests), or
//                          noCode when the answer has no code block.
//   test_generator local = validTest * [its case is valid: the golden solution prints the
//                          case's output for its input] (noTest instead when the answer has no
//                          readable case) + coderPassRate * (the current program's ground-truth
//                          pass rate). The reference sums its tests' pass rate on the golden
//                          solution and the coder's pass rate; writing one case per turn, "its
//                          tests" are this turn's one case. The second term is the same for the
//                          K candidates of a group (it is the coder's, in the state).
//   global = 1 when the current program passes every ground-truth test, else 0.
// A missing or malformed harness report is an execution failure: pass rate 0 for the coder, an
// invalid case for the tester.
// Termination: after the test generator's turn, when there is a program and it passes every case
// generated so far (the new one included; valid or not). The reference's UnitTestAgent.step ends
// the episode when the program passes the cases written in that turn only. Otherwise the episode
// runs env.max_turns turns. `solved` is "the current program passes every ground-truth test".
import { extractCode } from '../shared/text.js';
import type { ChatMessage, EnvDefinition, ProgramRun, Scored, TurnContext } from '../types.js';
import { buildHarness, readHarnessReport, type CaseResult, type HarnessCase } from './harness.js';
import { extractTestCase, formatTestCase } from './parse.js';
import { CODE_PROBLEMS } from './problems.js';
import { coderPrompt, testerPrompt } from './prompt.js';
import type { CodeOnTest, CodeOptions, CodeProblem, CodeState, CodeTest } from './types.js';

export const CODE_AGENTS = ['code_generator', 'test_generator'] as const;
export type CodeAgent = (typeof CODE_AGENTS)[number];

export const CODE_REWARDS = Object.freeze({
  /** Coder: times its pass rate on the ground-truth tests. */
  passRate: 2,
  /** Coder: an answer without a code block. */
  noCode: -1,
  /** Tester: its case is valid (the golden solution agrees with it). */
  validTest: 1,
  /** Tester: an answer without a readable test case (instead of validTest). */
  noTest: -1,
  /** Tester: times the current program's pass rate on the ground-truth tests. */
  coderPassRate: 1,
});

export const CODE_DEFAULTS = Object.freeze({ caseTimeoutS: 2, budgetS: 4 });

/** Seconds of the outer limit (env.code_timeout_s) kept for starting the harness and reporting. */
export const HARNESS_MARGIN_S = 1;

/**
 * Harness limits that fit an outer time limit of `codeTimeoutS` (env.code_timeout_s): a budget
 * of codeTimeoutS - HARNESS_MARGIN_S (at least 0.5 s), and per case the default 2 s or the
 * budget if smaller. For the default code_timeout_s of 5: 2 s per case, 4 s in all.
 */
export function harnessLimitsFor(codeTimeoutS: number): { caseTimeoutS: number; budgetS: number } {
  const budgetS = Math.max(0.5, codeTimeoutS - HARNESS_MARGIN_S);
  return { caseTimeoutS: Math.min(CODE_DEFAULTS.caseTimeoutS, budgetS), budgetS };
}

/** The first state of a problem. */
export function newCodeState(problem: CodeProblem, options: CodeOptions = {}): CodeState {
  return {
    problem,
    caseTimeoutS: options.caseTimeoutS ?? CODE_DEFAULTS.caseTimeoutS,
    budgetS: options.budgetS ?? CODE_DEFAULTS.budgetS,
    code: null,
    passRate: 0,
    tests: [],
    codeOnTests: [],
    history: [],
    done: false,
    solved: false,
  };
}

/** The problem of a seed: problems[seed mod length]. */
export function problemOfSeed(seed: number, problems: readonly CodeProblem[]): CodeProblem {
  if (problems.length === 0) throw new RangeError('the code environment has no problems');
  const n = problems.length;
  const i = ((Math.trunc(seed) % n) + n) % n;
  return problems[Number.isFinite(i) ? i : 0];
}

// ---------------------------------------------------------------- harness cases

interface Plan {
  programs: Record<string, string>;
  cases: HarnessCase[];
}

function coderPlan(state: CodeState, code: string): Plan {
  const cases: HarnessCase[] = [
    ...state.problem.tests.map((t, i) => ({ id: `truth:${i}`, program: 'candidate', input: t.input, expected: t.output })),
    ...state.tests.map((t, j) => ({ id: `gen:${j}`, program: 'candidate', input: t.input, expected: t.output })),
  ];
  return { programs: { candidate: code }, cases };
}

function testerPlan(state: CodeState, test: CodeTest): Plan {
  const programs: Record<string, string> = { golden: state.problem.golden };
  const cases: HarnessCase[] = [{ id: 'golden', program: 'golden', input: test.input, expected: test.output }];
  if (state.code !== null) {
    programs.code = state.code;
    cases.push({ id: 'code', program: 'code', input: test.input, expected: test.output });
  }
  return { programs, cases };
}

/** The harness cases of an answer (null when the answer gives nothing to run). */
function planOf(agent: string, state: CodeState, text: string): Plan | null {
  if (agent === 'code_generator') {
    const code = extractCode(text);
    return code === null ? null : coderPlan(state, code);
  }
  if (agent === 'test_generator') {
    const test = extractTestCase(text);
    return test === null ? null : testerPlan(state, test);
  }
  return null;
}

/**
 * The harness that scores `text` from `state` (see harness.ts), or null when the answer has
 * nothing to run. Needs the state: the cases and the golden solution are the problem's.
 */
export function codeProgram(agent: string, text: string, state: CodeState): string | null {
  const plan = planOf(agent, state, text);
  if (plan === null) return null;
  return buildHarness({ ...plan, caseTimeoutS: state.caseTimeoutS, budgetS: state.budgetS });
}

// ---------------------------------------------------------------- scoring

type Reading = { ok: true; byId: Map<string, CaseResult> } | { ok: false; reason: string };

function readRun(plan: Plan, run: ProgramRun | null): Reading {
  if (run === null) return { ok: false, reason: 'not run' };
  const r = readHarnessReport(run.stdout, plan.cases.map((c) => c.id));
  if (!r.ok) return { ok: false, reason: run.timedOut ? `timed out (${r.reason})` : r.reason };
  return { ok: true, byId: new Map(r.cases.map((c) => [c.id, c])) };
}

const rate = (passed: number, total: number) => (total === 0 ? 0 : passed / total);

function scoreCoder(state: CodeState, text: string, run: ProgramRun | null, alpha: number): Scored<CodeState> {
  const code = extractCode(text);
  const total = state.problem.tests.length;
  if (code === null) {
    const outcome = 'no code block';
    const nextState: CodeState = {
      ...state,
      code: null,
      passRate: 0,
      codeOnTests: [],
      solved: false,
      history: [...state.history, { agent: 'code_generator', code: null, passRate: 0, generatedPassed: 0, generatedTotal: state.tests.length, outcome }],
    };
    return result(CODE_REWARDS.noCode, 0, alpha, outcome, nextState, { code: null, passRate: 0, generatedPassed: 0, generatedTotal: state.tests.length });
  }
  const plan = coderPlan(state, code);
  const reading = readRun(plan, run);
  let passed = 0;
  let codeOnTests: CodeOnTest[];
  let outcome: string;
  if (reading.ok) {
    passed = state.problem.tests.filter((_, i) => reading.byId.get(`truth:${i}`)?.status === 'pass').length;
    codeOnTests = state.tests.map((_, j) => {
      const c = reading.byId.get(`gen:${j}`);
      return { status: c?.status ?? 'error', excerpt: c?.excerpt ?? '' };
    });
    outcome = `passed ${passed}/${total} ground-truth tests`;
  } else {
    codeOnTests = state.tests.map(() => ({ status: 'error' as const, excerpt: `execution failure: ${reading.reason}` }));
    outcome = `execution failure: ${reading.reason}`;
  }
  const generatedPassed = codeOnTests.filter((c) => c.status === 'pass').length;
  if (state.tests.length > 0) outcome += `, ${generatedPassed}/${state.tests.length} generated`;
  const passRate = rate(passed, total);
  const solved = total > 0 && passed === total;
  const nextState: CodeState = {
    ...state,
    code,
    passRate,
    codeOnTests,
    solved,
    history: [...state.history, { agent: 'code_generator', code, passRate, generatedPassed, generatedTotal: state.tests.length, outcome }],
  };
  return result(CODE_REWARDS.passRate * passRate, solved ? 1 : 0, alpha, outcome, nextState, { code, passRate, generatedPassed, generatedTotal: state.tests.length });
}

function scoreTester(state: CodeState, text: string, run: ProgramRun | null, alpha: number): Scored<CodeState> {
  const test = extractTestCase(text);
  const coderTerm = CODE_REWARDS.coderPassRate * state.passRate;
  const global = state.solved ? 1 : 0;
  if (test === null) {
    const outcome = 'no readable test case';
    const nextState: CodeState = { ...state, history: [...state.history, { agent: 'test_generator', test: null, valid: false, codePassed: null, outcome }] };
    return result(CODE_REWARDS.noTest + coderTerm, global, alpha, outcome, nextState, undefined);
  }
  const plan = testerPlan(state, test);
  const reading = readRun(plan, run);
  if (!reading.ok) {
    // Nothing is known of the case: it is not kept.
    const outcome = `execution failure: ${reading.reason}`;
    const nextState: CodeState = { ...state, history: [...state.history, { agent: 'test_generator', test, valid: false, codePassed: null, outcome }] };
    return result(coderTerm, global, alpha, outcome, nextState, undefined);
  }
  const golden = reading.byId.get('golden')!;
  const valid = golden.status === 'pass';
  const codeCase = reading.byId.get('code');
  const codePassed = state.code === null || codeCase === undefined ? null : codeCase.status === 'pass';
  const tests = [...state.tests, { ...test, valid }];
  const codeOnTests = state.code === null || codeCase === undefined ? state.codeOnTests : [...state.codeOnTests, { status: codeCase.status, excerpt: codeCase.excerpt }];
  const done = state.code !== null && codeOnTests.length === tests.length && codeOnTests.every((c) => c.status === 'pass');
  let outcome = valid ? 'valid case' : `invalid case (golden solution: ${golden.status})`;
  if (codePassed !== null) outcome += codePassed ? ', program passes it' : `, program fails it (${codeCase!.status})`;
  if (done) outcome += `; program passes all ${tests.length} generated cases, episode over`;
  const nextState: CodeState = {
    ...state,
    tests,
    codeOnTests,
    done,
    history: [...state.history, { agent: 'test_generator', test, valid, codePassed, outcome }],
  };
  return result((valid ? CODE_REWARDS.validTest : 0) + coderTerm, global, alpha, outcome, nextState, undefined);
}

function result(local: number, global: number, alpha: number, outcome: string, nextState: CodeState, handoff: unknown): Scored<CodeState> {
  return { local, global, reward: local + alpha * global, outcome, nextState, done: nextState.done, solved: nextState.solved, handoff };
}

/** Scores `text` as `agent`'s answer from `state`; `run` is the harness run. Never throws for any text. */
export function scoreCode(agent: string, state: CodeState, text: string, run: ProgramRun | null, alpha: number): Scored<CodeState> {
  if (agent === 'code_generator') return scoreCoder(state, text, run, alpha);
  if (agent === 'test_generator') return scoreTester(state, text, run, alpha);
  return { local: 0, global: 0, reward: 0, outcome: `${agent} has no role in the code environment`, nextState: state, done: state.done, solved: state.solved, handoff: undefined };
}

function promptFor(agent: string, state: CodeState): ChatMessage[] {
  return agent === 'test_generator' ? testerPrompt(state) : coderPrompt(state);
}

/** The scripted player: the coder answers the golden solution; the tester a hidden test case (a new one each turn). */
export function scriptedCodeAnswer(agent: string, ctx: TurnContext<CodeState>): string {
  const { problem, tests } = ctx.state;
  if (agent === 'test_generator') return formatTestCase(problem.tests[tests.length % problem.tests.length]);
  return `**Code:**\n\`\`\`python\n${problem.golden}\n\`\`\``;
}

/**
 * The code environment. program() takes the state as a third argument (the harness embeds the
 * problem's tests and golden solution); called without it, it throws.
 */
export const code: EnvDefinition<CodeState, CodeOptions> = {
  agents: CODE_AGENTS,
  reset: (seed, options) => newCodeState(problemOfSeed(seed, options?.problems ?? CODE_PROBLEMS), options ?? {}),
  prompt: (agent, ctx) => promptFor(agent, ctx.state),
  program: codeProgram,
  score: scoreCode,
  scripted: scriptedCodeAnswer,
};

// The code environment is an EnvDefinition (its program() takes an optional third argument).
const _check: EnvDefinition<CodeState, CodeOptions> = code;
void _check;
