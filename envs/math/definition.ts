// Math with two agents, as in the reference (PettingLLMs math): tool_generator writes a Python
// program that prints the answer (program() returns it; the caller runs it and passes the run to
// score()), then reasoning_generator answers in \boxed{}. Turn order tool -> reasoning; the state
// keeps both agents' histories, which later turns are shown.
//
// Termination: the code's answer and the reasoner's answer are equivalent (envs/answers), checked
// whenever either acts against the other's latest answer (the reference checks only in the
// reasoner's step, ReasoningAgent.step; Tandem also ends when a tool answer agrees with the
// reasoner's previous one, which the brief asks for); or the reasoner has answered maxTurns times.
// Played alone (no tool entry in the episode), the reasoner ends the episode with its first
// answer that has a final answer (the reference's single agent ends when an answer repeats the
// previous turn's). solved = done and the team's final answer (the agreed answer, or the
// reasoner's last) is correct. docs/ENVIRONMENTS.md lists these departures.
//
// Rewards (reward = local + alpha * global; MATH_REWARDS):
//   reasoning_generator  local = 2 * [its answer is correct]           global = [its answer is correct]
//   tool_generator       local = +1 correct, 0 wrong or no answer printed,
//                                -1 execution error (no code block, not run, non-zero exit, timeout)
//                        global = [its program's answer is correct]
// The reference gives the tool {+1, 0, -1} + [the reasoner is correct]. In Tandem the tool is
// scored before the reasoner of its turn answers, so the team term is what is known at scoring
// time: [the code's answer is correct] (its K candidates all share one state, so a term about the
// later reasoner could not separate them anyway). With alpha = 1: tool 2 / 0 / -1, reasoner 3 / 0
// (the reference's reasoner: 2 / 0).
import { answersEqual, extractAnswer, extractOutputAnswer } from '../answers/index.js';
import { clip, extractCode } from '../shared/text.js';
import type { EnvDefinition, ProgramRun, Scored } from '../types.js';
import { maxTurnsOf, problemFor } from './problems.js';
import { reasonerPrompt, toolPrompt } from './prompt.js';
import { MATH_AGENTS, type MathOptions, type MathState, type MathToolEntry, type MathToolHandoff, type ToolStatus } from './state.js';

export const MATH_REWARDS = {
  /** Reasoner: its \boxed{} answer is correct (2 * [correct]). */
  reasonerCorrect: 2,
  /** Tool: the program's printed answer is correct. */
  toolCorrect: 1,
  /** Tool: the program ran but its answer is wrong or missing. */
  toolWrong: 0,
  /** Tool: no code block, or the program failed (non-zero exit, timeout) or was not run. */
  toolError: -1,
} as const;

// How much of each text a state keeps.
const KEEP_CODE_CHARS = 4000;
const KEEP_OUTPUT_CHARS = 2000;
const KEEP_SOLUTION_CHARS = 4000;

export function resetMath(seed: number, options: MathOptions | undefined): MathState {
  return {
    problem: problemFor(seed, options),
    maxTurns: maxTurnsOf(options?.maxTurns),
    tool: [],
    reasoning: [],
    done: false,
    solved: false,
    finalAnswer: null,
  };
}

function neutral(state: MathState, outcome: string): Scored<MathState> {
  return { local: 0, global: 0, reward: 0, outcome, nextState: state, done: state.done, solved: state.solved, handoff: undefined };
}

const same = (a: string | null | undefined, b: string | null | undefined) => typeof a === 'string' && typeof b === 'string' && answersEqual(a, b);
const verdictOf = (correct: boolean) => (correct ? 'correct' : 'wrong');

