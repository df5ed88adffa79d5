import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';
import {
  HANABI_AGENTS,
  HANABI_REWARDS,
  cardOf,
  deckComposition,
  deckSize,
  formatAction,
  hanabi,
  hanabiOptionIssues,
  illegalReason,
  invariantIssues,
  legalActions,
  maxScore,
  newGame,
  parseAction,
  resolveRules,
  scoreHanabi,
  scriptedAction,
  step,
  type Card,
  type HanabiAction,
  type HanabiOptions,
  type HanabiState,
} from '../../envs/hanabi/index.js';

const FULL = 0b11111;
const close = (actual: number, expected: number, message?: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} expected ${expected}, got ${actual}`);
const snapshot = (s: HanabiState) => JSON.stringify(s);
const act = (agent: string, state: HanabiState, text: string, alpha = 1) => hanabi.score(agent, state, text, null, alpha);

/**
 * A hand-set state: the given hands (nothing known), the given draw pile (top first), the rest
 * of the composition in the discard pile unless `discards` is given, so cards are conserved when
 * the fireworks are consistent.
 */
function setup(
  options: HanabiOptions,
  hands: Card[][],
  pile: Card[],
  extra: Partial<Pick<HanabiState, 'fireworks' | 'info' | 'lives' | 'current'>> = {},
): HanabiState {
  const base = newGame(0, options);
  const rules = base.rules;
  const fireworks = extra.fireworks ?? new Array<number>(rules.colors).fill(0);
  const remaining = deckComposition(rules);
  const take = (c: Card) => {
    const i = remaining.indexOf(c);
    assert.ok(i >= 0, `no ${c} left for the setup`);
    remaining.splice(i, 1);
  };
  fireworks.forEach((top, c) => {
    for (let r = 1; r <= top; r++) take(cardOf(c, r));
  });
  for (const h of hands) h.forEach(take);
  pile.forEach(take);
  const dealt = hands.flat();
  const s: HanabiState = {
    ...base,
    deck: [...dealt, ...pile],
    drawn: dealt.length,
    hands: hands.map((h) => h.map((card) => ({ card, colors: (1 << rules.colors) - 1, ranks: (1 << rules.ranks) - 1 }))),
    fireworks,
    discards: remaining,
    info: extra.info ?? rules.infoTokens,
    lives: extra.lives ?? rules.lives,
    current: extra.current ?? 0,
    finalTurnsLeft: pile.length === 0 ? rules.players : null,
    score: fireworks.reduce((a, b) => a + b, 0),
  };
  assert.deepEqual(invariantIssues(s), [], 'setup is sound');
  return s;
}

// ---------------------------------------------------------------- options and deal

test('options: presets, defaults and overrides; invalid options are reported and rejected', () => {
  const full = resolveRules({});
  assert.deepEqual(full, { players: 2, colors: 5, ranks: 5, handSize: 5, infoTokens: 8, lives: 3, zeroOnLoss: true, counts: [3, 2, 2, 2, 1] });
  assert.equal(resolveRules({ players: 3 }).handSize, 5);
  assert.equal(resolveRules({ players: 4 }).handSize, 4);
  assert.equal(resolveRules({ players: 5 }).handSize, 4);
  const small = resolveRules({ preset: 'small' });
  assert.deepEqual(small, { players: 2, colors: 2, ranks: 2, handSize: 3, infoTokens: 3, lives: 3, zeroOnLoss: true, counts: [3, 1] });
  assert.equal(deckComposition(resolveRules({})).length, 50);
  assert.equal(deckComposition(small).length, 8);
  assert.deepEqual(deckComposition(small), ['R1', 'R1', 'R1', 'R2', 'Y1', 'Y1', 'Y1', 'Y2']);
  assert.deepEqual(resolveRules({ ranks: 3, colors: 4, handSize: 2, infoTokens: 5, lives: 1, zeroOnLoss: false }).counts, [3, 2, 1]);
  assert.deepEqual(resolveRules({ ranks: 1 }).counts, [3]);
  assert.equal(maxScore(full), 25);
  assert.equal(maxScore(small), 4);

  assert.deepEqual(hanabiOptionIssues({}), []);
  assert.deepEqual(hanabiOptionIssues(undefined), []);
  for (const bad of [{ players: 1 }, { players: 6 }, { players: 2.5 }, { colors: 6 }, { ranks: 0 }, { infoTokens: 0 }, { lives: 0 }, { preset: 'huge' }, { preset: 'small', players: 3 }] as HanabiOptions[]) {
    assert.ok(hanabiOptionIssues(bad).length > 0, JSON.stringify(bad));
    assert.throws(() => newGame(1, bad), /invalid Hanabi options/);
  }
  assert.match(hanabiOptionIssues({ preset: 'small', players: 3 })[0], /need 9 cards; the deck has 8/);
});

test('the deal: seeded, JSON-serialisable, hands of the right size, all tokens and lives', () => {
  for (const [opts, hand] of [
    [{ players: 2 }, 5],
    [{ players: 3 }, 5],
    [{ players: 4 }, 4],
    [{ players: 5 }, 4],
    [{ preset: 'small' }, 3],
  ] as [HanabiOptions, number][]) {
    const s = newGame(7, opts);
    assert.deepEqual(newGame(7, opts), s, 'same seed, same game');
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s, 'JSON round trip');
    assert.equal(s.hands.length, s.rules.players);
    for (const h of s.hands) assert.equal(h.length, hand);
    assert.equal(deckSize(s), deckComposition(s.rules).length - hand * s.rules.players);
    assert.equal(s.info, s.rules.infoTokens);
    assert.equal(s.lives, 3);
    assert.equal(s.current, 0);
    assert.equal(s.over, false);
    assert.deepEqual(invariantIssues(s), []);
    // The deal goes round the table: card k of player p is deck[k * players + p].
    assert.equal(s.hands[1][0].card, s.deck[1]);
    assert.equal(s.hands[0][1].card, s.deck[s.rules.players]);
  }
  const decks = new Set(Array.from({ length: 50 }, (_, seed) => newGame(seed, {}).deck.join('')));
  assert.equal(decks.size, 50, 'seeds give different shuffles');
  // The small preset deals 6 of 8 cards: the final round starts after the second draw.
  assert.equal(deckSize(newGame(0, { preset: 'small' })), 2);
});

test('a deal that empties the deck starts the final round at once', () => {
  const s = newGame(3, { colors: 1, ranks: 2, handSize: 2 }); // 4 cards (R1 x3, R2), 2 hands of 2
  assert.equal(deckSize(s), 0);
  assert.equal(s.finalTurnsLeft, 2);
  const first = act('player_0', s, 'nothing to say');
  assert.equal(first.nextState.finalTurnsLeft, 1);
  assert.equal(first.done, false);
  const second = act('player_1', first.nextState, 'still nothing');
  assert.equal(second.done, true);
  assert.equal(second.nextState.end, 'final_round');
  assert.equal(second.nextState.score, 0);
});

// ---------------------------------------------------------------- actions

test('play: a fitting card joins its firework, the hand closes up and draws into the last slot', () => {
  const s = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1', 'G2'], { info: 6 });
  const r = act('player_0', s, 'R1 is not there... I think slot 2.\n#### play 2');
  const n = r.nextState;
  assert.deepEqual(n.fireworks, [1, 0, 0, 0, 0]);
  assert.deepEqual(n.hands[0].map((h) => h.card), ['Y3', 'B2', 'G4', 'W5', 'G1']);
  assert.deepEqual(n.hands[0][4], { card: 'G1', colors: FULL, ranks: FULL }, 'the new card is unknown');
  assert.equal(n.info, 6);
  assert.equal(n.lives, 3);
  assert.equal(n.current, 1);
  assert.equal(n.moves, 1);
  assert.equal(n.score, 1);
  assert.equal(deckSize(n), 1);
  assert.equal(r.local, HANABI_REWARDS.play);
  assert.equal(r.global, 0);
  assert.equal(r.done, false);
  assert.deepEqual(n.log, [{ player: 0, kind: 'play', slot: 1, card: 'R1', ok: true }]);
  assert.match(r.outcome, /played R1 \(slot 2\)/);
  assert.deepEqual(invariantIssues(n), []);
  assert.equal(r.handoff, undefined);
});

test('misplay: the card is discarded and a life is lost', () => {
  const s = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1', 'G2'], { info: 6 });
  const r = act('player_0', s, '#### play 1');
  assert.deepEqual(r.nextState.fireworks, [0, 0, 0, 0, 0]);
  assert.equal(r.nextState.lives, 2);
  assert.equal(r.nextState.discards[r.nextState.discards.length - 1], 'Y3');
  assert.equal(r.nextState.info, 6, 'a misplay does not regain a token');
  assert.equal(r.local, HANABI_REWARDS.lifeLost);
  assert.equal(r.nextState.score, 0);
  assert.deepEqual(invariantIssues(r.nextState), []);
});

test('discard: regains a token and draws; not allowed at the token maximum', () => {
  const s = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1', 'G2'], { info: 5 });
  const r = act('player_0', s, '#### discard 4');
  assert.equal(r.nextState.info, 6);
  assert.equal(r.nextState.discards[r.nextState.discards.length - 1], 'G4');
  assert.deepEqual(r.nextState.hands[0].map((h) => h.card), ['Y3', 'R1', 'B2', 'W5', 'G1']);
  assert.equal(r.local, 0);
  assert.deepEqual(invariantIssues(r.nextState), []);

  const atMax = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1'], { info: 8 });
  assert.match(illegalReason(atMax, 0, { type: 'discard', slot: 0 })!, /cannot discard with all 8/);
  const f = act('player_0', atMax, '#### discard 1');
  assert.equal(f.local, HANABI_REWARDS.invalid);
  assert.match(f.outcome, /illegal: cannot discard/);
  assert.equal(f.nextState.info, 8);
  assert.deepEqual(f.nextState.hands, atMax.hands, 'a forfeit changes no hand');
  assert.deepEqual(f.nextState.discards, atMax.discards);
  assert.equal(f.nextState.current, 1, 'the turn passes');
  assert.equal(f.nextState.moves, 1);
  assert.deepEqual(f.nextState.log, [{ player: 0, kind: 'invalid', reason: 'cannot discard with all 8 information tokens' }]);
  // Small preset: the maximum is 3.
  const small = newGame(1, { preset: 'small' });
  assert.match(illegalReason(small, 0, { type: 'discard', slot: 0 })!, /all 3/);
});

test('clues: colour and rank knowledge, positive and negative, one token', () => {
  const s = setup({ players: 3 }, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'Y4', 'R5', 'Y1'], ['B1', 'B3', 'G1', 'G2', 'W1']], ['G3'], { info: 4 });
  const r = act('player_0', s, '#### clue player 1 red');
  const h = r.nextState.hands[1];
  assert.deepEqual(h.map((x) => x.colors), [0b00001, 0b00001, 0b11110, 0b00001, 0b11110]);
  assert.deepEqual(h.map((x) => x.ranks), [FULL, FULL, FULL, FULL, FULL]);
  assert.equal(r.nextState.info, 3);
  assert.equal(r.local, 0);
  assert.deepEqual(r.nextState.log[0], { player: 0, kind: 'color_clue', target: 1, color: 0, slots: [0, 1, 3] });
  assert.deepEqual(r.nextState.hands[0], s.hands[0], "the clue-giver's hand is untouched");
  assert.deepEqual(r.nextState.hands[2], s.hands[2]);
  assert.equal(r.nextState.current, 1);

  const r2 = act('player_1', r.nextState, '#### hint P2 rank 1');
  const h2 = r2.nextState.hands[2];
  assert.deepEqual(h2.map((x) => x.ranks), [0b00001, 0b11110, 0b00001, 0b11110, 0b00001]);
  assert.equal(r2.nextState.info, 2);
  assert.deepEqual(r2.nextState.log[1], { player: 1, kind: 'rank_clue', target: 2, rank: 1, slots: [0, 2, 4] });
  // A second clue narrows further: rank clue on player 1 after the colour clue.
  const r3 = act('player_2', r2.nextState, '#### clue player 1 5');
  assert.deepEqual(r3.nextState.hands[1][3], { card: 'R5', colors: 0b00001, ranks: 0b10000 });
  assert.deepEqual(invariantIssues(r3.nextState), []);
});

test('clue legality: no empty clue, no self clue, no clue without tokens, no colour or rank outside the game', () => {
  const s = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1'], { info: 2 });
  assert.match(illegalReason(s, 0, { type: 'color_clue', target: 1, color: 2 })!, /player 1 has no green card/);
  assert.match(illegalReason(s, 0, { type: 'rank_clue', target: 1, rank: 3 }) ?? '', /^$/); // R3 is there: legal
  assert.equal(illegalReason(s, 0, { type: 'rank_clue', target: 1, rank: 3 }), null);
  assert.match(illegalReason(s, 0, { type: 'color_clue', target: 0, color: 1 })!, /cannot clue yourself/);
  assert.match(illegalReason(s, 0, { type: 'rank_clue', target: 5, rank: 1 })!, /no player 5/);
  assert.match(illegalReason(s, 0, { type: 'rank_clue', target: 1, rank: 6 })!, /no rank 6/);
  assert.match(illegalReason(s, 1, { type: 'rank_clue', target: 0, rank: 1 })!, /player 0's turn/);
  const none = { ...s, info: 0 };
  assert.match(illegalReason(none, 0, { type: 'color_clue', target: 1, color: 0 })!, /no information tokens/);
  for (const text of ['#### clue player 1 green', '#### clue player 0 yellow', '#### clue player 1 6']) {
    const r = act('player_0', s, text);
    assert.equal(r.local, HANABI_REWARDS.invalid, text);
    assert.equal(r.nextState.info, 2, `${text}: no token spent`);
    assert.deepEqual(r.nextState.hands, s.hands);
    assert.equal(r.nextState.current, 1);
  }
  const noTokens = act('player_0', none, '#### clue player 1 red');
  assert.match(noTokens.outcome, /no information tokens/);
  assert.equal(noTokens.nextState.info, 0);
  // The small game has red and yellow only.
  const small = newGame(2, { preset: 'small' });
  assert.match(illegalReason(small, 0, { type: 'color_clue', target: 1, color: 4 })!, /no such colour/);
  assert.match(act('player_0', small, '#### clue player 1 blue').outcome, /no such colour/);
  assert.match(illegalReason(small, 0, { type: 'rank_clue', target: 1, rank: 3 })!, /ranks are 1 to 2/);
});

test('slots out of range are illegal (slots are 1-based; 0 is not a slot)', () => {
  const s = setup({}, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'R4', 'R5', 'Y1']], ['G1'], { info: 5 });
  for (const text of ['#### play 0', '#### play 6', '#### discard 0', '#### discard 9', '#### play 123456']) {
    const r = act('player_0', s, text);
    assert.equal(r.local, HANABI_REWARDS.invalid, text);
    assert.match(r.outcome, /no slot/);
    assert.deepEqual(r.nextState.hands, s.hands);
  }
});

test('tokens: discards and completions never go above the maximum; completing a colour regains one', () => {
  const s = setup({}, [['R5', 'Y1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'Y4', 'B5', 'Y2']], ['G1', 'G2'], { fireworks: [4, 0, 0, 0, 0], info: 5 });
  const r = act('player_0', s, '#### play 1');
  assert.equal(r.nextState.fireworks[0], 5);
  assert.equal(r.nextState.info, 6, 'completing red regains a token');
  assert.equal(r.local, 1);
  const atMax = { ...s, info: 8 };
  assert.equal(act('player_0', atMax, '#### play 1').nextState.info, 8, 'not above the maximum');
  // A 4 does not complete anything.
  const four = setup({}, [['R4', 'Y1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'Y4', 'B5', 'Y2']], ['G1'], { fireworks: [3, 0, 0, 0, 0], info: 5 });
  assert.equal(act('player_0', four, '#### play 1').nextState.info, 5);
  // Small preset: rank 2 completes a colour.
  const small = setup({ preset: 'small' }, [['R2', 'Y1', 'Y1'], ['R1', 'R1', 'Y1']], ['Y2'], { fireworks: [1, 0], info: 1 });
  const rs = act('player_0', small, '#### play 1');
  assert.equal(rs.nextState.info, 2);
  assert.equal(rs.nextState.fireworks[0], 2);
});

test('losing the last life ends the game with score 0 (zeroOnLoss), or keeps the fireworks', () => {
  const hands = [['R3', 'Y1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'Y4', 'B5', 'Y2']];
  const s = setup({}, hands, ['G1', 'G2'], { fireworks: [1, 0, 2, 0, 0], lives: 1, info: 4 });
  assert.equal(s.score, 3);
  const r = act('player_0', s, '#### play 1', 0.5);
  assert.equal(r.nextState.lives, 0);
  assert.equal(r.done, true);
  assert.equal(r.solved, false);
  assert.equal(r.nextState.over, true);
  assert.equal(r.nextState.end, 'lives');
  assert.equal(r.nextState.score, 0);
  assert.equal(r.local, HANABI_REWARDS.lifeLost);
  assert.equal(r.global, 0);
  assert.equal(r.reward, -1);
  assert.match(r.outcome, /game over \(lives\), score 0\/25/);

  const keep = setup({ zeroOnLoss: false }, hands, ['G1', 'G2'], { fireworks: [1, 0, 2, 0, 0], lives: 1, info: 4 });
  const k = act('player_0', keep, '#### play 1', 0.5);
  assert.equal(k.nextState.over, true);
  assert.equal(k.nextState.score, 3);
  close(k.global, 3 / 25);
  close(k.reward, -1 + 0.5 * (3 / 25));
});

test('all fireworks complete: the game ends solved with global 1', () => {
  const s = setup({}, [['W5', 'Y1', 'B1', 'G1', 'R1'], ['R2', 'Y2', 'B3', 'G4', 'W1']], ['G2', 'W2'], { fireworks: [5, 5, 5, 4, 5], info: 3 });
  const r = act('player_0', s, '#### play 1', 2);
  assert.equal(r.nextState.score, 25);
  assert.equal(r.done, true);
  assert.equal(r.solved, true);
  assert.equal(r.nextState.end, 'perfect');
  assert.equal(r.global, 1);
  assert.equal(r.reward, 1 + 2 * 1);
  // Small preset maximum: 4.
  const small = setup({ preset: 'small' }, [['Y2', 'R1', 'R1'], ['Y1', 'Y1']], [], { fireworks: [2, 1], info: 1 });
  const rs = act('player_0', small, '#### play 1');
  assert.equal(rs.solved, true);
  assert.equal(rs.nextState.score, 4);
});

test('final round: after the last card is drawn every player, the drawer included, gets exactly one more turn', () => {
  for (const players of [2, 3, 4, 5]) {
    const size = players <= 3 ? 5 : 4;
    const base = newGame(11, { players });
    // Move all but one card of the pile to the discards to reach the end quickly.
    const pile = base.deck.slice(base.drawn);
    const s: HanabiState = { ...base, drawn: base.deck.length - 1, discards: pile.slice(0, -1), info: 4 };
    assert.deepEqual(invariantIssues(s), []);
    const drawer = act('player_0', s, '#### discard 1');
    assert.equal(deckSize(drawer.nextState), 0);
    assert.equal(drawer.nextState.finalTurnsLeft, players);
    assert.equal(drawer.done, false);
    let state = drawer.nextState;
    const order: number[] = [];
    for (let k = 0; k < players; k++) {
      assert.equal(state.over, false, `${players}p: still running before final turn ${k + 1}`);
      order.push(state.current);
      const seat = state.current;
      // Mix discards, clues and a forfeit: each counts as the player's one turn.
      const text = k === 0 ? '#### discard 1' : k === 1 ? 'gibberish' : `#### clue player ${(seat + 1) % players} ${state.hands[(seat + 1) % players][0].card[1]}`;
      const r = act(`player_${seat}`, state, text);
      state = r.nextState;
      assert.equal(state.hands[seat].length, k === 0 ? size - 1 : size, 'no card drawn from the empty deck');
      assert.deepEqual(invariantIssues(state), []);
      if (k === players - 1) {
        assert.equal(r.done, true);
        assert.equal(state.end, 'final_round');
        close(r.global, state.score / 25);
      }
    }
    assert.deepEqual(order, Array.from({ length: players }, (_, k) => (1 + k) % players), 'one turn each, ending with the drawer');
    assert.equal(state.over, true);
    assert.equal(state.moves, s.moves + players + 1);
  }
});

