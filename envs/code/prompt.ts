// Prompts of the code environment's two roles. The ground-truth tests, the golden solution and
// the validity of generated cases are never shown. Pure: no I/O.
import { clip } from '../shared/text.js';
import type { ChatMessage } from '../types.js';
import type { CodeOnTest, CodeState, GeneratedTest } from './types.js';

// How much of a program, a test field and a program's output a prompt shows.
const MAX_CODE_CHARS = 4000;
const MAX_FIELD_CHARS = 600;
/** The latest generated cases shown (older ones are summarised by count). */
const MAX_CASES_SHOWN = 8;

export const CODER_SYSTEM = `You are a programming agent on a team with a test-writing agent. Solve the programming problem with a complete Python 3 program.

Rules:
1. The program reads its input from standard input (input() or sys.stdin) and prints the answer to standard output, exactly in the format the problem asks for. Do not print prompts or extra text, and do not hard-code inputs.
2. Use only the Python standard library. Each test has a time limit of a few seconds.
3. Think briefly, then give the whole program in one block:

**Code:**
\`\`\`python
# your program
\`\`\`

The last \`\`\`python block of your answer is the program that is run.`;

export const TESTER_SYSTEM = `You are a test-writing agent on a team with a programming agent. Write ONE new test case for the programming problem: an input that follows the problem's input format exactly, and the output that a correct program prints for it.

A good test case is correct and catches wrong programs (edge cases, tricky values). Before writing it, work out the output step by step; if you are not sure of it, pick a simpler input. Keep the input small.

End your answer with the test case in exactly this format:

**Test Input:**
\`\`\`
input here
\`\`\`

**Test Output:**
\`\`\`
output here
\`\`\``;

const fence = (s: string, tag = '', max = MAX_FIELD_CHARS) => `\`\`\`${tag}\n${clip(s, max).replace(/\n$/, '')}\n\`\`\``;

function resultLine(r: CodeOnTest | undefined): string {
  if (r === undefined) return 'not run';
  switch (r.status) {
    case 'pass':
      return 'passed';
    case 'wrong':
      return `failed, the program printed:\n${fence(r.excerpt)}`;
    case 'error':
      return `failed with an error:\n${fence(r.excerpt)}`;
    case 'timeout':
      return 'failed: time limit exceeded';
    case 'oversize':
      return 'failed: the program printed far too much';
    case 'skipped':
      return 'not run (the time budget was spent on earlier cases)';
  }
}

function describeCases(tests: GeneratedTest[], results: CodeOnTest[] | null, withResults: boolean): string {
  const first = Math.max(0, tests.length - MAX_CASES_SHOWN);
  const parts = tests.slice(first).map((t, k) => {
    const i = first + k;
    const lines = [`Test case ${i + 1}:`, 'Input:', fence(t.input), 'Expected output (written by the test agent):', fence(t.output)];
    if (withResults) lines.push(`Current program: ${resultLine(results?.[i])}`);
    return lines.join('\n');
  });
  if (first > 0) parts.unshift(`(${first} earlier test case${first === 1 ? '' : 's'} not shown)`);
  return parts.join('\n\n');
}

export function coderPrompt(state: CodeState): ChatMessage[] {
  const parts = [`Problem:\n${state.problem.statement}`];
  if (state.code !== null) parts.push(`Your team's current program:\n${fence(state.code, 'python', MAX_CODE_CHARS)}`);
  if (state.tests.length > 0) {
    parts.push(
      `Test cases written by the test agent (they may themselves be wrong)${state.code !== null ? ', with the current program\'s results' : ''}:\n\n${describeCases(state.tests, state.codeOnTests, state.code !== null)}`,
    );
    parts.push(
      'If the program fails a test case, first decide whether the program or the test case is wrong. Fix the program if it is wrong; do not change correct behaviour to match a wrong test case.',
    );
  }
  parts.push(state.code === null ? 'Write the program now.' : 'Give the complete, corrected program.');
  return [
    { role: 'system', content: CODER_SYSTEM },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

export function testerPrompt(state: CodeState): ChatMessage[] {
  const parts = [`Problem:\n${state.problem.statement}`];
  if (state.code !== null) parts.push(`The programming agent's current program:\n${fence(state.code, 'python', MAX_CODE_CHARS)}`);
  if (state.tests.length > 0) {
    parts.push(`Your earlier test cases${state.code !== null ? ", with the current program's results" : ''}:\n\n${describeCases(state.tests, state.codeOnTests, state.code !== null)}`);
    parts.push('Write a NEW test case, different from the earlier ones.');
  } else {
    parts.push('Write the test case now.');
  }
  return [
    { role: 'system', content: TESTER_SYSTEM },
    { role: 'user', content: parts.join('\n\n') },
  ];
}
