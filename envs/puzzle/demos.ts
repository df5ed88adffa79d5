// Demonstration transcripts for warm-starting the default tiny model on a move-list puzzle
// (Plan-Path, Sokoban): the real prompts of both agents and of the plan agent alone (L0),
// answered with moves that are right about half the time (a quarter of the lists are the
// solution, the rest a corrupted copy of it, which still solves when the corruption is a move
// after the goal). RL then has rewards that differ within a group to learn from
// (test/unit/demos.unit.test.ts). The tool output shown to the plan agent quotes the list as
// JSON, where Python's print uses single quotes: as the Plan-Path model was built and measured.
// Pure and seeded.
import { randomInt } from '../shared/rng.js';
import type { ChatMessage } from '../types.js';
import { buildPuzzlePrompt } from './roles.js';
import type { Puzzle, PuzzleStatus } from './types.js';

const MOVES = ['U', 'D', 'L', 'R'];

/** A plausible but imperfect move list: the solution, or a corrupted copy of it. */
function noisyMoves(solution: string[], rng: () => number): string[] {
  const p = [...solution];
  switch (randomInt(rng, 4)) {
    case 0:
      return p;
    case 1:
      return p.slice(0, Math.max(1, p.length - 1 - randomInt(rng, 2)));
    case 2:
      p[randomInt(rng, p.length)] = MOVES[randomInt(rng, 4)];
      return p;
    default:
      return [...p, MOVES[randomInt(rng, 4)]];
  }
}

const list = (moves: string[]) => `[${moves.map((m) => `"${m}"`).join(', ')}]`;

export interface MoveListDemoSource<S extends PuzzleStatus> {
  puzzle: Puzzle<S, string[]>;
  /** The i-th instance; may draw from rng (before anything else of that instance does). */
  instance: (i: number, rng: () => number) => S;
  /** A shortest solution, or null (the instance is then skipped). */
  solve: (state: S) => string[] | null;
  /** The plan agent's one-sentence reason before "####". */
  rationale: string;
}

/** Three transcripts per instance: the tool agent, the plan agent after it, the plan agent alone. */
export function* moveListDemos<S extends PuzzleStatus>(source: MoveListDemoSource<S>, count: number, rng: () => number): Generator<ChatMessage[]> {
  const answer = (moves: string[]) => `${source.rationale} #### ${list(moves)}`;
  for (let i = 0; i < count; i++) {
    const state = source.instance(i, rng);
    const solution = source.solve(state);
    if (solution === null || solution.length === 0) continue;
    const toolMoves = noisyMoves(solution, rng);
    const code = `moves = ${list(toolMoves)}\nprint("**Actions List**:", moves)`;
    yield [...buildPuzzlePrompt(source.puzzle, 'tool_call_agent', { state, turn: 0 }), { role: 'assistant', content: `\`\`\`python\n${code}\n\`\`\`` }];
    const stdout = `**Actions List**: ${list(toolMoves)}\n`;
    const planMoves = rng() < 0.5 ? toolMoves : noisyMoves(solution, rng);
    yield [
      ...buildPuzzlePrompt(source.puzzle, 'plan_agent', { state, turn: 0, toolResult: { code, stdout, actions: toolMoves } }),
      { role: 'assistant', content: answer(planMoves) },
    ];
    // The plan agent alone (an L0 single agent), so that baseline starts from the same warm start.
    yield [...buildPuzzlePrompt(source.puzzle, 'plan_agent', { state, turn: 0 }), { role: 'assistant', content: answer(noisyMoves(solution, rng)) }];
  }
}
