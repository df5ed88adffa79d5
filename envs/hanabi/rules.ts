// Hanabi rules: a pure, seeded reducer over JSON-serialisable states, for 2-5 players and the
// small setting of the reference. Pure: no I/O, no clock, no Math.random (Temporal workflow
// code imports it); the deck is shuffled by mulberry32 from the problem seed.
//
// Rules (the standard game, as in the Hanabi Learning Environment the reference plays):
// - Cards: colours R Y G W B (the first `colors` of them), ranks 1..`ranks`. Copies per card:
//   three of rank 1, one of the top rank, two of every rank between (HLE's rule; the full
//   game: 3/2/2/2/1 = 10 per colour, 50 cards; the small setting, 2 ranks: three 1s and one 2
//   per colour, 8 cards). With a single rank there are three copies.
// - Hand size 5 for 2-3 players and 4 for 4-5 (full preset); 3 in the small preset.
// - Information tokens start at the maximum (8 / 3). A clue costs one; it names a colour or a
//   rank of another player's hand and must touch at least one card; no self-clues, no clue at
//   0 tokens. Discarding regains one and is not allowed while the tokens are at the maximum
//   (the standard rule, as in HLE). Completing a colour (playing its top rank) regains one,
//   never above the maximum.
// - Playing a card that is not the next of its colour's firework discards it and costs a life.
// - The game ends when the last life is lost (score 0: the standard rule, which the
//   reference's prompt also states; `zeroOnLoss: false` keeps the fireworks), when every
//   firework is complete, or once the deck is empty and every player, including the one who
//   drew the last card, has taken exactly one more turn.
// - A hand keeps its order: playing or discarding removes the card from its slot, the cards
//   after it move down one slot, and the drawn card goes to the last slot (HLE's convention).
// - Clue knowledge: every card in hand carries the colours and ranks still possible given the
//   clues its holder received (bitmasks: bit c for colour c, bit r-1 for rank r), both the
//   positive ("this is red") and the negative ("this is not red") information.
// - Invalid or illegal actions (see forfeit): the turn is forfeited and nothing else changes;
//   the forfeited turn still counts as that player's turn in the final round.
import { mulberry32, randomInt } from '../shared/rng.js';

export const COLOR_LETTERS = ['R', 'Y', 'G', 'W', 'B'] as const;
export const COLOR_NAMES = ['red', 'yellow', 'green', 'white', 'blue'] as const;
export const MIN_PLAYERS = 2;
export const MAX_PLAYERS = 5;
export const MAX_COLORS = 5;
export const MAX_RANKS = 5;

/** Options of a game; every field is optional (see resolveRules for the defaults). */
export interface HanabiOptions {
  /** Number of players, 2-5. Default 2. */
  players?: number;
  /** 'full' (default): 5 colours, ranks 1-5, 8 tokens, 3 lives; 'small': 2 colours, 2 ranks, hand 3, 3 tokens, 3 lives. */
  preset?: HanabiPreset;
  /** Overrides of the preset. */
  colors?: number;
  ranks?: number;
  /** Default: 5 for 2-3 players and 4 for 4-5 players (full); 3 (small). */
  handSize?: number;
  /** Information tokens (start and maximum). */
  infoTokens?: number;
  /** Lives (fuse tokens). */
  lives?: number;
  /** Losing the last life scores 0 (default true, the standard rule); false keeps the fireworks. */
  zeroOnLoss?: boolean;
}

export type HanabiPreset = 'full' | 'small';

/** The resolved rules a game is played by (stored in the state). */
export interface HanabiRules {
  players: number;
  colors: number;
  ranks: number;
  handSize: number;
  infoTokens: number;
  lives: number;
  zeroOnLoss: boolean;
  /** Copies of each rank in each colour; counts[r - 1] for rank r. */
  counts: number[];
}

export const HANABI_PRESETS: Record<HanabiPreset, { colors: number; ranks: number; handSize: number | null; infoTokens: number; lives: number }> = {
  // handSize null: the standard 5 for 2-3 players, 4 for 4-5 players.
  full: { colors: 5, ranks: 5, handSize: null, infoTokens: 8, lives: 3 },
  small: { colors: 2, ranks: 2, handSize: 3, infoTokens: 3, lives: 3 },
};

