// The episode and evaluate workflows on a local Temporal dev server with mocked activities
// (test/support/workflowEnv.ts): what they ask of the activities, what they publish and what
// they return. The environments are the real, pure ones (math_refine: three agents act in one
// turn and no code runs; plan_path: the tool agent hands its code to the plan agent).
// Also the guards against the reference implementation's AT-GRPO defects
// (../shared/reference/at-grpo-facts.md): an agentTurn mock whose candidate c1 of a generator is
// right and the others wrong (in a "wrong-start" episode every initial answer is wrong, so the
// refiner gets to act), evaluator candidates alternating Correct/Incorrect.
//   defect 1: groups mixed different problems        -> one group = one (problem, turn, agent), K members
//   defect 2: later agents in a turn got no signal   -> every agent's group has distinct rewards
//   defect 3: env stepped on objects other than read -> each scoring starts from the chosen candidate's state
//   defect 4: all agents prompted from turn start    -> an agent's prompt shows what the agents before it did
// (defect 5, adapters missing from checkpoints, is guarded by the engine's PEFT round-trip test;
// configs named in docs that do not exist, by test/unit/docs-references.unit.test.ts.)
import assert from 'node:assert/strict';
import { after, beforeEach, test } from 'node:test';
import type { AgentTurnInput } from '../../activities/agentTurn.js';
import type { TrajectoryRecord } from '../../activities/records.js';
import type { RunConfig } from '../../configs/schema.js';
import { groupAdvantages } from '../../domain/atgrpo.js';
import { resetMathRefine } from '../../envs/mathrefine/definition.js';
import type { MathRefineState } from '../../envs/mathrefine/state.js';
import { SEED_RANGES, seedRange } from '../../envs/shared/seeds.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { episode, type EpisodeInput } from '../../workflows/episode.js';
import { evaluate } from '../../workflows/evaluate.js';
import {
  callsOf,
  candidate,
  defaultMocks,
  eventsOf,
  inputsOf,
  published,
  publishedSamples,
  runConfig,
  startWorkflowHarness,
  type ActivityCall,
} from '../support/workflowEnv.js';

const K = 4;
const ALPHA = 0.5;
const MATHREFINE = 'configs/mathrefine/mathrefine_L1_prompt.yaml';
const PLANPATH = 'configs/planpath/planpath_L1_prompt.yaml';

const h = await startWorkflowHarness();
after(() => h.close());
beforeEach(() => h.reset());

const mathRefine = (overrides: string[] = []) => runConfig(MATHREFINE, [`alpha=${ALPHA}`, `training.train_sample_num=${K}`, ...overrides]);

/** Plays one episode to its end; returns its summary and the activity calls it made (one workflow at a time). */
async function play(config: RunConfig, episodeId: string, problemSeed: number, opts: Partial<EpisodeInput> = {}) {
  const input: EpisodeInput = { runId: 'unit', iteration: 0, episodeId, problemSeed, candidates: K, config, versions: {}, ...opts };
  const from = h.calls.length;
  const summary = await h.env.client.workflow.execute(episode, { taskQueue: CPU_QUEUE, workflowId: episodeId, args: [input] });
  const calls = h.calls.slice(from);
  return {
    summary,
    calls,
    prompts: inputsOf(calls, 'agentTurn'),
    scorings: callsOf(calls, 'scoreCandidates').map((c) => ({ input: c.input, output: c.output! })),
    samples: publishedSamples(calls),
    groups: eventsOf(calls, 'TurnGroupScored'),
  };
}

/** The problem seed of an episode, from its EpisodeStarted. */
const seedOf = (episodeId: string) => eventsOf(h.calls, 'EpisodeStarted').find((e) => e.episodeId === episodeId)!.problemSeed;
const answerOf = (episodeId: string) => resetMathRefine(seedOf(episodeId), undefined).problem.answer;
const boxed = (answer: string) => `So the answer is \\boxed{${answer}}.`;
/** A value as it comes out of workflow history (JSON: undefined fields dropped). */
const json = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const shown = (p: AgentTurnInput) => p.messages.map((m) => m.content).join('\n');

