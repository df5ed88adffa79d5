// Data loaders (activities: they read files): math and code problem sets from JSON Lines and
// Parquet files, with bad rows reported by file and line (or Parquet row).
export { CODE_LOAD_DEFAULTS, codeProblemOf, codeRowFormat, loadCodeProblems, looksLikePython2, type CodeLoadOptions, type CodeRowFormat, type LoadedCode } from './code.js';
export { BadRowError, fallbackId, loadRows, zodReason, type BadRow, type LoadOptions, type Loaded, type OnBadRow, type RowResult } from './load.js';
export { ANSWER_FIELDS, ID_FIELDS, QUESTION_FIELDS, loadMathProblems, mathProblemOf } from './math.js';
export { describeLocation, formatOf, readRows, type DataFormat, type RawRow, type RowLocation } from './rows.js';
