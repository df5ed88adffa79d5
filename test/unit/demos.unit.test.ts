// The warm-start demonstrations of the move-list puzzles (envs/puzzle/demos.ts, Plan-Path's and
// Sokoban's sources): every transcript is one of the three prompts the episodes really send, at
// turn 0 or, from the state the turn-0 plan answer reached, at a later turn (each rebuilt here
// through the env definition from the state the env itself reaches), answered in the format the
// scorers parse, and the answers are right only part of the time, so a warm-started model's K
// candidates get different rewards. With Plan-Path's tool helper (a miniature, env.tool_helper)
// the tool agent's programs that call the helper are run with python3 as the env's program, and
// print what the plan agent is shown. The reading corpora (demos.ts --reading) have only answers
// that read their prompt, one role each.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { ChatMessage, EnvDefinition, ProgramRun } from '../../envs/types.js';
import { planPath } from '../../envs/planpath/definition.js';
import { demoSource as planPathDemos } from '../../envs/planpath/demoTranscripts.js';
import type { PlanPathState } from '../../envs/planpath/grid.js';
import { moveListDemos, type MoveListDemoSource } from '../../envs/puzzle/demos.js';
import { parsePuzzleAnswer } from '../../envs/puzzle/roles.js';
import { planPathPuzzle } from '../../envs/planpath/roles.js';
import type { PuzzleStatus } from '../../envs/puzzle/types.js';
import { mulberry32 } from '../../envs/shared/rng.js';
import { sokoban } from '../../envs/sokoban/definition.js';
import { demoSource as sokobanDemos } from '../../envs/sokoban/demoTranscripts.js';

const INSTANCES = 200;
const ALPHA = 0.5;

/** The stdout the plan agent is shown as the tool agent's (the block after "execution output:"). */
function shownStdout(planPrompt: ChatMessage[]): string {
  const shown = /Code agent's execution output:\n```\n([\s\S]*?)\n```/.exec(planPrompt[1].content)![1];
  return shown === '(no output)' ? '' : shown;
}

interface Solved {
  tool: number;
  withTool: number;
  alone: number;
}

/**
 * One turn's three transcripts from `state` at `turn`: each prompt is exactly the env's; returns
 * which answers solve, and the state the env reaches by applying the plan agent's answer after
 * the tool agent.
 */
function checkTurn<S extends PuzzleStatus>(env: EnvDefinition<S, unknown>, group: ChatMessage[][], state: S, turn: number, where: string) {
  assert.equal(group.length, 3, `${where}: three transcripts`);
  const [tool, withTool, alone] = group.map((messages) => ({ prompt: messages.slice(0, -1), reply: messages.at(-1)! }));
  for (const t of [tool, withTool, alone]) assert.equal(t.reply.role, 'assistant');
  assert.deepEqual(tool.prompt, env.prompt('tool_call_agent', { state, turn, handoff: undefined }), `${where}: the tool agent's prompt`);
  assert.match(tool.reply.content, /^```python\n[\s\S]*\n```$/);
  assert.notEqual(env.program('tool_call_agent', tool.reply.content, state), null, `${where}: the tool agent's reply is a program`);
  // The plan agent is shown what the env hands over from the tool agent's answer and its output.
  const run = { exitCode: 0, stdout: shownStdout(withTool.prompt), stderr: '', timedOut: false };
  const toolScore = env.score('tool_call_agent', state, tool.reply.content, run, ALPHA);
  assert.deepEqual(withTool.prompt, env.prompt('plan_agent', { state, turn, handoff: toolScore.handoff }), `${where}: the plan agent's prompt after the tool agent`);
  assert.deepEqual(alone.prompt, env.prompt('plan_agent', { state, turn, handoff: undefined }), `${where}: the plan agent alone (L0)`);
  const planScore = env.score('plan_agent', state, withTool.reply.content, null, ALPHA);
  const aloneScore = env.score('plan_agent', state, alone.reply.content, null, ALPHA);
  for (const [who, score] of [['plan', planScore], ['alone', aloneScore]] as const) {
    assert.ok(!/no action|empty/.test(score.outcome), `${where}: the ${who} answer has moves: ${score.outcome}`);
  }
  const solved: Solved = { tool: Number(toolScore.global === 1), withTool: Number(planScore.solved), alone: Number(aloneScore.solved) };
  return { solved, next: planScore.nextState };
}