/** A card: colour letter and rank, e.g. "R1". */
export type Card = string;

/** A card in a hand with what its holder knows about it. */
export interface HandCard {
  card: Card;
  /** Colours still possible (bit c = colour c). */
  colors: number;
  /** Ranks still possible (bit r - 1 = rank r). */
  ranks: number;
}

/** One entry of the public action log. Slots are 0-based here. */
export type LogEntry =
  | { player: number; kind: 'play'; slot: number; card: Card; ok: boolean }
  | { player: number; kind: 'discard'; slot: number; card: Card }
  | { player: number; kind: 'color_clue'; target: number; color: number; slots: number[] }
  | { player: number; kind: 'rank_clue'; target: number; rank: number; slots: number[] }
  | { player: number; kind: 'invalid'; reason: string };

export type EndReason = 'lives' | 'perfect' | 'final_round';

export interface HanabiState {
  rules: HanabiRules;
  seed: number;
  /** The whole shuffled deck in draw order; cards [0, drawn) have been dealt or drawn. Hidden from players. */
  deck: Card[];
  drawn: number;
  hands: HandCard[][];
  /** Top rank played per colour (0 = none). */
  fireworks: number[];
  /** Discarded and misplayed cards, in order. */
  discards: Card[];
  info: number;
  /** Lives left. */
  lives: number;
  /** Whose turn it is. */
  current: number;
  /** Actions taken so far (forfeits included). */
  moves: number;
  /** Turns left once the deck is empty (null while cards remain). */
  finalTurnsLeft: number | null;
  over: boolean;
  end: EndReason | null;
  /** The game's score: the fireworks' total, or 0 after losing the last life under zeroOnLoss. */
  score: number;
  log: LogEntry[];
}

/** An action. Slots are 0-based; colours are indices into COLOR_LETTERS; ranks are 1-based. */
export type HanabiAction =
  | { type: 'play'; slot: number }
  | { type: 'discard'; slot: number }
  | { type: 'color_clue'; target: number; color: number }
  | { type: 'rank_clue'; target: number; rank: number };

export interface StepResult {
  state: HanabiState;
  /** False: the action was illegal and the turn was forfeited. */
  legal: boolean;
  reason: string | null;
  /** Cards added to the fireworks (0 or 1). */
  played: number;
  /** Lives lost (0 or 1). */
  livesLost: number;
}

// ---------------------------------------------------------------- options

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** What is wrong with a set of options ([] when they are valid). */
export function hanabiOptionIssues(options: HanabiOptions | undefined): string[] {
  const o = options ?? {};
  const issues: string[] = [];
  if (o.preset !== undefined && o.preset !== 'full' && o.preset !== 'small') issues.push(`preset must be "full" or "small", not ${JSON.stringify(o.preset)}`);
  const check = (name: keyof HanabiOptions, min: number, max: number) => {
    const v = o[name];
    if (v !== undefined && (!isInt(v) || v < min || v > max)) issues.push(`${name} must be an integer from ${min} to ${max}`);
  };
  check('players', MIN_PLAYERS, MAX_PLAYERS);
  check('colors', 1, MAX_COLORS);
  check('ranks', 1, MAX_RANKS);
  check('handSize', 1, 10);
  check('infoTokens', 1, 30);
  check('lives', 1, 30);
  if (o.zeroOnLoss !== undefined && typeof o.zeroOnLoss !== 'boolean') issues.push('zeroOnLoss must be a boolean');
  if (issues.length > 0) return issues;
  const r = rulesOf(o);
  const cards = r.colors * r.counts.reduce((a, b) => a + b, 0);
  if (r.players * r.handSize > cards) issues.push(`${r.players} hands of ${r.handSize} need ${r.players * r.handSize} cards; the deck has ${cards}`);
  return issues;
}

