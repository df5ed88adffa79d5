// The scoring harness of the code environment: one self-contained Python program that runs
// programs on test cases, each in its own subprocess with a time limit, and prints ONE JSON
// report on stdout. The environment builds it (program()) and reads its report (score()).
// Pure: no I/O.
//
// Inside the harness, for each case in order:
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

const PYTHON = String.raw`# Tandem code-environment harness: runs each case in a subprocess, prints one JSON report.
import hashlib, json, os, re, signal, subprocess, sys, tempfile, time

SPEC = json.loads(__SPEC__)
TAG = 'tandem-code/1'
EXCERPT = __EXCERPT__
CAP = __CAP__


def private():
    # Not dumpable: programs of the same user can no longer open /proc/<harness>/fd or mem.
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def text(data):
    return data.decode('utf-8', 'replace')


def digest(out):
    tokens = [t for t in re.split(r'[ \t\n\r\f\v]+', text(out)) if t]
    return hashlib.sha256(' '.join(tokens).encode('utf-8', 'replace')).hexdigest()


def remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def run_case(case, work, timeout):
    prog = os.path.join(work, 'prog.py')
    out_path = os.path.join(work, 'stdout')
    err_path = os.path.join(work, 'stderr')
    started = time.monotonic()
    timed_out = False
    code = None
    try:
        with open(prog, 'w', encoding='utf-8', errors='replace') as f:
            f.write(SPEC['programs'][case['program']])
        with open(out_path, 'wb') as out, open(err_path, 'wb') as err:
            proc = subprocess.Popen([sys.executable or 'python3', '-I', prog], cwd=work, stdin=subprocess.PIPE,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                proc.communicate(case['input'].encode('utf-8', 'replace'), timeout=timeout)
                code = proc.returncode
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
        seconds = round(time.monotonic() - started, 3)
        cap = max(CAP, 2 * case['size'] + 1024)
        with open(out_path, 'rb') as f:
            out = f.read(cap + 1)
        with open(err_path, 'rb') as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4 * EXCERPT))
            err = text(f.read())
    finally:
        for path in (prog, out_path, err_path):
            remove(path)
    if timed_out:
        status = 'timeout'
    elif len(out) > cap:
        status = 'oversize'
    elif code != 0:
        status = 'error'
    elif digest(out) == case['sha']:
        status = 'pass'
    else:
        status = 'wrong'
    excerpt = ('exit %s: %s' % (code, err[-EXCERPT:])) if status == 'error' else text(out[:4 * EXCERPT])[:EXCERPT]
    return {'id': case['id'], 'status': status, 'seconds': seconds, 'excerpt': excerpt}


def main():
    start = time.monotonic()
    private()
    work = tempfile.mkdtemp(prefix='cases-', dir=os.getcwd())
    results = []
    for case in SPEC['cases']:
        left = SPEC['budget'] - (time.monotonic() - start)
        if left < 0.05:
            results.append({'id': case['id'], 'status': 'skipped', 'seconds': 0, 'excerpt': ''})
            continue
        try:
            results.append(run_case(case, work, min(SPEC['timeout'], left)))
        except Exception as e:
            results.append({'id': case['id'], 'status': 'error', 'seconds': 0,
                            'excerpt': ('harness: %s: %s' % (type(e).__name__, e))[:EXCERPT]})
    return results


try:
    report = {'harness': TAG, 'cases': main()}
except BaseException as e:
    report = {'harness': TAG, 'error': ('%s: %s' % (type(e).__name__, e))[:EXCERPT]}
sys.stdout.write(json.dumps(report) + '\n')
`;

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
  const data = { programs: spec.programs, cases, timeout: spec.caseTimeoutS, budget: spec.budgetS };
  return PYTHON.replace('__SPEC__', () => pythonJsonLiteral(data))
    .replace('__EXCERPT__', String(EXCERPT_CHARS))
    .replace('__CAP__', String(OUTPUT_CAP_BYTES));
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
