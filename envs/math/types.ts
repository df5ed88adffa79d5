// Types shared by the math environments (math: tool + reasoning agents; mathrefine: generator,
// evaluator, refiner). Pure types.

/** A math problem as the data loader supplies it (or the generator makes it). */
export interface MathProblem {
  id: string;
  question: string;
  /** The reference answer, compared with envs/answers (answersEqual). */
  answer: string;
}

/** Where an episode's problem comes from; part of both math environments' options. */
export interface ProblemSource {
  /**
   * Rows loaded by the data loader: episode seed s plays problems[s mod problems.length]
   * (non-negative modulo). Unset or empty: the seeded generator (generate.ts) makes the problem.
   */
  problems?: readonly MathProblem[];
  /** Generator only: the templates to draw from (default: all of GENERATOR_TEMPLATES). */
  templates?: readonly string[];
}

/** The problem of an episode, as its state keeps it. */
export interface EpisodeProblem extends MathProblem {
  /** 'given': from options.problems; 'generated': made by the generator from the seed. */
  source: 'given' | 'generated';
  /** The generator's template (generated problems only). */
  template: string | null;
}