// ---------------------------------------------------------------- scoring

test('score: neutral when the game is over, out of turn or for a seat the game does not have', () => {
  const s = newGame(4, { players: 2 });
  const before = snapshot(s);
  for (const [agent, text, pattern] of [
    ['player_1', '#### play 1', /not player_1's turn/],
    ['player_2', '#### play 1', /not seated \(2 players\)/],
    ['player_4', '#### clue player 0 red', /not seated/],
    ['somebody', '#### play 1', /not seated/],
  ] as const) {
    const r = act(agent, s, text);
    assert.deepEqual([r.local, r.global, r.reward, r.done, r.solved], [0, 0, 0, false, false], agent);
    assert.equal(r.nextState, s);
    assert.match(r.outcome, pattern);
  }
  const over: HanabiState = { ...s, over: true, end: 'lives', lives: 0 };
  const r = act('player_0', over, '#### play 1');
  assert.deepEqual([r.local, r.global, r.reward, r.done], [0, 0, 0, true]);
  assert.equal(r.nextState, over);
  assert.equal(snapshot(s), before, 'nothing mutated');
});

test('score is pure: K candidates from one state leave it untouched and are reproducible', () => {
  const s = newGame(5, { players: 3 });
  const before = snapshot(s);
  const texts = ['#### play 1', '#### discard 2', '#### clue player 1 red', '#### clue player 2 1', 'garbage', '', '#### play 3'];
  const first = texts.map((t) => act('player_0', s, t, 0.7));
  const again = texts.map((t) => act('player_0', s, t, 0.7));
  assert.equal(snapshot(s), before);
  assert.deepEqual(first, again);
  for (const r of first) {
    assert.notEqual(r.nextState, s, 'a fresh state');
    close(r.reward, r.local + 0.7 * r.global);
  }
});

test('unreadable answers: -1, the turn is forfeited, the game is otherwise unchanged, nothing throws', () => {
  const s = newGame(6, { players: 2 });
  const weird: unknown[] = ['', 'play 1', '####', '#### ', '#### pass', '#### ???', '#### clue', '#### clue player', '#### play', 'x'.repeat(100000), '####'.repeat(1000), '#### clue player 1 red 3', null, undefined, 42, { a: 1 }, '\u0000####\u0000play'];
  for (const text of weird) {
    const r = hanabi.score('player_0', s, text as string, null, 1);
    assert.equal(r.local, HANABI_REWARDS.invalid, String(text).slice(0, 40));
    assert.equal(r.global, 0);
    assert.equal(r.nextState.current, 1);
    assert.deepEqual(r.nextState.hands, s.hands);
    assert.equal(r.nextState.info, s.info);
    assert.equal(r.nextState.log[r.nextState.log.length - 1].kind, 'invalid');
    assert.match(r.outcome, /turn forfeited/);
  }
});

test('the definition: agents, program, reset through the interface', () => {
  assert.deepEqual([...hanabi.agents], ['player_0', 'player_1', 'player_2', 'player_3', 'player_4']);
  assert.deepEqual(HANABI_AGENTS, hanabi.agents);
  assert.equal(hanabi.program('player_0', '```python\nprint(1)\n```', newGame(9, { players: 2 })), null);
  assert.deepEqual(hanabi.reset(9, { players: 4 }), newGame(9, { players: 4 }));
  assert.equal(hanabi.reset(9, { preset: 'small' }).rules.colors, 2);
});

// ---------------------------------------------------------------- parser

test('parser table', () => {
  const cases: [string, number, number, HanabiAction | null][] = [
    ['#### play 1', 0, 2, { type: 'play', slot: 0 }],
    ['#### Play 3', 0, 2, { type: 'play', slot: 2 }],
    ['#### PLAY CARD 2', 0, 2, { type: 'play', slot: 1 }],
    ['#### play slot 4', 0, 2, { type: 'play', slot: 3 }],
    ['#### play the 2nd card', 0, 2, { type: 'play', slot: 1 }],
    ['#### play my first card', 0, 2, { type: 'play', slot: 0 }],
    ['#### **play 5**', 0, 2, { type: 'play', slot: 4 }],
    ['#### `discard 2`', 0, 2, { type: 'discard', slot: 1 }],
    ['#### Action: discard card #3', 0, 2, { type: 'discard', slot: 2 }],
    ['#### I discard 1 because it is old', 0, 2, { type: 'discard', slot: 0 }],
    ['#### <Discard card 0>', 0, 2, { type: 'discard', slot: -1 }], // 0 is read as a slot number; the rules reject it
    ['#### drop 4', 0, 2, { type: 'discard', slot: 3 }],
    ['#### play 1\n#### play 2', 0, 2, { type: 'play', slot: 1 }], // the last #### counts
    ['thinking...\n####\n\nplay 2', 0, 2, { type: 'play', slot: 1 }],
    ['#### clue player 1 red', 0, 3, { type: 'color_clue', target: 1, color: 0 }],
    ['#### clue player_2 blue', 0, 3, { type: 'color_clue', target: 2, color: 4 }],
    ['#### Hint P1 R', 0, 3, { type: 'color_clue', target: 1, color: 0 }],
    ['#### hint p2 y', 0, 3, { type: 'color_clue', target: 2, color: 1 }],
    ['#### clue player 2 colour green', 0, 3, { type: 'color_clue', target: 2, color: 2 }],
    ['#### clue player 1 rank 3', 0, 3, { type: 'rank_clue', target: 1, rank: 3 }],
    ['#### clue player 1 3', 0, 3, { type: 'rank_clue', target: 1, rank: 3 }],
    ['#### clue 2 4', 0, 3, { type: 'rank_clue', target: 2, rank: 4 }],
    ['#### clue 2 white', 0, 3, { type: 'color_clue', target: 2, color: 3 }],
    ['#### clue white to player 2', 0, 3, { type: 'color_clue', target: 2, color: 3 }],
    ['#### tell player 0 about the threes', 1, 3, { type: 'rank_clue', target: 0, rank: 3 }],
    ['#### give player 2 a red clue', 1, 3, { type: 'color_clue', target: 2, color: 0 }],
    ['#### clue player 1 reds (slots 1 and 3)', 0, 3, { type: 'color_clue', target: 1, color: 0 }],
    ['#### clue player 1 number 5 - they can save it', 0, 3, { type: 'rank_clue', target: 1, rank: 5 }],
    ['#### Reveal player +1 color R', 0, 2, { type: 'color_clue', target: 1, color: 0 }],
    ['#### Reveal player +1 rank 2', 1, 2, { type: 'rank_clue', target: 0, rank: 2 }],
    ['#### reveal player +2 rank 1', 4, 5, { type: 'rank_clue', target: 1, rank: 1 }],
    ['#### clue red', 1, 2, { type: 'color_clue', target: 0, color: 0 }], // two players: the target is implied
    ['#### clue 2', 0, 2, { type: 'rank_clue', target: 1, rank: 2 }],
    ['#### clue player 0 red', 0, 2, { type: 'color_clue', target: 0, color: 0 }], // a self clue: the rules reject it
    ['#### clue red', 0, 3, null], // three players: no target
    ['#### clue 2', 0, 3, null],
    ['#### clue player 1 red 3', 0, 3, null], // colour and rank
    ['#### clue player 1 red blue', 0, 3, null],
    ['#### clue player 1', 0, 3, null],
    ['#### clue player red', 0, 3, null],
    ['#### clue 1 2 3', 0, 3, null],
    ['#### play', 0, 2, null],
    ['#### play red', 0, 2, null],
    ['#### pass', 0, 2, null],
    ['play 1', 0, 2, null], // no ####
    ['', 0, 2, null],
    ['####', 0, 2, null],
  ];
  for (const [text, player, players, expected] of cases) {
    const r = parseAction(text, player, players);
    if (expected === null) assert.equal(r.ok, false, `${JSON.stringify(text)} should not parse, got ${JSON.stringify(r)}`);
    else assert.deepEqual(r, { ok: true, action: expected }, JSON.stringify(text));
  }
  assert.deepEqual(parseAction(null, 0, 2), { ok: false, reason: 'no answer text' });
  // formatAction round-trips through the parser.
  const s = newGame(1, { players: 5 });
  for (const a of legalActions(s)) assert.deepEqual(parseAction(`#### ${formatAction(a)}`, 0, 5), { ok: true, action: a });
});

// ---------------------------------------------------------------- prompts

const ownHandSection = (text: string) => text.slice(text.indexOf('Your hand'), text.indexOf("The other players' hands"));

test('prompts: the player view, the action format, clue knowledge', () => {
  const s = setup({ players: 3 }, [['Y3', 'R1', 'B2', 'G4', 'W5'], ['R2', 'R3', 'Y4', 'R5', 'Y1'], ['B1', 'B3', 'G1', 'G2', 'W1']], ['G3', 'G3'], { info: 4 });
  const after = act('player_0', s, '#### clue player 1 red').nextState;
  const [system, user] = hanabi.prompt('player_1', { state: after, turn: 0, handoff: undefined });
  assert.equal(system.role, 'system');
  assert.equal(user.role, 'user');
  assert.match(system.content, /You are player 1 .* 3 players/);
  assert.match(system.content, /#### play 1/);
  assert.match(system.content, /#### clue player \d red/);
  assert.match(system.content, /Slots are numbered from 1/);
  assert.match(system.content, /three 1s, two 2s, two 3s, two 4s and one 5 \(10 cards per colour, 50 in all\)/);
  assert.match(user.content, /It is your turn \(you are player 1\)/);
  assert.match(user.content, /Information tokens: 3 of 8\. Lives: 3 of 3\. Deck: 2 cards left\./);
  assert.match(user.content, /slot 1: colour red; rank unknown/);
  assert.match(user.content, /slot 3: colour one of yellow\/green\/white\/blue; rank unknown/);
  assert.match(user.content, /player 2:\n {4}slot 1: B1 \(they know: colour unknown; rank unknown\)/);
  assert.match(user.content, /player 0:\n {4}slot 1: Y3/);
  assert.match(user.content, /player 0 clued you: red is in your slots 1, 2, 4/);
  assert.doesNotMatch(ownHandSection(user.content), /R2|R3|Y4|R5|Y1/);
  // Someone else's view while it is not their turn; the small game's rules.
  const other = hanabi.prompt('player_2', { state: after, turn: 3, handoff: undefined })[1].content;
  assert.match(other, /Round 4\. It is player 1's turn, not yours/);
  assert.match(other, /player 0 clued player 1: red is in their slots 1, 2, 4/);
  const small = hanabi.prompt('player_0', { state: newGame(0, { preset: 'small' }), turn: 0, handoff: undefined })[0].content;
  assert.match(small, /red \(R\), yellow \(Y\); ranks 1 to 2; each colour has three 1s and one 2 \(4 cards per colour, 8 in all\)/);
  assert.match(small, /3 information tokens .* and 3 lives/);
  // Another player's forfeit reason is not shown (it may describe a hand the reader cannot see).
  const forfeited = act('player_0', s, '#### clue player 1 green').nextState;
  assert.match(hanabi.prompt('player_1', { state: forfeited, turn: 0, handoff: undefined })[1].content, /player 0 forfeited the turn \(an invalid or illegal action\)/);
  assert.match(hanabi.prompt('player_0', { state: forfeited, turn: 0, handoff: undefined })[1].content, /you forfeited your turn \(player 1 has no green card\)/);
  // An unseated agent gets a short note, not an error.
  assert.match(hanabi.prompt('player_4', { state: s, turn: 0, handoff: undefined })[0].content, /does not play/);
});

// ---------------------------------------------------------------- random play

const SETTINGS: HanabiOptions[] = [{ players: 2 }, { players: 3 }, { players: 4 }, { players: 5 }, { preset: 'small' }, { players: 3, colors: 3, ranks: 4, handSize: 3, infoTokens: 5, lives: 2, zeroOnLoss: false }];

function garbage(rng: () => number): string {
  const pieces = ['####', 'play', 'discard', 'clue', 'hint', 'player', 'p', 'red', 'blue', 'R', 'Y', '0', '1', '2', '3', '5', '7', '+1', '\n', ' ', '**', '(', 'rank', 'colour', 'x', '####', 'pass', '-', '\u00e9', '#'];
  const n = randomInt(rng, 12);
  let out = '';
  for (let i = 0; i < n; i++) out += pieces[randomInt(rng, pieces.length)] + (rng() < 0.6 ? ' ' : '');
  return out;
}

// A random answer: mostly legal actions, some random (possibly illegal) actions, some garbage.
function randomAnswer(rng: () => number, s: HanabiState): string {
  const u = rng();
  if (u < 0.6) {
    const legal = legalActions(s);
    return `#### ${formatAction(legal[randomInt(rng, legal.length)])}`;
  }
  if (u < 0.85) {
    const n = s.rules.players;
    const pick = randomInt(rng, 4);
    const a: HanabiAction =
      pick === 0
        ? { type: 'play', slot: randomInt(rng, 7) - 1 }
        : pick === 1
          ? { type: 'discard', slot: randomInt(rng, 7) - 1 }
          : pick === 2
            ? { type: 'color_clue', target: randomInt(rng, n + 1), color: randomInt(rng, 5) }
            : { type: 'rank_clue', target: randomInt(rng, n + 1), rank: randomInt(rng, 6) + 1 };
    return `#### ${formatAction(a)}`;
  }
  return garbage(rng);
}

test('random play: cards are conserved, tokens and lives stay in bounds, games end, score() never throws', () => {
  let games = 0;
  let steps = 0;
  for (const opts of SETTINGS) {
    for (let seed = 0; seed < 60; seed++) {
      const rng = mulberry32(seed * 7919 + 13);
      let s = newGame(seed, opts);
      const n = s.rules.players;
      const max = maxScore(s.rules);
      let turn = 0;
      while (!s.over) {
        assert.ok(turn < 400, 'the game ends');
        for (let p = 0; p < HANABI_AGENTS.length && !s.over; p++) {
          const agent = HANABI_AGENTS[p];
          if (p >= n) {
            // Agents beyond the table are neutral.
            const r = act(agent, s, randomAnswer(rng, s));
            assert.equal(r.nextState, s);
            continue;
          }
          const before = snapshot(s);
          // K candidates from the same state, then continue from one of them.
          const candidates = Array.from({ length: 3 }, () => act(agent, s, randomAnswer(rng, s), 0.5));
          assert.equal(snapshot(s), before, 'score() does not mutate its input');
          for (const r of candidates) {
            assert.deepEqual(invariantIssues(r.nextState), [], `${JSON.stringify(opts)} seed ${seed}`);
            assert.ok(r.local >= -1 && r.local <= 1);
            assert.ok(r.global >= 0 && r.global <= 1);
            close(r.reward, r.local + 0.5 * r.global);
            assert.equal(r.done, r.nextState.over);
            assert.equal(r.nextState.current, (p + 1) % n);
            assert.equal(r.nextState.moves, s.moves + 1);
            assert.ok(r.nextState.info >= 0 && r.nextState.info <= s.rules.infoTokens);
            if (r.done) close(r.global, r.nextState.score / max);
            else assert.equal(r.global, 0);
            const gained = r.nextState.fireworks.reduce((a, b) => a + b, 0) - s.fireworks.reduce((a, b) => a + b, 0);
            assert.equal(r.local, gained - (s.lives - r.nextState.lives) - (r.nextState.log[r.nextState.log.length - 1].kind === 'invalid' ? 1 : 0));
            steps++;
          }
          s = candidates[randomInt(rng, candidates.length)].nextState;
          if (rng() < 0.05) assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
        }
        turn++;
      }
      const total = s.fireworks.reduce((a, b) => a + b, 0);
      assert.ok(s.end !== null);
      assert.equal(s.score, s.end === 'lives' && s.rules.zeroOnLoss ? 0 : total);
      // After the game every agent is neutral.
      for (const agent of HANABI_AGENTS) assert.equal(act(agent, s, '#### play 1').reward, 0);
      games++;
    }
  }
  assert.equal(games, SETTINGS.length * 60);
  assert.ok(steps > 10000, `${steps} steps`);
});

test('random legal play through the reducer: always a legal action, sound states, both losing endings', () => {
  const ends = new Set<string>();
  for (const opts of SETTINGS) {
    for (let seed = 0; seed < 150; seed++) {
      const rng = mulberry32(seed + 99);
      let s = newGame(seed, opts);
      while (!s.over) {
        const legal = legalActions(s);
        assert.ok(legal.length > 0, 'a player always has a legal action');
        for (const a of legal) assert.equal(illegalReason(s, s.current, a), null);
        const r = step(s, s.current, legal[randomInt(rng, legal.length)]);
        assert.equal(r.legal, true);
        s = r.state;
        assert.deepEqual(invariantIssues(s), []);
      }
      ends.add(s.end!);
    }
  }
  // (Random play almost never completes the fireworks; the perfect ending has its own test above.)
  assert.ok(ends.has('final_round') && ends.has('lives'), [...ends].join());
});

test("prompts never reveal the player's own cards or the deck", () => {
  for (const opts of SETTINGS) {
    for (let seed = 0; seed < 25; seed++) {
      const rng = mulberry32(seed + 5);
      let s = newGame(seed, opts);
      const comp = deckComposition(s.rules);
      const stop = randomInt(rng, 30);
      for (let k = 0; k < stop && !s.over; k++) s = act(`player_${s.current}`, s, randomAnswer(rng, s)).nextState;
      for (let me = 0; me < s.rules.players; me++) {
        const prompt = hanabi.prompt(HANABI_AGENTS[me], { state: s, turn: 2, handoff: undefined });
        // 1. The own-hand section names no card.
        assert.doesNotMatch(ownHandSection(prompt[1].content), /\b[RYGWB][1-5]\b/);
        // 2. The prompt is a function of the player's view only: other identities for its own cards
        //    (same clue knowledge) and another deck order give the very same prompt.
        const swapped: HanabiState = {
          ...s,
          hands: s.hands.map((h, p) => (p === me ? h.map((x) => ({ ...x, card: comp[randomInt(rng, comp.length)] })) : h)),
          deck: [...s.deck.slice(0, s.drawn), ...s.deck.slice(s.drawn).reverse().map((c, i) => (i % 2 ? c : comp[randomInt(rng, comp.length)]))],
        };
        assert.deepEqual(hanabi.prompt(HANABI_AGENTS[me], { state: swapped, turn: 2, handoff: undefined }), prompt, `${JSON.stringify(opts)} seed ${seed} player ${me}`);
      }
    }
  }
});

// ---------------------------------------------------------------- scripted player

test('the scripted player only plays legal actions, reads only its view, and scores well above random', () => {
  const mean: Record<string, number> = {};
  for (const opts of [{ players: 2 }, { players: 5 }, { preset: 'small' }] as HanabiOptions[]) {
    let total = 0;
    for (let seed = 0; seed < 40; seed++) {
      let s = newGame(seed, opts);
      let turn = 0;
      while (!s.over) {
        for (let p = 0; p < s.rules.players && !s.over; p++) {
          const action = scriptedAction(s, p);
          assert.equal(illegalReason(s, p, action), null);
          // Its own cards do not matter to it.
          const blind: HanabiState = { ...s, hands: s.hands.map((h, q) => (q === p ? h.map((x) => ({ ...x, card: 'R1' })) : h)) };
          assert.deepEqual(scriptedAction(blind, p), action);
          const text = hanabi.scripted!(HANABI_AGENTS[p], { state: s, turn, handoff: undefined });
          const r = act(HANABI_AGENTS[p], s, text);
          assert.notEqual(r.local, HANABI_REWARDS.invalid);
          s = r.nextState;
        }
        turn++;
      }
      total += s.score;
    }
    mean[JSON.stringify(opts)] = total / 40;
  }
  assert.ok(mean['{"players":2}'] > 12, JSON.stringify(mean));
  assert.ok(mean['{"players":5}'] > 8, JSON.stringify(mean));
  assert.ok(mean['{"preset":"small"}'] > 1.5, JSON.stringify(mean));
});

test('scoreHanabi is the definition score', () => {
  const s = newGame(8, {});
  assert.deepEqual(scoreHanabi('player_0', s, '#### play 2', 0.3), act('player_0', s, '#### play 2', 0.3));
});
