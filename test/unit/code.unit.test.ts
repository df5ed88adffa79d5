// The code environment (envs/code): the built-in problems (every golden solution passes its
// tests, run with the system python3 through the real harness), the harness and its report,
// answer parsing, rewards and termination of both roles from hand-written transcripts (scored
// with reports of real harness runs and with hand-made ones), prompts, and the scripted players.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  CODE_AGENTS,
  CODE_DEFAULTS,
  CODE_PROBLEMS,
  CODE_REWARDS,
  HARNESS_TAG,
  code,
  codeProgram,
  extractTestCase,
  formatTestCase,
  harnessLimitsFor,
  newCodeState,
  problemOfSeed,
  pythonJsonLiteral,
  readHarnessReport,
  type CodeProblem,
  type CodeState,
} from '../../envs/code/index.js';
import { normaliseOutput } from '../../envs/code/harness.js';
import { sha256Hex } from '../../envs/code/sha256.js';
import type { ProgramRun } from '../../envs/types.js';

// ---------------------------------------------------------------- helpers

/** Runs a program as the env activity would (python3 -I main.py in a fresh folder), unsandboxed. */
async function runLocal(source: string, timeoutMs = 30_000): Promise<ProgramRun> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-code-test-'));
  try {
    await writeFile(join(dir, 'main.py'), source);
    return await new Promise<ProgramRun>((resolve) => {
      execFile('python3', ['-I', 'main.py'], { cwd: dir, timeout: timeoutMs, maxBuffer: 1 << 24, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        const e = err as (Error & { code?: unknown; killed?: boolean }) | null;
        resolve({ exitCode: e === null ? 0 : typeof e.code === 'number' ? e.code : null, stdout, stderr, timedOut: e?.killed === true });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** program() then a real run then score(), as activities/env.ts does. */
async function play(agent: string, state: CodeState, text: string, alpha = 1) {
  const program = code.program(agent, text, state);
  const run = program === null ? null : await runLocal(program);
  return { run, scored: code.score(agent, state, text, run, alpha) };
}

const py = (body: string) => `Here is my program.\n\n**Code:**\n\`\`\`python\n${body}\n\`\`\`\n`;
const caseText = (input: string, output: string) => `Let me think.\n\n**Test Input:**\n\`\`\`\n${input}\n\`\`\`\n\n**Test Output:**\n\`\`\`\n${output}\n\`\`\`\n\n**Explanation:** easy.`;

/** A small problem of our own for the transcripts: print the sum of the integers of one line. */
const SUM: CodeProblem = {
  id: 'sum-line',
  statement: 'Print the sum of the integers on the only line of the input.',
  tests: [
    { input: '1 2 3\n', output: '6\n' },
    { input: '5\n', output: '5\n' },
    { input: '-1 1\n', output: '0\n' },
    { input: '10 20\n', output: '30\n' },
  ],
  golden: 'print(sum(map(int, input().split())))\n',
};
const GOLDEN = 'print(sum(map(int, input().split())))';
// Wrong on a single number (prints 0): passes 3 of the 4 ground-truth tests (fails "5").
const HALF = 'xs = list(map(int, input().split()))\nprint(sum(xs) if len(xs) > 1 else 0)';

// ---------------------------------------------------------------- the problem set

test('the built-in problem set: at least 40 problems, unique ids, 4-8 tests each', () => {
  assert.ok(CODE_PROBLEMS.length >= 40, `${CODE_PROBLEMS.length} problems`);
  assert.equal(new Set(CODE_PROBLEMS.map((p) => p.id)).size, CODE_PROBLEMS.length);
  for (const p of CODE_PROBLEMS) {
    assert.ok(p.tests.length >= 4 && p.tests.length <= 8, `${p.id}: ${p.tests.length} tests`);
    assert.match(p.statement, /\n\nInput\n[\s\S]*\n\nOutput\n[\s\S]*\n\nExample\n/, p.id);
    assert.ok(p.golden.trim().length > 0, p.id);
    assert.equal(new Set(p.tests.map((t) => t.input)).size, p.tests.length, `${p.id}: repeated test input`);
  }
});

// One python3 process runs every golden solution on every test (a process per case costs ~0.1 s
// here); the harness path itself is exercised on real problems by the transcripts below.
const GOLDEN_CHECK = String.raw`
import contextlib, io, json, re, sys
def norm(s):
    return ' '.join(t for t in re.split(r'[ \t\n\r\f\v]+', s) if t)
failures = []
for p in json.load(sys.stdin):
    prog = compile(p['golden'], p['id'], 'exec')
    for i, t in enumerate(p['tests']):
        out = io.StringIO()
        real_stdin = sys.stdin
        sys.stdin = io.StringIO(t['input'])
        try:
            with contextlib.redirect_stdout(out):
                exec(prog, {'__name__': '__main__'})
        except SystemExit:
            pass
        except BaseException as e:
            failures.append('%s test %d: %s: %s' % (p['id'], i, type(e).__name__, e))
            continue
        finally:
            sys.stdin = real_stdin
        if norm(out.getvalue()) != norm(t['output']):
            failures.append('%s test %d: printed %r, expected %r' % (p['id'], i, out.getvalue()[:200], t['output'][:200]))
print(json.dumps(failures))
`;

test('every golden solution passes every one of its tests (system python3)', async () => {
  const result = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = execFile('python3', ['-c', GOLDEN_CHECK], { timeout: 120_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr })));
    child.stdin!.end(JSON.stringify(CODE_PROBLEMS));
  });
  assert.deepEqual(JSON.parse(result.stdout), []);
});

// ---------------------------------------------------------------- transcripts (real harness runs)

test('transcript: the code generator is rewarded 2 x its ground-truth pass rate; no code is noCode', async () => {
  const s0 = code.reset(0, { problems: [SUM] });
  assert.equal(s0.problem.id, 'sum-line');

  const golden = (await play('code_generator', s0, py(GOLDEN))).scored;
  assert.deepEqual([golden.local, golden.global, golden.reward, golden.done, golden.solved], [2, 1, 3, false, true]);
  assert.equal(golden.outcome, 'passed 4/4 ground-truth tests');

  const half = (await play('code_generator', s0, py(HALF), 0.5)).scored;
  assert.deepEqual([half.local, half.global, half.reward, half.done, half.solved], [1.5, 0, 1.5, false, false]);
  assert.equal(half.nextState.code, HALF);
  assert.equal(half.nextState.passRate, 0.75);
  assert.deepEqual(half.handoff, { code: HALF, passRate: 0.75, generatedPassed: 0, generatedTotal: 0 });

  const crash = (await play('code_generator', s0, py('raise ValueError("boom")'))).scored;
  assert.deepEqual([crash.local, crash.global, crash.solved], [0, 0, false]);
  assert.equal(crash.outcome, 'passed 0/4 ground-truth tests');

  const none = (await play('code_generator', s0, 'I think the answer is to add the numbers.')).scored;
  assert.deepEqual([none.local, none.global, none.reward], [CODE_REWARDS.noCode, 0, CODE_REWARDS.noCode]);
  assert.equal(none.outcome, 'no code block');
  assert.equal(none.nextState.code, null);
  assert.equal(code.program('code_generator', 'no code here', s0), null);
});

test('transcript: two turns, tester rewards and termination when the code passes every generated case', async () => {
  const s0 = code.reset(7, { problems: [SUM] });
  // Turn 0, code_generator: the half-right program (3/4).
  const c0 = (await play('code_generator', s0, py(HALF))).scored;
  const s1 = c0.nextState;

  // Turn 0, test_generator: K candidates from the same state.
  const catches = (await play('test_generator', s1, caseText('7', '7'))).scored; // valid, the program fails it
  assert.deepEqual([catches.local, catches.global, catches.done, catches.solved], [CODE_REWARDS.validTest + 0.75, 0, false, false]);
  assert.equal(catches.outcome, 'valid case, program fails it (wrong)');
  const wrong = (await play('test_generator', s1, caseText('2 2', '5'))).scored; // invalid (golden prints 4)
  assert.deepEqual([wrong.local, wrong.done], [0.75, false]);
  assert.equal(wrong.outcome, 'invalid case (golden solution: wrong), program fails it (wrong)');
  const unreadable = (await play('test_generator', s1, 'The input is 3 and the output is 3.')).scored;
  assert.deepEqual([unreadable.local, unreadable.global, unreadable.done], [CODE_REWARDS.noTest + 0.75, 0, false]);
  assert.deepEqual(unreadable.nextState.tests, []);
  const passes = (await play('test_generator', s1, caseText('4 4', '8'))).scored; // valid, the program passes it
  assert.deepEqual([passes.local, passes.done, passes.solved], [1.75, true, false], 'the reference ends the episode: the code passes all generated tests');
  assert.match(passes.outcome, /program passes all 1 generated cases, episode over/);
  // The reward mixes alpha: local + alpha * global.
  assert.equal((await play('test_generator', s1, caseText('4 4', '8'), 0.3)).scored.reward, 1.75);

  // Continue from the case that catches the bug.
  const s2 = catches.nextState;
  assert.deepEqual(s2.tests, [{ input: '7\n', output: '7\n', valid: true }]);
  assert.deepEqual(
    s2.codeOnTests.map((c) => [c.status, c.excerpt]),
    [['wrong', '0\n']],
  );

  // Turn 1, code_generator: the fix passes the ground truth and the generated case.
  const c1 = (await play('code_generator', s2, py(GOLDEN))).scored;
  assert.deepEqual([c1.local, c1.global, c1.done, c1.solved], [2, 1, false, true], 'the coder never ends the episode');
  assert.equal(c1.outcome, 'passed 4/4 ground-truth tests, 1/1 generated');
  assert.deepEqual(c1.handoff, { code: GOLDEN, passRate: 1, generatedPassed: 1, generatedTotal: 1 });
  const s3 = c1.nextState;

  // Turn 1, test_generator: a valid case the fixed program passes ends the episode, solved.
  const t1 = (await play('test_generator', s3, caseText('1 1', '2'), 0.5)).scored;
  assert.deepEqual([t1.local, t1.global, t1.reward, t1.done, t1.solved], [2, 1, 2.5, true, true]);
  assert.equal(t1.nextState.tests.length, 2);
  assert.deepEqual(
    t1.nextState.history.map((h) => h.agent),
    ['code_generator', 'test_generator', 'code_generator', 'test_generator'],
  );
  // An invalid case that the program fails does not end it.
  const t1bad = (await play('test_generator', s3, caseText('1 1', '3'))).scored;
  assert.deepEqual([t1bad.local, t1bad.done, t1bad.solved], [1, false, true]);
});

test('the harness: per-case and total time limits, errors, output cap, whitespace-insensitive comparison', async () => {
  const s0: CodeState = { ...newCodeState(SUM), caseTimeoutS: 0.5, budgetS: 1.3 };
  const started = Date.now();
  const { run, scored } = await play('code_generator', s0, py('while True:\n    pass'));
  assert.ok(Date.now() - started < 10_000);
  const report = readHarnessReport(run!.stdout, ['truth:0', 'truth:1', 'truth:2', 'truth:3']);
  assert.ok(report.ok);
  // Each case stops at 0.5 s; once the 1.3 s budget is spent, the remaining cases are skipped.
  assert.match(report.cases.map((c) => c.status).join(' '), /^timeout timeout (timeout )?skipped( skipped)?$/);
  assert.equal(scored.local, 0);

  const err = await play('code_generator', newCodeState(SUM), py('import sys\nsys.stdin.read()\nraise ValueError("boom")'));
  const errReport = readHarnessReport(err.run!.stdout, ['truth:0', 'truth:1', 'truth:2', 'truth:3']);
  assert.ok(errReport.ok);
  assert.equal(errReport.cases[0].status, 'error');
  assert.match(errReport.cases[0].excerpt, /^exit 1: [\s\S]*ValueError: boom/);

  const big = await play('code_generator', newCodeState(SUM), py('print("x" * 300000)'));
  const bigReport = readHarnessReport(big.run!.stdout, ['truth:0', 'truth:1', 'truth:2', 'truth:3']);
  assert.ok(bigReport.ok);
  assert.equal(bigReport.cases[0].status, 'oversize');
  assert.ok(bigReport.cases[0].excerpt.length <= 300);

  // Spacing, blank lines and CRLF do not matter; non-ASCII output compares by its UTF-8 text.
  const uni: CodeProblem = {
    id: 'uni',
    statement: 'Print the greeting.',
    tests: [
      { input: '\n', output: 'héllo wörld 😀\n1 2\n' },
      { input: 'x\n', output: 'héllo wörld 😀\n1 2\n' },
    ],
    golden: 'print("héllo wörld 😀")\nprint(1, 2)\n',
  };
  const spaced = await play('code_generator', newCodeState(uni), py('import sys\nsys.stdout.write("  héllo   wörld\\t😀\\r\\n\\n1\\n2  ")'));
  assert.equal(spaced.scored.outcome, 'passed 2/2 ground-truth tests');
});

test('programs under test cannot read the expected outputs from the harness', () => {
  const secret: CodeProblem = { ...SUM, tests: [{ input: '1\n', output: 'EXPECTED-SECRET-OUTPUT-41\n' }] };
  const harness = codeProgram('code_generator', py('print(1)'), newCodeState(secret))!;
  assert.ok(!harness.includes('EXPECTED-SECRET-OUTPUT'));
  assert.ok(harness.includes(sha256Hex(normaliseOutput('EXPECTED-SECRET-OUTPUT-41\n'))));
  // The coder's harness holds no golden solution either.
  assert.ok(!harness.includes(JSON.stringify(GOLDEN).slice(1, -1)));
});

test('pythonJsonLiteral: any text survives the trip into the Python harness', async () => {
  const value = {
    s: 'quotes \' " """ \'\'\' back\\slash \\n tab\t nul\u0000 bell\u0007 del\u007f',
    u: 'é 世界 😀 \u2028 \u2029 \ufeff',
    lone: 'x\ud800y',
    n: [1, 2.5, -3],
  };
  const run = await runLocal(`import json\nprint(json.dumps(json.loads(${pythonJsonLiteral(value)})))\n`);
  assert.equal(run.exitCode, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), value);
  assert.match(pythonJsonLiteral(value), /^"[\x20-\x7e]*"$/, 'ASCII only');
});

