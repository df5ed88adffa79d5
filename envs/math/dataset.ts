// Math problem sets (math and math_refine): a file's rows, each with a question and a reference
// answer, mapped to MathProblem. Pure: infra/data reads the file.
//
// Field names accepted (the first one present and non-empty wins):
//   question: question | problem | Problem | prompt | input | query
//             (prompt may be a chat list, as in DAPO-Math-17k: the last user message is used)
//   answer:   answer | Answer | final_answer (OlympiadBench: a list, joined with ", ")
//             | reward_model.ground_truth (DAPO-Math-17k) | ground_truth | target
//             | solution (MATH: the content of its last \boxed{...})
//   id:       id | unique_id | problem_id | idx | ID; else "<file name>:<line>" / "<file name>#<row>"
// An answer taken from `answer` that holds "####" (GSM8K: reasoning then "#### 72") keeps only
// what follows the last "####". Numbers are written in decimal. A row without a question or an
// answer is a bad row.
import { z } from 'zod';
import { extractBoxed } from '../answers/index.js';
import { fallbackId, zodReason, type RowLocation, type RowResult } from '../shared/rows.js';
import type { MathProblem } from './types.js';

const scalar = z.union([z.string(), z.number(), z.bigint()]).transform((v) => String(v).trim());
const chatMessage = z.object({ role: z.string(), content: z.string() });

/** The question fields, in order of preference. */
export const QUESTION_FIELDS = ['question', 'problem', 'Problem', 'prompt', 'input', 'query'] as const;
/** The answer fields, in order of preference ("reward_model.ground_truth" is nested). */
export const ANSWER_FIELDS = ['answer', 'Answer', 'final_answer', 'reward_model.ground_truth', 'ground_truth', 'target', 'solution'] as const;
export const ID_FIELDS = ['id', 'unique_id', 'problem_id', 'idx', 'ID'] as const;

const questionValue = z.union([
  scalar,
  z
    .array(chatMessage)
    .min(1)
    .transform((messages) => (messages.filter((m) => m.role === 'user').pop() ?? messages[messages.length - 1]).content.trim()),
]);
const answerValue = z.union([scalar, z.array(scalar).min(1).transform((parts) => parts.join(', '))]);

function field(row: Record<string, unknown>, name: string): unknown {
  if (!name.includes('.')) return row[name];
  let v: unknown = row;
  for (const part of name.split('.')) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

const present = (v: unknown) => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** A row as a MathProblem (see the field names above). */
export function mathProblemOf(row: Record<string, unknown>, where: RowLocation): RowResult<MathProblem> {
  const qName = QUESTION_FIELDS.find((f) => present(row[f]));
  if (qName === undefined) return { ok: false, reason: `no question (expected one of ${QUESTION_FIELDS.join(', ')})` };
  const q = questionValue.safeParse(row[qName]);
  if (!q.success) return { ok: false, reason: `${qName}: ${zodReason(q.error)}` };
  if (q.data === '') return { ok: false, reason: `${qName}: empty` };

  const aName = ANSWER_FIELDS.find((f) => present(field(row, f)));
  if (aName === undefined) return { ok: false, reason: `no answer (expected one of ${ANSWER_FIELDS.join(', ')})` };
  const a = answerValue.safeParse(field(row, aName));
  if (!a.success) return { ok: false, reason: `${aName}: ${zodReason(a.error)}` };
  let answer = a.data;
  if (aName === 'solution') {
    const boxed = extractBoxed(answer);
    if (boxed === null) return { ok: false, reason: 'solution: no \\boxed{...} answer in it' };
    answer = boxed;
  } else if (answer.includes('####')) {
    answer = answer.slice(answer.lastIndexOf('####') + 4).trim();
  }
  if (answer === '') return { ok: false, reason: `${aName}: empty answer` };

  const idName = ID_FIELDS.find((f) => present(row[f]));
  const id = idName === undefined ? null : scalar.safeParse(row[idName]);
  if (id !== null && !id.success) return { ok: false, reason: `${idName}: ${zodReason(id.error)}` };
  return { ok: true, item: { id: id?.data ?? fallbackId(where), question: q.data, answer } };
}
