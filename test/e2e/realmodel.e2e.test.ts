// A real pretrained chat model through the whole stack: SmolLM2-135M-Instruct (converted by the
// set-up) on math L2, 2 iterations of 2 problems, K = 2, short responses. Two updates per adapter,
// the adapters in PEFT's layout, the run's events in Postgres, `tandem episodes verify` passes for
// the run, and `tandem eval --checkpoint` loads the trained adapters.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { and, eq, like } from 'drizzle-orm';
import { loadRunConfig } from '../../configs/load.js';
import { events } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { eventually } from '../support/eventually.js';
import { database, settings, temporal } from '../support/stack.js';

const CONFIG = 'configs/smollm2/math_L2_lora.yaml';
const SMALL = ['training.train_batch_size=2', 'training.train_sample_num=2', 'training.max_response_length=24', 'env.max_turns=1'];
const AGENTS = ['tool_generator', 'reasoning_generator'];
const tandem = (...args: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 900_000 });

const t = await temporal();
const pg = database();
after(async () => {
  await t.close();
  await pg.close();
});

const runId = `e2e-smollm2-${Date.now()}`;
const checkpoints = join(settings.dataDir, 'runs', runId, 'checkpoints');

test('SmolLM2 math L2: two updates per adapter, adapters in PEFT layout, events recorded, verify passes', { timeout: 1_800_000 }, async () => {
  const cfg = loadRunConfig(CONFIG, [...SMALL, 'training.total_training_steps=2']);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  const result = await t.client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
  assert.equal(result.status, 'completed');
  assert.deepEqual(result.versions, { tool_generator: 2, reasoning_generator: 2 });
  for (const agent of AGENTS) {
    for (const v of ['v000001', 'v000002']) {
      const dir = join(checkpoints, agent, v, 'adapter');
      const adapterConfig = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      assert.equal(adapterConfig.peft_type, 'LORA');
      assert.equal(adapterConfig.r, 8);
      assert.deepEqual([...adapterConfig.target_modules].sort(), ['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
      assert.ok(existsSync(join(dir, 'adapter_model.safetensors')), dir);
    }
  }
  // Every update of the run recorded, with the samples it consumed.
  const updates = await eventually('4 updates in Postgres', async () => {
    const rows = await pg.db.select().from(events).where(and(eq(events.type, 'SamplesConsumed'), like(events.stream, `update:${runId}/%`)));
    return rows.length === 4 ? rows : undefined;
  });
  assert.ok(updates.every((r) => Object.keys((r.data as { advantages: Record<string, number> }).advantages).length > 0));
  await eventually('RunFinished in Postgres', async () => {
    const rows = await pg.db.select().from(events).where(and(eq(events.stream, `run:${runId}`), eq(events.type, 'RunFinished')));
    return rows.length === 1 ? rows : undefined;
  });

  const verify = tandem('episodes', 'verify', '--run', runId);
  assert.equal(verify.status, 0, `${verify.stdout}${verify.stderr}`);
});

test('tandem eval --checkpoint loads the trained SmolLM2 adapters', { timeout: 900_000 }, () => {
  const evaluated = tandem('eval', CONFIG, ...SMALL, 'training.val_problems=2', '--checkpoint', checkpoints);
  assert.equal(evaluated.status, 0, String(evaluated.stderr));
  assert.match(String(evaluated.stdout), /tool_generator=v2/);
  assert.match(String(evaluated.stdout), /reasoning_generator=v2/);
});