test('normaliseOutput and sha256Hex agree with Python', async () => {
  const samples = ['6\n', ' 1  2\t3\r\n\n', '', 'héllo 😀', '\u00a0x'];
  const run = await runLocal(
    `import hashlib, json, re\nfor s in json.loads(${pythonJsonLiteral(samples)}):\n    t = ' '.join(x for x in re.split(r'[ \\t\\n\\r\\f\\v]+', s) if x)\n    print(hashlib.sha256(t.encode('utf-8')).hexdigest())\n`,
  );
  assert.deepEqual(
    run.stdout.trim().split('\n'),
    samples.map((s) => sha256Hex(normaliseOutput(s))),
  );
  assert.equal(normaliseOutput(' 1  2\t3\r\n\n'), '1 2 3');
});

// ---------------------------------------------------------------- hand-made reports

function report(cases: [string, string, string?][]): ProgramRun {
  const body = { harness: HARNESS_TAG, cases: cases.map(([id, status, excerpt]) => ({ id, status, seconds: 0.01, excerpt: excerpt ?? '' })) };
  return { exitCode: 0, stdout: `${JSON.stringify(body)}\n`, stderr: '', timedOut: false };
}
const truthIds = (state: CodeState) => state.problem.tests.map((_, i) => `truth:${i}`);

