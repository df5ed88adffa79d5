// A policy worker given a missing or malformed model path stops at start, naming the path and
// the reason, instead of failing on the first request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

function startWorker(model: string) {
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', 'services/policy-worker.ts', '--task-queue', `never-${process.pid}`, '--model', model],
    { encoding: 'utf8', timeout: 120_000 },
  );
}

test('a missing model path stops the worker with the path', () => {
  const r = startWorker('/nonexistent/model-folder');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /\/nonexistent\/model-folder/);
  assert.doesNotMatch(r.stdout, /tandem:ready/);
});

test('a folder that is not a model stops the worker with the reason', () => {
  const dir = mkdtempSync(join(tmpdir(), 'not-a-model-'));
  writeFileSync(join(dir, 'README.txt'), 'no weights here');
  const r = startWorker(dir);
  rmSync(dir, { recursive: true, force: true });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(dir));
  assert.match(r.stderr, /config\.json/);
});
