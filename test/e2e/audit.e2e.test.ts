// The episode audit end to end on the real stack: short runs of every environment (scripted
// players: each environment's prompts, scoring and termination through the real workflow, every
// agent acting and the episodes ending as the environment says) and one trained Plan-Path run
// (tiny model, one PPO update) are recorded by the projector; `tandem episodes verify` re-executes them from the record and passes; the
// transcripts hold prompts, responses, observations, advantages and the consuming update; and a
// planted change to a reward or an action, or a deleted event, makes verify fail naming the step.
// The runs all start as the file loads (they share nothing); each test waits for the one it reads.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { after, test } from 'node:test';
import { and, eq, like, sql } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import type { TurnGroupScoredEvent } from '../../domain/events.js';
import { episodeStream, runStream, updateStream } from '../../domain/ids.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { loadTranscript } from '../../services/audit/transcript.js';
import { READ_MODEL_TABLES } from '../../services/eventStore/rebuild.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { tandem } from '../support/cli.js';
import { eventually } from '../support/eventually.js';
import { database, temporal } from '../support/stack.js';

const t = await temporal();
const pg = database();
after(async () => {
  await t.close();
  await pg.close();
});

const count = async (where: ReturnType<typeof and>) => Number((await pg.db.select({ n: sql<number>`count(*)` }).from(events).where(where))[0].n);

/**
 * Runs a config (one iteration of `problems` problems, K = 2) to the end and waits until the
 * projector has recorded all of it: `episodes` episode streams (evaluations' included) and
 * `updates` updates.
 */
async function recordedRun(tag: string, config: string, overrides: string[], expect: { problems: number; episodes: number; updates: number }): Promise<string> {
  const cfg = loadRunConfig(config, ['training.total_training_steps=1', `training.train_batch_size=${expect.problems}`, 'training.train_sample_num=2', 'training.val_freq=0', ...overrides]);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  const runId = `audit-${tag}-${cfg.config.env.name}-${Date.now()}`;
  const result = await t.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
  assert.equal(result.status, 'completed');
  await eventually(
    `run ${runId} recorded`,
    async () =>
      (await count(and(eq(events.stream, runStream(runId)), eq(events.type, 'RunFinished')))) === 1 &&
      (await count(and(like(events.stream, `episode:${runId}/%`), eq(events.type, 'EpisodeFinished')))) === expect.episodes &&
      (await count(and(like(events.stream, `update:${runId}/%`), eq(events.type, 'SamplesConsumed')))) === expect.updates
        ? true
        : undefined,
    180_000,
  );
  return runId;
}

