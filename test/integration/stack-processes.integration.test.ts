// `stack up` and `stack down` keep to the processes they started, whatever the pid files say, and a
// start that fails says why. On the test stack's CPU worker:
//   - a CPU worker its pid file no longer names (the file lost, or naming another start) is shown
//     by `stack status`, and killed by `stack up` before it starts another, and by `stack down`:
//     left alive it would hold the worker's port, and every later start would fail;
//   - a start that cannot bind its metrics port fails, after its tries, quoting the worker's log.
// A disruptive test (it stops and starts the CPU worker): infra/test.sh runs it beside no other
// stack test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stackDown, stackStatus, stackUp } from '../../infra/stack.js';
import { alive } from '../support/hostProcesses.js';
import { servicePid } from '../support/processes.js';
import { settings } from '../support/stack.js';

after(() => stackUp({ say: () => {} }));

/** A pid that no process has now: that of a process that has ended. */
function deadPid(): number {
  const r = spawnSync('true');
  assert.ok(r.pid);
  return r.pid;
}

/** The pids a `stack` line says it killed as untracked (its worker and the worker's children). */
const killedUntracked = (line: string) => (/no pid file named \(pid ([\d, ]+)\)/.exec(line)?.[1] ?? '').split(', ').map(Number);

const pidFile = join(settings.dataDir, 'run', 'cpu-worker.pid');

test('a CPU worker no pid file names is killed by `stack up` before it starts one, and by `stack down`', async () => {
  const untracked = servicePid('cpu-worker');
  writeFileSync(pidFile, `${deadPid()}\n`);
  const status = stackStatus().find((r) => r.name === 'cpu-worker');
  assert.equal(status?.state, 'stale');
  assert.ok(status?.untracked?.includes(untracked), `status shows the untracked worker: ${JSON.stringify(status)}`);
  const said: string[] = [];
  await stackUp({ only: ['cpu-worker'], say: (line) => said.push(line) });
  assert.ok(!alive(untracked), `the untracked worker (pid ${untracked}) was killed`);
  assert.ok(said.some((l) => killedUntracked(l).includes(untracked)), said.join('\n'));
  const started = servicePid('cpu-worker');
  assert.notEqual(started, untracked);
  assert.ok(alive(started), 'the new worker serves');
  assert.ok(said.some((l) => l.includes(`started (pid ${started}`)), said.join('\n'));

  writeFileSync(pidFile, `${deadPid()}\n`);
  said.length = 0;
  await stackDown({ only: ['cpu-worker'], say: (line) => said.push(line) });
  assert.ok(!alive(started), `stack down killed the untracked worker (pid ${started})`);
  assert.ok(said.some((l) => killedUntracked(l).includes(started)), said.join('\n'));
});

test('a CPU worker that cannot bind its metrics port: the start fails quoting its log', async () => {
  await stackDown({ only: ['cpu-worker'], say: () => {} });
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(settings.cpuWorkerMetricsPort, '127.0.0.1', r));
  try {
    const said: string[] = [];
    await assert.rejects(stackUp({ only: ['cpu-worker'], say: (line) => said.push(line) }), (err: Error) => {
      assert.match(err.message, /cpu-worker exited during start/);
      assert.match(err.message, new RegExp(`EADDRINUSE.*${settings.cpuWorkerMetricsPort}`));
      return true;
    });
    assert.equal(said.filter((l) => l.includes('exited during start; trying again')).length, 2, said.join('\n'));
  } finally {
    await new Promise((r) => holder.close(r));
  }
  await stackUp({ only: ['cpu-worker'], say: () => {} });
  assert.ok(alive(servicePid('cpu-worker')));
});