test('hand-made reports: statuses map to pass rates; a missing or malformed report is an execution failure', () => {
  const s0 = newCodeState(SUM);
  const text = py(HALF);
  const mixed = code.score('code_generator', s0, text, report([['truth:0', 'pass'], ['truth:1', 'wrong'], ['truth:2', 'timeout'], ['truth:3', 'pass']]), 1);
  assert.deepEqual([mixed.local, mixed.global, mixed.solved], [1, 0, false]);

  const failures: [string, ProgramRun | null, RegExp][] = [
    ['not run', null, /execution failure: not run/],
    ['empty output', { exitCode: 0, stdout: '', stderr: '', timedOut: false }, /execution failure: no report/],
    ['not JSON', { exitCode: 1, stdout: 'Traceback ...\n', stderr: '', timedOut: false }, /malformed report \(not JSON\)/],
    ['wrong tag', { exitCode: 0, stdout: '{"harness": "other", "cases": []}\n', stderr: '', timedOut: false }, /malformed report/],
    ['harness error', { exitCode: 0, stdout: `{"harness": "${HARNESS_TAG}", "error": "OSError: disk full"}\n`, stderr: '', timedOut: false }, /harness error: OSError: disk full/],
    ['ids differ', report([['truth:0', 'pass']]), /report does not match the cases/],
    ['killed', { exitCode: null, stdout: '', stderr: '', timedOut: true }, /execution failure: timed out \(no report\)/],
    ['bad status', report(truthIds(s0).map((id) => [id, 'great'])), /malformed report/],
  ];
  for (const [name, run, outcome] of failures) {
    const r = code.score('code_generator', s0, text, run, 1);
    assert.deepEqual([r.local, r.global, r.done, r.solved], [0, 0, false, false], name);
    assert.match(r.outcome, outcome, name);
    assert.equal(r.nextState.passRate, 0, name);
  }
  // The report is the last line of stdout: lines before it are ignored.
  const noisy = report(truthIds(s0).map((id) => [id, 'pass']));
  const r = code.score('code_generator', s0, text, { ...noisy, stdout: `warning: something\n${noisy.stdout}` }, 1);
  assert.equal(r.local, 2);
});

