// Finding the final answer in a model's text or a program's output. Every function takes any
// value and never throws; scans are linear in the text. Pure: no I/O.

/** Longest answer returned (characters); a longer one is cut. */
export const MAX_ANSWER_CHARS = 1000;

/** The content of the braces opening at `open` (text[open] === '{'), nested braces included; null if never closed. */
export function bracedContent(text: string, open: number): string | null {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === '{' || text[i + 1] === '}')) {
      i++; // an escaped brace (\{ \}) does not open or close a group
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  return null;
}

const BOXED = /\\(?:boxed|fbox)\b/g;

/** For each '{' of the text, the index of its closing '}' (-1 when never closed); escaped braces are skipped. One pass. */
function closingBraces(text: string): Map<number, number> {
  const close = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === '{' || text[i + 1] === '}')) {
      i++;
      continue;
    }
    if (c === '{') open.push(i);
    else if (c === '}' && open.length > 0) close.set(open.pop()!, i);
  }
  for (const i of open) close.set(i, -1);
  return close;
}

/**
 * The content of the last \boxed{...} (or \fbox{...}) that is closed, nested braces included;
 * "\boxed 5" (no braces) gives "5". null when there is none. Linear in the text.
 */
export function extractBoxed(text: string): string | null {
  if (typeof text !== 'string') return null;
  const starts = [...text.matchAll(BOXED)].map((m) => m.index + m[0].length);
  if (starts.length === 0) return null;
  let closing: Map<number, number> | null = null;
  for (let k = starts.length - 1; k >= 0; k--) {
    let i = starts[k];
    while (text[i] === ' ') i++;
    if (text[i] === '{') {
      closing ??= closingBraces(text);
      const end = closing.get(i) ?? -1;
      if (end >= 0) return cap(text.slice(i + 1, end).trim());
    } else {
      const m = /^[^\s$]+/.exec(text.slice(i, i + MAX_ANSWER_CHARS));
      if (m) return cap(m[0]);
    }
  }
  return null;
}

// "The answer is", "the final answer is", "Final Answer:", "answer =".
const ANSWER_PHRASE = /(?:final\s+answer|the\s+answer|\banswer)\s*(?:is\b\s*:?|:|=)\s*/gi;

/** Markup around an answer on its line: emphasis, $ delimiters, backticks, a trailing full stop. */
function trimAnswerLine(line: string): string {
  let s = line.trim();
  for (let i = 0; i < 4; i++) {
    const before = s;
    s = s
      .replace(/^(?:\*\*|__|`+|\$+|\\\(|\\\[)\s*/, '')
      .replace(/\s*(?:\*\*|__|`+|\$+|\\\)|\\\])$/, '')
      .replace(/\s*\.$/, '')
      .trim();
    if (s === before) break;
  }
  return s;
}

/** The rest of the line from `start`, at most 2 * MAX_ANSWER_CHARS characters. */
function restOfLine(text: string, start: number): string {
  const end = text.indexOf('\n', start);
  return text.slice(start, Math.min(end < 0 ? text.length : end, start + 2 * MAX_ANSWER_CHARS));
}

/**
 * The final answer of a solution: the last closed \boxed{...}; else the rest of the line after
 * the last "####"; else after the last "The answer is" (or "Final answer:"). Markup around it
 * (**, $, a full stop) is removed. null when there is none or it is empty. Only a marked answer:
 * extractFinalAnswer (final.ts) also takes an unmarked one, as math_verify does.
 */
export function extractAnswer(text: string): string | null {
  if (typeof text !== 'string') return null;
  const boxed = extractBoxed(text);
  if (boxed !== null && boxed !== '') return boxed;
  const hashes = text.lastIndexOf('####');
  if (hashes >= 0) {
    const answer = trimAnswerLine(restOfLine(text, hashes + 4));
    if (answer !== '') return cap(answer);
  }
  let phraseEnd = -1;
  for (const m of text.matchAll(ANSWER_PHRASE)) phraseEnd = m.index + m[0].length;
  if (phraseEnd >= 0) {
    // Up to the end of the line or of the sentence (". " not inside a number).
    let line = restOfLine(text, phraseEnd);
    const stop = /\.\s+(?=[A-Z])/.exec(line);
    if (stop) line = line.slice(0, stop.index);
    const answer = trimAnswerLine(line);
    if (answer !== '') return cap(answer);
  }
  return null;
}

/**
 * The answer a program printed: an answer marked as in extractAnswer when there is one, else the
 * last non-empty line of the output, taken after its last ":" or "=" when it has one
 * ("x = 5", "Total: 42" give "5", "42"). null for empty output.
 */
export function extractOutputAnswer(stdout: string): string | null {
  if (typeof stdout !== 'string') return null;
  const marked = extractAnswer(stdout);
  if (marked !== null) return marked;
  const lines = stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (lines.length === 0) return null;
  let last = lines[lines.length - 1].slice(-2 * MAX_ANSWER_CHARS);
  const cut = Math.max(last.lastIndexOf(':'), last.lastIndexOf('='));
  if (cut >= 0 && cut < last.length - 1 && !/[<>!]$/.test(last.slice(0, cut))) last = last.slice(cut + 1).trim();
  const answer = trimAnswerLine(last);
  return answer === '' ? null : cap(answer);
}

function cap(s: string): string {
  return s.length > MAX_ANSWER_CHARS ? s.slice(0, MAX_ANSWER_CHARS) : s;
}
