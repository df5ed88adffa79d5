// A breadth-first Sokoban solver over (player, boxes) positions: it returns a solution with
// the fewest moves, never pushing a box onto a dead square. Meant for small rooms (tests,
// generation checks, benchmarks). Pure.
import type { Move } from '../types.js';
import { deadSquares, type SokobanState } from './room.js';

const MOVES: readonly [Move, number, number][] = [
  ['U', -1, 0],
  ['D', 1, 0],
  ['L', 0, -1],
  ['R', 0, 1],
];

/**
 * The shortest move sequence that puts every box on a target from `state` ([] when already
 * solved), or null when there is none or more than `maxNodes` positions would be explored.
 */
export function solve(state: SokobanState, maxNodes = 1_000_000): Move[] | null {
  const { room } = state;
  const height = room.length;
  const width = room[0]?.length ?? 0;
  const open = new Uint8Array(width * height);
  const target = new Uint8Array(width * height);
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      open[r * width + c] = room[r][c] === '#' ? 0 : 1;
      target[r * width + c] = room[r][c] === '.' ? 1 : 0;
    }
  }
  const dead = deadSquares(room);
  const solved = (boxes: readonly number[]) => boxes.every((b) => target[b]);
  const key = (player: number, boxes: readonly number[]) => String.fromCharCode(player, ...boxes);

  const start = { player: state.player[0] * width + state.player[1], boxes: state.boxes.map(([r, c]) => r * width + c).sort((a, b) => a - b) };
  if (solved(start.boxes)) return [];
  const cameFrom = new Map<string, { prev: string; move: Move } | null>([[key(start.player, start.boxes), null]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const { player, boxes } = queue[head];
    const here = key(player, boxes);
    for (const [move, dr, dc] of MOVES) {
      const d = dr * width + dc;
      const next = player + d;
      const pr = Math.floor(player / width) + dr;
      const pc = (player % width) + dc;
      if (pr < 0 || pr >= height || pc < 0 || pc >= width || !open[next]) continue;
      let nextBoxes = boxes;
      const pushed = boxes.indexOf(next);
      if (pushed >= 0) {
        const to = next + d;
        const br = pr + dr;
        const bc = pc + dc;
        if (br < 0 || br >= height || bc < 0 || bc >= width || !open[to] || dead[to] || boxes.includes(to)) continue;
        nextBoxes = boxes.map((b, i) => (i === pushed ? to : b)).sort((a, b) => a - b);
      }
      const k = key(next, nextBoxes);
      if (cameFrom.has(k)) continue;
      cameFrom.set(k, { prev: here, move });
      if (pushed >= 0 && solved(nextBoxes)) return unwind(cameFrom, k);
      if (cameFrom.size > maxNodes) return null;
      queue.push({ player: next, boxes: nextBoxes });
    }
  }
  return null;
}

function unwind(cameFrom: Map<string, { prev: string; move: Move } | null>, end: string): Move[] {
  const moves: Move[] = [];
  for (let step = cameFrom.get(end); step; step = cameFrom.get(step.prev)) moves.push(step.move);
  return moves.reverse();
}
