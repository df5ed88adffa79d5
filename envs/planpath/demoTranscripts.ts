// Plan-Path's demonstration transcripts for the default tiny model's warm start
// (envs/puzzle/demos.ts): maps of 4x4 and 5x5, answered from the shortest path. Pure and seeded.
import type { ChatMessage } from '../types.js';
import { moveListDemos, type MoveListDemoSource } from '../puzzle/demos.js';
import { mulberry32, randomInt } from '../shared/rng.js';
import { bfsShortestPath, generate, type PlanPathState } from './grid.js';
import { planPathPuzzle } from './roles.js';

export function demoSource(seed: number): MoveListDemoSource<PlanPathState> {
  return {
    puzzle: planPathPuzzle,
    instance: (i, rng) => generate(seed * 100_003 + i, { mapSize: 4 + randomInt(rng, 2), blockedRatio: 0.22 }),
    solve: (state) => bfsShortestPath(state.rows, state.pos, state.goal),
    rationale: 'The moves follow the open cells to the goal.',
  };
}

export function demoTranscripts(count: number, seed: number): Generator<ChatMessage[]> {
  return moveListDemos(demoSource(seed), count, mulberry32(seed));
}
