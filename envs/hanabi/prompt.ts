// Hanabi prompts: one player's view of the table. A player's own cards appear only as what the
// clues it received say about them; the deck order never appears. Pure.
import type { ChatMessage } from '../types.js';
import {
  COLOR_LETTERS,
  COLOR_NAMES,
  deckSize,
  fireworksTotal,
  maxScore,
  type HandCard,
  type HanabiRules,
  type HanabiState,
  type LogEntry,
} from './rules.js';

/** How many of the latest actions a prompt shows: two rounds of the table, at most this many. */
export const MAX_RECENT_ACTIONS = 10;

const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six'];
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const colorList = (rules: HanabiRules) => COLOR_LETTERS.slice(0, rules.colors).map((l, i) => `${COLOR_NAMES[i]} (${l})`).join(', ');

function countsText(rules: HanabiRules): string {
  const parts = rules.counts.map((k, i) => `${WORDS[k] ?? k} ${i + 1}${k === 1 ? '' : 's'}`);
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  const perColor = rules.counts.reduce((a, b) => a + b, 0);
  return `each colour has ${list} (${perColor} cards per colour, ${perColor * rules.colors} in all)`;
}

/** What a card's holder knows about it, e.g. "colour red; rank one of 1/2". */
export function knowledgeText(h: HandCard, rules: HanabiRules): string {
  const colors: string[] = [];
  for (let c = 0; c < rules.colors; c++) if (h.colors & (1 << c)) colors.push(COLOR_NAMES[c]);
  const ranks: number[] = [];
  for (let r = 1; r <= rules.ranks; r++) if (h.ranks & (1 << (r - 1))) ranks.push(r);
  const part = (name: string, values: (string | number)[], all: number) =>
    values.length === 1 ? `${name} ${values[0]}` : values.length === all ? `${name} unknown` : `${name} one of ${values.join('/')}`;
  return `${part('colour', colors, rules.colors)}; ${part('rank', ranks, rules.ranks)}`;
}

function systemText(rules: HanabiRules, me: number): string {
  const n = rules.players;
  const max = maxScore(rules);
  const others = Array.from({ length: n }, (_, p) => p).filter((p) => p !== me);
  const example = others[0] ?? 1;
  return [
    `You are player ${me} in a cooperative game of Hanabi with ${n} players (player 0 to player ${n - 1}); all players are one team and share one score.`,
    '',
    'Rules:',
    `- Colours: ${colorList(rules)}; ranks 1 to ${rules.ranks}; ${countsText(rules)}.`,
    `- Every player holds ${plural(rules.handSize, 'card')}. You see the other players' cards but never your own: you learn about yours only from clues.`,
    `- The team shares ${plural(rules.infoTokens, 'information token')} (all available at the start) and ${rules.lives} ${rules.lives === 1 ? 'life' : 'lives'}.`,
    `- The goal: one firework per colour, built by playing that colour's cards in order 1, 2, ..., ${rules.ranks}. The score is the number of cards in the fireworks (at most ${max}).`,
    '- On your turn you take exactly one action:',
    `  play <slot>: play a card from your hand. If it is the next card of its colour's firework it is added (completing a colour with its ${rules.ranks} gives back one information token); otherwise it is discarded and the team loses a life. You then draw a card if the deck has any.`,
    `  discard <slot>: discard a card to regain one information token; not allowed while the team has all ${rules.infoTokens} tokens. You then draw a card if the deck has any.`,
    "  clue <player> <colour or rank>: spend one information token to show another player all cards of one colour, or all cards of one rank, in their hand. The clue must match at least one of their cards; you cannot clue yourself or clue without tokens.",
    `- The game ends when the team loses its last life (${rules.zeroOnLoss ? 'the score is then 0' : 'the fireworks built so far still count'}), when every firework is complete, or once the deck is empty and every player has taken one more turn.`,
    '- Hands keep their order: slot 1 is the oldest card. When a card is played or discarded, the cards after it move down one slot and the new card goes to the last slot.',
    '',
    'Answer format: think briefly, then give exactly one action on the last line, after ####. Examples:',
    '#### play 1',
    `#### discard ${Math.min(3, rules.handSize)}`,
    `#### clue player ${example} ${COLOR_NAMES[0]}`,
    `#### clue player ${example} ${Math.min(2, rules.ranks)}`,
    `Slots are numbered from 1 (1 to ${rules.handSize}). Players are player 0 to player ${n - 1}. A colour may be given by name or letter (${COLOR_LETTERS.slice(0, rules.colors).join(', ')}), a rank as a number. An unreadable or illegal action forfeits your turn and is penalised.`,
  ].join('\n');
}

