// Reading the test generator's answer. Pure: no I/O; never throws.
//
// Format (the prompt asks for exactly this; the LAST complete pair in the answer counts):
//   **Test Input:**
//   ```
//   3
//   1 2 3
//   ```
//   **Test Output:**
//   ```
//   6
//   ```
// Leniencies: the labels' case, bold markers and colon are optional ("Test Input", "test input:"),
// and "Input:" / "Output:" at the start of a line also work; a fence may carry a language tag
// (```text); an empty block is an empty input or output. The output block must come after the
// input block, before any later input label.
import type { CodeTest } from './types.js';

const INPUT_LABEL = /(?:test[ \t]+input|^[ \t*#]*input)[ \t]*\**[ \t]*:?/gim;
const OUTPUT_LABEL = /(?:test[ \t]+output|^[ \t*#]*(?:expected[ \t]+)?output)[ \t]*\**[ \t]*:?/gim;
// A fenced block right after a label: optional markup/whitespace, ``` + optional tag, body, ```.
const BLOCK_AFTER_LABEL = /^[ \t*]*(?:\r?\n[ \t]*)*```[^\n`]*\r?\n([\s\S]*?)```/;

/** The body of the fenced block that follows `from` (after a label), or null. */
function blockAt(text: string, from: number): { body: string; end: number } | null {
  const m = BLOCK_AFTER_LABEL.exec(text.slice(from));
  if (m === null) return null;
  return { body: m[1].replace(/\r\n/g, '\n'), end: from + m[0].length };
}

/** The last complete input/output pair of a test generator's answer, or null. */
export function extractTestCase(text: unknown): CodeTest | null {
  if (typeof text !== 'string') return null;
  let found: CodeTest | null = null;
  for (const label of text.matchAll(INPUT_LABEL)) {
    const input = blockAt(text, label.index + label[0].length);
    if (input === null) continue;
    const outputLabel = new RegExp(OUTPUT_LABEL.source, 'gim');
    outputLabel.lastIndex = input.end;
    const out = outputLabel.exec(text);
    if (out === null) continue;
    // No other input label between the input block and the output label.
    if (new RegExp(INPUT_LABEL.source, 'im').test(text.slice(input.end, out.index))) continue;
    const output = blockAt(text, out.index + out[0].length);
    if (output === null) continue;
    found = { input: input.body, output: output.body };
  }
  return found;
}

/** A test case in the answer format (what the scripted test generator writes). */
export function formatTestCase(test: CodeTest): string {
  const block = (s: string) => '```\n' + (s.endsWith('\n') || s === '' ? s : `${s}\n`) + '```';
  return `**Test Input:**\n${block(test.input)}\n\n**Test Output:**\n${block(test.output)}`;
}