export function scoreToolAnswer(state: MathState, text: string, run: ProgramRun | null, alpha: number): Scored<MathState> {
  const code = extractCode(text);
  let status: ToolStatus;
  if (code === null) status = 'no_code';
  else if (run === null || typeof run !== 'object') status = 'not_run';
  else if (run.timedOut) status = 'timeout';
  else if (run.exitCode !== 0) status = 'exit_error';
  else status = 'ok';
  const stdout = status === 'ok' || status === 'exit_error' || status === 'timeout' ? String(run?.stdout ?? '') : '';
  const answer = status === 'ok' ? extractOutputAnswer(stdout) : null;
  const correct = same(answer, state.problem.answer);
  const local = status !== 'ok' ? MATH_REWARDS.toolError : correct ? MATH_REWARDS.toolCorrect : MATH_REWARDS.toolWrong;
  const global = correct ? 1 : 0;
  const entry: MathToolEntry = {
    code: code === null ? null : clip(code, KEEP_CODE_CHARS),
    status,
    exitCode: run && typeof run === 'object' ? (run.exitCode ?? null) : null,
    stdout: clip(stdout, KEEP_OUTPUT_CHARS),
    stderr: status === 'exit_error' ? clip(String(run?.stderr ?? ''), KEEP_OUTPUT_CHARS) : '',
    answer,
    correct,
  };
  const lastReasoning = state.reasoning[state.reasoning.length - 1];
  const agree = answer !== null && same(answer, lastReasoning?.answer);
  const next: MathState = { ...state, tool: [...state.tool, entry], done: agree, solved: agree && correct, finalAnswer: agree ? answer : null };
  let outcome: string;
  switch (status) {
    case 'no_code':
      outcome = 'no code';
      break;
    case 'not_run':
      outcome = 'code error: not run';
      break;
    case 'timeout':
      outcome = 'code error: timed out';
      break;
    case 'exit_error':
      outcome = `code error: exit ${entry.exitCode ?? 'unknown'}`;
      break;
    default:
      outcome = answer === null ? 'code printed no answer' : `code answer ${clip(answer, 60)} (${verdictOf(correct)})`;
  }
  if (agree) outcome += "; agrees with the reasoner's answer, done";
  const handoff: MathToolHandoff = { code: entry.code ?? '', stdout: entry.stdout, answer };
  return { local, global, reward: local + alpha * global, outcome, nextState: next, done: next.done, solved: next.solved, handoff };
}

export function scoreReasoningAnswer(state: MathState, text: string, alpha: number): Scored<MathState> {
  const answer = extractAnswer(text);
  const correct = same(answer, state.problem.answer);
  const local = correct ? MATH_REWARDS.reasonerCorrect : 0;
  const global = correct ? 1 : 0;
  const lastTool = state.tool[state.tool.length - 1];
  const agree = answer !== null && same(answer, lastTool?.answer);
  const alone = state.tool.length === 0;
  const turns = state.reasoning.length + 1;
  const outOfTurns = turns >= state.maxTurns;
  const done = agree || outOfTurns || (alone && answer !== null);
  const next: MathState = {
    ...state,
    reasoning: [...state.reasoning, { solution: clip(typeof text === 'string' ? text : '', KEEP_SOLUTION_CHARS), answer, correct }],
    done,
    solved: done && correct,
    finalAnswer: done ? answer : null,
  };
  let outcome = answer === null ? 'no final answer' : `answer ${clip(answer, 60)} (${verdictOf(correct)})`;
  if (agree) outcome += "; agrees with the code's answer, done";
  else if (outOfTurns) outcome += `; out of turns (${state.maxTurns})`;
  else if (done) outcome += '; done';
  return { local, global, reward: local + alpha * global, outcome, nextState: next, done, solved: next.solved, handoff: undefined };
}

export function scoreMath(agent: string, state: MathState, text: string, run: ProgramRun | null, alpha: number): Scored<MathState> {
  if (state.done) return neutral(state, 'episode already over');
  const t = typeof text === 'string' ? text : '';
  if (agent === 'tool_generator') return scoreToolAnswer(state, t, run, alpha);
  if (agent === 'reasoning_generator') return scoreReasoningAnswer(state, t, alpha);
  return neutral(state, `${agent} is not a role of math (roles: ${MATH_AGENTS.join(', ')})`);
}

/** The scripted players know the answer: the tool prints it, the reasoner boxes it. */
export function scriptedMath(agent: string, state: MathState): string {
  const answer = state.problem.answer;
  if (agent === 'tool_generator') return `\`\`\`python\nprint(${JSON.stringify(answer)})\n\`\`\``;
  return `The answer is \\boxed{${answer}}.`;
}

export const math: EnvDefinition<MathState, MathOptions> = {
  agents: MATH_AGENTS,
  reset: resetMath,
  prompt: (agent, ctx) => (agent === 'tool_generator' ? toolPrompt(ctx.state) : reasonerPrompt(ctx.state)),
  program: (agent, text) => (agent === 'tool_generator' ? extractCode(text) : null),
  score: scoreMath,
  scripted: (agent, ctx) => scriptedMath(agent, ctx.state),
};
