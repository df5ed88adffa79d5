// The prompts of the three roles. Following three-role-math-lora-status.md ("Shared Conversation
// History"): every role sees the problem and the complete history of the episode:
//   generator_initial     sees the problem
//   evaluator_critique    sees the problem + every solution and critique so far, judges the latest
//   generator_refinement  sees the problem + every solution and critique so far, refines the latest
// A role asked to act out of turn (see the definition) is told to pass. Pure.
import { clip } from '../shared/text.js';
import type { ChatMessage } from '../types.js';
import type { MathRefineEntry, MathRefineRole, MathRefineState } from './state.js';

const MAX_ENTRY_CHARS = 2000;

const BOXED_RULE = 'Put the final answer in \\boxed{}, for example \\boxed{42} or \\boxed{\\frac{7}{2}}, with only the answer in the box.';

export const GENERATOR_INITIAL_SYSTEM_PROMPT = `You are a math problem solver. Solve the problem with clear step-by-step reasoning. ${BOXED_RULE}`;

export const EVALUATOR_SYSTEM_PROMPT = `You are a careful math evaluator. You are shown a problem and a conversation in which solutions are proposed and critiqued. Judge the LATEST solution: check each step and its final answer, re-deriving results where needed.

Give brief feedback: the first error you find and how to fix it, or why the solution is right. Then end your answer with exactly one line, either
Verdict: Correct
or
Verdict: Incorrect`;

export const GENERATOR_REFINEMENT_SYSTEM_PROMPT = `You are a math problem solver who refines solutions. You are shown a problem and a conversation in which solutions are proposed and critiqued. Read the latest solution and the evaluator's critique of it. If the critique found a real error, fix it; if the solution was in fact right, keep its answer. Write a complete corrected solution. ${BOXED_RULE}`;

const TITLES: Readonly<Record<MathRefineRole, string>> = {
  generator_initial: 'Solution',
  evaluator_critique: 'Critique',
  generator_refinement: 'Refined solution',
};

/** The shared history as text: numbered solutions and critiques, oldest first. */
export function transcript(history: readonly MathRefineEntry[]): string {
  let solutions = 0;
  let critiques = 0;
  return history
    .map((e) => {
      const n = e.role === 'evaluator_critique' ? ++critiques : ++solutions;
      return `[${TITLES[e.role]} ${n} (${e.role})]\n${clip(e.text, MAX_ENTRY_CHARS) || '(empty)'}`;
    })
    .join('\n\n');
}

export function mathRefinePrompt(agent: string, state: MathRefineState): ChatMessage[] {
  const problem = `Problem:\n${state.problem.question}`;
  const history = state.history.length > 0 ? `\n\nConversation so far:\n\n${transcript(state.history)}` : '';
  if (state.done || agent !== state.next) {
    return [
      { role: 'system', content: `You are ${agent} in a team solving a math problem.` },
      { role: 'user', content: `${problem}${history}\n\nIt is not your turn (${state.done ? 'the episode is over' : `waiting for ${state.next}`}). Reply with the single word: pass` },
    ];
  }
  switch (agent) {
    case 'generator_initial':
      return [
        { role: 'system', content: GENERATOR_INITIAL_SYSTEM_PROMPT },
        { role: 'user', content: `${problem}\n\nSolve the problem. ${BOXED_RULE}` },
      ];
    case 'evaluator_critique':
      return [
        { role: 'system', content: EVALUATOR_SYSTEM_PROMPT },
        { role: 'user', content: `${problem}${history}\n\nEvaluate the latest solution. End with "Verdict: Correct" or "Verdict: Incorrect".` },
      ];
    default:
      return [
        { role: 'system', content: GENERATOR_REFINEMENT_SYSTEM_PROMPT },
        { role: 'user', content: `${problem}${history}\n\nWrite the refined solution. ${BOXED_RULE}` },
      ];
  }
}
