// Reading the evaluator's verdict. Pure; never throws.
import { extractBoxed } from '../answers/extract.js';

export type Verdict = 'correct' | 'incorrect';

// "Verdict: Correct", "**Verdict:** Incorrect", "VERDICT = correct", "Verdict - the solution is
// not correct", "Final verdict: [Incorrect]". Bounded quantifiers keep matching linear.
const LABELLED =
  /verdict(?:\*\*|__|\s){0,8}[:=\-\u2013]?(?:\*\*|__|["'`[(]|\s){0,8}(?:(?:the\s{1,3})?(?:solution|answer)\s{1,3})?(?:is\s{1,3})?(not\s{1,3}correct|incorrect|correct|wrong|right)\b/gi;
// A template echoed rather than filled in: "Correct|Incorrect", "Correct / Incorrect", "Correct or Incorrect".
const ALTERNATIVE = /^\s*(?:\*\*)?\s*(?:\||\/|\bor\b)\s*(?:\*\*)?\s*(?:in)?correct/i;

function verdictWord(word: string): Verdict | null {
  const w = word.toLowerCase().replace(/\s+/g, ' ').trim();
  if (w === 'correct' || w === 'right') return 'correct';
  if (w === 'incorrect' || w === 'wrong' || w === 'not correct') return 'incorrect';
  return null;
}

/**
 * The verdict of an evaluator's answer: the last "Verdict: Correct|Incorrect" (many spellings,
 * see LABELLED; "wrong" and "not correct" count as Incorrect, "right" as Correct); else a
 * \boxed{Correct} or \boxed{Incorrect} (the public three-role implementation's form); else a last
 * line that is only the word. null when there is none, or when the label is followed by both
 * words (an echoed template).
 */
export function parseVerdict(text: unknown): Verdict | null {
  if (typeof text !== 'string') return null;
  let found: Verdict | null = null;
  for (const m of text.matchAll(LABELLED)) {
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 20);
    if (ALTERNATIVE.test(after)) continue;
    found = verdictWord(m[1]);
  }
  if (found) return found;
  const boxed = extractBoxed(text);
  if (boxed !== null) {
    const word = boxed.replace(/\\text\s*\{([^{}]*)\}/g, '$1').replace(/[^A-Za-z ]/g, '').trim();
    const v = verdictWord(word);
    if (v) return v;
  }
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const last = lines[lines.length - 1];
  if (last !== undefined && last.length <= 40) {
    const word = last.replace(/[*_`.!"'#>\-]/g, '').trim();
    return verdictWord(word);
  }
  return null;
}