/**
 * Every transcript of `count` instances, checked turn by turn: the solved counts at turn 0 and at
 * later turns, how many instances reach each later turn, and each turn's state and transcripts.
 */
function checkDemos<S extends PuzzleStatus>(source: MoveListDemoSource<S>, env: EnvDefinition<S, unknown>, count: number) {
  const states: S[] = [];
  const recording = {
    ...source,
    instance: (i: number, rng: () => number) => {
      const state = source.instance(i, rng);
      states.push(state);
      return state;
    },
  };
  const transcripts = [...moveListDemos(recording, count, mulberry32(7))];
  const first: Solved = { tool: 0, withTool: 0, alone: 0 };
  const later: Solved = { tool: 0, withTool: 0, alone: 0 };
  const add = (into: Solved, s: Solved) => (Object.keys(into) as (keyof Solved)[]).forEach((k) => (into[k] += s[k]));
  const turns = new Map<number, number>();
  let k = 0;
  const checked: { state: S; turn: number; group: ChatMessage[][] }[] = [];
  const turnAt = (state: S, turn: number, where: string) => {
    const group = transcripts.slice(k, k + 3);
    checked.push({ state, turn, group });
    k += 3;
    return checkTurn(env, group, state, turn, where);
  };
  states.forEach((state, i) => {
    const zero = turnAt(state, 0, `instance ${i}, turn 0`);
    add(first, zero.solved);
    const turn = Number(/This is turn (\d+)\./.exec(transcripts[k]?.[1].content ?? '')?.[1] ?? 0) - 1;
    if (turn < 0) {
      // None follows only when the plan agent's answer ended the episode.
      assert.ok(zero.next.done || !source.solve(zero.next)?.length, `instance ${i}: the episode goes on but has no later turn`);
      return;
    }
    assert.ok(turn >= 1 && turn < source.maxTurns, `instance ${i}: turn ${turn}`);
    turns.set(turn, (turns.get(turn) ?? 0) + 1);
    add(later, turnAt(zero.next, turn, `instance ${i}, turn ${turn}`).solved);
  });
  assert.equal(k, transcripts.length, 'every transcript belongs to an instance');
  return { transcripts, first, later, laterTurns: turns, groups: checked };
}

/** Right only part of the time: never none, never all. */
function partly(solved: Solved, of: number, what: string) {
  for (const [who, n] of Object.entries(solved)) assert.ok(n > 0.2 * of && n < 0.8 * of, `${what} ${who}: ${n} of ${of} answers solve`);
}

function check<S extends PuzzleStatus>(name: string, source: MoveListDemoSource<S>, env: EnvDefinition<S, unknown>) {
  test(`${name} demonstrations: the episodes' prompts at turn 0 and later turns, parseable answers, right only part of the time`, () => {
    const { transcripts, first, later, laterTurns } = checkDemos(source, env, INSTANCES);
    const laterCount = [...laterTurns.values()].reduce((a, b) => a + b, 0);
    // A quarter of the lists are the solution; some corrupted copies still solve (an extra move
    // after the goal is ignored).
    partly(first, INSTANCES, 'turn 0');
    partly(later, laterCount, 'later turns');
    // About two in five instances go on to a later turn, every later turn of the configs appears,
    // and turn-0 transcripts stay the majority.
    assert.ok(laterCount > 0.25 * INSTANCES && laterCount < 0.5 * INSTANCES, `${laterCount} of ${INSTANCES} instances have a later turn`);
    assert.deepEqual([...laterTurns.keys()].sort(), Array.from({ length: source.maxTurns - 1 }, (_, t) => t + 1));
    assert.equal(transcripts.length, 3 * (INSTANCES + laterCount));
  });
}

check('Plan-Path', planPathDemos(1), planPath as EnvDefinition<any, unknown>);
check('Sokoban', sokobanDemos(1), sokoban as EnvDefinition<any, unknown>);
check('Plan-Path with the tool helper', planPathDemos(1, true), planPath as EnvDefinition<any, unknown>);

