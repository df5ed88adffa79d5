// Guards against the reference implementation's AT-GRPO defects (../shared/reference/at-grpo-facts.md),
// on the real episode workflow and the real environment (math_refine: three agents act in one
// turn, no code to run). The test stack's Temporal server runs the workflow on an in-process
// worker whose policy activity is scripted: candidate c1 of a generator is right, the others
// wrong (in a "wrong-start" episode every initial answer is wrong, so the refiner gets to act);
// evaluator candidates alternate Correct/Incorrect. Everything else is the real thing.
//   defect 1: groups mixed different problems        -> one group = one (problem, turn, agent), K members
//   defect 2: later agents in a turn got no signal   -> every agent's group has distinct rewards
//   defect 3: env stepped on objects other than read -> each scoring starts from the chosen candidate's state
//   defect 4: all agents prompted from turn start    -> an agent's prompt shows what the agents before it did
// (defect 5, adapters missing from checkpoints, is guarded by the engine's PEFT round-trip test;
// configs named in docs that do not exist, by test/unit/docs-references.unit.test.ts.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { AgentTurnInput, CandidateText } from '../../activities/agentTurn.js';
import { createEnvActivities, type ScoreInput, type ScoredCandidate } from '../../activities/env.js';
import type { TrajectoryRecord } from '../../activities/records.js';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { groupAdvantages } from '../../domain/atgrpo.js';
import type { EventEnvelope, TandemEvent } from '../../domain/events.js';
import { resetMathRefine } from '../../envs/mathrefine/definition.js';
import type { MathRefineState } from '../../envs/mathrefine/state.js';
import { episode, type EpisodeInput } from '../../workflows/episode.js';
import { settings, temporal } from '../support/stack.js';

const K = 4;
const ALPHA = 0.5;
const queue = `atgrpo-guards-${process.pid}`;

function config(algorithm: 'at_grpo' | 'grpo'): RunConfig {
  const loaded = loadRunConfig('configs/mathrefine/mathrefine_L1_prompt.yaml', [
    `algorithm=${algorithm}`,
    `alpha=${ALPHA}`,
    `training.train_sample_num=${K}`,
    `placement.shared_model.task_queue=${queue}`,
  ]);
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.issues));
  return loaded.config;
}

// What the workflow did, as the activities saw it (episodes run one at a time, so in order).
const prompts: AgentTurnInput[] = [];
const scorings: { input: ScoreInput; output: ScoredCandidate[] }[] = [];
const published: { samples: TrajectoryRecord[]; events: TandemEvent[] }[] = [];
const seedOf = new Map<string, number>(); // episode id -> problem seed, from EpisodeStarted

const env = createEnvActivities();
const activities = {
  ...env,
  async scoreCandidates(input: ScoreInput) {
    const output = await env.scoreCandidates(input);
    scorings.push({ input, output });
    return output;
  },
  async publishEvents(events: EventEnvelope[]) {
    for (const { event: e } of events) if (e.type === 'EpisodeStarted') seedOf.set(e.episodeId, e.problemSeed);
  },
  async publishEpisode(input: { samples: TrajectoryRecord[]; events: EventEnvelope[] }) {
    published.push({ samples: input.samples, events: input.events.map((e) => e.event) });
  },
  async policyVersion() {
    return 0;
  },
  async agentTurn(input: AgentTurnInput): Promise<CandidateText[]> {
    prompts.push(input);
    const answer = resetMathRefine(seedOf.get(input.episodeId)!, undefined).problem.answer;
    const right = (i: number) => i === 1 && !(input.agent === 'generator_initial' && input.episodeId.includes('wrong-start'));
    const texts = Array.from({ length: input.k }, (_, i) =>
      input.agent === 'evaluator_critique'
        ? `Checked.\nVerdict: ${i % 2 === 0 ? 'Correct' : 'Incorrect'}`
        : `So the answer is \\boxed{${right(i) ? answer : `${answer}${i + 7}`}}.`,
    );
    return texts.map((text, i) => ({ sampleId: `${input.episodeId}/t${input.turn}/${input.agent}/c${i}/a1`, text, finishReason: 'stop', responseTokens: 8 }));
  },
};

let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let client: Awaited<ReturnType<typeof temporal>>;

before(async () => {
  client = await temporal();
  connection = await NativeConnection.connect({ address: settings.temporalAddress });
  worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: queue,
    workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
    activities,
  });
  running = worker.run();
});

after(async () => {
  worker.shutdown();
  await running;
  await connection.close();
  await client.close();
});

async function play(cfg: RunConfig, episodeId: string, problemSeed: number, candidates: number) {
  const input: EpisodeInput = { runId: 'guards', iteration: 0, episodeId, problemSeed, candidates, config: cfg, versions: {}, phase: 'train' };
  const from = { prompts: prompts.length, scorings: scorings.length };
  await client.client.workflow.execute(episode, { taskQueue: queue, workflowId: `${episodeId}-${Date.now()}`, args: [input] });
  return { prompts: prompts.slice(from.prompts), scorings: scorings.slice(from.scorings), ...published.at(-1)! };
}

