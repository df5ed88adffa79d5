// An episode of each environment through the real workflow (Temporal, Kafka, Postgres), with
// the environment's scripted player acting for every agent: the env, its prompts, scoring and
// termination, run by the same code paths a training run uses.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { asc } from 'drizzle-orm';
import type { TurnGroupScoredEvent } from '../../domain/events.js';
import { events } from '../../infra/db/schema.js';
import { loadRunConfig } from '../../configs/load.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { eventually } from '../support/eventually.js';
import { database, temporal } from '../support/stack.js';

const t = await temporal();
const pg = database();
after(async () => {
  await t.close();
  await pg.close();
});

// Each L1 config has one base model, policy_0, which the scripted player replaces.
// The puzzles', math and code scripted players know the solution, so their episodes are solved.
// (In math_refine the evaluator accepts the first, correct answer: the refiner never acts.)
const ENVIRONMENTS: { config: string; agents: string[]; solves: boolean }[] = [
  { config: 'configs/planpath/planpath_L1_prompt.yaml', agents: ['tool_call_agent', 'plan_agent'], solves: true },
  { config: 'configs/sokoban/sokoban_L1_prompt.yaml', agents: ['tool_call_agent', 'plan_agent'], solves: true },
  { config: 'configs/sudoku/sudoku_L1_prompt.yaml', agents: ['tool_call_agent', 'plan_agent'], solves: true },
  { config: 'configs/math/math_L1_prompt.yaml', agents: ['tool_generator', 'reasoning_generator'], solves: true },
  { config: 'configs/mathrefine/mathrefine_L1_prompt.yaml', agents: ['generator_initial', 'evaluator_critique'], solves: true },
  { config: 'configs/code/code_L1_prompt.yaml', agents: ['code_generator', 'test_generator'], solves: true },
  { config: 'configs/hanabi/hanabi_L1_prompt.yaml', agents: ['player_0', 'player_1'], solves: false },
];

for (const { config, agents, solves } of ENVIRONMENTS) {
  test(`a scripted episode of ${config}`, async () => {
    const cfg = loadRunConfig(config, [
      'base_models.policy_0.scripted=true',
      'update.allow_no_trainable_policy=true',
      'training.total_training_steps=1',
      'training.train_batch_size=1',
      'training.train_sample_num=2',
    ]);
    assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
    const runId = `env-${cfg.config.env.name}-${Date.now()}`;
    const result = await t.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
    assert.equal(result.status, 'completed');
    assert.equal(result.updatesApplied, 0, 'scripted players are never trained');

    const rows = await eventually('the episode in Postgres', async () => {
      const all = await pg.db.select().from(events).orderBy(asc(events.globalPosition));
      const mine = all.filter((e) => (e.data as { runId?: string }).runId === runId);
      return mine.some((e) => e.type === 'RunFinished') ? mine : undefined;
    });
    const groups = rows.filter((e) => e.type === 'TurnGroupScored').map((e) => e.data as TurnGroupScoredEvent);
    assert.ok(groups.length >= agents.length, 'every agent acted at least once');
    assert.deepEqual([...new Set(groups.map((g) => g.agent))].sort(), [...agents].sort());
    for (const g of groups) {
      assert.equal(g.samples.length, 2);
      // A script answers the same way twice, so the group's rewards are equal.
      assert.equal(g.samples[0].reward, g.samples[1].reward);
      assert.ok(g.samples.every((s) => Number.isFinite(s.reward) && s.outcome.length > 0));
    }
    const finished = rows.find((e) => e.type === 'EpisodeFinished');
    assert.ok(finished, 'the episode finished');
    if (solves) assert.equal((finished.data as { success: boolean }).success, true, 'the scripted players solved it');
  });
}
