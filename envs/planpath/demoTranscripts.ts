// Demonstration transcripts for warm-starting the default tiny model: the real prompts of both
// agents and of the plan agent alone (L0), answered with moves that are right about half the
// time. RL then has rewards that differ within a group to learn from. Pure and seeded.
import type { ChatMessage } from '../types.js';
import { mulberry32, randomInt } from '../shared/rng.js';
import { bfsShortestPath, generate } from './grid.js';
import { buildPrompt } from './roles.js';

const MOVES = ['U', 'D', 'L', 'R'];

/** A plausible but imperfect move list: the shortest path, or a corrupted copy of it. */
function noisyPath(path: string[], rng: () => number): string[] {
  const p = [...path];
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
const planAnswer = (moves: string[]) => `The moves follow the open cells to the goal. #### ${list(moves)}`;

export function* demoTranscripts(count: number, seed: number): Generator<ChatMessage[]> {
  const rng = mulberry32(seed);
  for (let i = 0; i < count; i++) {
    const state = generate(seed * 100_003 + i, { mapSize: 4 + randomInt(rng, 2), blockedRatio: 0.22 });
    const path = bfsShortestPath(state.rows, state.pos, state.goal) ?? [];
    const toolMoves = noisyPath(path, rng);
    const code = `moves = ${list(toolMoves)}\nprint("**Actions List**:", moves)`;
    yield [...buildPrompt('tool_call_agent', { state, turn: 0 }), { role: 'assistant', content: `\`\`\`python\n${code}\n\`\`\`` }];
    const stdout = `**Actions List**: ${list(toolMoves)}\n`;
    const planMoves = rng() < 0.5 ? toolMoves : noisyPath(path, rng);
    yield [
      ...buildPrompt('plan_agent', { state, turn: 0, toolResult: { code, stdout, actions: toolMoves } }),
      { role: 'assistant', content: planAnswer(planMoves) },
    ];
    // The plan agent alone (an L0 single agent), so that baseline starts from the same warm start.
    yield [
      ...buildPrompt('plan_agent', { state, turn: 0 }),
      { role: 'assistant', content: planAnswer(noisyPath(path, rng)) },
    ];
  }
}
