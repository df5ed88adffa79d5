// Demonstration transcripts for warm-starting the default tiny model on a move-list puzzle
// (Plan-Path, Sokoban): the real prompts of both agents and of the plan agent alone (L0),
// answered with moves that are right about half the time (a quarter of the lists are the
// solution, the rest a corrupted copy of it, which still solves when the corruption is a move
// after the goal). RL then has rewards that differ within a group to learn from
// (test/unit/demos.unit.test.ts). Every instance is demonstrated at turn 0; when the plan
// agent's answer there leaves the episode open (about two in five instances), the same three
// transcripts follow at a later turn (1 .. maxTurns - 1) from the state that answer reached,
// answered from that state's solution. The tool output shown to the plan agent quotes a literal
// list as JSON, where Python's print uses single quotes: as the Plan-Path model was built and
// measured. The reading corpora walk the same instances and turns and keep only answers that read
// their prompt, one role each: 'read-plan', the plan agent after the tool agent repeating the list
// its prompt shows; 'read-tool', the tool agent giving the right answer its prompt hands it, where
// the source has one (`readTool`: the miniature's helper call). make_tiny_model.py trains on them
// first, one after the other, to the copying that 400 steps of the task corpus never reach
// (bench/notes/learning-reads.md, "a reading stage before the warm start"). Pure and seeded.
import { randomInt } from '../shared/rng.js';
import type { ChatMessage } from '../types.js';
import { buildPuzzlePrompt, parsePuzzleAnswer } from './roles.js';
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
    case 2: {
      const at = randomInt(rng, p.length);
      const others = MOVES.filter((m) => m !== p[at]);
      p[at] = others[randomInt(rng, others.length)];
      return p;
    }
    default:
      return [...p, MOVES[randomInt(rng, 4)]];
  }
}

/** A move list as JSON, e.g. ["U", "R"]. */
const jsonList = (moves: string[]) => `[${moves.map((m) => `"${m}"`).join(', ')}]`;

/** The tool agent's demonstrated program and what running it prints. */
export interface ToolDemo {
  code: string;
  stdout: string;
}

/** The program that prints a given move list (the tool agent's demonstrations by default). */
export function literalToolDemo(moves: string[]): ToolDemo {
  return { code: `moves = ${jsonList(moves)}\nprint("**Actions List**:", moves)`, stdout: `**Actions List**: ${jsonList(moves)}\n` };
}

export interface MoveListDemoSource<S extends PuzzleStatus> {
  puzzle: Puzzle<S, string[]>;
  /** The i-th instance; may draw from rng (before anything else of that instance does). */
  instance: (i: number, rng: () => number) => S;
  /** A shortest solution from the state's current position, or null (nothing is demonstrated from it). */
  solve: (state: S) => string[] | null;
  /** The plan agent's one-sentence reason before "####". */
  rationale: string;
  /** The configs' env.max_turns (at least 2): later-turn transcripts are at turns 1 .. maxTurns - 1. */
  maxTurns: number;
  /** The tool agent's answer from `state`, given a noisy move list; unset: literalToolDemo(moves). */
  tool?: (state: S, moves: string[], rng: () => number) => ToolDemo;
  /** The tool agent's answer that reads its prompt right, for the reading corpus; unset: it has no tool transcripts. */
  readTool?: (state: S) => ToolDemo;
}

/** The task's demonstrations, or a reading corpus (the header). */
export type DemoKind = 'task' | 'read-plan' | 'read-tool';
export const DEMO_KINDS: readonly DemoKind[] = ['task', 'read-plan', 'read-tool'];

/**
 * Per instance, three transcripts at turn 0 (the tool agent, the plan agent after it, the plan
 * agent alone), then, when the plan agent's turn-0 answer leaves the episode open, the same three
 * at a later turn from the state it reached.
 */
export function* moveListDemos<S extends PuzzleStatus>(source: MoveListDemoSource<S>, count: number, rng: () => number, kind: DemoKind = 'task'): Generator<ChatMessage[]> {
  for (let i = 0; i < count; i++) {
    const state = source.instance(i, rng);
    const solution = source.solve(state);
    if (solution === null || solution.length === 0) continue;
    const applied = yield* turnDemos(source, state, 0, solution, rng, kind);
    const next = source.puzzle.apply(state, applied).state;
    const rest = next.done ? null : source.solve(next);
    if (rest === null || rest.length === 0) continue;
    yield* turnDemos(source, next, 1 + randomInt(rng, source.maxTurns - 1), rest, rng, kind);
  }
}

/**
 * The three transcripts of one turn from `state` (for a reading corpus, its role's that read);
 * returns the move list the plan agent after the tool agent applies.
 */
function* turnDemos<S extends PuzzleStatus>(
  source: MoveListDemoSource<S>,
  state: S,
  turn: number,
  solution: string[],
  rng: () => number,
  kind: DemoKind,
): Generator<ChatMessage[], string[]> {
  const { puzzle } = source;
  const answer = (moves: string[]) => `${source.rationale} #### ${jsonList(moves)}`;
  const program = (code: string): ChatMessage => ({ role: 'assistant', content: `\`\`\`python\n${code}\n\`\`\`` });
  const toolPrompt = buildPuzzlePrompt(puzzle, 'tool_call_agent', { state, turn });
  if (kind === 'read-tool' && source.readTool) yield [...toolPrompt, program(source.readTool(state).code)];
  const toolMoves = noisyMoves(solution, rng);
  const { code, stdout } = source.tool ? source.tool(state, toolMoves, rng) : literalToolDemo(toolMoves);
  if (kind === 'task') yield [...toolPrompt, program(code)];
  // The plan agent adopts the tool agent's list half the time, when there is one (always, reading).
  const actions = parsePuzzleAnswer(puzzle, stdout);
  const shown = actions !== null && actions.length > 0;
  const planMoves = shown && (kind !== 'task' || rng() < 0.5) ? actions : noisyMoves(solution, rng);
  if (kind === 'task' || (kind === 'read-plan' && shown)) {
    yield [...buildPuzzlePrompt(puzzle, 'plan_agent', { state, turn, toolResult: { code, stdout, actions } }), { role: 'assistant', content: answer(planMoves) }];
  }
  // The plan agent alone (an L0 single agent), so that baseline starts from the same warm start.
  if (kind === 'task') yield [...buildPuzzlePrompt(puzzle, 'plan_agent', { state, turn }), { role: 'assistant', content: answer(noisyMoves(solution, rng)) }];
  return planMoves;
}