test('AT-GRPO groups, signal, state and prompts are what the algorithm says (defects 1-4)', { timeout: 300_000 }, async () => {
  const cfg = config('at_grpo');
  const a = await play(cfg, 'guards/at/ep0', 11, K);
  const b = await play(cfg, 'guards/at/wrong-start', 12, K);

  // Defect 1: a group is the K candidates of one (problem, turn, agent), and problems never share one.
  for (const [ep, seed] of [[a, 11], [b, 12]] as const) {
    const groups = new Map<string, TrajectoryRecord[]>();
    for (const s of ep.samples) groups.set(s.groupKey, [...(groups.get(s.groupKey) ?? []), s]);
    for (const [key, members] of groups) {
      assert.equal(members.length, K, `group ${key} has K members`);
      assert.equal(new Set(members.map((s) => `${s.problemSeed}/${s.turn}/${s.agent}`)).size, 1, `group ${key} is one (problem, turn, agent)`);
      assert.equal(members[0].problemSeed, seed);
      assert.deepEqual(members.map((s) => s.candidate), [0, 1, 2, 3]);
    }
  }
  const keysA = new Set(a.samples.map((s) => s.groupKey));
  assert.ok(b.samples.every((s) => !keysA.has(s.groupKey)), 'two problems never share a group');

  // Defect 2: every agent of the turn, not only the first, is scored candidate by candidate.
  // (a: the generator is right and the evaluator says so, ending the episode; b: the generator is
  // wrong, the evaluator says so, and the refiner acts in the same turn.)
  for (const [ep, agents] of [[a, ['generator_initial', 'evaluator_critique']], [b, ['evaluator_critique', 'generator_refinement']]] as const) {
    const turn0 = ep.samples.filter((s) => s.turn === 0 && (agents as readonly string[]).includes(s.agent));
    const adv = groupAdvantages(ep.samples, { normByStd: true, zeroVariance: 'keep' });
    for (const agent of agents) {
      const rewards = turn0.filter((s) => s.agent === agent).map((s) => s.reward);
      assert.equal(rewards.length, K, `${agent} sampled K candidates at turn 0`);
      assert.ok(new Set(rewards).size > 1, `${agent}'s candidates have distinct rewards: ${rewards}`);
    }
    for (const s of turn0) assert.notEqual(adv.get(s.sampleId), 0, `${s.sampleId} carries signal`);
  }

  // Defect 3: every scoring starts from the state the previously chosen candidate produced.
  for (const ep of [a, b]) {
    const groups = ep.events.filter((e) => e.type === 'TurnGroupScored');
    assert.equal(groups.length, ep.scorings.length);
    assert.ok(ep.scorings.length >= 2);
    for (let i = 1; i < ep.scorings.length; i++) {
      const prev = ep.scorings[i - 1];
      assert.deepEqual(ep.scorings[i].input.state, prev.output[groups[i - 1].chosen].nextState, `scoring ${i} starts where the chosen candidate left the env`);
    }
    // Greedy continuation: the chosen candidate has the group's best reward (the first of ties).
    for (const e of groups) {
      const best = Math.max(...e.samples.map((s) => s.reward));
      assert.equal(e.chosen, e.samples.findIndex((s) => s.reward === best));
    }
  }

  // Defect 4: the evaluator is shown the answer the generator just gave in the same turn, and the
  // refiner the evaluator's verdict: not the turn-start state.
  const shown = (p: AgentTurnInput) => p.messages.map((m) => m.content).join('\n');
  const answer = resetMathRefine(11, undefined).problem.answer;
  const [gen, critic] = a.prompts;
  assert.deepEqual([gen.agent, critic.agent], ['generator_initial', 'evaluator_critique']);
  assert.ok(!shown(gen).includes(`\\boxed{${answer}}`), 'the generator starts from the bare problem');
  assert.ok(shown(critic).includes(`\\boxed{${answer}}`), "the evaluator sees the generator's chosen answer");
  const refiner = b.prompts.find((p) => p.agent === 'generator_refinement' && p.turn === 0)!;
  assert.match(shown(refiner), /Verdict: Incorrect/, "the refiner sees the evaluator's chosen verdict of the same turn");

  // Mixed reward: reward = local + alpha * global, for every candidate.
  for (const s of a.samples) assert.ok(Math.abs(s.reward - (s.local + ALPHA * s.global)) < 1e-9, s.sampleId);
  const state = a.scorings[0].input.state as MathRefineState;
  assert.equal(state.problem.answer, answer);
});

test('plain GRPO: one sample per turn, grouped per (problem, agent), scored by the trajectory return', { timeout: 300_000 }, async () => {
  const cfg = config('grpo');
  const ep = await play(cfg, 'guards/grpo/ep0', 21, 1);
  assert.ok(ep.samples.length > 0);
  for (const agent of new Set(ep.samples.map((s) => s.agent))) {
    const mine = ep.samples.filter((s) => s.agent === agent);
    const ret = mine.reduce((x, s) => x + s.reward, 0);
    for (const s of mine) {
      assert.equal(s.groupKey, `p21/${agent}`);
      assert.equal(s.member, 'guards/grpo/ep0', 'the trajectory is the group member');
      assert.ok(Math.abs(s.score - ret) < 1e-9, `${s.sampleId} scored by its trajectory return`);
    }
    assert.equal(new Set(mine.map((s) => s.turn)).size, mine.length, 'one sample per turn');
  }
});