function describeEntry(e: LogEntry, me: number): string {
  const who = e.player === me ? 'you' : `player ${e.player}`;
  const slots = (xs: number[]) => xs.map((x) => x + 1).join(', ');
  switch (e.kind) {
    case 'play':
      return e.ok ? `${who} played ${e.card} from slot ${e.slot + 1}` : `${who} played ${e.card} from slot ${e.slot + 1}: it did not fit, it was discarded and a life was lost`;
    case 'discard':
      return `${who} discarded ${e.card} from slot ${e.slot + 1}`;
    case 'color_clue':
    case 'rank_clue': {
      const value = e.kind === 'color_clue' ? COLOR_NAMES[e.color] : `rank ${e.rank}`;
      const target = e.target === me ? 'you' : `player ${e.target}`;
      const whose = e.target === me ? 'your' : 'their';
      return `${who} clued ${target}: ${value} is in ${whose} slot${e.slots.length === 1 ? '' : 's'} ${slots(e.slots)} (slots as they were then)`;
    }
    case 'invalid':
      // Another player's reason could speak of a hand the reader cannot see; only one's own is shown.
      return e.player === me ? `you forfeited your turn (${e.reason})` : `${who} forfeited the turn (an invalid or illegal action)`;
  }
}

function stateText(s: HanabiState, me: number, turn: number): string {
  const { rules } = s;
  const n = rules.players;
  const lines: string[] = [];
  if (s.over) lines.push(`The game is over (score ${s.score} of ${maxScore(rules)}).`);
  else if (s.current === me) lines.push(`Round ${turn + 1}. It is your turn (you are player ${me}).`);
  else lines.push(`Round ${turn + 1}. It is player ${s.current}'s turn, not yours (you are player ${me}).`);
  const fireworks = s.fireworks.map((top, c) => `${COLOR_LETTERS[c]}${top}`).join(' ');
  lines.push(`Fireworks (top card per colour, 0 = none yet): ${fireworks}; total ${fireworksTotal(s)} of ${maxScore(rules)}.`);
  const next = s.fireworks.map((top, c) => (top < rules.ranks ? `${COLOR_LETTERS[c]}${top + 1}` : null)).filter((x) => x !== null);
  lines.push(`Cards that would play now: ${next.length > 0 ? next.join(', ') : 'none (all complete)'}.`);
  lines.push(`Information tokens: ${s.info} of ${rules.infoTokens}. Lives: ${s.lives} of ${rules.lives}. Deck: ${plural(deckSize(s), 'card')} left.`);
  if (s.finalTurnsLeft !== null && !s.over) lines.push(`The deck is empty: final round, ${plural(s.finalTurnsLeft, 'turn')} left in the game (each player gets one more).`);
  const discards = s.discards.slice().sort();
  lines.push(`Discard pile: ${discards.length > 0 ? discards.join(' ') : 'empty'}.`);
  lines.push('');
  lines.push("Your hand (you cannot see it; this is what clues told you):");
  s.hands[me].forEach((h, i) => lines.push(`  slot ${i + 1}: ${knowledgeText(h, rules)}`));
  if (s.hands[me].length === 0) lines.push('  (empty)');
  lines.push('');
  lines.push("The other players' hands (their card, then what that player knows about it):");
  for (let d = 1; d < n; d++) {
    const p = (me + d) % n;
    lines.push(`  player ${p}:`);
    s.hands[p].forEach((h, i) => lines.push(`    slot ${i + 1}: ${h.card} (they know: ${knowledgeText(h, rules)})`));
    if (s.hands[p].length === 0) lines.push('    (empty)');
  }
  lines.push('');
  const recent = s.log.slice(-Math.min(MAX_RECENT_ACTIONS, 2 * n));
  if (recent.length === 0) lines.push('No actions yet: this is the first move of the game.');
  else {
    lines.push('Latest actions (oldest first):');
    for (const e of recent) lines.push(`  - ${describeEntry(e, me)}`);
  }
  if (!s.over && s.current === me) {
    lines.push('');
    lines.push('Choose your action and give it on the last line after ####.');
  }
  return lines.join('\n');
}

/** The prompt for seat `me`: the rules and answer format, then that player's view of the table. */
export function buildPrompt(s: HanabiState, me: number, turn: number): ChatMessage[] {
  return [
    { role: 'system', content: systemText(s.rules, me) },
    { role: 'user', content: stateText(s, me, turn) },
  ];
}
