// Long responses through the whole stack: the same one-iteration Plan-Path run (one turn of its 2
// agents, K=2, the tiny model generating to the limit with ignore_eos) at max_response_length
// 256 and 4,096. The second run's CPU worker is killed with -9 while its episode samples (after
// the first agent's turn, during the second's).
//   - the two episodes' histories differ in size by less than 64 KB (history holds references to
//     the payload store, not the texts: infra/temporal/payloadStore.ts);
//   - the 4,096-token responses arrive whole in the audit;
//   - the update consumes every sample exactly once, and `episodes show` and `episodes verify` work;
//   - a prompt over max_prompt_length is cut (training.truncation keep_system, the default), not a
//     failed run: recorded with its turn (promptTruncated, the reason) and counted in the iteration.
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
import { FAST_RECOVERY, kill9, restart, resultAcrossOutages, sleep } from '../support/faults.js';
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

/** Candidates per (turn, agent). */
const K = 2;

function config(maxResponse: number, maxPrompt: number) {
  const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [
    `base_models.policy_0.path=${model}`,
    'training.total_training_steps=1',
    'training.train_batch_size=1',
    `training.train_sample_num=${K}`,
    'training.val_freq=0',
    'env.max_turns=1',
    `training.max_response_length=${maxResponse}`,
    // Over max_prompt_length a prompt is cut (training.truncation keep_system, the default: the
    // system prompt and the last tokens). The long run's 256 cuts every prompt (the turn's are 288
    // and 429 tokens, their system prompts 96 and 231).
    `training.max_prompt_length=${maxPrompt}`,
    ...FAST_RECOVERY,
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

async function trainOnce(maxResponse: number, maxPrompt: number, killCpuWorker: boolean) {
  const runId = `long-${maxResponse}-${Date.now()}`;
  const episodeId = `${runId}/it0/ep0`;
  const handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: config(maxResponse, maxPrompt) }] });
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
  const short = await trainOnce(256, 2048, false);
  const long = await trainOnce(4096, 256, true);
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
  // K samples for each of the turn's two agents
  assert.equal(rows[0].n, 2 * K, `${rows[0].n} samples`);
  assert.ok(rows[0].shortest > 1024, `the shortest stored response has ${rows[0].shortest} characters`);
  const update = await db.pool.query(`SELECT data->'metrics'->>'tokens' AS tokens, data->>'samples' AS samples FROM events WHERE type = 'UpdateApplied' AND data->>'runId' = $1`, [long.runId]);
  assert.equal(update.rows.length, 1);
  assert.equal(Number(update.rows[0].samples), rows[0].n);
  assert.equal(Number(update.rows[0].tokens), rows[0].n * 4096);

  // Every prompt of the long run was cut and played on: recorded with its turn, counted.
  const groups = await db.pool.query(`SELECT data->'promptTruncated' AS p FROM events WHERE stream = $1 AND type = 'TurnGroupScored'`, [`episode:${long.episodeId}`]);
  const cut = { rows: groups.rows.filter((r) => r.p !== null) };
  assert.equal(cut.rows.length, groups.rows.length, 'every prompt of the long run over 256 tokens is cut');
  for (const { p } of cut.rows) {
    assert.ok(p.tokens > 256 && p.limit === 256 && p.truncation === 'keep_system', JSON.stringify(p));
    assert.match(p.reason, /^the prompt has \d+ tokens, more than the 256 of training\.max_prompt_length; kept the system prompt/);
  }
  const finished = await db.pool.query(`SELECT data FROM events WHERE type IN ('EpisodeFinished', 'IterationFinished') AND data->>'runId' = $1 ORDER BY type`, [long.runId]);
  assert.deepEqual(finished.rows.map((r) => [r.data.type, r.data.promptsTruncated ?? r.data.truncatedEpisodes]), [['EpisodeFinished', cut.rows.length], ['IterationFinished', 1]]);

  const cli = (args: string[]) => run(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const shown = await cli(['episodes', 'show', long.episodeId, '--json']);
  const transcript = JSON.parse(shown.stdout);
  // Whole: at least as long as the texts stored (how long they are depends on how many turns the
  // episode played and how many end-of-sequence tokens the model sampled, so no fixed size).
  assert.ok(JSON.stringify(transcript).length >= rows[0].total, `the transcript holds the long texts (${rows[0].total} characters)`);
  const verified = await cli(['episodes', 'verify', '--run', long.runId]);
  assert.match(verified.stdout, /^1\/1 episodes verified$/m);
});
