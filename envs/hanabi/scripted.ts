// A simple deterministic Hanabi player for fixed partners, baselines and tests. It reads only its
// own view (its cards' clue knowledge, the other hands, fireworks, tokens), never its own cards
// or the deck:
// 1. play a card known to be playable;
// 2. with a token, clue another player's playable card they do not know is playable (the clue
//    that makes it known-playable, else its rank);
// 3. below the token maximum, discard a card known to be dead, else the oldest card without
//    clue information, else slot 1;
// 4. otherwise clue the next player the rank of their first card.
import { formatAction } from './parse.js';
import { colorOf, rankOf, type HandCard, type HanabiAction, type HanabiState } from './rules.js';

/** Every (colour, rank) the holder still thinks possible passes `test`. */
function allPossible(h: HandCard, s: HanabiState, test: (c: number, r: number) => boolean): boolean {
  for (let c = 0; c < s.rules.colors; c++) {
    if (!(h.colors & (1 << c))) continue;
    for (let r = 1; r <= s.rules.ranks; r++) if (h.ranks & (1 << (r - 1)) && !test(c, r)) return false;
  }
  return true;
}

const knownPlayable = (h: HandCard, s: HanabiState) => allPossible(h, s, (c, r) => s.fireworks[c] === r - 1);
const knownDead = (h: HandCard, s: HanabiState) => allPossible(h, s, (c, r) => s.fireworks[c] >= r);

/** The scripted player's action for seat `me` (meaningful on its own turn). */
export function scriptedAction(s: HanabiState, me: number): HanabiAction {
  const { rules } = s;
  const hand = s.hands[me] ?? [];
  const playable = hand.findIndex((h) => knownPlayable(h, s));
  if (playable >= 0) return { type: 'play', slot: playable };

  if (s.info > 0) {
    for (let d = 1; d < rules.players; d++) {
      const t = (me + d) % rules.players;
      for (const h of s.hands[t]) {
        const c = colorOf(h.card);
        const r = rankOf(h.card);
        if (s.fireworks[c] !== r - 1 || knownPlayable(h, s)) continue;
        const byColor = { ...h, colors: 1 << c };
        if (knownPlayable(byColor, s) && h.colors !== byColor.colors) return { type: 'color_clue', target: t, color: c };
        return { type: 'rank_clue', target: t, rank: r };
      }
    }
  }

  if (s.info < rules.infoTokens && hand.length > 0) {
    const dead = hand.findIndex((h) => knownDead(h, s));
    if (dead >= 0) return { type: 'discard', slot: dead };
    const full = (1 << rules.colors) - 1;
    const fullRanks = (1 << rules.ranks) - 1;
    const untouched = hand.findIndex((h) => h.colors === full && h.ranks === fullRanks);
    return { type: 'discard', slot: Math.max(0, untouched) };
  }

  const next = (me + 1) % rules.players;
  const first = s.hands[next]?.[0];
  if (s.info > 0 && first !== undefined) return { type: 'rank_clue', target: next, rank: rankOf(first.card) };
  return { type: 'play', slot: 0 };
}

/** The scripted player's answer text, in the prompt's answer format. */
export function scriptedAnswer(s: HanabiState, me: number): string {
  return `Scripted player.\n#### ${formatAction(scriptedAction(s, me))}`;
}
