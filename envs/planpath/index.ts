// Public API of the Plan-Path environment.
export {
  DEFAULT_MAX_STEPS,
  PLANPATH_REWARDS,
  applyMoves,
  bfsShortestPath,
  generate,
  initialState,
  render,
  type Coord,
  type GenerateOptions,
  type HelperGrid,
  type InvalidMoveRule,
  type MoveResult,
  type PlanPathRewards,
  type PlanPathRules,
  type PlanPathState,
} from './grid.js';
export { planPath } from './definition.js';
export { TOOL_HELPER_NAMED_RULE, TOOL_HELPER_PRELUDE, TOOL_HELPER_RULE, withToolHelper } from './helper.js';
export {
  PLANPATH_AGENTS,
  PLANPATH_TEXT,
  planPathPuzzle,
  buildPrompt,
  extractCode,
  scorePlanAgent,
  scoreToolAgent,
  type AgentScore,
  type PlanPathAgent,
  type PromptContext,
  type ToolExecution,
  type ToolResult,
} from './roles.js';
