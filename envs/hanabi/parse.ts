// The Hanabi answer parser: the action on the first non-empty line after the last "####".
// Pure; never throws (a non-string or unreadable answer is a ParseResult with ok: false).
//
// Grammar (case-insensitive; markdown, quotes, brackets and punctuation are ignored):
//   play <slot>      discard <slot>      clue <player> <colour|rank>
// - Verbs: play; discard (or drop); clue (or hint, reveal, tell, give). Words before the verb
//   ("Action: play 2", "I play 2") are skipped.
// - Slots are 1-based: 1 is the oldest card of the hand (0 is not a slot and is rejected as
//   an illegal slot, never silently re-based). "card 2", "slot 2", "2nd", "second" all read
//   as slot 2.
// - Players: "player 1", "player_1", "p1", "P 1" or a bare number given before the value
//   ("clue 1 red", "clue 1 3" = player 1, rank 3); "+k" ("player +1", the reference's format)
//   is k seats after the speaker. With two players the target may be left out ("clue red",
//   "clue 3" = the other player).
// - Colours: red/yellow/green/white/blue or R/Y/G/W/B (plurals too); ranks: 1-5, "rank 3",
//   "number 3", "threes". Naming both a colour and a rank, or neither, is unreadable.
// - Reading stops at the first word that is none of these (so trailing explanations are
//   ignored) or at "(", "[", "{", ";" or a dash between spaces.
import type { HanabiAction } from './rules.js';
import { COLOR_NAMES } from './rules.js';

export type ParseResult = { ok: true; action: HanabiAction } | { ok: false; reason: string };

const VERBS: ReadonlyMap<string, 'play' | 'discard' | 'clue'> = new Map([
  ['play', 'play'],
  ['plays', 'play'],
  ['playing', 'play'],
  ['discard', 'discard'],
  ['discards', 'discard'],
  ['discarding', 'discard'],
  ['drop', 'discard'],
  ['clue', 'clue'],
  ['hint', 'clue'],
  ['reveal', 'clue'],
  ['tell', 'clue'],
  ['give', 'clue'],
]);

const NUMBER_WORDS: ReadonlyMap<string, number> = new Map([
  ['zero', 0],
  ['one', 1],
  ['two', 2],
  ['three', 3],
  ['four', 4],
  ['five', 5],
  ['first', 1],
  ['second', 2],
  ['third', 3],
  ['fourth', 4],
  ['fifth', 5],
  ['ones', 1],
  ['twos', 2],
  ['threes', 3],
  ['fours', 4],
  ['fives', 5],
]);

const COLOR_WORDS: ReadonlyMap<string, number> = new Map([
  ...COLOR_NAMES.map((name, i) => [name, i] as [string, number]),
  ...COLOR_NAMES.map((name, i) => [`${name}s`, i] as [string, number]),
  ...COLOR_NAMES.map((name, i) => [name[0], i] as [string, number]),
]);

// Words that may sit around a slot number.
const SLOT_FILLERS = new Set(['card', 'cards', 'slot', 'position', 'pos', 'the', 'my', 'number', 'no', 'index', 'st', 'nd', 'rd', 'th', 'in', 'at', 'from', 'hand', 'of', 'own', 'a']);
// Words that may sit around a clue's target and value.
const CLUE_FILLERS = new Set(['a', 'an', 'the', 'to', 'about', 'on', 'for', 'with', 'clue', 'hint', 'info', 'information', 'all', 'their', 'his', 'her', 'cards', 'card', 's', 'is', 'are', 'color', 'colour', 'colors', 'colours']);
const PLAYER_WORDS = new Set(['player', 'players', 'p']);
const RANK_WORDS = new Set(['rank', 'ranks', 'number', 'numbers', 'value', 'num']);

