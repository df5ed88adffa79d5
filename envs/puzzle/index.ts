// Public API of the generic puzzle module: a single-player puzzle played by the PettingLLMs
// roles tool_call_agent and plan_agent, and the move parsers.
export { puzzleEnv } from './definition.js';
export { MAX_MOVES, countMoves, moveDelta, parseMoveAnswer, parseMoveList } from './moves.js';
export {
  FAILURE_REWARDS,
  PUZZLE_AGENTS,
  buildPuzzlePrompt,
  parsePuzzleAnswer,
  planSystemPrompt,
  scorePlan,
  scoreTool,
  toolSystemPrompt,
  type PromptContext,
  type PuzzleAgent,
  type PuzzleScore,
  type ToolExecution,
} from './roles.js';
export type { Puzzle, PuzzleStatus, PuzzleStep, PuzzleText, ToolResult } from './types.js';
