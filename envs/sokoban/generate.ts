// Seeded Sokoban rooms by reverse play, the gym-sokoban approach the reference uses: a random
// room topology (a walk stamping small floor masks), boxes placed on their targets and the
// player on the floor, then the game played backwards (the player walks and may pull the box
// behind it) up to `reverseSteps` reverse moves. Every reverse move undoes a forward one, so
// every room is solvable. Of the positions reached, one with the highest score (box
// displacement times the number of box switches, as the reference) and every box off its
// target is kept; the player then wanders up to 3 steps so that it does not always stand next
// to a box. Pure.
import { mulberry32, randomInt } from '../shared/rng.js';
import { DEFAULT_MAX_STEPS, initialState, type Coord, type SokobanState } from './room.js';

export interface SokobanOptions {
  /** Side of the square room, outer walls included (5..16). Default 6, the reference's scripts. */
  size?: number;
  /** Number of boxes (and targets), 1..4. Default 1. */
  boxes?: number;
  /** Depth of the reverse-play search, in reverse moves (1..1000). Default 25. */
  reverseSteps?: number;
  /** Moves (valid or not) before the episode is lost. Default 200, the reference's. */
  maxSteps?: number;
}

export const SOKOBAN_DEFAULTS: Readonly<Required<SokobanOptions>> = Object.freeze({
  size: 6,
  boxes: 1,
  reverseSteps: 25,
  maxSteps: DEFAULT_MAX_STEPS,
});

// Reference values: direction change probability and the topology walk length (its
// num_steps = 25 for the 6x6 rooms; gym-sokoban's 1.7 * (width + height) for larger ones).
const P_CHANGE_DIRECTION = 0.35;
const MAX_ROOMS = 200;

const DIRECTIONS: readonly Coord[] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
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
  const { size, boxes, reverseSteps, maxSteps } = { ...SOKOBAN_DEFAULTS, ...definedOnly(options) };
  checkInt('size', size, 5, 16);
  checkInt('boxes', boxes, 1, 4);
  checkInt('reverseSteps', reverseSteps, 1, 1000);
  checkInt('maxSteps', maxSteps, 1, 1_000_000);
  const rng = mulberry32(seed);
  const walkSteps = Math.max(25, Math.round(1.7 * 2 * size));
  for (let attempt = 0; attempt < MAX_ROOMS; attempt++) {
    const floor = topology(rng, size, walkSteps);
    const cells = floorCells(floor, size);
    if (cells.length < boxes + 2) continue;
    const player = cells[randomInt(rng, cells.length)];
    const free = cells.filter((c) => c !== player);
    const targets: number[] = [];
    for (let b = 0; b < boxes; b++) targets.push(free.splice(randomInt(rng, free.length), 1)[0]);
    const best = reversePlay(rng, floor, size, player, targets, reverseSteps);
    if (best === null) continue;
    const start = wander(rng, floor, size, best.player, best.boxes, best.score === 1 ? 0.8 : 0.5);
    const room = Array.from({ length: size }, (_, r) =>
      Array.from({ length: size }, (_, c) => (!floor[r * size + c] ? '#' : targets.includes(r * size + c) ? '.' : '_')).join(''),
    );
    return initialState(room, toCoord(start, size), best.boxes.map((b) => toCoord(b, size)), maxSteps);
  }
  throw new RangeError(`no Sokoban room with ${boxes} boxes found for size ${size} (seed ${seed})`);
}

// 1 = floor, indexed r * size + c; the border is always wall.
function topology(rng: () => number, size: number, steps: number): Uint8Array {
  const floor = new Uint8Array(size * size);
  let [dr, dc] = DIRECTIONS[randomInt(rng, 4)];
  let r = 1 + randomInt(rng, size - 2);
  let c = 1 + randomInt(rng, size - 2);
  for (let s = 0; s < steps; s++) {
    if (rng() < P_CHANGE_DIRECTION) [dr, dc] = DIRECTIONS[randomInt(rng, 4)];
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

function floorCells(floor: Uint8Array, size: number): number[] {
  const cells: number[] = [];
  for (let i = 0; i < size * size; i++) if (floor[i]) cells.push(i);
  return cells;
}

interface ReversePosition {
  player: number;
  boxes: number[];
  score: number;
}

// Positions explored per room by the reverse search, at most.
const MAX_REVERSE_NODES = 100_000;

// Breadth-first search of the game played backwards from the solved position, to depth
// `steps`: each reverse move walks the player one cell and may pull the box behind it along.
// Returns a random one of the best-scoring positions with every box off the targets (score =
// switches between pulled boxes on the path found x total box displacement, as the
// reference's reverse_playing), or null if there is none.
function reversePlay(rng: () => number, floor: Uint8Array, size: number, start: number, targets: readonly number[], steps: number): ReversePosition | null {
  interface Node {
    player: number;
    boxes: number[]; // boxes[i] started on targets[i]
    depth: number;
    switches: number;
    lastPulled: number;
  }
  const seen = new Set<string>([String.fromCharCode(start, ...targets)]);
  const queue: Node[] = [{ player: start, boxes: [...targets], depth: 0, switches: 0, lastPulled: -1 }];
  let best: ReversePosition[] = [];
  const visit = (node: Node) => {
    const key = String.fromCharCode(node.player, ...node.boxes);
    if (seen.has(key) || seen.size >= MAX_REVERSE_NODES) return;
    seen.add(key);
    queue.push(node);
    if (node.boxes.some((b) => targets.includes(b))) return;
    const displacement = node.boxes.reduce((sum, b, i) => sum + manhattan(b, targets[i], size), 0);
    const score = node.switches * displacement;
    if (score <= 0 || (best.length > 0 && score < best[0].score)) return;
    if (best.length > 0 && score > best[0].score) best = [];
    best.push({ player: node.player, boxes: [...node.boxes], score });
  };
  for (let head = 0; head < queue.length; head++) {
    const { player, boxes, depth, switches, lastPulled } = queue[head];
    if (depth >= steps) continue;
    for (const [dr, dc] of DIRECTIONS) {
      const next = player + dr * size + dc;
      if (!floor[next] || boxes.includes(next)) continue;
      visit({ player: next, boxes, depth: depth + 1, switches, lastPulled });
      const pulled = boxes.indexOf(player - dr * size - dc);
      if (pulled < 0) continue;
      const moved = boxes.map((b, i) => (i === pulled ? player : b));
      visit({ player: next, boxes: moved, depth: depth + 1, switches: switches + (pulled === lastPulled ? 0 : 1), lastPulled: pulled });
    }
  }
  return best.length === 0 ? null : best[randomInt(rng, best.length)];
}

// Up to 3 plain moves of the player, never back to a cell it left (the reference's
// add_random_player_movement), with probability `p`.
function wander(rng: () => number, floor: Uint8Array, size: number, player: number, boxes: readonly number[], p: number): number {
  if (rng() >= p) return player;
  const visited = [player];
  for (let s = 0; s < 3; s++) {
    const options = DIRECTIONS.map(([dr, dc]) => player + dr * size + dc).filter((n) => floor[n] && !boxes.includes(n) && !visited.includes(n));
    if (options.length === 0) break;
    player = options[randomInt(rng, options.length)];
    visited.push(player);
    if (rng() >= 0.5) break;
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
