// Three-role math refinement, after three-role-math-lora-status.md: generator_initial proposes a
// solution, evaluator_critique judges the latest solution (verdict Correct/Incorrect plus
// feedback), generator_refinement refines it, then the evaluator again, and so on:
//   Problem -> generator_initial -> evaluator_critique -> generator_refinement -> evaluator_critique -> ...
// (the doc's "Training Flow" / "Interaction Flow"). Each role is its own agent, so an L2 config
// gives one LoRA adapter per role (the doc's lora_configs has one per role). Every role sees the
// whole shared history (the doc's "Shared Conversation History"); the state keeps it.
//
// Whose move it is lives in the state (`next`): an agent that acts out of turn (for example
// generator_initial in every turn after the first when turn_order is [generator_initial,
// evaluator_critique, generator_refinement]) gets a neutral score (0, 0, 0) and the state is
// unchanged, as in Hanabi. With that turn order, turn 0 is initial -> critique -> refinement and
// every later turn is (skip) -> critique -> refinement.
//
// Termination: the evaluator says Correct, or the maxTurns-th critique is given. solved = done
// and the last judged answer (the team's final answer) is correct. The doc's training command
// caps an episode at agent.max_steps=6 agent steps (initial, critique, refinement, critique,
// refinement, critique): maxTurns = 3 here.
//
// Rewards (reward = local + alpha * global; MATHREFINE_REWARDS):
//   generator_initial     local = correct * [its answer is correct]
//   generator_refinement  local = correct * [correct] + fixed (the judged answer was wrong, its own
//                         is right) + broken (the judged answer was right, its own is wrong)
//                         -> wrong->right 2, right->right 1, wrong->wrong 0, right->wrong -1
//   evaluator_critique    local = verdictAccurate (1) when its verdict matches the truth of the
//                         answer it judged, verdictWrong (0) when not, noVerdict (-1) when no
//                         verdict can be read (which counts as Incorrect for the flow)
//   global = [the team's current answer is correct] as known at scoring time: a generator's own
//   answer; for the evaluator, the answer it judged (the same for all its candidates).
// The status doc gives no reward numbers ("rewards based on correctness and collaboration
// quality"); these follow the brief. Its "Evaluator Precision" metric is the evaluator's local
// reward rate.
import { answersEqual, extractAnswer } from '../answers/index.js';
import { maxTurnsOf, problemFor } from '../math/problems.js';
import { clip } from '../shared/text.js';
import type { EnvDefinition, Scored } from '../types.js';
import { mathRefinePrompt } from './prompt.js';
import { MATHREFINE_AGENTS, type MathRefineOptions, type MathRefineRole, type MathRefineState } from './state.js';
import { parseVerdict } from './verdict.js';

export const MATHREFINE_REWARDS = {
  /** A generator's answer is correct. */
  correct: 1,
  /** Refinement turned the judged (wrong or missing) answer into a correct one. */
  fixed: 1,
  /** Refinement turned the judged correct answer into a wrong or missing one. */
  broken: -1,
  /** The evaluator's verdict matches the truth of the answer it judged. */
  verdictAccurate: 1,
  /** The evaluator's verdict does not match it. */
  verdictWrong: 0,
  /** No verdict could be read from the evaluator's answer. */
  noVerdict: -1,
} as const;

const KEEP_TEXT_CHARS = 4000;

export function resetMathRefine(seed: number, options: MathRefineOptions | undefined): MathRefineState {
  return {
    problem: problemFor(seed, options),
    maxTurns: maxTurnsOf(options?.maxTurns),
    history: [],
    next: 'generator_initial',
    current: null,
    critiques: 0,
    done: false,
    solved: false,
    finalAnswer: null,
  };
}

function neutral(state: MathRefineState, outcome: string): Scored<MathRefineState> {
  return { local: 0, global: 0, reward: 0, outcome, nextState: state, done: state.done, solved: state.solved, handoff: undefined };
}

const isRole = (agent: string): agent is MathRefineRole => (MATHREFINE_AGENTS as readonly string[]).includes(agent);
const verdictName = (correct: boolean) => (correct ? 'Correct' : 'Incorrect');

