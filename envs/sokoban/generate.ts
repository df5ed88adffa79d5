// Seeded Sokoban rooms, generated as the reference does (PettingLLMs,
// pettingllms/multi_agent_env/stateful/utils.py, itself gym-sokoban's generator), with the
// parameters its SokobanGridEnvState passes to generate_room: p_change_directions 0.35,
// num_steps 25, tries 20, search_depth 200, min_box_distance 2, min_difficulty_score 1.
// Step by step, with the reference's function names:
//   - room_topology_generation: a walk of `walkSteps` steps (the reference's num_steps; it is
//     the length of this walk, not a depth of reverse play) over the room, changing direction
//     with probability 0.35 and stamping one of five 3x3 floor masks at every step; the border
//     stays wall.
//   - place_boxes_and_player: the player on a random floor cell, then each target on a random
//     free floor cell (the boxes start on their targets).
//   - reverse_playing / depth_first_search / reverse_move: the game played backwards by a
//     depth-first search over the four moves (up, down, left, right), where a move always pulls
//     the box behind the player along. The search stops at depth `searchDepth` - 2 (the
//     reference's ttl) or after 300,000 explored positions, and never re-enters a position it
//     has explored (by the reference's key: player, box cells, and whether each box has been
//     pulled). It keeps the first position, in search order, with the highest score = box
//     swaps (pulls of a different box than the last pulled) x box_displacement_score, which
//     is the sum of each box's Manhattan distance to its own target, or 0 when a box is closer
//     than 2; a position where a box or the player stands on a target scores 0.
//   - generate_room: up to 20 tries (topology, placement, reverse play); the first whose kept
//     position has a displacement score >= 1 is used. Every reverse move undoes a forward one,
//     so every room is solvable.
//   - add_random_player_movement: then, with probability 0.5 (0.9 / 0.7 for low scores, which
//     min_box_distance 2 rules out), the player walks 1 to 3 steps (each further step with
//     probability 0.5), never back to a cell it has left; it may end on a target.
// Deliberate departures: one seeded PRNG (envs/shared/rng.ts) instead of Python's `random` and
// numpy's generator, so the rooms of a seed differ from the reference's while their
// distribution is the same (test/unit/sokoban.unit.test.ts compares the statistics); and where
// the reference raises (too few floor cells for the player and boxes, or no usable room in 20
// tries, which aborts its batch), Tandem counts a failed try and keeps trying, up to
// MAX_TRIES, so that every seed has a room. Cost: a 6x6 one-box room takes well under a
// millisecond (the search sees a few hundred positions); 16x16 rooms with 4 boxes reach the
// 300,000-position cap and take a few hundred milliseconds. Pure.
import { mulberry32, randomInt } from '../shared/rng.js';
import { DEFAULT_MAX_STEPS, initialState, type Coord, type DeadlockRule, type SokobanState } from './room.js';

export interface SokobanOptions {
  /** Side of the square room, outer walls included (5..16). Default 6, the reference's scripts. */
  size?: number;
  /** Number of boxes (and targets), 1..4. Default 1, the reference's. */
  boxes?: number;
  /** Steps of the random walk that carves the room's floor (the reference's num_steps), 1..1000. Default 25. */
  walkSteps?: number;
  /** Depth limit of the reverse-play search (the reference's search_depth; positions up to depth - 2 are explored), 4..1000. Default 200. */
  searchDepth?: number;
  /** Moves (valid or not) before the episode is lost. Default 200, the reference's. */
  maxSteps?: number;
  /** What a box pushed into a deadlock does: 'end' the episode (default) or 'continue' it (the reference's). */
  deadlock?: DeadlockRule;
}

export const SOKOBAN_DEFAULTS: Readonly<Required<SokobanOptions>> = Object.freeze({
  size: 6,
  boxes: 1,
  walkSteps: 25,
  searchDepth: 200,
  maxSteps: DEFAULT_MAX_STEPS,
  deadlock: 'end',
});

// The reference's generate_room arguments (SokobanGridEnvState) and search limit.
const P_CHANGE_DIRECTIONS = 0.35;
const MIN_BOX_DISTANCE = 2;
const MIN_DIFFICULTY_SCORE = 1;
const MAX_EXPLORED = 300_000;
// The reference raises after tries = 20; Tandem goes on to MAX_TRIES (the first 20 are the same).
const MAX_TRIES = 200;

