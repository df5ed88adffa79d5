// Types of the code environment (code_generator then test_generator). Pure: no I/O.

/** One input/output test case: the program reads `input` on stdin and must print `output`. */
export interface CodeTest {
  input: string;
  output: string;
}

/** A programming problem: a statement, hidden ground-truth tests and a golden Python solution. */
export interface CodeProblem {
  id: string;
  statement: string;
  /** The hidden ground-truth tests (never shown to the agents). */
  tests: CodeTest[];
  /** A Python 3 program that passes every test (judges the test generator's cases). */
  golden: string;
}

/** A test case written by the test generator, with what running it showed. */
export interface GeneratedTest extends CodeTest {
  /** The golden solution prints `output` for `input` (the case is correct). */
  valid: boolean;
}

/** How one program did on one case (see harness.ts for the statuses). */
export type CaseStatus = 'pass' | 'wrong' | 'error' | 'timeout' | 'skipped' | 'oversize';

/** The latest code's result on one generated test (the index is the test's). */
export interface CodeOnTest {
  status: CaseStatus;
  /** The start of what the code printed (or of its error), shown in later prompts. */
  excerpt: string;
}

export type CodeHistoryEntry =
  | {
      agent: 'code_generator';
      /** null: the answer had no code. */
      code: string | null;
      /** Pass rate on the ground-truth tests. */
      passRate: number;
      /** Generated tests passed / run when the code was written. */
      generatedPassed: number;
      generatedTotal: number;
      outcome: string;
    }
  | {
      agent: 'test_generator';
      /** null: no readable test case in the answer. */
      test: CodeTest | null;
      valid: boolean;
      /** The current code passed the case (null when there was no code or no case). */
      codePassed: boolean | null;
      outcome: string;
    };

export interface CodeState {
  problem: CodeProblem;
  /** Limits of the scoring harness (copied from the options). */
  caseTimeoutS: number;
  budgetS: number;
  /** The latest code of the code generator (null before it has written any). */
  code: string | null;
  /** That code's pass rate on the ground-truth tests (0 when there is no code). */
  passRate: number;
  /** The test cases written so far, in order. */
  tests: GeneratedTest[];
  /** The latest code's result on each of `tests` (same length; empty when there is no code). */
  codeOnTests: CodeOnTest[];
  history: CodeHistoryEntry[];
  done: boolean;
  /** The latest code passes every ground-truth test. */
  solved: boolean;
}

export interface CodeOptions {
  /** The problem set; problem = problems[seed mod length]. Default: the built-in CODE_PROBLEMS. */
  problems?: readonly CodeProblem[];
  /** Time limit of one program on one case, in seconds (default 2). */
  caseTimeoutS?: number;
  /**
   * Time budget of one harness run, in seconds (default 4): cases that would start after it are
   * not run ("skipped", counted as failed). Keep it below env.code_timeout_s, the outer limit.
   */
  budgetS?: number;
}
