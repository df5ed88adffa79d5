// `tandem replay` against the real stack: it fetches a finished training run's history and
// those of all its episodes from Temporal, and replays them cleanly against the current
// workflow code; an unknown workflow id exits 1 naming it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, test } from 'node:test';

const EPISODES = 2;
const runId = `e2e-replay-${Date.now()}`;
const tandem = (...args: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 600_000 });

before(() => {
  const train = tandem(
    'train', 'configs/planpath/planpath_L1_prompt.yaml',
    'training.total_training_steps=1',
    `training.train_batch_size=${EPISODES}`,
    'training.train_sample_num=2',
    'training.max_response_length=8',
    'env.max_turns=1',
    '--id', runId, '--wait',
  );
  assert.equal(train.status, 0, train.stderr);
});

test('tandem replay --run replays the run and every one of its episodes cleanly', () => {
  const cli = tandem('replay', '--run', runId);
  assert.equal(cli.status, 0, `${cli.stdout}\n${cli.stderr}`);
  assert.match(cli.stdout, new RegExp(`^ok +trainingRun +${runId} +run [0-9a-f-]+ +\\d+ events$`, 'm'));
  for (let j = 0; j < EPISODES; j++) assert.match(cli.stdout, new RegExp(`^ok +episode +${runId}/it0/ep${j} `, 'm'));
  assert.match(cli.stdout, new RegExp(`^${EPISODES + 1} replayed: ${EPISODES + 1} ok, 0 failed$`, 'm'));
});

test('tandem replay of an unknown workflow id exits 1 naming it', () => {
  const cli = tandem('replay', `${runId}-nope`);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, new RegExp(`cannot fetch the history of ${runId}-nope: .*not found`));
});
