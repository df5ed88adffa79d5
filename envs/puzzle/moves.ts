// The move-list parser shared by the grid puzzles (Plan-Path, Sokoban): U/D/L/R moves as
// models write them, and such a puzzle's Puzzle built around its reducer. Pure; never throws.
import type { Move } from '../types.js';
import type { Puzzle, PuzzleStatus, PuzzleStep, PuzzleText } from './types.js';
import { closingBracket, firstLine, textAfterAnchor } from '../shared/text.js';

/** Longest parsed move list; the rest is dropped. */
export const MAX_MOVES = 200;

const TOKEN = /[A-Za-z0-9]+/g;
// The reference's action_map for numeric moves.
const NUMBER_MOVES: ReadonlyMap<string, Move> = new Map([
  ['0', 'U'],
  ['1', 'D'],
  ['2', 'L'],
  ['3', 'R'],
]);
const WORD_MOVES: ReadonlyMap<string, Move> = new Map([
  ['u', 'U'],
  ['d', 'D'],
  ['l', 'L'],
  ['r', 'R'],
  ['up', 'U'],
  ['down', 'D'],
  ['left', 'L'],
  ['right', 'R'],
]);

/**
 * The moves in an answer body (the text after its anchor, see textAfterAnchor). A bracketed
 * list may hold JSON or Python strings, bare letters, words or the numbers 0-3, in any case;
 * an entry that is none of these becomes 'X' (an invalid move). The list may span lines; an
 * unclosed one (truncated output) is read to the end of its first line. Without brackets, the
 * first line must consist of moves only. Returns null when nothing parseable is there, [] for
 * an explicit empty list, and at most MAX_MOVES moves.
 */
export function parseMoveList(body: string): string[] | null {
  if (typeof body !== 'string') return null;
  const line = firstLine(body);
  const open = line.indexOf('[');
  if (open < 0) return parseBareMoves(line);
  const close = closingBracket(body, open);
  return parseListEntries(body.slice(open + 1, close < 0 ? line.length : close));
}

/** parseMoveList applied to the text after the answer's anchor ("####", else "**Actions List**:"). */
export function parseMoveAnswer(text: string): string[] | null {
  const body = textAfterAnchor(text);
  return body === null ? null : parseMoveList(body);
}

function parseListEntries(inner: string): string[] {
  const moves: string[] = [];
  for (const [token] of inner.matchAll(TOKEN)) {
    moves.push(...(tokenMoves(token) ?? ['X']));
    if (moves.length >= MAX_MOVES) break;
  }
  return moves.slice(0, MAX_MOVES);
}

function parseBareMoves(line: string): string[] | null {
  const moves: string[] = [];
  for (const [token] of line.matchAll(TOKEN)) {
    const parsed = tokenMoves(token);
    if (parsed === null) return null;
    moves.push(...parsed);
    if (moves.length >= MAX_MOVES) break;
  }
  return moves.length > 0 ? moves.slice(0, MAX_MOVES) : null;
}

// The moves one token stands for: a letter, word or number, or a run of capitals such as
// "RRDD" (a path printed with ''.join); null when it is not a move.
function tokenMoves(token: string): Move[] | null {
  const single = WORD_MOVES.get(token.toLowerCase()) ?? NUMBER_MOVES.get(token);
  if (single !== undefined) return [single];
  if (/^[UDLR]+$/.test(token)) return Array.from(token.slice(0, MAX_MOVES), (ch) => ch as Move);
  return null;
}

/** The (row, col) change of a move; null for anything but U/D/L/R. A switch, so "constructor" cannot hit prototype keys. */
export function moveDelta(move: string): [dr: number, dc: number] | null {
  switch (move) {
    case 'U':
      return [-1, 0];
    case 'D':
      return [1, 0];
    case 'L':
      return [0, -1];
    case 'R':
      return [0, 1];
    default:
      return null;
  }
}

/** "3 moves (1 invalid)". */
export function countMoves(count: number, invalid: number): string {
  return `${count} move${count === 1 ? '' : 's'}${invalid > 0 ? ` (${invalid} invalid)` : ''}`;
}

/**
 * A grid puzzle whose action is a move list (Plan-Path, Sokoban): the parser above, an empty list
 * as no answer, and each step summarised in the puzzle's own words for what its moves did.
 */
export function moveListPuzzle<S extends PuzzleStatus, R extends Omit<PuzzleStep<S>, 'summary'>>(p: {
  text(state: S): PuzzleText;
  describe(state: S, turn: number): string;
  applyMoves(state: S, moves: string[]): R;
  /** E.g. "3 moves (1 invalid), reached goal". */
  summarise(count: number, result: R): string;
  solution(state: S): string | null;
}): Puzzle<S, string[]> {
  return {
    text: p.text,
    describe: p.describe,
    parseAction: parseMoveList,
    isEmpty: (moves) => moves.length === 0,
    apply(state, moves) {
      const result = p.applyMoves(state, moves);
      return { state: result.state, reward: result.reward, solved: result.solved, done: result.done, summary: p.summarise(moves.length, result) };
    },
    solution: p.solution,
  };
}
