// The problem of an episode: a row of the loaded problem list, or a generated problem. Pure.
import { GENERATOR_TEMPLATES, generateProblem } from './generate.js';
import type { EpisodeProblem, MathProblem, ProblemSource } from './types.js';

/** Default max turns of both math environments (the reference's 4). */
export const DEFAULT_MATH_MAX_TURNS = 4;

/** Longest question kept in a state (characters); a longer one is cut. */
const MAX_QUESTION_CHARS = 8000;

/**
 * The problem for a seed: problems[seed mod problems.length] (non-negative modulo, so every
 * integer seed has one) when options.problems is a non-empty list, else generateProblem(seed).
 * Fields of a loaded row that are not strings are converted with String(); never throws.
 */
export function problemFor(seed: number, options: ProblemSource | undefined): EpisodeProblem {
  const s = Number.isFinite(seed) ? Math.trunc(seed) : 0;
  const problems = Array.isArray(options?.problems) ? options.problems : [];
  if (problems.length > 0) {
    const n = problems.length;
    const row = (problems[((s % n) + n) % n] ?? {}) as Partial<MathProblem>;
    return {
      id: String(row.id ?? `row-${((s % n) + n) % n}`),
      question: String(row.question ?? '').slice(0, MAX_QUESTION_CHARS),
      answer: String(row.answer ?? ''),
      source: 'given',
      template: null,
    };
  }
  const g = generateProblem(s, options?.templates);
  return { id: g.id, question: g.question, answer: g.answer, source: 'generated', template: g.template };
}

/** The turn limit of an option (a positive integer), else the default. */
export function maxTurnsOf(maxTurns: unknown): number {
  return typeof maxTurns === 'number' && Number.isInteger(maxTurns) && maxTurns >= 1 ? maxTurns : DEFAULT_MATH_MAX_TURNS;
}

/** Problems with a math environment's options that the config schema cannot see; [] when fine. */
export function mathOptionIssues(options: ProblemSource & { maxTurns?: unknown }): string[] {
  const issues: string[] = [];
  if (options.problems !== undefined) {
    if (!Array.isArray(options.problems)) issues.push('problems must be a list of {id, question, answer}');
    else if (options.problems.length === 0) issues.push('problems is an empty list (leave it unset to use the generator)');
    else {
      const bad = options.problems
        .map((row, i) => [row, i] as const)
        .filter(([row]) => !row || typeof row.question !== 'string' || row.question.trim() === '' || typeof row.answer !== 'string' || row.answer.trim() === '')
        .map(([, i]) => i);
      if (bad.length > 0) issues.push(`problems rows without a question or an answer: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? `, ... (${bad.length} in all)` : ''}`);
    }
  }
  if (options.templates !== undefined) {
    const unknown = (options.templates ?? []).filter((t) => !GENERATOR_TEMPLATES.includes(t));
    if (unknown.length > 0) issues.push(`unknown generator templates: ${unknown.join(', ')} (known: ${GENERATOR_TEMPLATES.join(', ')})`);
    if ((options.templates ?? []).length === 0) issues.push('templates is an empty list (leave it unset for all)');
  }
  if (options.maxTurns !== undefined && maxTurnsOf(options.maxTurns) !== options.maxTurns) issues.push('maxTurns must be an integer >= 1');
  return issues;
}