test('hand-made reports for the test generator: validity, the coder term, termination with an invalid case', () => {
  const s0 = newCodeState(SUM);
  const s1 = code.score('code_generator', s0, py(HALF), report([['truth:0', 'pass'], ['truth:1', 'wrong'], ['truth:2', 'pass'], ['truth:3', 'pass']]), 1).nextState;
  const text = caseText('3', '4');
  const invalidPassing = code.score('test_generator', s1, text, report([['golden', 'wrong'], ['code', 'pass']]), 1);
  // The reference ends the episode when the code passes every generated case, valid or not.
  assert.deepEqual([invalidPassing.local, invalidPassing.global, invalidPassing.done, invalidPassing.solved], [0.75, 0, true, false]);
  const failure = code.score('test_generator', s1, text, { exitCode: null, stdout: '', stderr: '', timedOut: true }, 1);
  assert.deepEqual([failure.local, failure.done], [0.75, false]);
  assert.deepEqual(failure.nextState.tests, [], 'a case that could not be run is not kept');
  assert.match(failure.outcome, /^execution failure/);

  // No program yet (the tester acts first): only the golden solution runs; no termination.
  const harness = code.program('test_generator', text, s0)!;
  assert.ok(harness.includes('\\"id\\":\\"golden\\"') && !harness.includes('\\"id\\":\\"code\\"'));
  const first = code.score('test_generator', s0, text, report([['golden', 'pass']]), 1);
  assert.deepEqual([first.local, first.global, first.done], [1, 0, false]);
  assert.deepEqual(first.nextState.codeOnTests, []);
});