function scoreGenerator(role: 'generator_initial' | 'generator_refinement', state: MathRefineState, text: string, alpha: number): Scored<MathRefineState> {
  const answer = extractAnswer(text);
  const correct = answer !== null && answersEqual(answer, state.problem.answer);
  let local = correct ? MATHREFINE_REWARDS.correct : 0;
  let change = '';
  if (role === 'generator_refinement') {
    const before = state.current?.correct ?? false;
    if (!before && correct) {
      local += MATHREFINE_REWARDS.fixed;
      change = ', fixed';
    } else if (before && !correct) {
      local += MATHREFINE_REWARDS.broken;
      change = ', broke a correct answer';
    }
  }
  const global = correct ? 1 : 0;
  const next: MathRefineState = {
    ...state,
    history: [...state.history, { role, text: clip(text, KEEP_TEXT_CHARS), answer, correct, verdict: null }],
    next: 'evaluator_critique',
    current: { answer, correct },
  };
  const outcome = `${answer === null ? 'no final answer' : `answer ${clip(answer, 60)} (${correct ? 'correct' : 'wrong'})`}${change}`;
  return { local, global, reward: local + alpha * global, outcome, nextState: next, done: false, solved: false, handoff: undefined };
}

function scoreEvaluator(state: MathRefineState, text: string, alpha: number): Scored<MathRefineState> {
  const judged = state.current ?? { answer: null, correct: false };
  const verdict = parseVerdict(text);
  const accurate = verdict !== null && (verdict === 'correct') === judged.correct;
  const local = verdict === null ? MATHREFINE_REWARDS.noVerdict : accurate ? MATHREFINE_REWARDS.verdictAccurate : MATHREFINE_REWARDS.verdictWrong;
  const global = judged.correct ? 1 : 0;
  const critiques = state.critiques + 1;
  const accepted = verdict === 'correct';
  const outOfTurns = critiques >= state.maxTurns;
  const done = accepted || outOfTurns;
  const next: MathRefineState = {
    ...state,
    history: [...state.history, { role: 'evaluator_critique', text: clip(text, KEEP_TEXT_CHARS), answer: null, correct: judged.correct, verdict }],
    next: 'generator_refinement',
    critiques,
    done,
    solved: done && judged.correct,
    finalAnswer: done ? judged.answer : null,
  };
  let outcome =
    verdict === null
      ? `no verdict (the answer was ${judged.correct ? 'correct' : 'wrong'})`
      : `verdict ${verdictName(verdict === 'correct')} (${accurate ? 'accurate' : 'inaccurate'}: the answer was ${judged.correct ? 'correct' : 'wrong'})`;
  if (accepted) outcome += '; accepted, done';
  else if (outOfTurns) outcome += `; out of turns (${state.maxTurns} critiques)`;
  return { local, global, reward: local + alpha * global, outcome, nextState: next, done, solved: next.solved, handoff: undefined };
}

export function scoreMathRefine(agent: string, state: MathRefineState, text: string, alpha: number): Scored<MathRefineState> {
  if (state.done) return neutral(state, 'episode already over');
  if (!isRole(agent)) return neutral(state, `${agent} is not a role of mathrefine (roles: ${MATHREFINE_AGENTS.join(', ')})`);
  if (agent !== state.next) return neutral(state, `not ${agent}'s move (waiting for ${state.next}); ignored`);
  const t = typeof text === 'string' ? text : '';
  return agent === 'evaluator_critique' ? scoreEvaluator(state, t, alpha) : scoreGenerator(agent, state, t, alpha);
}

/** Whether `agent` has the move in `state` (the others would be scored neutral). */
export function mathRefineActs(agent: string, state: MathRefineState): boolean {
  return !state.done && agent === state.next;
}

/** Scripted players: correct answers, and verdicts that match the truth of the judged answer. */
export function scriptedMathRefine(agent: string, state: MathRefineState): string {
  if (state.done || agent !== state.next) return 'pass';
  if (agent === 'evaluator_critique') {
    const ok = state.current?.correct ?? false;
    return ok ? 'Every step checks out and the final answer is right.\nVerdict: Correct' : 'The final answer does not follow from the problem.\nVerdict: Incorrect';
  }
  return `The answer is \\boxed{${state.problem.answer}}.`;
}

export const mathRefine: EnvDefinition<MathRefineState, MathRefineOptions> = {
  agents: MATHREFINE_AGENTS,
  reset: resetMathRefine,
  prompt: (agent, ctx) => mathRefinePrompt(agent, ctx.state),
  program: () => null,
  score: (agent, state, text, _run, alpha) => scoreMathRefine(agent, state, text, alpha),
  acts: mathRefineActs,
  scripted: (agent, ctx) => scriptedMathRefine(agent, ctx.state),
};
