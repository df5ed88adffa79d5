// The scoring harness of the code environment: one self-contained Python program that runs
// programs on test cases, each in its own subprocess with a time limit, and prints ONE JSON
// report on stdout. The environment builds it (program()) and reads its report (score()).
// The program is envs/code/harness.py, with the spec (programs, cases, limits) put in place of
// its placeholder; it reaches this module as text through python.generated.ts (why: that
// module's head). Pure: no I/O.
//
// Inside the harness (harness.py), for each case in order:
//   - the case's program is written to a file just before its run and removed just after (the
//     golden solution is never on disk while another program runs);
//   - `python -I prog.py` runs in a new session with the case's input on stdin, stdout and
//     stderr going to files, and a time limit of min(caseTimeoutS, what is left of budgetS);
//     its process group is killed when it ends;
//   - status: 'timeout' (killed at the limit), 'oversize' (printed more than the output cap),
//     'error' (non-zero exit), 'pass' (output equal to the expected output once both are
//     normalised, see normaliseOutput), 'wrong' (otherwise); 'skipped' when the budget was spent
//     before the case started.
// Programs under test cannot read the expected outputs: the harness file (which the sandbox
// mounts read-only, so the harness cannot remove it) holds only the SHA-256 of each normalised
// expected output, and the harness makes itself non-dumpable, so that its /proc entries (its
// stdout, its memory) are closed to them and they cannot forge its report.
// Report (one line of JSON):
//   {"harness": "tandem-code/1", "cases": [{"id", "status", "seconds", "excerpt"}, ...]}
// excerpt: the first EXCERPT_CHARS characters of what the program printed, or for 'error' the
// last ones of its stderr. A harness that fails itself prints {"harness": ..., "error": "..."}.
import { z } from 'zod';
import { HARNESS_PY } from './python.generated.js';
import { sha256Hex, utf8 } from './sha256.js';
import type { CaseStatus } from './types.js';

export const HARNESS_TAG = 'tandem-code/1';
/** Characters of a program's output (or error) kept in the report. */
export const EXCERPT_CHARS = 300;
/** Bytes of a program's stdout read back; more is 'oversize' (at least twice the expected output). */
export const OUTPUT_CAP_BYTES = 64 * 1024;

export interface HarnessCase {
  /** Unique within a run, e.g. "truth:0", "gen:2", "golden", "code". */
  id: string;
  /** A key of HarnessSpec.programs. */
  program: string;
  input: string;
  expected: string;
}

export interface HarnessSpec {
  programs: Record<string, string>;
  cases: HarnessCase[];
  caseTimeoutS: number;
  budgetS: number;
}

export interface CaseResult {
  id: string;
  status: CaseStatus;
  seconds: number;
  excerpt: string;
}

/** Where buildHarness puts the spec in the harness text (the one occurrence in harness.py). */
const SPEC_PLACEHOLDER = "'__SPEC__'";

/**
 * The form in which outputs are compared: split on ASCII whitespace (space, tab, newline,
 * carriage return, form feed, vertical tab), empty pieces dropped, joined by single spaces.
 * "1 2\n3" and " 1  2 3\n\n" are the same output.
 */
export function normaliseOutput(text: string): string {
  return text.split(/[ \t\n\r\f\v]+/).filter((t) => t !== '').join(' ');
}

/** A Python string literal (ASCII only) whose value is the JSON of `value`. */
export function pythonJsonLiteral(value: unknown): string {
  // Non-ASCII characters become JSON \u escapes inside the JSON text, which json.loads decodes
  // (surrogate pairs included); the outer JSON string literal is then also a Python literal.
  const json = JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return JSON.stringify(json);
}

/** The harness program for a spec. */
export function buildHarness(spec: HarnessSpec): string {
  // Expected outputs travel as the SHA-256 of their normalised form, and their size in bytes.
  const cases = spec.cases.map((c) => ({ id: c.id, program: c.program, input: c.input, sha: sha256Hex(normaliseOutput(c.expected)), size: utf8(c.expected).length }));
  const data = { programs: spec.programs, cases, timeout: spec.caseTimeoutS, budget: spec.budgetS, excerpt: EXCERPT_CHARS, cap: OUTPUT_CAP_BYTES };
  return HARNESS_PY.replace(SPEC_PLACEHOLDER, () => pythonJsonLiteral(data));
}

const caseResultSchema = z.object({
  id: z.string(),
  status: z.enum(['pass', 'wrong', 'error', 'timeout', 'skipped', 'oversize']),
  seconds: z.number(),
  excerpt: z.string(),
});
const reportSchema = z.union([
  z.object({ harness: z.literal(HARNESS_TAG), cases: z.array(caseResultSchema) }),
  z.object({ harness: z.literal(HARNESS_TAG), error: z.string() }),
]);

export type HarnessReading = { ok: true; cases: CaseResult[] } | { ok: false; reason: string };

/**
 * The results of a harness run, checked against the case ids it was built with (same ids, same
 * order). Any other output (no report, a malformed one, the harness's own error) is a failure.
 * Never throws.
 */
export function readHarnessReport(stdout: unknown, ids: readonly string[]): HarnessReading {
  if (typeof stdout !== 'string') return { ok: false, reason: 'no output' };
  const lines = stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const last = lines[lines.length - 1];
  if (last === undefined) return { ok: false, reason: 'no report' };
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch {
    return { ok: false, reason: 'malformed report (not JSON)' };
  }
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) return { ok: false, reason: 'malformed report' };
  if ('error' in parsed.data) return { ok: false, reason: `harness error: ${parsed.data.error}` };
  const cases = parsed.data.cases;
  if (cases.length !== ids.length || cases.some((c, i) => c.id !== ids[i])) return { ok: false, reason: 'report does not match the cases' };
  return { ok: true, cases };
}
