// Long responses through the whole stack: the same one-iteration Plan-Path run (2 turns x 2
// agents x K=4, the tiny model generating to the limit with ignore_eos) at max_response_length
// 256 and 4,096. The second run's CPU worker is killed with -9 while its episode samples.
//   - the two episodes' histories differ in size by less than 64 KB (history holds references to
//     the payload store, not the texts: infra/temporal/payloadStore.ts);
//   - the 4,096-token responses arrive whole in the audit;
//   - the update consumes every sample exactly once, and `episodes show` and `episodes verify` work.
// The tiny model's config says 2,048 positions; its rotary embeddings have no such limit, so the
// test uses a copy of it that says 8,192 (the config check compares prompt + response with it).
// A disruptive test (it kills a worker): infra/test.sh runs it beside no other stack test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { loadRunConfig } from '../../configs/load.js';
import { CPU_QUEUE, projectPath } from '../../infra/settings.js';
import { stackUp } from '../../infra/stack.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { assertExactlyOnce } from '../support/exactlyOnce.js';
import { kill9, restart, resultAcrossOutages, sleep } from '../support/faults.js';
import { database, temporal } from '../support/stack.js';

const log = (line: string) => console.log(`[long] ${new Date().toISOString().slice(11, 19)} ${line}`);
const run = promisify(execFile);

const t = await temporal();
const db = database();
const model = mkdtempSync(join(tmpdir(), 'tandem-tiny-8k-'));
cpSync(projectPath('.tools/models/tandem-tiny'), model, { recursive: true });
const modelConfig = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8'));
writeFileSync(join(model, 'config.json'), JSON.stringify({ ...modelConfig, max_position_embeddings: 8192 }, null, 2));
after(async () => {
  rmSync(model, { recursive: true, force: true });
  await stackUp({ say: log });
  await Promise.all([t.close(), db.close()]);
});

function config(maxResponse: number) {
  const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [
    `base_models.policy_0.path=${model}`,
    'training.total_training_steps=1',
    'training.train_batch_size=1',
    'training.train_sample_num=4',
    'training.val_freq=0',
    'env.max_turns=2',
    `training.max_response_length=${maxResponse}`,
    // The plan agent is shown the tool agent's output: keep the prompt's last 2,048 tokens.
    'training.max_prompt_length=2048',
    'training.truncation=left',
    'agent_policy_configs.agent_configs.agent_0.train_llm_config.ignore_eos=true',
    'agent_policy_configs.agent_configs.agent_1.train_llm_config.ignore_eos=true',
  ]);
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.issues));
  return loaded.config;
}

/** The episode's history size as the server counts it, once its first agent turn has completed (then kill -9 the CPU worker) or at the end. */
async function episodeHistorySize(episodeId: string): Promise<number> {
  const d = await t.client.workflow.getHandle(episodeId).describe();
  assert.ok(d.historySize !== undefined);
  return d.historySize;
}

async function trainOnce(maxResponse: number, killCpuWorker: boolean) {
  const runId = `long-${maxResponse}-${Date.now()}`;
  const episodeId = `${runId}/it0/ep0`;
  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: config(maxResponse) }] });
  if (killCpuWorker) {
    // Mid-episode: once its first agent turn has come back, while the next ones generate.
    const deadline = Date.now() + 600_000;
    for (;;) {
      const history = await t.client.workflow.getHandle(episodeId).fetchHistory().catch(() => undefined);
      if (history?.events?.some((e) => e.activityTaskCompletedEventAttributes)) break;
      assert.ok(Date.now() < deadline, 'the episode never completed an agent turn');
      await sleep(250);
    }
    log(`kill -9 cpu-worker (pid ${await kill9('cpu-worker')})`);
    await sleep(2_000);
    await restart('cpu-worker', log);
  }
  await resultAcrossOutages(handle, 900_000);
  await assertExactlyOnce(runId, { iterations: 1, policies: ['shared_model'] });
  return { runId, episodeId, historySize: await episodeHistorySize(episodeId) };
}

test('episodes with 256- and 4,096-token responses: histories within 64 KB of each other, whole texts in the audit, every sample consumed once, across a kill -9 of the CPU worker', { timeout: 30 * 60_000 }, async () => {
  const short = await trainOnce(256, false);
  const long = await trainOnce(4096, true);
  log(`episode history: ${short.historySize} bytes at 256 tokens, ${long.historySize} bytes at 4,096 tokens`);
  assert.ok(Math.abs(long.historySize - short.historySize) < 64 * 1024, `${short.historySize} vs ${long.historySize}`);

  // Every response of the long run was generated to the limit (ignore_eos) and trained on whole:
  // the update's loss covered 4,096 tokens per sample. The texts are in the audit (shorter in
  // characters: the end-of-sequence tokens the model kept sampling decode to nothing).
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS n, min(length(s->>'text'))::int AS shortest, sum(length(s->>'text'))::int AS total
       FROM events, jsonb_array_elements(data->'samples') s
      WHERE stream = $1 AND type = 'TurnGroupScored'`,
    [`episode:${long.episodeId}`],
  );
  // (an episode may end before its second turn: K=4 samples per (turn, agent) that acted)
  assert.ok(rows[0].n >= 2 * 4 && rows[0].n % 4 === 0, `${rows[0].n} samples`);
  assert.ok(rows[0].shortest > 1024, `the shortest stored response has ${rows[0].shortest} characters`);
  const update = await db.pool.query(`SELECT data->'metrics'->>'tokens' AS tokens, data->>'samples' AS samples FROM events WHERE type = 'UpdateApplied' AND data->>'runId' = $1`, [long.runId]);
  assert.equal(update.rows.length, 1);
  assert.equal(Number(update.rows[0].samples), rows[0].n);
  assert.equal(Number(update.rows[0].tokens), rows[0].n * 4096);

  const cli = (args: string[]) => run(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const shown = await cli(['episodes', 'show', long.episodeId, '--json']);
  const transcript = JSON.parse(shown.stdout);
  // Whole: at least as long as the texts stored (how long they are depends on how many turns the
  // episode played and how many end-of-sequence tokens the model sampled, so no fixed size).
  assert.ok(JSON.stringify(transcript).length >= rows[0].total, `the transcript holds the long texts (${rows[0].total} characters)`);
  const verified = await cli(['episodes', 'verify', '--run', long.runId]);
  assert.match(verified.stdout, /^1\/1 episodes verified$/m);
});
