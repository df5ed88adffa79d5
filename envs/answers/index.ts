// Public API of answer checking: extracting a final answer from a solution or a program's output,
// and deciding whether two answers are the same, at HF math_verify's grade (numerically, exactly
// where possible, and symbolically by evaluation at seeded points). Pure; nothing here throws.
export { answersEqual, isCorrectSolution, EXACT_REL_TOL, FLOAT_ROUNDING, MAX_COMPARED_CHARS, SYMBOLIC_POINTS, SYMBOLIC_REL_TOL, type EquivalenceOptions, type PercentMode } from './equal.js';
export { MAX_SCANNED_CHARS, boxedContents, extractFinalAnswer } from './final.js';
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
