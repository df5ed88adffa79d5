// Reading a Sudoku answer: the grid after "####" (or "**Actions List**:"). Accepted forms:
//   a list of rows, JSON or Python:      [[1, 2, 3, 4], [3, 4, 1, 2], ...]   (may span lines)
//   a flat list of N*N numbers:          [1, 2, 3, 4, 3, 4, 1, 2, ...]
//   rows of digits, one row per line:    1 2 | 3 4   or   1234   (separator lines skipped)
// Numbers may be quoted; runs of digits are read digit by digit ("1234" is four cells, all
// sizes being at most 9). 0, '.', '_', None and null mean an empty cell; any other entry is
// unreadable (-1), which makes the grid malformed. Never throws.
import { closingBracket } from '../shared/text.js';

/** Rows of cell values; 0 = empty, -1 = unreadable. Shape is not checked here. */
export type SudokuAnswer = number[][];

// At most this many rows and cells per row are read; anything longer is malformed anyway.
const MAX_ROWS = 16;
const MAX_CELLS = 16;
// How far into the answer the opening bracket is looked for, and how much of a list is read.
const BRACKET_WINDOW = 300;
const MAX_LIST_CHARS = 20_000;

const ENTRY = /\[|\]|[A-Za-z]+|\d+|[._]/g;
const EMPTY_WORDS = new Set(['none', 'null']);

export function parseSudokuAnswer(body: string): SudokuAnswer | null {
  if (typeof body !== 'string') return null;
  const open = body.slice(0, BRACKET_WINDOW).indexOf('[');
  if (open >= 0) {
    const close = closingBracket(body.slice(0, open + MAX_LIST_CHARS), open);
    return parseList(body.slice(open + 1, close < 0 ? open + MAX_LIST_CHARS : close));
  }
  return parseLines(body);
}

// The inside of the outer list: rows as inner lists, or a flat list of cells.
function parseList(inner: string): SudokuAnswer {
  const rows: number[][] = [];
  const flat: number[] = [];
  let row: number[] | null = null;
  let depth = 0; // nesting inside a row
  for (const [token] of inner.matchAll(ENTRY)) {
    if (token === '[') {
      if (row === null) row = [];
      else depth++;
      continue;
    }
    if (token === ']') {
      if (depth > 0) depth--;
      else if (row !== null) {
        rows.push(row);
        row = null;
        if (rows.length > MAX_ROWS) break;
      }
      continue;
    }
    const values = depth > 0 ? [-1] : cellValues(token);
    const target = row ?? flat;
    if (target.length <= MAX_CELLS * MAX_CELLS) target.push(...values);
  }
  if (row !== null) rows.push(row); // an unclosed last row (truncated output)
  if (rows.length === 0) return reshape(flat);
  // Loose cells between rows make the grid malformed.
  if (flat.length > 0) rows.push(flat);
  return rows.slice(0, MAX_ROWS + 1).map((r) => r.slice(0, MAX_CELLS + 1));
}

// A flat list of k*k cells becomes k rows; otherwise one row (malformed unless 1x1).
function reshape(cells: number[]): SudokuAnswer {
  if (cells.length === 0) return [];
  const k = Math.round(Math.sqrt(cells.length));
  if (k * k !== cells.length || k > MAX_CELLS) return [cells.slice(0, MAX_CELLS + 1)];
  return Array.from({ length: k }, (_, r) => cells.slice(r * k, r * k + k));
}

const ROW_LINE = /^[\d._\s|,;:+-]*$/;

// Consecutive lines of digits; lines of only separators ("---+---") are skipped. The first
// line that is neither ends the grid. null when there is no row.
function parseLines(body: string): SudokuAnswer | null {
  const rows: number[][] = [];
  let start = 0;
  while (start < body.length && rows.length <= MAX_ROWS) {
    let end = body.indexOf('\n', start);
    if (end < 0) end = body.length;
    const line = body.slice(start, Math.min(end, start + 200));
    start = end + 1;
    if (line.trim() === '' || line.includes('```')) {
      if (rows.length > 0) break;
      continue;
    }
    if (!ROW_LINE.test(line)) break;
    const cells: number[] = [];
    for (const [token] of line.matchAll(/\d+|[._]/g)) cells.push(...cellValues(token));
    if (cells.length > 0) rows.push(cells.slice(0, MAX_CELLS + 1));
  }
  return rows.length > 0 ? rows : null;
}

function cellValues(token: string): number[] {
  if (token === '.' || token === '_' || EMPTY_WORDS.has(token.toLowerCase())) return [0];
  if (/^\d+$/.test(token)) return Array.from(token.slice(0, MAX_CELLS + 1), Number);
  return [-1];
}
