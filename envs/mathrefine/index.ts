// Public API of the three-role math refinement environment (generator_initial,
// evaluator_critique, generator_refinement).
export { MATHREFINE_REWARDS, mathRefine, mathRefineActs, resetMathRefine, scoreMathRefine, scriptedMathRefine } from './definition.js';
export { EVALUATOR_SYSTEM_PROMPT, GENERATOR_INITIAL_SYSTEM_PROMPT, GENERATOR_REFINEMENT_SYSTEM_PROMPT, mathRefinePrompt, transcript } from './prompt.js';
export { MATHREFINE_AGENTS, type MathRefineEntry, type MathRefineOptions, type MathRefineRole, type MathRefineState } from './state.js';
export { parseVerdict, type Verdict } from './verdict.js';
