// The CLI's V8 flags against Node's exit deadlock (infra/node/v8Flags.js, nodejs/node#54918): a
// CLI process no longer compiles with Maglev by the time it exits, whatever the command.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const maglevAtExit = (args: string[]) => {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', './test/support/maglevAtExit.mjs', ...args], { encoding: 'utf8' });
  return /maglev at exit: (true|false)/.exec(r.stderr)?.[1];
};

test('a CLI process exits with Maglev off', () => {
  assert.equal(maglevAtExit(['bin/tandem.js', '--help']), 'false');
  assert.equal(maglevAtExit(['bin/tandem.js', 'no-such-command']), 'false');
});

test('a plain Node process keeps V8 defaults (what the probe would see without the flags)', () => {
  assert.equal(maglevAtExit(['-e', '0']), 'true');
});
