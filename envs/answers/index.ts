// Public API of answer checking: extracting a final answer from a solution or a program's output,
// and deciding whether two answers are the same (numerically, exactly where possible, and
// symbolically by evaluation at seeded points). Pure; nothing here throws.
export { answersEqual, isCorrectSolution, numbersEqual, DEFAULT_REL_TOL, INTEGER_REL_TOL, MAX_COMPARED_CHARS, SYMBOLIC_POINTS, SYMBOLIC_REL_TOL, type EquivalenceOptions, type PercentMode } from './equal.js';
export { MAX_EXPR_CHARS, evaluate, evaluateText, parseExpression, samplePoints, variablesOf, type Expr } from './expr.js';
export { MAX_ANSWER_CHARS, bracedContent, extractAnswer, extractBoxed, extractOutputAnswer } from './extract.js';
export { normalizeAnswer, stripUnits, type NormalizedAnswer } from './normalize.js';
export {
  add,
  div,
  float,
  formatDecimal,
  formatRational,
  int,
  isExact,
  isInteger,
  mul,
  neg,
  parseDecimal,
  pow,
  rational,
  sub,
  toFloat,
  type Num,
} from './num.js';