test('score never throws, whatever the text, and unknown agents score 0', () => {
  const s0 = newCodeState(SUM);
  for (const agent of [...CODE_AGENTS, 'plan_agent']) {
    for (const text of ['', '```', '```python\n```', '**Test Input:**\n```\n', 42 as unknown as string, null as unknown as string]) {
      const r = code.score(agent, s0, text, null, 1);
      assert.equal(typeof r.reward, 'number');
    }
  }
  const other = code.score('plan_agent', s0, py(GOLDEN), null, 1);
  assert.deepEqual([other.local, other.global, other.nextState], [0, 0, s0]);
  assert.equal(code.program('plan_agent', py(GOLDEN), s0), null);
});

// ---------------------------------------------------------------- parsing, prompts, reset, scripted

test('extractTestCase: the documented format, lenient labels, the last complete pair', () => {
  assert.deepEqual(extractTestCase(caseText('3\n1 2 3', '6')), { input: '3\n1 2 3\n', output: '6\n' });
  assert.deepEqual(extractTestCase('Test Input:\n```text\n5\n```\nTest Output:\n```\n25\n```'), { input: '5\n', output: '25\n' });
  assert.deepEqual(extractTestCase('**Input:**\n\n```\n1\n```\n\n**Expected Output:**\n```\n1\n```'), { input: '1\n', output: '1\n' });
  assert.deepEqual(extractTestCase(`${caseText('1', '1')}\nOn second thought:\n${caseText('2', '4')}`), { input: '2\n', output: '4\n' });
  assert.deepEqual(extractTestCase('**Test Input:**\n```\n\n```\n**Test Output:**\n```\n0\n```'), { input: '\n', output: '0\n' });
  assert.equal(extractTestCase('**Test Input:**\n```\n1\n```\nno output given'), null);
  assert.equal(extractTestCase('**Test Input:** 5\n**Test Output:** 25'), null, 'fences are required');
  assert.equal(extractTestCase('**Test Input:**\n```\n1\n```\n**Test Input:**\n```\n2\n```'), null);
  assert.equal(extractTestCase(undefined), null);
  // The scripted tester's format reads back.
  for (const p of CODE_PROBLEMS) {
    for (const t of p.tests) {
      const back = extractTestCase(formatTestCase(t));
      assert.ok(back !== null, p.id);
      assert.equal(back.input, t.input.endsWith('\n') ? t.input : `${t.input}\n`, p.id);
      assert.equal(normaliseOutput(back.output), normaliseOutput(t.output), p.id);
    }
  }
});