/** Runs a program with the sandbox's python (/usr/bin/python3 -I), unsandboxed. */
function runPython(program: string): ProgramRun {
  const r = spawnSync('/usr/bin/python3', ['-I', '-'], { input: program, encoding: 'utf8', timeout: 20_000 });
  return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined };
}

for (const grid of ['literal', 'named'] as const) test(`Plan-Path with the tool helper, grid ${grid}: the programs that call it print what the plan agent is shown; a right call solves its instance`, () => {
  const env = planPath as EnvDefinition<PlanPathState, unknown>;
  const { groups } = checkDemos(planPathDemos(1, true, grid), env, 80);
  let calls = 0;
  let right = 0;
  for (const { state, group } of groups) {
    const reply = group[0].at(-1)!.content;
    if (!reply.includes('shortest_path(')) continue;
    calls++;
    const run = runPython(env.program('tool_call_agent', reply, state)!);
    assert.equal(run.exitCode, 0, run.stderr);
    assert.equal(run.stdout, shownStdout(group[1].slice(0, -1)), reply);
    const score = env.score('tool_call_agent', state, reply, run, ALPHA);
    const [[r, c], [gr, gc]] = [state.pos, state.goal];
    if (reply.includes(`print("**Actions List**:", shortest_path(${grid === 'named' ? 'rows' : JSON.stringify(state.rows)}, (${r}, ${c}), (${gr}, ${gc})))`)) {
      right++;
      assert.equal(score.global, 1, `a right call solves: ${score.outcome}`);
      assert.equal(score.local, env.score('plan_agent', state, env.scripted!('plan_agent', { state, turn: 0, handoff: undefined }), null, ALPHA).local, 'by a shortest path');
    }
  }
  // Half of the tool agent's programs call the helper, half of those rightly.
  assert.ok(calls > 0.3 * groups.length && calls < 0.7 * groups.length, `${calls} of ${groups.length} programs call the helper`);
  assert.ok(right > 0.3 * calls && right < 0.7 * calls, `${right} of ${calls} calls are right`);
});

for (const grid of ['literal', 'named'] as const) test(`the reading corpora, grid ${grid}: the tool agent calls the helper rightly (and solves); the plan agent repeats the list it is shown; one role each`, () => {
  const env = planPath as EnvDefinition<PlanPathState, unknown>;
  const helper = planPathDemos(1, true, grid);
  const states: PlanPathState[] = [];
  const source: MoveListDemoSource<PlanPathState> = { ...helper, readTool: (state) => (states.push(state), helper.readTool!(state)) };
  const tool = [...moveListDemos(source, 60, mulberry32(1), 'read-tool')];
  assert.equal(tool.length, states.length, 'a right call for every turn walked');
  assert.ok(tool.length >= 60);
  tool.forEach((messages, i) => {
    const reply = messages.at(-1)!.content;
    const score = env.score('tool_call_agent', states[i], reply, runPython(env.program('tool_call_agent', reply, states[i])!), ALPHA);
    assert.equal(score.global, 1, `${reply}: ${score.outcome}`);
    assert.equal(reply.includes('shortest_path(rows, '), grid === 'named', reply);
  });
  const plan = [...moveListDemos(helper, 60, mulberry32(1), 'read-plan')];
  assert.ok(plan.length > 0.5 * tool.length && plan.length <= tool.length, `${plan.length} plan transcripts of ${tool.length} turns`);
  for (const messages of plan) {
    const [prompt, reply] = [messages.slice(0, -1), messages.at(-1)!.content];
    assert.match(prompt[1].content, /Code agent's action list:/);
    assert.deepEqual(parsePuzzleAnswer(planPathPuzzle, reply), parsePuzzleAnswer(planPathPuzzle, shownStdout(prompt)), reply);
  }
  // Without the helper the tool agent has nothing to read: no tool transcripts.
  assert.equal([...moveListDemos(planPathDemos(1), 60, mulberry32(1), 'read-tool')].length, 0);
});
