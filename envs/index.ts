// The environments a run can name in env.name, behind one small interface the episode
// workflow uses. Pure: imported by workflow code.
import type { RunConfig } from '../configs/schema.js';
import type { ChatMessage } from './types.js';
import * as planpath from './planpath/index.js';

export type EnvState = planpath.PlanPathState;

/** What an agent hands to the agents after it in the same turn (e.g. the tool agent's code and output). */
export type Handoff = planpath.ToolResult | undefined;

export function agentsOf(env: RunConfig['env']['name']): readonly string[] {
  switch (env) {
    case 'plan_path':
      return planpath.PLANPATH_AGENTS;
  }
}

/** The prompt for `agent`, built from the state the previous agents left and their handoff. */
export function promptFor(env: RunConfig['env'], agent: string, state: EnvState, turn: number, handoff: Handoff): ChatMessage[] {
  switch (env.name) {
    case 'plan_path':
      return planpath.buildPrompt(agent as planpath.PlanPathAgent, { state, turn, toolResult: handoff });
  }
}
