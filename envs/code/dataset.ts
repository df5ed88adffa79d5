// Code problem sets: APPS-style, CodeContests-style and Tandem rows of a file, mapped to
// CodeProblem: a statement, input/output tests and a golden Python 3 solution. Pure: infra/data
// reads the file.
//
//   APPS:         question; input_output: JSON (string or object) {inputs, outputs[, fn_name]};
//                 solutions: JSON list of Python programs (string or list); id from problem_id.
//                 An input or output given as a list of lines is joined with newlines. Rows with
//                 fn_name (call-based problems, not stdin/stdout) are bad rows. The golden solution
//                 is the first that does not look like Python 2 (print statements, raw_input,
//                 xrange).
//   CodeContests: description; public_tests / private_tests / generated_tests: {input[], output[]}
//                 (generated tests only with includeGeneratedTests); solutions: {language[],
//                 solution[]} with language 3 or "PYTHON3" for Python 3 (the first is the golden
//                 solution); id from name.
//   Tandem:       {id?, statement, tests: [{input, output}], golden} (envs/code's own type).
// A row without a Python 3 solution, or without a test, is a bad row. Tests are kept in order up
// to maxTests; a test whose input or output is longer than maxTestChars is dropped (counted in
// testsDropped): problems travel in the episode state, through Temporal's history, so they
// must stay small.
import { z } from 'zod';
import { fallbackId, zodReason, type RowLocation, type RowResult } from '../shared/rows.js';
import type { CodeProblem, CodeTest } from './types.js';

export type CodeRowFormat = 'auto' | 'apps' | 'codecontests' | 'tandem';

export interface CodeRowOptions {
  /** Row format; 'auto' (default) tells them apart by their fields. */
  format?: CodeRowFormat;
  /** Tests kept per problem (the first ones); default 16. */
  maxTests?: number;
  /** A test whose input or output has more characters is dropped; default 4096. */
  maxTestChars?: number;
  /** CodeContests: also use generated_tests (after the public and private ones); default false. */
  includeGeneratedTests?: boolean;
}

export const CODE_LOAD_DEFAULTS = Object.freeze({ maxTests: 16, maxTestChars: 4096 });

const idLike = z.union([z.string().min(1), z.number(), z.bigint()]).transform(String);
/** A test field: a string, or a list of lines. */
const ioText = z.union([z.string(), z.array(z.string()).transform((lines) => lines.join('\n'))]);

/** A JSON string (APPS stores input_output and solutions as JSON text) or the value itself. */
function jsonText<T extends z.ZodType>(schema: T) {
  return z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not valid JSON', input: value });
      return z.NEVER;
    }
  }, schema);
}

// fn_name is looked at before the tests: call-based problems hold arguments, not text.
const appsIO = z.object({
  inputs: z.array(z.unknown()),
  outputs: z.array(z.unknown()),
  fn_name: z.string().optional(),
});
const appsTexts = z.object({ inputs: z.array(ioText), outputs: z.array(ioText) });

const appsRow = z.object({
  problem_id: idLike.optional(),
  id: idLike.optional(),
  question: z.string().trim().min(1),
  input_output: jsonText(appsIO),
  solutions: z.union([z.literal('').transform(() => [] as string[]), jsonText(z.array(z.string()))]).optional(),
});

const ccTests = z.object({ input: z.array(z.string()), output: z.array(z.string()) });
const ccRow = z.object({
  name: idLike.optional(),
  id: idLike.optional(),
  description: z.string().trim().min(1),
  public_tests: ccTests.nullish(),
  private_tests: ccTests.nullish(),
  generated_tests: ccTests.nullish(),
  solutions: z.object({ language: z.array(z.union([z.number(), z.bigint(), z.string()])), solution: z.array(z.string()) }).nullish(),
});

const tandemRow = z.object({
  id: idLike.optional(),
  statement: z.string().trim().min(1),
  tests: z.array(z.object({ input: z.string(), output: z.string() })),
  golden: z.string().trim().min(1),
});

