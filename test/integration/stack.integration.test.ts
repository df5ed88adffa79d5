// The stack manager against the running test stack: status, starting twice, stale pid files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { settings } from '../support/stack.js';

const tandem = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

test('status lists every service as running, with port and log', () => {
  const r = tandem(['stack', 'status']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  for (const name of ['postgres', 'kafka', 'temporal', 'projector', 'cpu-worker', 'policy-worker']) {
    assert.match(r.stdout, new RegExp(`^${name}\\s+running \\(pid \\d+\\)`, 'm'));
  }
  assert.match(r.stdout, new RegExp(`^temporal .* port ${settings.temporalPort} .*log .*temporal\\.log$`, 'm'));
});

test('starting a running stack again is harmless', () => {
  const before = tandem(['stack', 'status']).stdout;
  const r = tandem(['stack', 'up', 'postgres', 'kafka', 'temporal']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /postgres: already running/);
  assert.match(r.stdout, /kafka: already running/);
  assert.equal(tandem(['stack', 'status']).stdout, before);
});

test('a stale pid file is detected and reported', (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-stale-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  mkdirSync(join(dataDir, 'run'));
  // A live pid that is not the projector (this test process) and one that does not exist.
  writeFileSync(join(dataDir, 'run', 'projector.pid'), `${process.pid}\n`);
  writeFileSync(join(dataDir, 'run', 'kafka.pid'), '999999999\n');
  const r = tandem(['stack', 'status'], { TANDEM_DATA_DIR: dataDir });
  assert.equal(r.status, 3);
  assert.match(r.stdout, new RegExp(`^projector\\s+stale pid ${process.pid}`, 'm'));
  assert.match(r.stdout, /^kafka\s+stale pid 999999999/m);
  assert.match(r.stdout, /^temporal\s+stopped/m);
  const down = tandem(['stack', 'down'], { TANDEM_DATA_DIR: dataDir });
  assert.match(down.stdout, /projector: stale pid \d+ removed/);
  assert.match(tandem(['stack', 'status'], { TANDEM_DATA_DIR: dataDir }).stdout, /^projector\s+stopped/m);
});