const TOKEN = /\+\d+|[a-z]+|\d+/g;
// Where an action's own words end and commentary begins.
const COMMENTARY = /[([{;]|\s[-\u2013\u2014]\s/;
const MAX_LINE = 400;

function numberOf(token: string): number | null {
  if (/^\d+$/.test(token)) return token.length > 3 ? 9999 : Number(token);
  return NUMBER_WORDS.get(token) ?? null;
}

/**
 * The action in an answer: `player` is the speaker (0-based seat) and `players` the table size,
 * for "+k" targets and the implied target of a two-player clue. Legality (slot range, tokens,
 * touched cards) is checked by the rules, not here.
 */
export function parseAction(text: unknown, player: number, players: number): ParseResult {
  if (typeof text !== 'string') return { ok: false, reason: 'no answer text' };
  const hashes = text.lastIndexOf('####');
  if (hashes < 0) return { ok: false, reason: 'no action after ####' };
  const line = text
    .slice(hashes + 4)
    .split('\n')
    .map((l) => l.trim())
    .find((l) => /[a-z0-9]/i.test(l));
  if (line === undefined) return { ok: false, reason: 'nothing after ####' };
  const tokens = line.slice(0, MAX_LINE).toLowerCase().match(TOKEN) ?? [];
  const at = tokens.findIndex((t) => VERBS.has(t));
  if (at < 0) return { ok: false, reason: `no play, discard or clue in "${line.slice(0, 60)}"` };
  const verb = VERBS.get(tokens[at])!;
  // Re-tokenise the part after the verb, cut at commentary.
  const lower = line.slice(0, MAX_LINE).toLowerCase();
  const verbPos = nthTokenEnd(lower, at);
  let rest = lower.slice(verbPos);
  const cut = COMMENTARY.exec(rest);
  if (cut) rest = rest.slice(0, cut.index);
  const args = rest.match(TOKEN) ?? [];
  return verb === 'clue' ? parseClue(args, player, players) : parseSlot(verb, args);
}

// The index just after the n-th token of `s` (0-based n).
function nthTokenEnd(s: string, n: number): number {
  const re = new RegExp(TOKEN.source, 'g');
  let m: RegExpExecArray | null = null;
  for (let i = 0; i <= n; i++) m = re.exec(s);
  return m ? m.index + m[0].length : s.length;
}

function parseSlot(verb: 'play' | 'discard', args: string[]): ParseResult {
  for (const t of args) {
    const n = numberOf(t);
    if (n !== null) return { ok: true, action: { type: verb, slot: n - 1 } };
    if (!SLOT_FILLERS.has(t)) break;
  }
  return { ok: false, reason: `${verb} names no slot` };
}

function parseClue(args: string[], player: number, players: number): ParseResult {
  let target: number | null = null;
  let color: number | null = null;
  let rank: number | null = null;
  const bare: number[] = [];
  const relative = (t: string) => (((player + Number(t.slice(1))) % players) + players) % players;
  for (let i = 0; i < args.length; i++) {
    const t = args[i];
    if (t.startsWith('+')) {
      if (target !== null) return { ok: false, reason: 'clue names two players' };
      target = relative(t);
    } else if (PLAYER_WORDS.has(t)) {
      const next = args[i + 1];
      if (next === undefined) return { ok: false, reason: 'clue names no player number' };
      const n = next.startsWith('+') ? relative(next) : numberOf(next);
      if (n === null) return { ok: false, reason: 'clue names no player number' };
      if (target !== null && target !== n) return { ok: false, reason: 'clue names two players' };
      target = n;
      i++;
    } else if (RANK_WORDS.has(t)) {
      const n = args[i + 1] === undefined ? null : numberOf(args[i + 1]);
      if (n !== null) {
        if (rank !== null && rank !== n) return { ok: false, reason: 'clue names two ranks' };
        rank = n;
        i++;
      }
    } else if (COLOR_WORDS.has(t)) {
      const c = COLOR_WORDS.get(t)!;
      if (color !== null && color !== c) return { ok: false, reason: 'clue names two colours' };
      color = c;
    } else if (numberOf(t) !== null) {
      bare.push(numberOf(t)!);
    } else if (!CLUE_FILLERS.has(t)) {
      break;
    }
  }
  if (target === null) {
    if (bare.length >= 1 && (color !== null || rank !== null)) target = bare.shift()!;
    else if (bare.length >= 2) target = bare.shift()!;
    else if (players === 2) target = 1 - player;
  }
  if (color === null && rank === null && bare.length > 0) rank = bare.shift()!;
  if (bare.length > 0) return { ok: false, reason: 'clue has too many numbers' };
  if (color !== null && rank !== null) return { ok: false, reason: 'clue names both a colour and a rank' };
  if (target === null) return { ok: false, reason: 'clue names no player' };
  if (color !== null) return { ok: true, action: { type: 'color_clue', target, color } };
  if (rank !== null) return { ok: true, action: { type: 'rank_clue', target, rank } };
  return { ok: false, reason: 'clue names no colour or rank' };
}

/** An action in the answer format the prompt asks for (slots 1-based), e.g. "play 2", "clue player 1 red". */
export function formatAction(action: HanabiAction): string {
  switch (action.type) {
    case 'play':
      return `play ${action.slot + 1}`;
    case 'discard':
      return `discard ${action.slot + 1}`;
    case 'color_clue':
      return `clue player ${action.target} ${COLOR_NAMES[action.color]}`;
    case 'rank_clue':
      return `clue player ${action.target} ${action.rank}`;
  }
}