function rulesOf(o: HanabiOptions): HanabiRules {
  const preset = HANABI_PRESETS[o.preset ?? 'full'];
  const players = o.players ?? 2;
  const ranks = o.ranks ?? preset.ranks;
  return {
    players,
    colors: o.colors ?? preset.colors,
    ranks,
    handSize: o.handSize ?? preset.handSize ?? (players <= 3 ? 5 : 4),
    infoTokens: o.infoTokens ?? preset.infoTokens,
    lives: o.lives ?? preset.lives,
    zeroOnLoss: o.zeroOnLoss ?? true,
    counts: Array.from({ length: ranks }, (_, i) => (i === 0 ? 3 : i === ranks - 1 ? 1 : 2)),
  };
}

/** The rules for a set of options, defaults filled in. Throws on invalid options (a config error). */
export function resolveRules(options?: HanabiOptions): HanabiRules {
  const issues = hanabiOptionIssues(options);
  if (issues.length > 0) throw new Error(`invalid Hanabi options: ${issues.join('; ')}`);
  return rulesOf(options ?? {});
}

// ---------------------------------------------------------------- cards

export const cardOf = (color: number, rank: number): Card => `${COLOR_LETTERS[color]}${rank}`;
export const colorOf = (card: Card): number => COLOR_LETTERS.indexOf(card[0] as (typeof COLOR_LETTERS)[number]);
export const rankOf = (card: Card): number => card.charCodeAt(1) - 48;

/** Every card of the game, sorted by colour then rank. */
export function deckComposition(rules: HanabiRules): Card[] {
  const cards: Card[] = [];
  for (let c = 0; c < rules.colors; c++) for (let r = 1; r <= rules.ranks; r++) for (let k = 0; k < rules.counts[r - 1]; k++) cards.push(cardOf(c, r));
  return cards;
}

export const maxScore = (rules: HanabiRules): number => rules.colors * rules.ranks;
export const deckSize = (s: HanabiState): number => s.deck.length - s.drawn;
export const fireworksTotal = (s: HanabiState): number => s.fireworks.reduce((a, b) => a + b, 0);

const allBits = (n: number): number => (1 << n) - 1;

/** A fresh card in hand: nothing known beyond the game's colours and ranks. */
const unknown = (rules: HanabiRules, card: Card): HandCard => ({ card, colors: allBits(rules.colors), ranks: allBits(rules.ranks) });

// ---------------------------------------------------------------- game

/** A new game: the deck shuffled by the seed (Fisher-Yates, mulberry32), hands dealt in turn order. */
export function newGame(seed: number, options?: HanabiOptions): HanabiState {
  const rules = resolveRules(options);
  const deck = deckComposition(rules);
  const rng = mulberry32(seed);
  for (let i = deck.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    const t = deck[i];
    deck[i] = deck[j];
    deck[j] = t;
  }
  const hands: HandCard[][] = Array.from({ length: rules.players }, () => []);
  let drawn = 0;
  for (let k = 0; k < rules.handSize; k++) for (let p = 0; p < rules.players; p++) hands[p].push(unknown(rules, deck[drawn++]));
  return {
    rules,
    seed,
    deck,
    drawn,
    hands,
    fireworks: new Array<number>(rules.colors).fill(0),
    discards: [],
    info: rules.infoTokens,
    lives: rules.lives,
    current: 0,
    moves: 0,
    // A deal that empties the deck starts the final round at once.
    finalTurnsLeft: drawn === deck.length ? rules.players : null,
    over: false,
    end: null,
    score: 0,
    log: [],
  };
}

/** Why `player` may not take `action` now, or null when it is legal. */
export function illegalReason(s: HanabiState, player: number, action: HanabiAction): string | null {
  const { rules } = s;
  if (s.over) return 'the game is over';
  if (player !== s.current) return `it is player ${s.current}'s turn`;
  const hand = s.hands[player];
  switch (action.type) {
    case 'play':
    case 'discard':
      if (!isInt(action.slot) || action.slot < 0 || action.slot >= hand.length) return `no slot ${action.slot + 1} (your slots are 1 to ${hand.length})`;
      if (action.type === 'discard' && s.info >= rules.infoTokens) return `cannot discard with all ${rules.infoTokens} information tokens`;
      return null;
    case 'color_clue':
    case 'rank_clue': {
      const t = action.target;
      if (!isInt(t) || t < 0 || t >= rules.players) return `no player ${t} (players are 0 to ${rules.players - 1})`;
      if (t === player) return 'cannot clue yourself';
      if (s.info <= 0) return 'no information tokens left to clue';
      const target = s.hands[t];
      if (action.type === 'color_clue') {
        if (!isInt(action.color) || action.color < 0 || action.color >= rules.colors) return 'no such colour in this game';
        if (!target.some((h) => colorOf(h.card) === action.color)) return `player ${t} has no ${COLOR_NAMES[action.color]} card`;
      } else {
        if (!isInt(action.rank) || action.rank < 1 || action.rank > rules.ranks) return `no rank ${action.rank} in this game (ranks are 1 to ${rules.ranks})`;
        if (!target.some((h) => rankOf(h.card) === action.rank)) return `player ${t} has no card of rank ${action.rank}`;
      }
      return null;
    }
    default:
      return 'unknown action';
  }
}