// Every environment's L1 config (configs/<env>/<env>_L1_prompt.yaml; configs/smollm2/ holds a
// model's configs, not an environment's), with the scripted player acting for every agent.
const ENV_CONFIGS = readdirSync('configs', { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => `configs/${d.name}/${d.name}_L1_prompt.yaml`)
  .filter((f) => existsSync(f))
  .sort();

// What each environment's scripted episodes must show (once environments.e2e.test.ts's own runs):
// the agents that act, and whether the scripted players solve it. The puzzles', math's and code's
// players know the solution; in math_refine the evaluator accepts the first, correct answer, so
// the refiner never acts; Hanabi's players are not perfect.
const SCRIPTED: Record<string, { agents: string[]; solves: boolean }> = {
  'configs/code/code_L1_prompt.yaml': { agents: ['code_generator', 'test_generator'], solves: true },
  'configs/hanabi/hanabi_L1_prompt.yaml': { agents: ['player_0', 'player_1'], solves: false },
  'configs/math/math_L1_prompt.yaml': { agents: ['tool_generator', 'reasoning_generator'], solves: true },
  'configs/mathrefine/mathrefine_L1_prompt.yaml': { agents: ['generator_initial', 'evaluator_critique'], solves: true },
  'configs/planpath/planpath_L1_prompt.yaml': { agents: ['tool_call_agent', 'plan_agent'], solves: true },
  'configs/sokoban/sokoban_L1_prompt.yaml': { agents: ['tool_call_agent', 'plan_agent'], solves: true },
  'configs/sudoku/sudoku_L1_prompt.yaml': { agents: ['tool_call_agent', 'plan_agent'], solves: true },
};

/** A run started now; a failure is left for the test that awaits it (not an unhandled rejection). */
const started = (run: Promise<string>) => (run.catch(() => undefined), run);
const PLAN_PATH = 'configs/planpath/planpath_L1_prompt.yaml';
// Every run the tests read starts at once, as the file loads: they share nothing, and each waits on
// Temporal, Kafka and the projector more than on the CPU.
const scriptedRuns = new Map(ENV_CONFIGS.map((config) => [
  config,
  started(recordedRun('scripted', config, ['base_models.policy_0.scripted=true', 'update.allow_no_trainable_policy=true'], { problems: 2, episodes: 2, updates: 0 })),
]));
// One evaluation episode before training and one after it.
const trainedRun = started(recordedRun('trained', PLAN_PATH, ['training.max_response_length=32', 'env.max_turns=1', 'training.val_freq=1', 'training.val_problems=1', 'training.validate_sample_num=1'], { problems: 1, episodes: 3, updates: 1 }));
// One problem, K = 2 trajectories of one candidate per turn: two episodes, one group per agent.
const grpoRun = started(recordedRun('grpo', PLAN_PATH, ['algorithm=grpo', 'training.max_response_length=32'], { problems: 1, episodes: 2, updates: 1 }));

test('every environment with an L1 config has its scripted expectations here', () => {
  assert.deepEqual(ENV_CONFIGS, Object.keys(SCRIPTED).sort());
});

for (const config of ENV_CONFIGS) {
  test(`verify passes on a recorded run of ${config}; its scripted episodes act and end as the environment says`, { timeout: 900_000 }, async () => {
    const runId = await scriptedRuns.get(config)!;

    // The env, its prompts, scoring and termination through the real workflow: every agent that
    // should act did, K = 2 candidates per group with equal rewards (a script answers the same way
    // twice), and the episodes end solved where the players know the solution.
    const { agents, solves } = SCRIPTED[config];
    const recorded = await pg.db.select({ type: events.type, data: events.data }).from(events).where(like(events.stream, `episode:${runId}/it0/%`));
    const groups = recorded.filter((e) => e.type === 'TurnGroupScored').map((e) => e.data as TurnGroupScoredEvent);
    assert.deepEqual([...new Set(groups.map((g) => g.agent))].sort(), [...agents].sort());
    for (const g of groups) {
      assert.equal(g.samples.length, 2);
      assert.equal(g.samples[0].reward, g.samples[1].reward);
      assert.ok(g.samples.every((x) => Number.isFinite(x.reward) && x.outcome.length > 0));
    }
    const finished = recorded.filter((e) => e.type === 'EpisodeFinished').map((e) => e.data as { success: boolean });
    assert.equal(finished.length, 2);
    if (solves) assert.ok(finished.every((f) => f.success), 'the scripted players solved it');

    const v = await tandem('episodes', 'verify', '--run', runId);
    assert.equal(v.code, 0, v.out);
    assert.match(v.out, /2\/2 episodes verified/);

    const tr = await loadTranscript(pg.db, `${runId}/it0/ep0`);
    assert.ok(tr.steps.length > 0);
    for (const s of tr.steps) {
      assert.ok(s.prompt && s.prompt.length > 0 && s.prompt.every((m) => m.content.length > 0), 'the prompt is recorded');
      assert.notEqual(s.observation, null, 'the observation is recorded');
      assert.equal(s.candidates.length, 2);
      assert.ok(s.candidates.every((c) => typeof c.text === 'string' && c.text.length > 0), 'every response is recorded');
      assert.equal(s.candidates.filter((c) => c.chosen).length, 1);
    }
  });
}

test('a trained run: transcripts carry advantages and the update that consumed each sample; verify passes, evaluations included', { timeout: 900_000 }, async () => {
  const run = await trainedRun;
  const v = await tandem('episodes', 'verify', '--run', run);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, /3\/3 episodes verified/);
  assert.match(v.out, /eval/);

  const show = await tandem('episodes', 'show', `${run}/it0/ep0`, '--json');
  assert.equal(show.code, 0, show.out);
  const tr = JSON.parse(show.out.slice(0, show.out.lastIndexOf('}') + 1)) as Awaited<ReturnType<typeof loadTranscript>>;
  assert.equal(tr.env, 'plan_path');
  for (const s of tr.steps) {
    assert.equal(s.policyVersion, 0);
    for (const c of s.candidates) {
      assert.equal(typeof c.advantage, 'number', `${c.sampleId} has an advantage`);
      assert.deepEqual(c.update, { policy: s.policy, fromVersion: 0, toVersion: 1 });
    }
  }
  const text = await tandem('episodes', 'show', `${run}/it0/ep0`);
  assert.match(text.out, /-- prompt/);
  assert.match(text.out, /advantage -?\d/);
  assert.match(text.out, /update shared_model v0->v1/);

  const listed = await tandem('episodes', 'list', '--run', run, '--filter', 'iteration=0');
  assert.equal(listed.code, 0, listed.out);
  assert.match(listed.out, new RegExp(`${run}/it0/ep0`));
  const none = await tandem('episodes', 'list', '--run', run, '--filter', 'iteration=3');
  assert.doesNotMatch(none.out, new RegExp(`${run}/it0/ep0`));
  const evaluated = await eventually('both evaluations in the evaluations read model', async () => {
    const { rows } = await pg.pool.query('SELECT iteration FROM evaluations WHERE run_id = $1 ORDER BY iteration', [run]);
    return rows.length === 2 ? rows : undefined;
  });
  assert.deepEqual(evaluated, [{ iteration: 0 }, { iteration: 1 }]);
  const evalsListed = await tandem('episodes', 'list', '--run', run, '--filter', 'phase=eval');
  assert.equal(evalsListed.out.split('\n').filter((l) => l.startsWith(`${run}/eval/`)).length, 2, evalsListed.out);
  const bad = await tandem('episodes', 'list', '--run', run, '--filter', 'sucess=true');
  assert.equal(bad.code, 2);
  assert.match(bad.out, /sucess: unknown key/);
});

