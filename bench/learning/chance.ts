// What chance alone scores on Plan-Path: the held-out success of a "policy" that answers, at each
// of the episode's turns, n moves drawn uniformly from U/D/L/R, for n = 1..N. The environment
// counts the goal as reached as soon as a move lands on it (as the reference's
// PlanPathGridEnvState does) and an invalid move costs 0.1 and leaves the walker in place, so on
// a small grid a long random list reaches the goal often: this is the floor a learning row's
// "success" must be read against. The second column plays the same lists under
// env.invalid_move 'end' (an invalid move ends the episode unsolved), where length buys nothing.
// Pure: no model, no stack.
//
// Usage: node --import tsx bench/learning/chance.ts [--map 4] [--blocked 0.22] [--turns 2]
//        [--problems 64] [--draws 200] [--max-moves 12] [--split test]
import { parseArgs } from 'node:util';
import { heldOutSeed } from '../../envs/index.js';
import { applyMoves, generate, type InvalidMoveRule } from '../../envs/planpath/grid.js';
import { mulberry32, randomInt } from '../../envs/shared/rng.js';

const { values } = parseArgs({
  options: {
    map: { type: 'string', default: '4' },
    blocked: { type: 'string', default: '0.22' },
    turns: { type: 'string', default: '2' },
    problems: { type: 'string', default: '64' },
    draws: { type: 'string', default: '200' },
    'max-moves': { type: 'string', default: '12' },
    split: { type: 'string', default: 'test' },
  },
});
const num = (name: keyof typeof values) => {
  const value = Number(values[name]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name}: a positive number, not '${values[name]}'`);
  return value;
};
const split = values.split === 'validation' ? 'validation' : values.split === 'test' ? 'test' : null;
if (split === null) throw new Error(`--split: validation or test, not '${values.split}'`);
const [mapSize, blockedRatio, turns, problems, draws, maxMoves] = [num('map'), num('blocked'), num('turns'), num('problems'), num('draws'), num('max-moves')];

const MOVES = ['U', 'D', 'L', 'R'];
const starts = (invalidMove: InvalidMoveRule) => Array.from({ length: problems }, (_, j) => generate(heldOutSeed(j, split), { mapSize, blockedRatio, invalidMove }));
const optimal = starts('stay').map((s) => s.optimalLength).sort((a, b) => a - b);

console.log(`Plan-Path ${mapSize}x${mapSize}, blocked ${blockedRatio}, ${turns} turns, ${problems} ${split} problems x ${draws} draws`);
console.log(`shortest path: median ${optimal[Math.floor(problems / 2)]} moves, max ${optimal[problems - 1]}`);
console.log("moves per turn | success of uniformly random moves, invalid_move 'stay' | 'end'");

// Success over problems x draws of n random moves per turn; the same draws under either rule.
function chance(invalidMove: InvalidMoveRule, n: number): number {
  const rng = mulberry32(12345 + n);
  let solved = 0;
  for (const start of starts(invalidMove)) {
    for (let d = 0; d < draws; d++) {
      let state = start;
      for (let t = 0; t < turns && !state.done; t++) {
        state = applyMoves(state, Array.from({ length: n }, () => MOVES[randomInt(rng, 4)])).state;
      }
      if (state.solved) solved++;
    }
  }
  return (100 * solved) / (problems * draws);
}

for (let n = 1; n <= maxMoves; n++) {
  const [stay, end] = [chance('stay', n), chance('end', n)];
  console.log(`${String(n).padStart(14)} | ${stay.toFixed(1).padStart(5)}% | ${end.toFixed(1).padStart(5)}%`);
}