// Python 2 tells: a print statement, raw_input, xrange, `except E, e`.
const PYTHON2 = /^\s*print\s+[^\s(=]|^\s*print\s*$|\braw_input\s*\(|\bxrange\s*\(|except\s+\w+\s*,\s*\w+\s*:/m;

/** Whether a program looks like Python 2 (then it is not used as the golden solution). */
export function looksLikePython2(code: string): boolean {
  return PYTHON2.test(code);
}

const isPython3 = (lang: number | bigint | string) => (typeof lang === 'string' ? /^python\s*3$/i.test(lang.trim()) : Number(lang) === 3);

interface Draft {
  id: string | undefined;
  statement: string;
  tests: CodeTest[];
  golden: string | undefined;
}

function pairTests(group: string, t: { input: string[]; output: string[] } | { inputs: string[]; outputs: string[] }): CodeTest[] | string {
  const inputs = 'input' in t ? t.input : t.inputs;
  const outputs = 'output' in t ? t.output : t.outputs;
  if (inputs.length !== outputs.length) return `${group}: ${inputs.length} inputs but ${outputs.length} outputs`;
  return inputs.map((input, i) => ({ input, output: outputs[i] }));
}

function appsDraft(row: Record<string, unknown>): Draft | string {
  const p = appsRow.safeParse(row);
  if (!p.success) return zodReason(p.error);
  const io = p.data.input_output;
  if (io.fn_name !== undefined) return `call-based problem (fn_name "${io.fn_name}"), not a stdin/stdout one`;
  const texts = appsTexts.safeParse(io);
  if (!texts.success) return zodReason(texts.error).replace(/(^|; )/g, '$1input_output.');
  const tests = pairTests('input_output', texts.data);
  if (typeof tests === 'string') return tests;
  return { id: p.data.problem_id ?? p.data.id, statement: p.data.question, tests, golden: (p.data.solutions ?? []).find((s) => s.trim() !== '' && !looksLikePython2(s)) };
}

function codeContestsDraft(row: Record<string, unknown>, includeGenerated: boolean): Draft | string {
  const p = ccRow.safeParse(row);
  if (!p.success) return zodReason(p.error);
  const tests: CodeTest[] = [];
  const groups = [['public_tests', p.data.public_tests], ['private_tests', p.data.private_tests], ...(includeGenerated ? [['generated_tests', p.data.generated_tests] as const] : [])] as const;
  for (const [name, group] of groups) {
    if (group === null || group === undefined) continue;
    const paired = pairTests(name, group);
    if (typeof paired === 'string') return paired;
    tests.push(...paired);
  }
  const sols = p.data.solutions;
  let golden: string | undefined;
  if (sols) {
    if (sols.language.length !== sols.solution.length) return `solutions: ${sols.language.length} languages but ${sols.solution.length} solutions`;
    golden = sols.solution.find((s, i) => isPython3(sols.language[i]) && s.trim() !== '');
  }
  return { id: p.data.name ?? p.data.id, statement: p.data.description, tests, golden };
}

function tandemDraft(row: Record<string, unknown>): Draft | string {
  const p = tandemRow.safeParse(row);
  if (!p.success) return zodReason(p.error);
  return { id: p.data.id, statement: p.data.statement, tests: p.data.tests, golden: p.data.golden };
}

/** The format of a row, told apart by its fields; null when it has none of them. */
export function codeRowFormat(row: Record<string, unknown>): Exclude<CodeRowFormat, 'auto'> | null {
  if ('input_output' in row || 'question' in row) return 'apps';
  if ('description' in row) return 'codecontests';
  if ('statement' in row) return 'tandem';
  return null;
}

/** A row as a CodeProblem, and how many of its tests were dropped. */
export function codeProblemOf(row: Record<string, unknown>, where: RowLocation, options: CodeRowOptions = {}): RowResult<{ problem: CodeProblem; dropped: number }> {
  const format = options.format === undefined || options.format === 'auto' ? codeRowFormat(row) : options.format;
  if (format === null) return { ok: false, reason: 'unknown row format (expected APPS fields question/input_output, CodeContests fields description/*_tests, or Tandem fields statement/tests/golden)' };
  const draft = format === 'apps' ? appsDraft(row) : format === 'codecontests' ? codeContestsDraft(row, options.includeGeneratedTests ?? false) : tandemDraft(row);
  if (typeof draft === 'string') return { ok: false, reason: `${format}: ${draft}` };
  if (draft.golden === undefined) return { ok: false, reason: `${format}: no Python 3 solution` };
  if (draft.tests.length === 0) return { ok: false, reason: `${format}: no tests` };
  const maxChars = options.maxTestChars ?? CODE_LOAD_DEFAULTS.maxTestChars;
  const maxTests = options.maxTests ?? CODE_LOAD_DEFAULTS.maxTests;
  const small = draft.tests.filter((t) => t.input.length <= maxChars && t.output.length <= maxChars);
  const tests = small.slice(0, maxTests);
  if (tests.length === 0) return { ok: false, reason: `${format}: every test is longer than ${maxChars} characters` };
  const golden = draft.golden.endsWith('\n') ? draft.golden : `${draft.golden}\n`;
  return { ok: true, item: { problem: { id: draft.id ?? fallbackId(where), statement: draft.statement, tests, golden }, dropped: draft.tests.length - tests.length } };
}