/** Every legal action of the current player (empty when the game is over). */
export function legalActions(s: HanabiState): HanabiAction[] {
  if (s.over) return [];
  const { rules } = s;
  const p = s.current;
  const out: HanabiAction[] = [];
  const n = s.hands[p].length;
  for (let i = 0; i < n; i++) out.push({ type: 'play', slot: i });
  if (s.info < rules.infoTokens) for (let i = 0; i < n; i++) out.push({ type: 'discard', slot: i });
  if (s.info > 0) {
    for (let d = 1; d < rules.players; d++) {
      const t = (p + d) % rules.players;
      let colors = 0;
      let ranks = 0;
      for (const h of s.hands[t]) {
        colors |= 1 << colorOf(h.card);
        ranks |= 1 << (rankOf(h.card) - 1);
      }
      for (let c = 0; c < rules.colors; c++) if (colors & (1 << c)) out.push({ type: 'color_clue', target: t, color: c });
      for (let r = 1; r <= rules.ranks; r++) if (ranks & (1 << (r - 1))) out.push({ type: 'rank_clue', target: t, rank: r });
    }
  }
  return out;
}

/** `player` takes `action`; an illegal action forfeits the turn (see forfeit). Never throws. */
export function step(s: HanabiState, player: number, action: HanabiAction): StepResult {
  const reason = illegalReason(s, player, action);
  if (reason !== null) {
    // Out of turn or after the end nothing happens at all; otherwise the turn is forfeited.
    const state = s.over || player !== s.current ? s : forfeit(s, player, reason);
    return { state, legal: false, reason, played: 0, livesLost: 0 };
  }
  const { rules } = s;
  const next: HanabiState = { ...s, hands: s.hands.slice() };
  let played = 0;
  let livesLost = 0;
  let entry: LogEntry;
  if (action.type === 'play' || action.type === 'discard') {
    const hand = s.hands[player].slice();
    const [removed] = hand.splice(action.slot, 1);
    const card = removed.card;
    if (next.drawn < next.deck.length) hand.push(unknown(rules, next.deck[next.drawn++]));
    next.hands[player] = hand;
    if (action.type === 'discard') {
      next.discards = [...s.discards, card];
      next.info = Math.min(rules.infoTokens, s.info + 1);
      entry = { player, kind: 'discard', slot: action.slot, card };
    } else {
      const c = colorOf(card);
      const r = rankOf(card);
      const ok = s.fireworks[c] === r - 1;
      if (ok) {
        next.fireworks = s.fireworks.slice();
        next.fireworks[c] = r;
        played = 1;
        if (r === rules.ranks) next.info = Math.min(rules.infoTokens, s.info + 1);
      } else {
        next.discards = [...s.discards, card];
        next.lives = s.lives - 1;
        livesLost = 1;
      }
      entry = { player, kind: 'play', slot: action.slot, card, ok };
    }
  } else {
    const t = action.target;
    const slots: number[] = [];
    next.hands[t] = s.hands[t].map((h, i) => {
      if (action.type === 'color_clue') {
        const bit = 1 << action.color;
        if (colorOf(h.card) === action.color) {
          slots.push(i);
          return { card: h.card, colors: h.colors & bit, ranks: h.ranks };
        }
        return { card: h.card, colors: h.colors & ~bit, ranks: h.ranks };
      }
      const bit = 1 << (action.rank - 1);
      if (rankOf(h.card) === action.rank) {
        slots.push(i);
        return { card: h.card, colors: h.colors, ranks: h.ranks & bit };
      }
      return { card: h.card, colors: h.colors, ranks: h.ranks & ~bit };
    });
    next.info = s.info - 1;
    entry =
      action.type === 'color_clue'
        ? { player, kind: 'color_clue', target: t, color: action.color, slots }
        : { player, kind: 'rank_clue', target: t, rank: action.rank, slots };
  }
  next.log = [...s.log, entry];
  return { state: endTurn(next), legal: true, reason: null, played, livesLost };
}