/** The defect guards' policy: generator candidate c1 right (none in a wrong-start episode), evaluator verdicts alternating from Correct. */
async function guardsTurn(input: AgentTurnInput) {
  const answer = answerOf(input.episodeId);
  const right = (i: number) => i === 1 && !(input.agent === 'generator_initial' && input.episodeId.includes('wrong-start'));
  return Array.from({ length: input.k }, (_, i) =>
    candidate(input, input.agent === 'evaluator_critique' ? `Checked.\nVerdict: ${i % 2 === 0 ? 'Correct' : 'Incorrect'}` : boxed(right(i) ? answer : `${answer}${i + 7}`), i),
  );
}

test('AT-GRPO groups, signal, state and prompts are what the algorithm says (defects 1-4)', async () => {
  h.mocks.agentTurn = guardsTurn;
  const cfg = mathRefine();
  const a = await play(cfg, 'guards/at/ep0', 11);
  const b = await play(cfg, 'guards/at/wrong-start', 12);

  // Defect 1: a group is the K candidates of one (problem, turn, agent), and problems never share one.
  for (const [ep, seed] of [[a, 11], [b, 12]] as const) {
    const groups = new Map<string, TrajectoryRecord[]>();
    for (const s of ep.samples) groups.set(s.groupKey, [...(groups.get(s.groupKey) ?? []), s]);
    for (const [key, members] of groups) {
      assert.equal(members.length, K, `group ${key} has K members`);
      assert.equal(new Set(members.map((s) => `${s.problemSeed}/${s.turn}/${s.agent}`)).size, 1, `group ${key} is one (problem, turn, agent)`);
      assert.equal(key, `p${seed}/t${members[0].turn}/${members[0].agent}`);
      assert.equal(members[0].problemSeed, seed);
      assert.deepEqual(members.map((s) => s.candidate), [0, 1, 2, 3]);
      assert.deepEqual(members.map((s) => s.member), members.map((s) => s.sampleId), 'under at_grpo each sample is its own group member');
      assert.deepEqual(members.map((s) => s.score), members.map((s) => s.reward), 'under at_grpo a sample is scored by its own reward');
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
    assert.equal(ep.groups.length, ep.scorings.length);
    assert.ok(ep.scorings.length >= 2);
    for (let i = 1; i < ep.scorings.length; i++) {
      const prev = ep.scorings[i - 1];
      assert.deepEqual(ep.scorings[i].input.state, prev.output[ep.groups[i - 1].chosen].nextState, `scoring ${i} starts where the chosen candidate left the env`);
    }
    // Greedy continuation: the chosen candidate has the group's best reward (the first of ties).
    for (const e of ep.groups) {
      const best = Math.max(...e.samples.map((s) => s.reward));
      assert.equal(e.chosen, e.samples.findIndex((s) => s.reward === best));
    }
  }

  // Defect 4: the evaluator is shown the answer the generator just gave in the same turn, and the
  // refiner the evaluator's verdict: not the turn-start state.
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

test('an episode samples K candidates per (turn, agent) with the train sampling and publishes them with its events', async () => {
  h.mocks.agentTurn = guardsTurn;
  const cfg = mathRefine(['training.max_response_length=77']);
  const ep = await play(cfg, 'unit/it3/ep0', 13, { iteration: 3, versions: { shared_model: 5 } });
  const [started] = eventsOf(ep.calls, 'EpisodeStarted');
  assert.deepEqual(started, {
    type: 'EpisodeStarted',
    runId: 'unit',
    iteration: 3,
    episodeId: 'unit/it3/ep0',
    problemSeed: 13,
    phase: 'train',
    setup: { env: json(cfg.env), alpha: ALPHA, ifGreedy: true, turnOrder: ['generator_initial', 'evaluator_critique', 'generator_refinement'] },
  });
  assert.deepEqual(inputsOf(ep.calls, 'envReset'), [{ env: json(cfg.env), seed: 13 }]);
  for (const p of ep.prompts) {
    assert.equal(p.k, K);
    assert.equal(p.policyVersion, 5, 'the version the iteration samples from');
    assert.equal(p.iteration, 3);
    assert.equal(p.record, true, 'training turns record their tokens for the update');
    assert.equal(p.maxNewTokens, 77);
    assert.deepEqual(p.sampling, json(cfg.agent_policy_configs.agent_configs.agent_0.train_llm_config));
    assert.equal(p.policy.spec.name, 'shared_model');
    assert.equal(p.policy.runId, 'unit');
  }
  // The episode's stream: EpisodeStarted at 0 (published first), then the groups and EpisodeFinished with the samples.
  const envelopes = published(ep.calls);
  assert.deepEqual(envelopes.map((e) => [e.stream, e.position, e.event.type]), [
    ['episode:unit/it3/ep0', 0, 'EpisodeStarted'],
    ...ep.groups.map((_, i) => ['episode:unit/it3/ep0', i + 1, 'TurnGroupScored']),
    ['episode:unit/it3/ep0', ep.groups.length + 1, 'EpisodeFinished'],
  ]);
  assert.equal(callsOf(ep.calls, 'publishEpisode').length, 1, 'samples and events in one publish, at the end');
  assert.equal(ep.calls.at(-1)!.name, 'publishEpisode');
  // Only the agent turns go through a task queue: the opening, the scoring and the closing are
  // local activities of the episode's workflow tasks (no round trip through the server's queues).
  const history = await h.env.client.workflow.getHandle('unit/it3/ep0').fetchHistory();
  const queued = history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  assert.deepEqual([...new Set(queued)], ['agentTurn']);
  assert.equal(ep.samples.length, ep.groups.length * K);
  assert.deepEqual(ep.samples.map((s) => s.sampleId), ep.groups.flatMap((g) => g.samples.map((s) => s.sampleId)));
  for (const s of ep.samples) assert.equal(s.policyVersion, 5);
  assert.deepEqual(ep.summary.samplesByPolicy, { shared_model: ep.samples.length });
  const [finished] = eventsOf(ep.calls, 'EpisodeFinished');
  assert.deepEqual(
    { success: finished.success, turns: finished.turns, rewardByAgent: finished.rewardByAgent },
    { success: ep.summary.success, turns: ep.summary.turns, rewardByAgent: ep.summary.rewardByAgent },
  );
});

test('greedy continuation takes the best reward, the first of ties; if_greedy=false takes candidate 0', async () => {
  // Generator candidates: c0 wrong, c1 and c2 right (a tie, told apart by their wording), c3 wrong.
  h.mocks.agentTurn = async (input) => {
    const answer = answerOf(input.episodeId);
    const texts =
      input.agent === 'generator_initial'
        ? [boxed('wrong'), `First: \\boxed{${answer}}.`, `Second: \\boxed{${answer}}.`, boxed('also wrong')]
        : Array.from({ length: input.k }, () => 'Verdict: Correct');
    return texts.map((t, i) => candidate(input, t, i));
  };
  for (const greedy of [true, false]) {
    const ep = await play(mathRefine([`rollout.if_greedy=${greedy}`]), `greedy-${greedy}`, 21);
    const [gen] = ep.groups;
    assert.deepEqual(gen.samples.map((s) => s.reward > 0), [false, true, true, false]);
    const chosen = greedy ? 1 : 0;
    assert.equal(gen.chosen, chosen, `if_greedy=${greedy}`);
    assert.deepEqual(ep.samples.filter((s) => s.turn === 0 && s.agent === 'generator_initial').map((s) => s.chosen), [0, 1, 2, 3].map((i) => i === chosen));
    // The episode went on from the chosen candidate: its state, and the evaluator was shown its answer.
    assert.deepEqual(ep.scorings[1].input.state, ep.scorings[0].output[chosen].nextState);
    const critic = shown(ep.prompts[1]);
    assert.ok(critic.includes(gen.samples[chosen].text!), 'the evaluator judges the chosen solution');
    for (const other of [0, 1, 2, 3].filter((i) => i !== chosen)) assert.ok(!critic.includes(gen.samples[other].text!), `candidate ${other} is not shown`);
    // The evaluator accepted it: success is the chosen answer's truth.
    assert.equal(ep.summary.success, greedy);
    assert.equal(eventsOf(ep.calls, 'EpisodeStarted')[0].setup!.ifGreedy, greedy);
    assert.equal(ep.summary.turnRewards[0].reward, gen.samples[chosen].reward, "the turn's reward is the chosen candidate's");
  }
});

test("a later agent of the same turn is prompted with the handoff of the earlier agent's chosen candidate; a new turn starts without one", async () => {
  // Plan-Path: the tool agent's handoff is its code (and output); the plan agent is shown it.
  const cfg = runConfig(PLANPATH, ['env.max_turns=2', 'training.train_sample_num=3']);
  h.mocks.agentTurn = async (input) =>
    Array.from({ length: input.k }, (_, i) =>
      candidate(input, input.agent === 'tool_call_agent' ? `\`\`\`python\nprint('tool-${input.turn}-${i}')\n\`\`\`` : `#### plan-${input.turn}-${i}`, i),
    );
  // The real scores, but the tool agent's candidate 2 the best, and no candidate ending the episode.
  const real = defaultMocks().scoreCandidates;
  h.mocks.scoreCandidates = async (input) =>
    (await real(input)).map((s, i) => ({ ...s, reward: input.agent === 'tool_call_agent' && i === 2 ? 5 : s.reward, done: false, solved: false }));
  const ep = await play(cfg, 'handoff/ep0', 31, { candidates: 3 });

  assert.deepEqual(ep.prompts.map((p) => [p.turn, p.agent]), [[0, 'tool_call_agent'], [0, 'plan_agent'], [1, 'tool_call_agent'], [1, 'plan_agent']]);
  assert.deepEqual(ep.groups.map((g) => g.chosen), [2, 0, 2, 0]);
  for (const turn of [0, 1]) {
    const [tool, plan] = [2 * turn, 2 * turn + 1];
    const handoff = ep.scorings[tool].output[2].handoff as { code: string };
    assert.equal(handoff.code, `print('tool-${turn}-2')`);
    assert.deepEqual(ep.groups[plan].handoff, handoff, "the plan agent acted on the chosen tool candidate's handoff");
    assert.ok(shown(ep.prompts[plan]).includes(`print('tool-${turn}-2')`), "the plan agent's prompt shows the chosen code");
    for (const other of [0, 1]) assert.ok(!shown(ep.prompts[plan]).includes(`print('tool-${turn}-${other}')`));
    assert.equal(ep.groups[tool].handoff, undefined, 'the first agent of a turn has no handoff');
    assert.ok(!shown(ep.prompts[tool]).includes("print('tool-"), 'nor a hint of the last turn in its prompt');
  }
});

test('max_turns ends an episode the env never ends; done ends it at once, even mid-turn', async () => {
  // Plan-Path, whose every agent acts in every turn; the scores say when the episode is done.
  const cfg = runConfig(PLANPATH, ['env.max_turns=3', 'training.train_sample_num=2']);
  const real = defaultMocks().scoreCandidates;
  let doneAt: { turn: number; agent: string } | null = null;
  let turn = 0;
  h.mocks.agentTurn = async (input) => {
    turn = input.turn;
    return defaultMocks().agentTurn(input);
  };
  h.mocks.scoreCandidates = async (input) =>
    (await real(input)).map((s) => {
      const done = doneAt !== null && doneAt.turn === turn && doneAt.agent === input.agent;
      return { ...s, done, solved: done };
    });

  const long = await play(cfg, 'turns/max', 41, { candidates: 2 });
  assert.deepEqual(long.prompts.map((p) => [p.turn, p.agent]), [0, 1, 2].flatMap((t) => [[t, 'tool_call_agent'], [t, 'plan_agent']]));
  assert.equal(long.summary.turns, 3);
  assert.equal(long.summary.success, false);
  assert.equal(eventsOf(long.calls, 'EpisodeFinished')[0].turns, 3);

  // Done after the tool agent of turn 1: the plan agent of that turn never acts, and no turn 2.
  doneAt = { turn: 1, agent: 'tool_call_agent' };
  const short = await play(cfg, 'turns/done', 42, { candidates: 2 });
  assert.deepEqual(short.prompts.map((p) => [p.turn, p.agent]), [[0, 'tool_call_agent'], [0, 'plan_agent'], [1, 'tool_call_agent']]);
  assert.equal(short.scorings.length, 3);
  assert.equal(short.summary.turns, 2);
  assert.equal(short.summary.success, true, 'success as of the last action');
  const [finished] = eventsOf(short.calls, 'EpisodeFinished');
  assert.deepEqual([finished.turns, finished.success], [2, true]);
  assert.deepEqual(finished.finalState, short.scorings[2].output[0].nextState, "the final state is the chosen candidate's");
});

test('plain GRPO: one sample per turn, grouped per (problem, agent), scored by the trajectory return', async () => {
  // Every answer wrong and every verdict Incorrect: three critiques, so each agent acts in several turns.
  h.mocks.agentTurn = async (input) => Array.from({ length: input.k }, (_, i) => candidate(input, input.agent === 'evaluator_critique' ? 'Verdict: Incorrect' : boxed('nope'), i));
  const ep = await play(mathRefine(['algorithm=grpo']), 'guards/grpo/ep0', 21, { candidates: 1 });
  assert.ok(ep.samples.length > 0);
  assert.ok(ep.prompts.every((p) => p.k === 1));
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
  const critiques = ep.samples.filter((s) => s.agent === 'evaluator_critique');
  assert.equal(critiques.length, 3);
  assert.equal(critiques[0].score, 3, 'three accurate verdicts of a wrong answer: return 3 x 1');
  for (const g of ep.groups) assert.equal(g.groupKey, `p21/${g.agent}`);
});

test('the eval phase samples with val_llm_config, records no tokens and publishes no samples, only events', async () => {
  const cfg = mathRefine(['env.max_turns=1']);
  const ep = await play(cfg, 'phase/eval', 51, { phase: 'eval', candidates: 1 });
  assert.ok(ep.prompts.length > 0);
  for (const p of ep.prompts) {
    assert.equal(p.record, false);
    assert.deepEqual(p.sampling, json(cfg.agent_policy_configs.agent_configs.agent_0.val_llm_config));
  }
  assert.deepEqual(ep.samples, []);
  assert.deepEqual(ep.summary.samplesByPolicy, {});
  assert.equal(eventsOf(ep.calls, 'EpisodeStarted')[0].phase, 'eval');
  assert.equal(ep.groups.length, ep.prompts.length, 'the groups are still recorded as events');
  assert.equal(eventsOf(ep.calls, 'EpisodeFinished').length, 1);
});

test('samplesByPolicy counts the published samples of each policy (one adapter per agent)', async () => {
  h.mocks.agentTurn = guardsTurn;
  const ep = await play(runConfig('configs/mathrefine/mathrefine_L2_lora.yaml', [`training.train_sample_num=${K}`]), 'guards/L2/wrong-start', 61);
  const counts: Record<string, number> = {};
  for (const s of ep.samples) counts[s.policy] = (counts[s.policy] ?? 0) + 1;
  assert.deepEqual(ep.summary.samplesByPolicy, counts);
  assert.deepEqual(Object.keys(counts).sort(), ['evaluator_critique', 'generator_initial', 'generator_refinement']);
  for (const s of ep.samples) assert.equal(s.policy, s.agent, "each agent's samples train its own adapter");
  for (const p of ep.prompts) assert.equal(p.policy.spec.name, p.agent);
});

test('a scripted player acts through scriptedTurn on the CPU queue, never through a policy', async () => {
  const cfg = mathRefine(['base_models.policy_0.scripted=true', 'update.allow_no_trainable_policy=true', 'env.max_turns=2']);
  const ep = await play(cfg, 'scripted/ep0', 71, { candidates: 2 });
  assert.equal(inputsOf(ep.calls, 'agentTurn').length, 0);
  const turns = inputsOf(ep.calls, 'scriptedTurn');
  assert.deepEqual(turns.map((t) => [t.agent, t.turn, t.k, t.episodeId]), [['generator_initial', 0, 2, 'scripted/ep0'], ['evaluator_critique', 0, 2, 'scripted/ep0']]);
  assert.deepEqual(turns[1].state, ep.scorings[0].output[0].nextState, 'the script plays from the chosen state');
  assert.equal(ep.summary.success, true, 'the scripted players solve it');
  for (const g of ep.groups) assert.equal(g.samples[0].reward, g.samples[1].reward, 'a script answers the same way twice');
});

// ------------------------------------------------------------------ evaluate

/** Runs evaluate to its end; returns its result and the activity calls of it and its episodes. */
async function runEvaluation(workflowId: string, input: Parameters<typeof evaluate>[0]) {
  const from = h.calls.length;
  const result = await h.env.client.workflow.execute(evaluate, { taskQueue: CPU_QUEUE, workflowId, args: [input] });
  return { result, calls: h.calls.slice(from) };
}

const evaluationFinished = (c: ActivityCall) => published([c]).some((e) => e.event.type === 'EvaluationFinished');

test("a run's evaluation plays each held-out problem validate_sample_num times at the run's versions, publishes EvaluationFinished and releases nothing", async () => {
  const cfg = mathRefine(['training.val_problems=3', 'training.validate_sample_num=2', 'env.max_turns=1', 'rollout.episode_window=2']);
  const evalId = 'run-e/eval/it4';
  const { result, calls } = await runEvaluation(evalId, { config: cfg, runId: 'run-e', iteration: 4, versions: { shared_model: 4 } });

  assert.equal(inputsOf(calls, 'policyVersion').length, 0, 'the versions were given');
  const started = eventsOf(calls, 'EpisodeStarted').sort((x, y) => x.episodeId.localeCompare(y.episodeId));
  assert.deepEqual(
    started.map((e) => [e.episodeId, e.problemSeed, e.phase, e.runId, e.iteration]),
    [0, 1, 2, 3, 4, 5].map((j) => [`${evalId}/ep${j}`, seedRange('validation', Math.floor(j / 2)), 'eval', 'run-e', 4]),
  );
  const { start, size } = SEED_RANGES.validation;
  for (const e of started) assert.ok(e.problemSeed >= start && e.problemSeed < start + size, 'a held-out seed');
  for (const p of inputsOf(calls, 'agentTurn')) {
    assert.equal(p.k, 1, 'one candidate per turn');
    assert.equal(p.policyVersion, 4);
    assert.equal(p.record, false);
  }
  assert.deepEqual(publishedSamples(calls), [], 'nothing of an evaluation reaches an update');

  const finished = published(calls).filter((e) => e.event.type === 'EvaluationFinished');
  assert.deepEqual(finished, [{ eventId: `eval:${evalId}#0`, stream: `eval:${evalId}`, position: 0, event: { type: 'EvaluationFinished', ...result } }]);
  assert.equal(result.evalId, evalId);
  assert.equal(result.runId, 'run-e');
  assert.equal(result.iteration, 4);
  assert.equal(result.episodes, 6);
  assert.deepEqual(result.versions, { shared_model: 4 });
  assert.equal(result.meanTurns, 1);
  const episodes = eventsOf(calls, 'EpisodeFinished');
  assert.equal(result.successRate, episodes.filter((e) => e.success).length / 6);
  assert.deepEqual(Object.keys(result.rewardByAgent).sort(), ['evaluator_critique', 'generator_initial']);
  assert.equal(calls.findIndex(evaluationFinished), calls.length - 1, 'recorded after every episode');
  assert.equal(inputsOf(calls, 'releasePolicy').length, 0, "a run's evaluation leaves the run's policies loaded");
});

test('an evaluation on demand loads each policy from its checkpoint folder, plays the held-out dataset, and frees the policies at the end', async () => {
  const cfg = runConfig(MATHREFINE, [
    'training.val_problems=2',
    'training.validate_sample_num=1',
    'env.max_turns=1',
    'env.dataset.path=test/fixtures/data/math.parquet',
    'env.val_dataset.path=test/fixtures/data/math-good.jsonl',
  ]);
  h.mocks.policyVersion = async () => 7;
  const evalId = 'eval-on-demand';
  const { result, calls } = await runEvaluation(evalId, { config: cfg, runId: evalId, iteration: null, checkpointDirs: { shared_model: '/ckpt/shared' } });

  const [loaded] = inputsOf(calls, 'policyVersion');
  assert.equal(inputsOf(calls, 'policyVersion').length, 1);
  assert.equal(loaded.runId, evalId);
  assert.equal(loaded.checkpointDir, '/ckpt/shared');
  assert.equal(calls[0].name, 'policyVersion', 'loaded before any episode');
  for (const p of inputsOf(calls, 'agentTurn')) {
    assert.equal(p.policyVersion, 7);
    assert.equal(p.policy.checkpointDir, '/ckpt/shared');
  }
  // The held-out problems: the episodes' opening reads the val_dataset, never the training dataset.
  const resets = inputsOf(calls, 'envResets');
  assert.deepEqual(resets.map((r) => r.seeds.length), [2], 'both episodes opened together');
  assert.equal((resets[0].env as { dataset?: { path: string } }).dataset?.path, 'test/fixtures/data/math-good.jsonl');
  assert.equal(inputsOf(calls, 'envReset').length, 0);
  assert.deepEqual(result.versions, { shared_model: 7 });
  assert.equal(result.iteration, null);
  assert.equal(result.episodes, 2);

  const release = calls.findIndex((c) => c.name === 'releasePolicy');
  const recorded = calls.findIndex(evaluationFinished);
  assert.ok(recorded >= 0 && release > recorded, 'released after the result is recorded');
  assert.deepEqual(inputsOf(calls, 'releasePolicy'), [loaded], 'the policy it loaded, by the same reference');
});

test("a prompt the engine cut to max_prompt_length is recorded with its turn, counted in the episode's end and summary; the episode plays on", async () => {
  // The engine cut generator_initial's prompt (training.truncation keep_system, the default) from 2,000 tokens.
  h.mocks.agentTurn = async (input: AgentTurnInput) => (await guardsTurn(input)).map((c) => (input.agent === 'generator_initial' ? { ...c, promptTruncatedFrom: 2000 } : c));
  const cfg = mathRefine(['training.max_prompt_length=1536']);
  assert.equal(cfg.training.truncation, 'keep_system');
  const ep = await play(cfg, 'unit/cut/ep0', 14);
  const cut = ep.groups.filter((g) => g.promptTruncated);
  assert.deepEqual(cut.map((g) => g.agent), ep.groups.filter((g) => g.agent === 'generator_initial').map((g) => g.agent));
  assert.deepEqual(cut[0].promptTruncated, {
    tokens: 2000,
    limit: 1536,
    truncation: 'keep_system',
    reason: 'the prompt has 2000 tokens, more than the 1536 of training.max_prompt_length; kept the system prompt (when shorter than the limit) and the last tokens (training.truncation keep_system)',
  });
  assert.ok(ep.groups.some((g) => g.agent !== 'generator_initial' && g.promptTruncated === undefined));
  const [finished] = eventsOf(ep.calls, 'EpisodeFinished');
  assert.equal(finished.promptsTruncated, cut.length);
  assert.equal(ep.summary.promptsTruncated, cut.length);
  assert.ok(ep.samples.length > 0, 'its samples are published for the update as any others');
  // An episode whose prompts all fitted says nothing of it.
  h.mocks.agentTurn = guardsTurn;
  const whole = await play(cfg, 'unit/cut/ep1', 14);
  assert.ok(whole.groups.every((g) => g.promptTruncated === undefined));
  assert.equal(eventsOf(whole.calls, 'EpisodeFinished')[0].promptsTruncated, undefined);
  assert.equal(whole.summary.promptsTruncated, undefined);
});

test("the run's recovery settings are its activities' heartbeat timeout and retry intervals", async () => {
  h.mocks.agentTurn = guardsTurn;
  const ep = 'unit/recovery/ep0';
  await play(mathRefine(['recovery.heartbeat_timeout_s=7', 'recovery.retry_initial_interval_s=0.5', 'recovery.retry_max_interval_s=4']), ep, 15);
  const history = await h.env.client.workflow.getHandle(ep).fetchHistory();
  const scheduled = history.events!.flatMap((e) => e.activityTaskScheduledEventAttributes ?? []);
  assert.ok(scheduled.length > 0);
  for (const a of scheduled) {
    assert.equal(Number(a.heartbeatTimeout?.seconds), 7, a.activityType?.name ?? '');
    assert.equal(Number(a.retryPolicy?.initialInterval?.nanos), 500_000_000);
    assert.equal(Number(a.retryPolicy?.maximumInterval?.seconds), 4);
  }
});
