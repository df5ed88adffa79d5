// A puzzle played by the two roles, as an EnvDefinition.
import type { EnvDefinition, ProgramRun, Scored, TeamTerm, TurnScores } from '../types.js';
import { buildPuzzlePrompt, parsePuzzleAnswer, PUZZLE_AGENTS, scorePlan, scoreTool, type PuzzleScore } from './roles.js';
import { extractCode } from '../shared/text.js';
import type { Puzzle, PuzzleOptions, PuzzleStatus, ToolResult } from './types.js';

/**
 * The EnvDefinition of a puzzle: agents tool_call_agent then plan_agent; any other agent name
 * is played as plan_agent. The tool agent's handoff is a ToolResult<A>; the plan agent's is
 * undefined.
 */
export function puzzleEnv<S extends PuzzleStatus, A, O>(
  puzzle: Puzzle<S, A>,
  reset: (seed: number, options: O) => S,
): EnvDefinition<S, O & PuzzleOptions> {
  return {
    agents: PUZZLE_AGENTS,
    reset,
    prompt: (agent, ctx) => buildPuzzlePrompt(puzzle, agent, { state: ctx.state, turn: ctx.turn, toolResult: ctx.handoff as ToolResult<A> | undefined }),
    program: (agent, text) => (agent === 'tool_call_agent' ? extractCode(text) : null),
    score(agent, state, text, run: ProgramRun | null, alpha, options) {
      const formula = options?.rewardFormula;
      if (agent !== 'tool_call_agent') return scored(scorePlan(puzzle, state, text, alpha, formula), undefined);
      const code = extractCode(text);
      const exec = { code, stdout: run?.stdout ?? '', exitCode: run?.exitCode ?? null, timedOut: run?.timedOut ?? false };
      const score = scoreTool(puzzle, state, exec, alpha, formula);
      // The plan agent is shown the code, its output and the action parsed from it.
      const handoff: ToolResult<A> = { code: code ?? '', stdout: exec.stdout, actions: run ? parsePuzzleAnswer(puzzle, run.stdout) : null };
      return scored(score, handoff);
    },
    settleTurn: (groups, options) => (options?.rewardFormula === 'reference' ? referenceTeamTerms(groups) : groups.map((g) => g.scored.map(asIs))),
    // The scripted player knows the solution: the tool agent prints it, the plan agent answers it.
    scripted(agent, ctx) {
      const body = puzzle.solution(ctx.state) ?? '[]';
      return agent === 'tool_call_agent' ? `\`\`\`python\nprint('**Actions List**: ' + '${body}')\n\`\`\`` : `#### ${body}`;
    },
  };
}

const asIs = ({ global, reward }: Scored<unknown>): TeamTerm => ({ global, reward });

/**
 * The reference's `calculate_reward` after a turn: every agent adds the env's reward at the end of
 * the turn, the reward of the last action applied in it. The plan agents apply; the last of them
 * already holds, per candidate, its own action's env reward as global (scorePlan). Every other
 * group adds the chosen continuation's: global = that, reward = local + global. A turn in which no
 * action was applied adds 0 (the reference's state would still hold the previous turn's reward;
 * the puzzles' turn orders always end with the plan agent).
 */
function referenceTeamTerms<S>(groups: TurnScores<S>[]): TeamTerm[][] {
  let last = -1;
  groups.forEach((g, i) => {
    if (g.agent !== 'tool_call_agent') last = i;
  });
  const team = last < 0 ? 0 : groups[last].scored[groups[last].chosen].global;
  return groups.map((g, i) => (i === last ? g.scored.map(asIs) : g.scored.map((s) => ({ global: team, reward: s.local + team }))));
}

function scored<S, A>(s: PuzzleScore<S, A>, handoff: ToolResult<A> | undefined): Scored<S> {
  return { local: s.local, global: s.global, reward: s.reward, outcome: s.outcome, nextState: s.nextState, done: s.done, solved: s.solved, handoff };
}
