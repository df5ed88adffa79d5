// The audit's re-execution (services/audit/replay.ts) of a Plan-Path episode played under
// env.reward_formula: reference, whose tool rewards are settled only after the plan agent acts:
// a faithful record re-executes cleanly, and a changed settled reward is named at its step. The
// tool's program runs are stood in for (its printed list), so no sandbox is needed here; the
// sandboxed path is the integration and e2e tiers'.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ScoreInput } from '../../activities/env.js';
import { loadRunConfig } from '../../configs/load.js';
import { playEpisode } from '../../domain/episodeLoop.js';
import { episodeSetup, type TurnGroupScoredEvent } from '../../domain/events.js';
import { envOf } from '../../envs/index.js';
import { bfsShortestPath, type PlanPathState } from '../../envs/planpath/grid.js';
import type { ProgramRun } from '../../envs/types.js';
import { replayEpisode, type EnvFunctions, type EpisodeRecord } from '../../services/audit/replay.js';

const parsed = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', ['env.reward_formula=reference', 'env.max_turns=2']);
assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.issues));
const cfg = parsed.config;
const setup = episodeSetup(cfg);
const seed = 12;

const runOf = (text: string): ProgramRun => ({ exitCode: 0, stdout: /print\('(.*)'\)/.exec(text)?.[1] ?? '', stderr: '', timedOut: false });
const fns: EnvFunctions = {
  envReset: async ({ env, seed }) => envOf(env).def.reset(seed, envOf(env).options),
  scoreCandidates: async ({ env, agent, state, texts, alpha }: ScoreInput) => {
    const { def, options } = envOf(env);
    return texts.map((t) => def.score(agent, state, t, agent === 'tool_call_agent' ? runOf(t) : null, alpha, options));
  },
};

/** Plays the episode with the record's own functions and writes its record as the workflow would. */
async function recorded(): Promise<EpisodeRecord> {
  const initial = (await fns.envReset({ env: setup.env, seed })) as PlanPathState;
  const path = bfsShortestPath(initial.rows, initial.pos, initial.goal)!;
  const list = (moves: string[]) => JSON.stringify(moves);
  // Turn 0: the tool prints one right move and one wrong list, the plan answers one move or nothing.
  const answers: Record<string, string[]> = {
    tool_call_agent: [`\`\`\`python\nprint('**Actions List**: ${list(path.slice(0, 1))}')\n\`\`\``, `\`\`\`python\nprint('**Actions List**: ["U","U","U"]')\n\`\`\``],
    plan_agent: [`#### ${list(path.slice(0, 1))}`, 'no answer'],
  };
  const played = await playEpisode(envOf(setup.env), { maxTurns: setup.env.max_turns, turnOrder: setup.turnOrder, ifGreedy: setup.ifGreedy }, initial, {
    act: async (r) => answers[r.agent].map((text) => ({ text })),
    score: async (r, texts) => fns.scoreCandidates({ env: setup.env, agent: r.agent, state: r.state, texts, alpha: setup.alpha }),
  });
  const base = { runId: 'r', iteration: 0, episodeId: 'e' };
  const groups: TurnGroupScoredEvent[] = played.groups.map((g) => ({
    type: 'TurnGroupScored',
    ...base,
    groupKey: `${g.turn}/${g.agent}`,
    turn: g.turn,
    agent: g.agent,
    policy: 'shared_model',
    policyVersion: 0,
    chosen: g.chosen,
    samples: g.candidates.map((c, i) => ({ sampleId: `s${g.turn}${g.agent}${i}`, candidate: i, ...g.scored[i], text: c.text })),
    state: g.state,
    handoff: g.handoff,
    prompt: g.prompt,
  }));
  const rewardByAgent = Object.fromEntries(Object.entries(played.chosenRewards).map(([a, rs]) => [a, rs.reduce((x, y) => x + y, 0) / rs.length]));
  return {
    started: { type: 'EpisodeStarted', ...base, problemSeed: seed, phase: 'train', setup },
    groups,
    finished: { type: 'EpisodeFinished', ...base, success: played.success, turns: played.turns, rewardByAgent, finalState: played.finalState },
  };
}

test('reference formula: the tool group is recorded with the plan action\'s env reward added, and re-executes cleanly', async () => {
  const record = await recorded();
  const [tool, plan] = record.groups;
  const planEnv = plan.samples[plan.chosen].global;
  assert.equal(plan.samples[plan.chosen].reward, 2 * plan.samples[plan.chosen].local);
  assert.deepEqual([plan.samples[1].local, plan.samples[1].global, plan.samples[1].reward], [-2, 0, -2]);
  for (const s of tool.samples) assert.deepEqual([s.global, s.reward], [planEnv, s.local + planEnv]);
  assert.equal(await replayEpisode(record, setup, fns), null);
});

test('a settled reward that differs from the record is named at its step', async () => {
  const record = await recorded();
  record.groups[0].samples[1].reward += 1;
  const diff = await replayEpisode(record, setup, fns);
  assert.equal(diff?.step, 0);
  assert.match(diff!.message, /step 0 \(turn 0, tool_call_agent\): candidate 1 reward differs/);
});
