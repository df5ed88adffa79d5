// The one episode loop (domain/episodeLoop.ts) with a toy environment: who acts, what each agent
// is shown, which candidate the episode continues from, and when it ends. The workflow around it
// is tested with mocked activities in the workflow tests; ids and the event upcaster here too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { playEpisode, type TurnRequest } from '../../domain/episodeLoop.js';
import { episodeIdOf, episodeOfStream, episodeStream, evaluationEpisodeIdOf, evaluationIdOf, iterationEpisodesPrefix, sampleIdOf, samplingSeed } from '../../domain/ids.js';
import { readEvent } from '../../domain/upcast.js';
import type { Scored } from '../../envs/types.js';

// A counter: each answer is a number added to the state; reaching `goal` solves and ends it.
// Agent "b" acts only while the state is even. The handoff is the last chosen answer.
const goal = 10;
const def = {
  acts: (agent: string, state: unknown) => agent !== 'b' || (state as number) % 2 === 0,
  prompt: (agent: string, ctx: { state: unknown; turn: number; handoff: unknown }) => [{ role: 'user' as const, content: `${agent} ${ctx.turn} ${ctx.state} ${ctx.handoff ?? '-'}` }],
};
const env = { def, options: undefined };
const score = (state: number, text: string): Scored<unknown> => {
  const next = state + Number(text);
  return { local: Number(text), global: 0, reward: Number(text), outcome: '', nextState: next, done: next >= goal, solved: next >= goal, handoff: text };
};

async function play(answers: Record<string, string[]>, opts: { maxTurns?: number; ifGreedy?: boolean } = {}) {
  const requests: TurnRequest[] = [];
  const played: number[] = [];
  const result = await playEpisode(env, { maxTurns: opts.maxTurns ?? 10, turnOrder: ['a', 'b'], ifGreedy: opts.ifGreedy ?? true }, 0, {
    act: async (r) => {
      requests.push(r);
      return answers[r.agent].map((text) => ({ text }));
    },
    score: async (r, texts) => texts.map((t) => score(r.state as number, t)),
    played: (_, i) => played.push(i),
  });
  return { requests, played, result };
}

test('greedy: the best candidate is continued from; the next agent of the turn is handed its answer', async () => {
  const { requests, played, result } = await play({ a: ['1', '2'], b: ['3', '2'] }, { maxTurns: 2 });
  // turn 0: a from 0 picks 2 (state 2, even: b acts), b from 2 picks 3 (state 5); turn 1: a picks 2 (7), b skips (odd).
  assert.deepEqual(requests.map((r) => [r.turn, r.agent, r.state, r.handoff]), [[0, 'a', 0, undefined], [0, 'b', 2, '2'], [1, 'a', 5, undefined]]);
  assert.deepEqual(requests[1].prompt, [{ role: 'user', content: 'b 0 2 2' }]);
  assert.deepEqual(result.groups.map((g) => g.chosen), [1, 0, 1]);
  assert.deepEqual(played, [0, 1, 2]);
  assert.deepEqual(result.chosenRewards, { a: [2, 2], b: [3] });
  assert.deepEqual([result.turns, result.success, result.finalState], [2, false, 7]);
});

test('not greedy: candidate 0 is continued from, whatever its reward', async () => {
  const { result } = await play({ a: ['1', '5'], b: ['1', '4'] }, { maxTurns: 1, ifGreedy: false });
  assert.deepEqual(result.groups.map((g) => [g.agent, g.chosen]), [['a', 0]]); // state 1 is odd: b does not act
  assert.equal(result.finalState, 1);
});

test('done ends the episode at once, mid-turn; success is the last chosen candidate\'s', async () => {
  const { requests, result } = await play({ a: ['4'], b: ['6'] });
  // turn 0: a -> 4, b -> 10: solved, done; a does not act again.
  assert.deepEqual(requests.map((r) => r.agent), ['a', 'b']);
  assert.deepEqual([result.turns, result.success, result.finalState], [1, true, 10]);
});

test('max_turns ends an episode that is never done', async () => {
  const { result } = await play({ a: ['1'], b: ['0'] }, { maxTurns: 3 });
  assert.equal(result.turns, 3);
  assert.equal(result.success, false);
  assert.equal(result.finalState, 3);
});

test('settleTurn: once the turn is over its groups take the settled global and reward; the choice stays the scored one', async () => {
  // Team term: every candidate of the turn gets the last group's chosen local as global.
  const settling = {
    def: {
      ...def,
      settleTurn: (groups: { scored: Scored<unknown>[]; chosen: number }[]) => {
        const last = groups[groups.length - 1];
        const team = last.scored[last.chosen].local;
        return groups.map((g) => g.scored.map((s) => ({ global: team, reward: s.local + team })));
      },
    },
    options: undefined,
  };
  const settled: [number, string[]][] = [];
  const result = await playEpisode(settling, { maxTurns: 2, turnOrder: ['a', 'b'], ifGreedy: true }, 0, {
    act: async (r) => ({ a: ['1', '2'], b: ['3', '2'] })[r.agent]!.map((text) => ({ text })),
    score: async (r, texts) => texts.map((t) => score(r.state as number, t)),
    settled: (groups, first) => settled.push([first, groups.map((g) => g.agent)]),
  });
  // turn 0: a picks 2, b picks 3 (team 3); turn 1: a picks 2 alone (b skips: state 7 is odd), team 2.
  assert.deepEqual(settled, [[0, ['a', 'b']], [2, ['a']]]);
  assert.deepEqual(result.groups.map((g) => g.scored.map((s) => [s.local, s.global, s.reward])), [
    [[1, 3, 4], [2, 3, 5]],
    [[3, 3, 6], [2, 3, 5]],
    [[1, 2, 3], [2, 2, 4]],
  ]);
  assert.deepEqual(result.groups.map((g) => g.chosen), [1, 0, 1]);
  assert.deepEqual(result.chosenRewards, { a: [5, 4], b: [6] });
});

test('ids are built and parsed in one place', () => {
  const ep = episodeIdOf('run-1', 2, 3);
  assert.equal(ep, 'run-1/it2/ep3');
  assert.ok(ep.startsWith(iterationEpisodesPrefix('run-1', 2)));
  assert.equal(episodeOfStream(episodeStream(ep)), ep);
  assert.equal(episodeOfStream('run:run-1'), null);
  assert.equal(evaluationEpisodeIdOf(evaluationIdOf('run-1', 10), 0), 'run-1/eval/it10/ep0');
  assert.equal(sampleIdOf(ep, 1, 'tool', 0, 2), 'run-1/it2/ep3/t1/tool/c0/a2');
  assert.equal(samplingSeed(ep, 1, 'tool'), samplingSeed(ep, 1, 'tool'));
  assert.notEqual(samplingSeed(ep, 1, 'tool'), samplingSeed(ep, 1, 'plan'));
});

test('the upcaster reads an EpisodeStarted written before `phase` existed as a training episode', () => {
  const old = { type: 'EpisodeStarted', runId: 'r', iteration: 0, episodeId: 'r/it0/ep0', problemSeed: 1 };
  assert.deepEqual(readEvent(old), { ...old, phase: 'train' });
  const now = { ...old, phase: 'eval' };
  assert.deepEqual(readEvent(now), now);
});
