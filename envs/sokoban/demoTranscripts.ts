// Sokoban's demonstration transcripts for the default tiny model's warm start
// (envs/puzzle/demos.ts): rooms as the configs play them (6x6, one box, the reference's
// generator), answered from the solver's shortest solution. Pure and seeded.
import type { ChatMessage } from '../types.js';
import { moveListDemos, type DemoKind, type MoveListDemoSource } from '../puzzle/demos.js';
import { mulberry32 } from '../shared/rng.js';
import { generate } from './generate.js';
import { sokobanPuzzle } from './puzzle.js';
import type { SokobanState } from './room.js';
import { solve } from './solver.js';

export function demoSource(seed: number): MoveListDemoSource<SokobanState> {
  return {
    puzzle: sokobanPuzzle,
    instance: (i) => generate(seed * 100_003 + i),
    solve: (state) => solve(state),
    rationale: 'The moves walk behind the box and push it onto the target.',
    maxTurns: 4,
  };
}

export function demoTranscripts(count: number, seed: number, kind: DemoKind = 'task'): Generator<ChatMessage[]> {
  return moveListDemos(demoSource(seed), count, mulberry32(seed), kind);
}
