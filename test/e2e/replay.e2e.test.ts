// `tandem replay` against the real stack: it fetches a finished training run's history and those
// of every child it started (its episodes and its evaluations; the shared run of
// test/support/sharedRun.ts), and replays them cleanly against the current workflow code; an
// unknown workflow id exits 1 naming it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, test } from 'node:test';
import { SHARED_RUN, sharedRun } from '../support/sharedRun.js';

const { runId, iterations, episodes } = SHARED_RUN;
const tandem = (...args: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 600_000 });

before(async () => {
  await sharedRun();
});

test('tandem replay --run replays the run, every one of its episodes and its evaluations cleanly', () => {
  const cli = tandem('replay', '--run', runId);
  assert.equal(cli.status, 0, `${cli.stdout}\n${cli.stderr}`);
  assert.match(cli.stdout, new RegExp(`^ok +trainingRun +${runId} +run [0-9a-f-]+ +\\d+ events$`, 'm'));
  for (let i = 0; i < iterations; i++) {
    for (let j = 0; j < episodes; j++) assert.match(cli.stdout, new RegExp(`^ok +episode +${runId}/it${i}/ep${j} `, 'm'));
  }
  // Evaluations before training and after the last iteration (val_freq = iterations).
  for (const n of [0, iterations]) assert.match(cli.stdout, new RegExp(`^ok +evaluate +${runId}/eval/it${n} `, 'm'));
  const histories = 1 + iterations * episodes + 2;
  assert.match(cli.stdout, new RegExp(`^${histories} replayed: ${histories} ok, 0 failed$`, 'm'));
});

test('tandem replay of an unknown workflow id exits 1 naming it', () => {
  const cli = tandem('replay', `${runId}-nope`);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, new RegExp(`cannot fetch the history of ${runId}-nope: .*not found`));
});