// The reference's room_topology_generation directions, as (row, column) steps.
const WALK_DIRECTIONS: readonly Coord[] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
];

// The reference's CHANGE_COORDINATES, in action order: up, down, left, right.
const MOVES: readonly Coord[] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

// Floor masks ('1' = floor) stamped around the walk's position (the reference's five 3x3 masks).
const MASKS: readonly (readonly string[])[] = [
  ['000', '111', '000'],
  ['010', '010', '010'],
  ['000', '110', '010'],
  ['000', '110', '110'],
  ['000', '011', '010'],
];

export function generate(seed: number, options: SokobanOptions = {}): SokobanState {
  const { size, boxes, walkSteps, searchDepth, maxSteps, deadlock } = { ...SOKOBAN_DEFAULTS, ...definedOnly(options) };
  checkInt('size', size, 5, 16);
  checkInt('boxes', boxes, 1, 4);
  checkInt('walkSteps', walkSteps, 1, 1000);
  checkInt('searchDepth', searchDepth, 4, 1000);
  checkInt('maxSteps', maxSteps, 1, 1_000_000);
  if (deadlock !== 'end' && deadlock !== 'continue') throw new RangeError(`deadlock must be 'end' or 'continue', got ${String(deadlock)}`);
  const rng = mulberry32(seed);
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const floor = roomTopology(rng, size, walkSteps);
    const placed = placeBoxesAndPlayer(rng, floor, boxes);
    if (placed === null) continue;
    const best = reversePlaying(floor, size, placed.player, placed.targets, searchDepth);
    const score = boxDisplacementScore(best.boxes, placed.targets, size);
    if (score < MIN_DIFFICULTY_SCORE) continue;
    // The reference's move probabilities by difficulty; with min_box_distance 2 the score is at least 2.
    const moveProbability = score <= MIN_DIFFICULTY_SCORE ? 0.9 : score <= MIN_DIFFICULTY_SCORE * 1.5 ? 0.7 : 0.5;
    const player = randomPlayerMovement(rng, floor, size, best.player, best.boxes, moveProbability);
    const room = Array.from({ length: size }, (_, r) =>
      Array.from({ length: size }, (_, c) => (!floor[r * size + c] ? '#' : placed.targets.includes(r * size + c) ? '.' : '_')).join(''),
    );
    return initialState(room, toCoord(player, size), best.boxes.map((b) => toCoord(b, size)), maxSteps, deadlock);
  }
  throw new RangeError(`no Sokoban room with ${boxes} boxes found for size ${size} in ${MAX_TRIES} tries (seed ${seed})`);
}

// room_topology_generation: 1 = floor, indexed r * size + c; the border is always wall.
function roomTopology(rng: () => number, size: number, steps: number): Uint8Array {
  const floor = new Uint8Array(size * size);
  let [dr, dc] = WALK_DIRECTIONS[randomInt(rng, 4)];
  // random.randint(1, dim - 1) includes dim - 1; the first step clamps it back inside.
  let r = 1 + randomInt(rng, size - 1);
  let c = 1 + randomInt(rng, size - 1);
  for (let s = 0; s < steps; s++) {
    if (rng() < P_CHANGE_DIRECTIONS) [dr, dc] = WALK_DIRECTIONS[randomInt(rng, 4)];
    r = Math.max(1, Math.min(size - 2, r + dr));
    c = Math.max(1, Math.min(size - 2, c + dc));
    const mask = MASKS[randomInt(rng, MASKS.length)];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) if (mask[i][j] === '1') floor[(r - 1 + i) * size + (c - 1 + j)] = 1;
  }
  for (let i = 0; i < size; i++) {
    floor[i] = floor[(size - 1) * size + i] = floor[i * size] = floor[i * size + size - 1] = 0;
  }
  return floor;
}

// place_boxes_and_player: the player, then the targets, each on a random free floor cell
// (row-major order, as numpy's where). null when there are not more floor cells than
// player + boxes (the reference raises).
function placeBoxesAndPlayer(rng: () => number, floor: Uint8Array, boxes: number): { player: number; targets: number[] } | null {
  const free: number[] = [];
  for (let i = 0; i < floor.length; i++) if (floor[i]) free.push(i);
  if (free.length <= boxes + 1) return null;
  const player = free.splice(randomInt(rng, free.length), 1)[0];
  const targets: number[] = [];
  for (let b = 0; b < boxes; b++) targets.push(free.splice(randomInt(rng, free.length), 1)[0]);
  return { player, targets };
}