test('a plain-GRPO run verifies, its trajectory-level advantages included', { timeout: 900_000 }, async () => {
  const runId = await grpoRun;
  const v = await tandem('episodes', 'verify', '--run', runId);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, /2\/2 episodes verified/);
  const tr = await loadTranscript(pg.db, `${runId}/it0/ep0`);
  for (const s of tr.steps) for (const c of s.candidates) assert.deepEqual(c.update, { policy: s.policy, fromVersion: 0, toVersion: 1 });
});

/** Changes one stored event, runs verify on the episode, and restores the row. */
async function tampered(
  episodeId: string,
  stream: string,
  position: number,
  change: 'delete' | ((data: Record<string, unknown>) => void),
): Promise<{ code: number; out: string }> {
  const where = and(eq(events.stream, stream), eq(events.position, position));
  const [row] = await pg.db.select().from(events).where(where);
  assert.ok(row, `event ${position} of ${stream}`);
  try {
    if (change === 'delete') await pg.db.delete(events).where(where);
    else {
      const data = structuredClone(row.data) as Record<string, unknown>;
      change(data);
      await pg.db.update(events).set({ data }).where(where);
    }
    return await tandem('episodes', 'verify', episodeId);
  } finally {
    await pg.db.delete(events).where(where);
    await pg.db.insert(events).values(row);
    assert.equal((await tandem('episodes', 'verify', episodeId)).code, 0, 'restored');
  }
}

