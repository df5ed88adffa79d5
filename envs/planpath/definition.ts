// Plan-Path as an EnvDefinition: the grid reducer plus its two roles.
import type { EnvDefinition, ProgramRun, Scored } from '../types.js';
import { generate, type GenerateOptions, type PlanPathState } from './grid.js';
import { buildPrompt, extractCode, parseActionList, PLANPATH_AGENTS, scorePlanAgent, scoreToolAgent, type AgentScore, type ToolResult } from './roles.js';

function scored(s: AgentScore, handoff: ToolResult | undefined): Scored<PlanPathState> {
  return { local: s.local, global: s.global, reward: s.reward, outcome: s.outcome, nextState: s.nextState, done: s.done, solved: s.solved, handoff };
}

export const planPath: EnvDefinition<PlanPathState, GenerateOptions> = {
  agents: PLANPATH_AGENTS,
  reset: generate,
  prompt: (agent, ctx) =>
    buildPrompt(agent as (typeof PLANPATH_AGENTS)[number], { state: ctx.state, turn: ctx.turn, toolResult: ctx.handoff as ToolResult | undefined }),
  program: (agent, text) => (agent === 'tool_call_agent' ? extractCode(text) : null),
  score(agent, state, text, run: ProgramRun | null, alpha) {
    if (agent !== 'tool_call_agent') return scored(scorePlanAgent(state, text, alpha), undefined);
    const code = extractCode(text);
    const exec = { code, stdout: run?.stdout ?? '', exitCode: run?.exitCode ?? null, timedOut: run?.timedOut ?? false };
    // The plan agent is shown the code, its output and the moves parsed from it.
    return scored(scoreToolAgent(state, exec, alpha), { code: code ?? '', stdout: exec.stdout, actions: run ? parseActionList(run.stdout) : null });
  },
};
