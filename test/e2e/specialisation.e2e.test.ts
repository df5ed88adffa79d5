// L2 and L3 end to end on the real stack: one update per agent's policy per iteration, each
// trained only on its own agent's samples, checkpoints in PEFT's layout (adapters) or as HF
// folders (full models).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { TrajectoryRecord } from '../../activities/records.js';
import { loadRunConfig } from '../../configs/load.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { CPU_QUEUE, TOPICS } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { kafka, settings, temporal } from '../support/stack.js';

const t = await temporal();
after(() => t.close());

const SMALL = ['training.total_training_steps=1', 'training.train_batch_size=2', 'training.train_sample_num=2', 'env.max_turns=1'];

async function run(file: string) {
  const cfg = loadRunConfig(file, SMALL);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  const runId = `spec-${Date.now()}`;
  // This test's reader of the run's samples, made before the run, holds them (infra/kafka/retention.ts).
  await startAtEnd(kafka(), `check-${runId}`, [TOPICS.trajectories]);
  const result = await t.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
  const read = await readBatch(kafka(), `check-${runId}`, [TOPICS.trajectories]);
  await deleteGroups(kafka(), [`check-${runId}`]);
  const samples = read.records.map((r) => JSON.parse(r.value) as TrajectoryRecord).filter((s) => s.runId === runId);
  return { runId, result, samples, checkpoints: join(settings.dataDir, 'runs', runId, 'checkpoints') };
}

test('L2: each agent has its own adapter, trained on its own samples, saved in PEFT layout', async () => {
  const { result, samples, checkpoints } = await run('configs/planpath/planpath_L2_lora.yaml');
  assert.deepEqual(result.versions, { tool_call_agent: 1, plan_agent: 1 });
  for (const s of samples) assert.equal(s.policy, s.agent, `sample ${s.sampleId} trains its own agent's adapter`);
  for (const agent of ['tool_call_agent', 'plan_agent']) {
    const dir = join(checkpoints, agent, 'v000001', 'adapter');
    assert.ok(existsSync(join(dir, 'adapter_config.json')), dir);
    assert.ok(existsSync(join(dir, 'adapter_model.safetensors')), dir);
    assert.equal(result.recent[0].updates[agent].samples, samples.filter((s) => s.agent === agent).length);
  }
});

test('L3: each agent has its own full model, saved as an HF folder', async () => {
  const { result, samples, checkpoints } = await run('configs/planpath/planpath_L3_model.yaml');
  assert.deepEqual(result.versions, { tool_model: 1, plan_model: 1 });
  for (const s of samples) assert.equal(s.policy, s.agent === 'tool_call_agent' ? 'tool_model' : 'plan_model');
  for (const policy of ['tool_model', 'plan_model']) {
    assert.ok(existsSync(join(checkpoints, policy, 'v000001', 'model', 'config.json')));
  }
});
