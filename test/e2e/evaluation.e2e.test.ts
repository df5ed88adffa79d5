// Evaluation on the real stack: a run with val_freq=1 evaluates before training and after its
// iteration, on held-out seeds, with validation sampling, and nothing of an evaluation reaches an
// update; `tandem eval` evaluates the base model and the run's checkpoint on demand.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { and, eq, like } from 'drizzle-orm';
import { events } from '../../infra/db/schema.js';
import { SEED_RANGES } from '../../envs/shared/seeds.js';
import type { RunProgress } from '../../workflows/messages.js';
import { eventually } from '../support/eventually.js';
import { database, settings, temporal } from '../support/stack.js';

const VAL = 2;
const runId = `e2e-eval-${Date.now()}`;
const t = await temporal();
const pg = database();
after(async () => {
  await t.close();
  await pg.close();
});

const common = ['configs/planpath/planpath_L1_prompt.yaml', `training.val_problems=${VAL}`, 'training.max_response_length=24', 'training.train_sample_num=2'];
const tandem = (...args: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 600_000 });

let train: ReturnType<typeof tandem>;
let result: RunProgress;

before(async () => {
  train = tandem('train', ...common, 'training.total_training_steps=1', 'training.train_batch_size=2', 'training.val_freq=1', '--id', runId, '--wait');
  result = await t.client.workflow.getHandle(runId).result();
});

test('a run evaluates before training and after its iteration, and says so', () => {
  assert.equal(train.status, 0, String(train.stderr));
  assert.match(String(train.stdout), /^evaluation after 0 iteration\(s\): held-out success=\d/m);
  assert.match(String(train.stdout), /^iteration 1\/1 .*\n(.*\n)*evaluation after 1 iteration\(s\)/m);
  assert.deepEqual(result.evaluations.map((e) => e.iteration), [0, 1]);
});

test('evaluations play held-out seeds with validation sampling, and no update ever sees them', async () => {
  const finished = await eventually('both EvaluationFinished events', async () => {
    const rows = await pg.db.select().from(events).where(and(eq(events.type, 'EvaluationFinished'), like(events.stream, `eval:${runId}/%`)));
    return rows.length === 2 ? rows.map((r) => r.data as { iteration: number; episodes: number; versions: Record<string, number> }) : undefined;
  });
  assert.deepEqual(finished.map((e) => [e.iteration, e.episodes, e.versions.shared_model]).sort(), [[0, VAL, 0], [1, VAL, 1]]);

  const started = await eventually('the evaluation episodes', async () => {
    const rows = await pg.db.select().from(events).where(and(eq(events.type, 'EpisodeStarted'), like(events.stream, `episode:${runId}/%`)));
    return rows.length === 2 + 2 * VAL ? rows.map((r) => r.data as { episodeId: string; problemSeed: number; phase?: string }) : undefined;
  });
  const evals = started.filter((e) => e.phase === 'eval');
  assert.equal(evals.length, 2 * VAL);
  const { start, size } = SEED_RANGES.validation;
  for (const e of evals) {
    assert.match(e.episodeId, new RegExp(`^${runId}/eval/it[01]/ep\\d$`));
    assert.ok(e.problemSeed >= start && e.problemSeed < start + size, `${e.episodeId} plays a validation seed`);
  }
  for (const e of started.filter((x) => x.phase !== 'eval')) assert.ok(e.problemSeed < start, `${e.episodeId} plays a training seed`);

  // The one update consumed exactly the training episodes' samples.
  const consumed = await eventually('SamplesConsumed', async () => {
    const rows = await pg.db.select().from(events).where(and(eq(events.type, 'SamplesConsumed'), like(events.stream, `update:${runId}/%`)));
    return rows.length === 1 ? Object.keys((rows[0].data as { advantages: Record<string, number> }).advantages) : undefined;
  });
  assert.ok(consumed.length > 0);
  assert.ok(consumed.every((id) => id.startsWith(`${runId}/it0/`)), 'no evaluation sample in the update');
  assert.equal(consumed.length, result.recent[0].updates.shared_model.samples);
});

test('tandem eval evaluates the base model, and the run’s checkpoint by its folder', () => {
  const base = tandem('eval', ...common);
  assert.equal(base.status, 0, String(base.stderr));
  assert.match(String(base.stdout), new RegExp(`^eval-\\S+: ${VAL} episodes  success=\\d\\.\\d{3}  turns=.*shared_model=v0$`, 'm'));
  assert.match(String(base.stdout), /^ {2}plan_agent: reward=-?\d+\.\d{3} {2}per turn \[/m);

  const checkpoints = join(settings.dataDir, 'runs', runId, 'checkpoints');
  const trained = tandem('eval', ...common, '--checkpoint', checkpoints);
  assert.equal(trained.status, 0, String(trained.stderr));
  assert.match(String(trained.stdout), /shared_model=v1$/m);

  const wrong = tandem('eval', ...common, '--checkpoint', join(settings.dataDir, 'no-such-folder'));
  assert.equal(wrong.status, 1);
  assert.match(String(wrong.stderr), /--checkpoint .*no-such-folder: no such folder/);
});
