// The warm-start demonstrations of the move-list puzzles (envs/puzzle/demos.ts, Plan-Path's and
// Sokoban's sources): every transcript is one of the three prompts the episodes really send,
// answered in the format the scorers parse, and the answers are right only part of the time, so
// a warm-started model's K candidates get different rewards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatMessage } from '../../envs/types.js';
import { demoSource as planPathDemos } from '../../envs/planpath/demoTranscripts.js';
import { moveListDemos, type MoveListDemoSource } from '../../envs/puzzle/demos.js';
import { buildPuzzlePrompt, parsePuzzleAnswer } from '../../envs/puzzle/roles.js';
import type { PuzzleStatus } from '../../envs/puzzle/types.js';
import { mulberry32 } from '../../envs/shared/rng.js';
import { demoSource as sokobanDemos } from '../../envs/sokoban/demoTranscripts.js';

const INSTANCES = 200;

function check<S extends PuzzleStatus>(name: string, source: MoveListDemoSource<S>) {
  test(`${name} demonstrations: the episodes' prompts, parseable answers, right only part of the time`, () => {
    const states: S[] = [];
    const recording = {
      ...source,
      instance: (i: number, rng: () => number) => {
        const state = source.instance(i, rng);
        states.push(state);
        return state;
      },
    };
    const transcripts = [...moveListDemos(recording, INSTANCES, mulberry32(7))];
    assert.equal(transcripts.length, 3 * INSTANCES, 'three transcripts per instance');
    const solved = { tool: 0, withTool: 0, alone: 0 };
    transcripts.forEach((messages: ChatMessage[], k) => {
      const state = states[Math.floor(k / 3)];
      const reply = messages.at(-1)!;
      assert.equal(reply.role, 'assistant');
      const prompt = messages.slice(0, -1);
      // The tool agent's reply is code that prints its list; the plan agent's is text with "####".
      const printed = /^moves = (\[.*\])$/m.exec(reply.content)?.[1];
      const moves = k % 3 === 0 ? printed && parsePuzzleAnswer(source.puzzle, `**Actions List**: ${printed}`) : parsePuzzleAnswer(source.puzzle, reply.content);
      assert.ok(moves && moves.length > 0, `transcript ${k}: no move list in ${JSON.stringify(reply.content)}`);
      const solves = source.puzzle.apply(state, moves).solved;
      if (k % 3 === 0) {
        assert.deepEqual(prompt, buildPuzzlePrompt(source.puzzle, 'tool_call_agent', { state, turn: 0 }));
        assert.match(reply.content, /^```python\n[\s\S]*print\("\*\*Actions List\*\*:", moves\)\n```$/);
        solved.tool += Number(solves);
      } else if (k % 3 === 1) {
        assert.match(prompt[1].content, /Code agent's action list:/, 'the plan agent sees the tool agent');
        solved.withTool += Number(solves);
      } else {
        assert.deepEqual(prompt, buildPuzzlePrompt(source.puzzle, 'plan_agent', { state, turn: 0 }), 'the plan agent alone (L0)');
        solved.alone += Number(solves);
      }
    });
    // A quarter of the lists are the solution; some corrupted copies still solve (an extra move
    // after the goal is ignored): never none, never all.
    for (const [who, n] of Object.entries(solved)) {
      assert.ok(n > 0.2 * INSTANCES && n < 0.8 * INSTANCES, `${who}: ${n} of ${INSTANCES} answers solve`);
    }
  });
}

check('Plan-Path', planPathDemos(1));
check('Sokoban', sokobanDemos(1));
