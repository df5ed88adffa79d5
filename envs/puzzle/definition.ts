// A puzzle played by the two roles, as an EnvDefinition.
import type { EnvDefinition, ProgramRun, Scored } from '../types.js';
import { buildPuzzlePrompt, parsePuzzleAnswer, PUZZLE_AGENTS, scorePlan, scoreTool, type PuzzleScore } from './roles.js';
import { extractCode } from '../shared/text.js';
import type { Puzzle, PuzzleStatus, ToolResult } from './types.js';

/**
 * The EnvDefinition of a puzzle: agents tool_call_agent then plan_agent; any other agent name
 * is played as plan_agent. The tool agent's handoff is a ToolResult<A>; the plan agent's is
 * undefined.
 */
export function puzzleEnv<S extends PuzzleStatus, A, O>(
  puzzle: Puzzle<S, A>,
  reset: (seed: number, options: O) => S,
): EnvDefinition<S, O> {
  return {
    agents: PUZZLE_AGENTS,
    reset,
    prompt: (agent, ctx) => buildPuzzlePrompt(puzzle, agent, { state: ctx.state, turn: ctx.turn, toolResult: ctx.handoff as ToolResult<A> | undefined }),
    program: (agent, text) => (agent === 'tool_call_agent' ? extractCode(text) : null),
    score(agent, state, text, run: ProgramRun | null, alpha) {
      if (agent !== 'tool_call_agent') return scored(scorePlan(puzzle, state, text, alpha), undefined);
      const code = extractCode(text);
      const exec = { code, stdout: run?.stdout ?? '', exitCode: run?.exitCode ?? null, timedOut: run?.timedOut ?? false };
      const score = scoreTool(puzzle, state, exec, alpha);
      // The plan agent is shown the code, its output and the action parsed from it.
      const handoff: ToolResult<A> = { code: code ?? '', stdout: exec.stdout, actions: run ? parsePuzzleAnswer(puzzle, run.stdout) : null };
      return scored(score, handoff);
    },
    // The scripted player knows the solution: the tool agent prints it, the plan agent answers it.
    scripted(agent, ctx) {
      const body = puzzle.solution(ctx.state) ?? '[]';
      return agent === 'tool_call_agent' ? `\`\`\`python\nprint('**Actions List**: ' + '${body}')\n\`\`\`` : `#### ${body}`;
    },
  };
}

function scored<S, A>(s: PuzzleScore<S, A>, handoff: ToolResult<A> | undefined): Scored<S> {
  return { local: s.local, global: s.global, reward: s.reward, outcome: s.outcome, nextState: s.nextState, done: s.done, solved: s.solved, handoff };
}