test('prompts: the statement, the team program and generated cases; never the golden solution or hidden tests', async () => {
  const s0 = code.reset(0, { problems: [SUM] });
  const c0 = code.prompt('code_generator', { state: s0, turn: 0, handoff: undefined });
  assert.equal(c0[0].role, 'system');
  assert.match(c0[0].content, /```python/);
  assert.match(c0[1].content, /Print the sum of the integers/);
  assert.match(c0[1].content, /Write the program now/);
  const s1 = code.score('code_generator', s0, py(HALF), report([['truth:0', 'pass'], ['truth:1', 'wrong'], ['truth:2', 'pass'], ['truth:3', 'pass']]), 1).nextState;
  const t0 = code.prompt('test_generator', { state: s1, turn: 0, handoff: undefined });
  assert.match(t0[0].content, /\*\*Test Input:\*\*/);
  assert.ok(t0[1].content.includes(HALF));
  const s2 = code.score('test_generator', s1, caseText('7', '7'), report([['golden', 'pass'], ['code', 'wrong', '0\n']]), 1).nextState;
  const c1 = code.prompt('code_generator', { state: s2, turn: 1, handoff: undefined });
  assert.ok(c1[1].content.includes(HALF));
  assert.match(c1[1].content, /Test case 1:\nInput:\n```\n7\n```/);
  assert.match(c1[1].content, /Current program: failed, the program printed:\n```\n0\n```/);
  const t1 = code.prompt('test_generator', { state: s2, turn: 1, handoff: undefined });
  assert.match(t1[1].content, /Write a NEW test case/);
  for (const m of [...c0, ...t0, ...c1, ...t1]) {
    assert.ok(!m.content.includes(SUM.golden.trim()), 'no golden solution');
    assert.ok(!m.content.includes('-1 1'), 'no hidden test input');
    assert.ok(!/\bvalid\b/.test(m.content), 'no validity verdicts');
  }
});

test('reset: problems[seed mod n], the built-in set by default, harness limits from the options', () => {
  const problems = [SUM, { ...SUM, id: 'b' }, { ...SUM, id: 'c' }];
  assert.equal(code.reset(4, { problems }).problem.id, 'b');
  assert.equal(code.reset(-1, { problems }).problem.id, 'c');
  assert.equal(problemOfSeed(1_000_000_002, problems).id, problems[1_000_000_002 % 3].id);
  const s = code.reset(3, {});
  assert.equal(s.problem.id, CODE_PROBLEMS[3].id);
  assert.deepEqual([s.caseTimeoutS, s.budgetS], [CODE_DEFAULTS.caseTimeoutS, CODE_DEFAULTS.budgetS]);
  assert.deepEqual([s.code, s.passRate, s.tests, s.codeOnTests, s.history, s.done, s.solved], [null, 0, [], [], [], false, false]);
  const t = code.reset(0, { problems, caseTimeoutS: 1, budgetS: 3 });
  assert.deepEqual([t.caseTimeoutS, t.budgetS], [1, 3]);
  assert.throws(() => code.reset(0, { problems: [] }), /no problems/);
  assert.deepEqual(harnessLimitsFor(5), { caseTimeoutS: 2, budgetS: 4 });
  assert.deepEqual(harnessLimitsFor(20), { caseTimeoutS: 2, budgetS: 19 });
  assert.deepEqual(harnessLimitsFor(1), { caseTimeoutS: 0.5, budgetS: 0.5 });
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s, 'JSON-serialisable');
});

test('scripted players: the golden solution, then a hidden case; the episode ends solved in the first turn', async () => {
  for (const seed of [0, 14, 40]) {
    let state = code.reset(seed, {});
    let handoff: unknown;
    const rewards: number[] = [];
    let done = false;
    for (const agent of CODE_AGENTS) {
      const text = code.scripted!(agent, { state, turn: 0, handoff });
      const { scored } = await play(agent, state, text);
      rewards.push(scored.local);
      state = scored.nextState;
      handoff = scored.handoff;
      done = scored.done;
    }
    assert.deepEqual(rewards, [2, 2], state.problem.id);
    assert.ok(done && state.solved, state.problem.id);
    assert.deepEqual(state.tests[0], { ...state.problem.tests[0], input: state.problem.tests[0].input, valid: true });
  }
  // A later turn's scripted case is the next hidden test.
  const s = { ...newCodeState(SUM), tests: [{ ...SUM.tests[0], valid: true }] };
  assert.deepEqual(extractTestCase(code.scripted!('test_generator', { state: s, turn: 1, handoff: undefined })), SUM.tests[1]);
});
