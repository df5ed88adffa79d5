// The prompts of the math environment's two agents. In the first turn the tool agent sees the
// problem; the reasoner sees the problem and what the tool agent's program did in the same turn.
// In later turns both see every earlier turn of both agents and are asked to select (adopt the
// answer they trust, their own or the other agent's) or refine. Played alone (no tool agent in
// the episode), the reasoner is asked to solve the problem by itself. Pure.
import { clip } from '../shared/text.js';
import type { ChatMessage } from '../types.js';
import type { MathReasoningEntry, MathState, MathToolEntry } from './state.js';

const MAX_CODE_CHARS = 1500;
const MAX_OUTPUT_CHARS = 600;
const MAX_SOLUTION_CHARS = 1500;

export const TOOL_SYSTEM_PROMPT = `You are a math assistant that solves problems by writing Python code.

Write one complete Python program in a \`\`\`python code block. The program must compute the answer and print it with print().
1. Use exact arithmetic where you can: integers and fractions.Fraction (print(Fraction(7, 2)) prints 7/2). Do not round unless the problem asks for it.
2. The last line the program prints must be the final answer alone, without units or words, e.g. print(answer).
3. Use only the Python standard library; the program runs with a time limit.`;

const REASONER_RULES = `Think step by step, then give the final answer in \\boxed{}, for example \\boxed{42} or \\boxed{\\frac{7}{2}}. Put only the answer in the box, without units.`;

export const REASONER_SYSTEM_PROMPT = `You are a math assistant that solves problems by careful step-by-step reasoning. A code agent works on the same problem: you are shown its Python program and what the program printed. Check its approach: if it is right, you may adopt its answer; if it is wrong, solve the problem yourself.

${REASONER_RULES}`;

export const SOLO_SYSTEM_PROMPT = `You are a math assistant that solves problems by careful step-by-step reasoning.

${REASONER_RULES}`;

function describeTool(e: MathToolEntry, who: string): string {
  const lines = [`${who} program:`, '```python', clip(e.code ?? '', MAX_CODE_CHARS) || '(no code)', '```'];
  switch (e.status) {
    case 'no_code':
      lines.push('(The answer had no ```python block, so nothing was run.)');
      break;
    case 'not_run':
      lines.push('(The program was not run.)');
      break;
    case 'timeout':
      lines.push('(The program timed out.)');
      break;
    case 'exit_error':
      lines.push(`(The program failed with exit code ${e.exitCode ?? 'unknown'}.)`);
      if (e.stderr) lines.push('Error output:', '```', clip(e.stderr.trimEnd(), MAX_OUTPUT_CHARS), '```');
      break;
    case 'ok':
      break;
  }
  if (e.status !== 'no_code') lines.push('Output:', '```', clip(e.stdout.trimEnd(), MAX_OUTPUT_CHARS) || '(no output)', '```');
  lines.push(`${who} answer: ${e.answer ?? '(none)'}`);
  return lines.join('\n');
}

function describeReasoning(e: MathReasoningEntry, who: string): string {
  return [`${who} solution:`, clip(e.solution, MAX_SOLUTION_CHARS) || '(empty)', `${who} answer: ${e.answer ?? '(none: no \\boxed{} answer)'}`].join('\n');
}

/** Turns 0 .. turns-1 of both agents, from the point of view of `self`. */
function history(state: MathState, turns: number, self: 'tool' | 'reasoning'): string {
  const parts: string[] = [];
  for (let i = 0; i < turns; i++) {
    const t = state.tool[i];
    const r = state.reasoning[i];
    const section = [`### Turn ${i + 1}`];
    if (t) section.push(describeTool(t, self === 'tool' ? 'Your' : "The code agent's"));
    if (r) section.push(describeReasoning(r, self === 'reasoning' ? 'Your' : "The reasoning agent's"));
    if (t || r) parts.push(section.join('\n\n'));
  }
  return parts.join('\n\n');
}

export function toolPrompt(state: MathState): ChatMessage[] {
  const problem = `Problem:\n${state.problem.question}`;
  const done = state.tool.length;
  if (done === 0) {
    return [
      { role: 'system', content: TOOL_SYSTEM_PROMPT },
      { role: 'user', content: `${problem}\n\nWrite the Python program now.` },
    ];
  }
  const turns = Math.max(done, state.reasoning.length);
  const mine = state.tool[state.tool.length - 1]?.answer ?? null;
  const theirs = state.reasoning[state.reasoning.length - 1]?.answer ?? null;
  const ask =
    mine === null
      ? 'Your last program gave no answer. Find the problem (see its output above) and fix it.'
      : `Your last answer (${mine}) and the reasoning agent's last answer (${theirs ?? 'none'}) do not agree.`;
  return [
    { role: 'system', content: TOOL_SYSTEM_PROMPT },
    {
      role: 'user',
      content: `${problem}\n\nEarlier turns:\n\n${history(state, turns, 'tool')}\n\n${ask} Judge whether the mismatch comes from your program or from the reasoning agent's solution, then either select the answer you trust or refine your program. Write a complete Python program that prints the final answer.`,
    },
  ];
}

export function reasonerPrompt(state: MathState): ChatMessage[] {
  const problem = `Problem:\n${state.problem.question}`;
  const turn = state.reasoning.length; // this reasoner's turn index
  const current = state.tool.length > turn ? state.tool[turn] : undefined; // the code agent's work this turn
  if (state.tool.length === 0) {
    // Alone: the first attempt, or a retry after an answer without \boxed{}.
    const retry = turn > 0 ? `\n\nYour earlier attempts:\n\n${history(state, turn, 'reasoning')}\n\nYour last attempt gave no final answer in \\boxed{}. Solve the problem again.` : '';
    return [
      { role: 'system', content: SOLO_SYSTEM_PROMPT },
      { role: 'user', content: `${problem}${retry}\n\nSolve the problem and put the final answer in \\boxed{}.` },
    ];
  }
  const earlier = turn > 0 ? `\n\nEarlier turns:\n\n${history(state, turn, 'reasoning')}` : '';
  const now = current ? `\n\nThe code agent's work in this turn:\n\n${describeTool(current, "The code agent's")}` : '';
  const ask =
    turn > 0
      ? "Your earlier answer and the code agent's answer did not agree. Judge whether the mismatch comes from your reasoning or from the code agent's program, then select the answer you trust or refine your solution."
      : "Check the code agent's work and solve the problem.";
  return [
    { role: 'system', content: REASONER_SYSTEM_PROMPT },
    { role: 'user', content: `${problem}${earlier}${now}\n\n${ask} Put the final answer in \\boxed{}.` },
  ];
}
