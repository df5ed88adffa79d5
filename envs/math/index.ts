// Public API of the math environment (tool_generator + reasoning_generator), its problem source
// (loaded rows or the seeded generator) and the types the three-role refinement env shares.
export { MATH_REWARDS, math, resetMath, scoreMath, scoreReasoningAnswer, scoreToolAnswer, scriptedMath } from './definition.js';
export { GENERATOR_TEMPLATES, formatAnswer, generateProblem, type AnswerFormat, type GeneratedProblem } from './generate.js';
export { DEFAULT_MATH_MAX_TURNS, mathOptionIssues, maxTurnsOf, problemFor } from './problems.js';
export { REASONER_SYSTEM_PROMPT, SOLO_SYSTEM_PROMPT, TOOL_SYSTEM_PROMPT, reasonerPrompt, toolPrompt } from './prompt.js';
export {
  MATH_AGENTS,
  type MathAgent,
  type MathOptions,
  type MathReasoningEntry,
  type MathState,
  type MathToolEntry,
  type MathToolHandoff,
  type ToolStatus,
} from './state.js';
export type { EpisodeProblem, MathProblem, ProblemSource } from './types.js';
