// Reading model answers: the tool agent's Python code, and the text after an answer's anchor
// ("####" for the plan agent, "**Actions List**:" in the tool agent's output). Every function
// here takes any value and never throws. Pure: no I/O.

// A closed fenced block: info string on the opening line, then the body.
const FENCED_BLOCK = /```([^\n`]*)\n([\s\S]*?)```/g;
const PYTHON_TAG = /^(python3?|py)$/i;
// A ```python fence that is never closed (the generation hit its length limit).
const OPEN_PYTHON_BLOCK = /```(?:python3?|py)[ \t]*\n([\s\S]*)$/i;

/**
 * The code of the last ```python block, else of the last untagged ``` block, else of an
 * unclosed ```python block at the end; null when there is none or it is empty.
 */
export function extractCode(text: string): string | null {
  if (typeof text !== 'string') return null;
  let python: string | null = null;
  let untagged: string | null = null;
  let closedEnd = 0;
  for (const m of text.matchAll(FENCED_BLOCK)) {
    closedEnd = m.index + m[0].length;
    const tag = m[1].trim().split(/\s+/)[0];
    const body = m[2].trim();
    if (body === '') continue;
    if (PYTHON_TAG.test(tag)) python = body;
    else if (tag === '') untagged = body;
  }
  const found = python ?? untagged;
  if (found !== null) return found;
  const open = OPEN_PYTHON_BLOCK.exec(text.slice(closedEnd));
  const body = open?.[1].trim();
  return body ? body : null;
}

// "**Actions List**:" and looser spellings ("Actions List:", "actions list **:"). One
// quantifier after "list" keeps matching linear on long runs of spaces.
const ACTIONS_LABEL = /actions\s*list[\s*]*:/gi;
// Markdown between an anchor and its answer: whitespace, emphasis, code fences.
const LEADING_MARKUP = /^(?:\s|\*|```[A-Za-z]*|`)+/;

/**
 * The answer part of a text: what follows the last "####" (a plan answer) or, when there is
 * none, the last "**Actions List**:" (a tool agent's output), with leading whitespace, emphasis
 * and code fences removed. null when the text has neither anchor.
 */
export function textAfterAnchor(text: string): string | null {
  if (typeof text !== 'string') return null;
  const hashes = text.lastIndexOf('####');
  let start = hashes >= 0 ? hashes + 4 : -1;
  if (start < 0) {
    for (const m of text.matchAll(ACTIONS_LABEL)) start = m.index + m[0].length;
  }
  if (start < 0) return null;
  return text.slice(start).replace(LEADING_MARKUP, '');
}

/** Index of the ']' closing the '[' at `open`, or -1. */
export function closingBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) return i;
  }
  return -1;
}

/** The first line of a text (without its newline). */
export function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

/** Keeps the head and tail of a long string, like the reference's truncatefn. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n...(truncated)...\n${text.slice(-half)}`;
}