/**
 * The current player forfeits the turn (an unreadable or illegal answer): nothing changes but
 * the log, the turn order and, once the deck is empty, the final-round count.
 */
export function forfeit(s: HanabiState, player: number, reason: string): HanabiState {
  if (s.over || player !== s.current) return s;
  return endTurn({ ...s, log: [...s.log, { player, kind: 'invalid', reason }] });
}

// Turn bookkeeping on a fresh copy: move count, final round, end of game, score, next player.
function endTurn(next: HanabiState): HanabiState {
  const { rules } = next;
  next.moves += 1;
  if (next.finalTurnsLeft !== null) next.finalTurnsLeft -= 1;
  else if (next.drawn >= next.deck.length) next.finalTurnsLeft = rules.players; // this action drew the last card
  const total = fireworksTotal(next);
  if (next.lives <= 0) next.end = 'lives';
  else if (total === maxScore(rules)) next.end = 'perfect';
  else if (next.finalTurnsLeft === 0) next.end = 'final_round';
  next.over = next.end !== null;
  next.score = next.lives <= 0 && rules.zeroOnLoss ? 0 : total;
  next.current = (next.current + 1) % rules.players;
  return next;
}

// ---------------------------------------------------------------- invariants

/** Broken invariants of a state ([] when sound): card conservation, token and life bounds, knowledge consistency. */
export function invariantIssues(s: HanabiState): string[] {
  const { rules } = s;
  const issues: string[] = [];
  const expected = new Map<Card, number>();
  for (const c of deckComposition(rules)) expected.set(c, (expected.get(c) ?? 0) + 1);
  const seen = new Map<Card, number>();
  const add = (c: Card) => seen.set(c, (seen.get(c) ?? 0) + 1);
  for (const hand of s.hands) for (const h of hand) add(h.card);
  for (let i = s.drawn; i < s.deck.length; i++) add(s.deck[i]);
  for (const c of s.discards) add(c);
  s.fireworks.forEach((top, c) => {
    for (let r = 1; r <= top; r++) add(cardOf(c, r));
  });
  const keys = new Set([...expected.keys(), ...seen.keys()]);
  for (const k of keys) if ((expected.get(k) ?? 0) !== (seen.get(k) ?? 0)) issues.push(`card ${k}: expected ${expected.get(k) ?? 0}, found ${seen.get(k) ?? 0}`);
  if (s.info < 0 || s.info > rules.infoTokens) issues.push(`information tokens ${s.info} out of 0..${rules.infoTokens}`);
  if (s.lives < 0 || s.lives > rules.lives) issues.push(`lives ${s.lives} out of 0..${rules.lives}`);
  if (s.hands.length !== rules.players) issues.push('wrong number of hands');
  s.hands.forEach((hand, p) => {
    if (hand.length > rules.handSize) issues.push(`player ${p} holds ${hand.length} cards`);
    if (!s.over && s.drawn < s.deck.length && hand.length !== rules.handSize) issues.push(`player ${p} holds ${hand.length} cards with a deck left`);
    for (const h of hand) {
      if (!(h.colors & (1 << colorOf(h.card))) || !(h.ranks & (1 << (rankOf(h.card) - 1)))) issues.push(`player ${p}: knowledge excludes the real card ${h.card}`);
    }
  });
  if (s.score < 0 || s.score > maxScore(rules)) issues.push(`score ${s.score} out of range`);
  if (s.finalTurnsLeft !== null && (s.finalTurnsLeft < 0 || s.finalTurnsLeft > rules.players)) issues.push(`finalTurnsLeft ${s.finalTurnsLeft}`);
  return issues;
}