interface Position {
  player: number;
  /** boxes[i] is the box that started on targets[i] (the reference's box_mapping). */
  boxes: number[];
}

// reverse_playing + depth_first_search + reverse_move. Returns the kept position: the first
// explored one with the highest box_swaps x box_displacement_score, or the start (boxes on
// their targets, displacement 0) when none scores above 0.
function reversePlaying(floor: Uint8Array, size: number, start: number, targets: readonly number[], searchDepth: number): Position {
  const explored = new Set<string>();
  const boxes = [...targets];
  // Whether each box has been pulled: the reference's room_state marks a pulled box 3 and an
  // unpulled one 4, and hashes the whole room_state, so this is part of a position's key.
  const pulled = boxes.map(() => false);
  let best: Position = { player: start, boxes: [...targets] };
  let bestScore = -1;
  const isTarget = new Uint8Array(floor.length);
  for (const t of targets) isTarget[t] = 1;

  const key = (player: number): string => {
    // Boxes are told apart only by cell and mark, as in room_state.
    const cells = boxes.map((b, i) => b * 2 + (pulled[i] ? 1 : 0)).sort((a, b) => a - b);
    return String.fromCharCode(player, ...cells);
  };

  const search = (player: number, boxSwaps: number, lastPull: number, ttl: number): void => {
    ttl -= 1;
    if (ttl <= 0 || explored.size >= MAX_EXPLORED) return;
    const k = key(player);
    if (explored.has(k)) return;
    let score = boxSwaps * boxDisplacementScore(boxes, targets, size);
    // Every target must be uncovered: no box, and not the player, on it.
    if (isTarget[player] || boxes.some((b) => isTarget[b])) score = 0;
    if (score > bestScore) {
      best = { player, boxes: [...boxes] };
      bestScore = score;
    }
    explored.add(k);
    for (const [dr, dc] of MOVES) {
      const d = dr * size + dc;
      const next = player + d;
      // A move into a wall or a box leaves the position as it is: already explored, no effect.
      if (!floor[next] || boxes.includes(next)) continue;
      const box = boxes.indexOf(player - d);
      if (box < 0) {
        search(next, boxSwaps, lastPull, ttl);
        continue;
      }
      // The box behind the player follows it onto the cell it leaves.
      const wasPulled = pulled[box];
      boxes[box] = player;
      pulled[box] = true;
      search(next, boxSwaps + (box === lastPull ? 0 : 1), box, ttl);
      boxes[box] = player - d;
      pulled[box] = wasPulled;
    }
  };

  search(start, 0, -1, searchDepth);
  return best;
}

// box_displacement_score: the sum of each box's Manhattan distance to its own target, or 0
// when any box is closer than MIN_BOX_DISTANCE.
function boxDisplacementScore(boxes: readonly number[], targets: readonly number[], size: number): number {
  let score = 0;
  for (let i = 0; i < boxes.length; i++) {
    const dist = manhattan(boxes[i], targets[i], size);
    if (dist < MIN_BOX_DISTANCE) return 0;
    score += dist;
  }
  return score;
}

// add_random_player_movement: with probability `moveProbability`, up to 3 plain moves onto
// free cells (floor or target) not visited before, each further one with probability 0.5.
function randomPlayerMovement(rng: () => number, floor: Uint8Array, size: number, player: number, boxes: readonly number[], moveProbability: number): number {
  if (rng() > moveProbability) return player;
  const visited = [player];
  for (let steps = 1; steps <= 3; steps++) {
    const options = MOVES.map(([dr, dc]) => player + dr * size + dc).filter((n) => floor[n] && !boxes.includes(n) && !visited.includes(n));
    if (options.length === 0) break;
    player = options[randomInt(rng, options.length)];
    visited.push(player);
    if (steps >= 3 || rng() > 0.5) break;
  }
  return player;
}

function manhattan(a: number, b: number, size: number): number {
  return Math.abs(Math.floor(a / size) - Math.floor(b / size)) + Math.abs((a % size) - (b % size));
}

function toCoord(i: number, size: number): Coord {
  return [Math.floor(i / size), i % size];
}

function checkInt(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${value}`);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
