// The policy worker's engine client (infra/engine/client.ts) when its engine dies under it: a
// request written after the engine process has died, before the worker has heard of the death,
// fails with EngineDied (Temporal retries its activity) and the worker lives on; the next request
// starts a fresh engine. (Once, the write's EPIPE went unheard and ended the policy worker: the
// fault test's engine kill took the worker down with it.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { EngineClient, EngineError } from '../../infra/engine/client.js';
import { childPids } from '../support/hostProcesses.js';

const engine = new EngineClient('cpu', () => {});
after(() => engine.stop());

/** The process's state letter in /proc (Z: dead, not yet reaped), or undefined once it is gone. */
function procState(pid: number): string | undefined {
  try {
    return /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

test('a request written as the engine dies fails with EngineDied, and the next one starts a fresh engine', async () => {
  await engine.request('ping', {});
  const [pid] = childPids(process.pid, 'engine.py');
  assert.ok(pid, 'the engine runs as a child of this process');
  process.kill(pid, 'SIGKILL');
  // Wait, without yielding to the event loop (which would reap it and tell the client), until the
  // engine is dead; then write to its closed stdin.
  const deadline = Date.now() + 10_000;
  while (procState(pid) !== 'Z' && Date.now() < deadline);
  assert.equal(procState(pid), 'Z', 'the engine died');
  // A request larger than the socket's buffer (a long prompt) meets the closed end at once.
  await assert.rejects(engine.request('ping', { pad: 'x'.repeat(1 << 20) }), (err: unknown) => err instanceof EngineError && err.name === 'EngineDied');
  await engine.request('ping', {});
  const [fresh] = childPids(process.pid, 'engine.py');
  assert.ok(fresh && fresh !== pid, 'a fresh engine answers');
});