/** Tampers with an event of the Plan-Path scripted episode. */
async function tamperedScripted(position: number, change: 'delete' | ((data: Record<string, unknown>) => void)) {
  const runId = await scriptedRuns.get(PLAN_PATH);
  assert.ok(runId, 'the Plan-Path scripted run is recorded');
  const episodeId = `${runId}/it0/ep0`;
  return tampered(episodeId, episodeStream(episodeId), position, change);
}

type Group = { samples: { reward: number; text: string }[] };

test('a planted change to a reward fails verify at that step', { timeout: 300_000 }, async () => {
  const v = await tamperedScripted(1, (d) => void ((d as unknown as Group).samples[0].reward += 1));
  assert.equal(v.code, 1, v.out);
  assert.match(v.out, /re-execution: step 0 \(turn 0, tool_call_agent\): candidate 0 reward differs/);
  assert.match(v.out, /hash chain: .*position 1 .*does not match/);
});

test('a planted change to an action fails verify at that step', { timeout: 300_000 }, async () => {
  const v = await tamperedScripted(2, (d) => void ((d as unknown as Group).samples[1].text = '#### not an answer'));
  assert.equal(v.code, 1, v.out);
  assert.match(v.out, /re-execution: step 1 \(turn 0, plan_agent\): candidate 1 \w+ differs/);
});

test('a deleted event fails verify', { timeout: 300_000 }, async () => {
  const middle = await tamperedScripted(1, 'delete');
  assert.equal(middle.code, 1, middle.out);
  assert.match(middle.out, /position 1 is missing/);
  const last = await tamperedScripted(3, 'delete');
  assert.equal(last.code, 1, last.out);
  assert.match(last.out, /events were deleted/);
  assert.match(last.out, /no EpisodeFinished/);
});

test('a planted change to an advantage fails verify', { timeout: 300_000 }, async () => {
  const run = await trainedRun;
  const episodeId = `${run}/it0/ep0`;
  const stream = updateStream(run, 'shared_model', 0);
  const v = await tampered(episodeId, stream, 0, (d) => {
    const advantages = d.advantages as Record<string, number>;
    const first = Object.keys(advantages).sort()[0];
    advantages[first] += 0.5;
  });
  assert.equal(v.code, 1, v.out);
  assert.match(v.out, /advantages: step \d+ \(turn 0, \w+\): candidate \d advantage differs: recorded .* \(update shared_model v0->v1\), recomputed/);
  assert.match(v.out, new RegExp(`hash chain: update:${run}/shared_model/v0: event at position 0`));
});

test('a planted change to a sample\'s generating version (trained outside the staleness bound) fails verify', { timeout: 300_000 }, async () => {
  // The run trains strictly on-policy (rollout.max_staleness 0): a group recorded as generated by
  // v1 but trained by the update from v0 would be a sample from the future.
  const episodeId = `${await trainedRun}/it0/ep0`;
  const v = await tampered(episodeId, episodeStream(episodeId), 1, (d) => void ((d as { policyVersion: number }).policyVersion = 1));
  assert.equal(v.code, 1, v.out);
  assert.match(v.out, /advantages: step 0 \(turn 0, \w+\): candidate 0 came from v1 and was trained by update shared_model v0->v1: age -1, outside \[0, 0\] \(rollout.max_staleness\)/);
});

test('projector rebuild gives the read models the live projection gave', { timeout: 300_000 }, async () => {
  const snapshot = async () => {
    const out: Record<string, string[]> = {};
    for (const table of READ_MODEL_TABLES) out[table] = (await pg.pool.query(`SELECT to_jsonb(t)::text AS row FROM ${table} t ORDER BY 1`)).rows.map((r: { row: string }) => r.row);
    return out;
  };
  const run = await trainedRun;
  const live = await snapshot();
  assert.ok(live.samples.some((r) => r.includes(run)), 'the trained run is in the compared content');
  const cli = await tandem('projector', 'rebuild');
  assert.equal(cli.code, 0, cli.out);
  assert.deepEqual(await snapshot(), live);
});
