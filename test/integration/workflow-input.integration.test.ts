// Runs started from the Temporal CLI, as the README shows: a bad input fails with the config's
// field paths, not a stack trace; the input `tandem config check --json` writes trains.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { loadRunConfig } from '../../configs/load.js';
import { projectPath } from '../../infra/settings.js';
import type { RunProgress } from '../../workflows/messages.js';
import { settings, temporal } from '../support/stack.js';

const t = await temporal();
after(() => t.close());

function temporalStart(workflowId: string, inputFile: string): void {
  execFileSync(projectPath('.venv/bin/temporal'), [
    'workflow', 'start',
    '--address', settings.temporalAddress,
    '--task-queue', 'tandem-cpu',
    '--type', 'trainingRun',
    '--workflow-id', workflowId,
    '--input-file', inputFile,
  ]);
}

test('`temporal workflow start` with a bad input fails with a readable validation error', async () => {
  const good = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml');
  assert.ok(good.ok);
  const config = structuredClone(good.config) as any;
  config.training.train_sample_num = 'four';
  config.env.map_sise = 5;
  const dir = mkdtempSync(join(tmpdir(), 'tandem-input-'));
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ config }));
  const workflowId = `bad-input-${Date.now()}`;
  temporalStart(workflowId, join(dir, 'input.json'));
  const err = await t.client.workflow.getHandle(workflowId).result().then(
    () => assert.fail('the run should have failed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError);
  const cause = err.cause;
  assert.ok(cause instanceof ApplicationFailure);
  assert.equal(cause.type, 'InvalidConfig');
  assert.equal(cause.nonRetryable, true);
  assert.match(cause.message, /training\.train_sample_num: /);
  assert.match(cause.message, /env\.map_sise: unknown key/);
  assert.doesNotMatch(cause.message, /at .*\.ts:\d+/); // no stack trace in the message
});

test('the input `tandem config check --json` prints starts a run that trains', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-input-'));
  const input = execFileSync(process.execPath, [
    'bin/tandem.js', 'config', 'check', 'configs/planpath/planpath_L1_prompt.yaml',
    'training.total_training_steps=1', 'training.train_batch_size=1', 'training.train_sample_num=2', 'env.max_turns=1',
    '--json',
  ]);
  writeFileSync(join(dir, 'input.json'), input);
  const workflowId = `cli-start-${Date.now()}`;
  temporalStart(workflowId, join(dir, 'input.json'));
  const result: RunProgress = await t.client.workflow.getHandle(workflowId).result();
  assert.equal(result.status, 'completed');
  assert.equal(result.updatesApplied, 1);
  assert.deepEqual(result.versions, { shared_model: 1 });
});
