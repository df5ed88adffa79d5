// Public API of the code environment (code_generator then test_generator).
export {
  CODE_AGENTS,
  CODE_DEFAULTS,
  CODE_REWARDS,
  HARNESS_MARGIN_S,
  code,
  codeProgram,
  harnessLimitsFor,
  newCodeState,
  problemOfSeed,
  scoreCode,
  scriptedCodeAnswer,
  type CodeAgent,
} from './definition.js';
export { EXCERPT_CHARS, HARNESS_TAG, OUTPUT_CAP_BYTES, buildHarness, pythonJsonLiteral, readHarnessReport, type CaseResult, type HarnessCase, type HarnessReading, type HarnessSpec } from './harness.js';
export { extractTestCase, formatTestCase } from './parse.js';
export { CODE_PROBLEMS } from './problems.js';
export { CODER_SYSTEM, TESTER_SYSTEM, coderPrompt, testerPrompt } from './prompt.js';
export type { CaseStatus, CodeHistoryEntry, CodeOnTest, CodeOptions, CodeProblem, CodeState, CodeTest, GeneratedTest } from './types.js';
