// Hanabi environment throughput: new games per second, and env steps per second with random
// legal actions, through the reducer (step) and through the EnvDefinition (score(): parse the
// answer text, apply, reward), plus prompts per second. 2 and 5 players and the small setting.
// Run: npx tsx bench/env_hanabi.ts [seconds per measurement, default 1]
import { performance } from 'node:perf_hooks';
import { cpus } from 'node:os';
import { formatAction, hanabi, legalActions, newGame, step, type HanabiOptions, type HanabiState } from '../envs/hanabi/index.js';
import { mulberry32, randomInt } from '../envs/shared/rng.js';

const SECONDS = Number(process.argv[2] ?? 1);
const SETTINGS: [string, HanabiOptions][] = [
  ['2 players', { players: 2 }],
  ['5 players', { players: 5 }],
  ['small (2p)', { preset: 'small' }],
];

// Runs `batch` until `SECONDS` have passed; returns operations per second.
function rate(batch: () => number): number {
  let ops = 0;
  const start = performance.now();
  let now = start;
  while (now - start < SECONDS * 1000) {
    ops += batch();
    now = performance.now();
  }
  return (ops * 1000) / (now - start);
}

function resetRate(opts: HanabiOptions): number {
  let seed = 0;
  return rate(() => {
    for (let i = 0; i < 100; i++) newGame(seed++, opts);
    return 100;
  });
}

// Whole random games; counts actions.
function stepRate(opts: HanabiOptions, viaScore: boolean): { perSecond: number; movesPerGame: number } {
  const rng = mulberry32(1);
  let seed = 0;
  let games = 0;
  let moves = 0;
  const perSecond = rate(() => {
    let s: HanabiState = newGame(seed++, opts);
    let n = 0;
    while (!s.over) {
      const legal = legalActions(s);
      const a = legal[randomInt(rng, legal.length)];
      s = viaScore ? hanabi.score(`player_${s.current}`, s, `#### ${formatAction(a)}`, null, 1).nextState : step(s, s.current, a).state;
      n++;
    }
    games++;
    moves += n;
    return n;
  });
  return { perSecond, movesPerGame: moves / games };
}

function promptRate(opts: HanabiOptions): number {
  // Mid-game states to render.
  const rng = mulberry32(2);
  const states: HanabiState[] = [];
  for (let seed = 0; seed < 50; seed++) {
    let s = newGame(seed, opts);
    for (let k = 0; k < 15 && !s.over; k++) {
      const legal = legalActions(s);
      s = step(s, s.current, legal[randomInt(rng, legal.length)]).state;
    }
    states.push(s);
  }
  let i = 0;
  return rate(() => {
    for (let k = 0; k < 50; k++, i++) {
      const s = states[i % states.length];
      hanabi.prompt(`player_${s.current}`, { state: s, turn: 0, handoff: undefined });
    }
    return 50;
  });
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
console.log(`Hanabi env bench: node ${process.version}, ${cpus()[0]?.model ?? 'cpu'}, ${SECONDS}s per figure, one thread\n`);
console.log('| setting | new games/s | steps/s (reducer) | steps/s (score(), text) | prompts/s | moves/game (random) |');
console.log('|---|---|---|---|---|---|');
for (const [name, opts] of SETTINGS) {
  const resets = resetRate(opts);
  const reducer = stepRate(opts, false);
  const scored = stepRate(opts, true);
  const prompts = promptRate(opts);
  console.log(`| ${name} | ${fmt(resets)} | ${fmt(reducer.perSecond)} | ${fmt(scored.perSecond)} | ${fmt(prompts)} | ${reducer.movesPerGame.toFixed(1)} |`);
}
