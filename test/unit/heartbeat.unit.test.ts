// The worker interceptor that makes every activity heartbeat while it runs, and only then.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import type { Context } from '@temporalio/activity';
import { HEARTBEAT_EVERY_MS, heartbeatWhileRunning } from '../../services/heartbeat.js';

function intercepted(fn: () => Promise<unknown>, isLocal = false, heartbeatTimeoutMs: number | undefined = 30_000) {
  let beats = 0;
  const ctx = { heartbeat: () => beats++, info: { isLocal, heartbeatTimeoutMs } } as unknown as Context;
  const { execute } = heartbeatWhileRunning(ctx).inbound!;
  const running = execute!({ args: [], headers: {} }, fn);
  return { running, beats: () => beats };
}

test('an activity heartbeats every interval while it runs, and not after it returns', async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  try {
    let finish!: (v: string) => void;
    const a = intercepted(() => new Promise((r) => (finish = r)));
    mock.timers.tick(HEARTBEAT_EVERY_MS * 3);
    assert.equal(a.beats(), 3);
    finish('done');
    assert.equal(await a.running, 'done');
    mock.timers.tick(HEARTBEAT_EVERY_MS * 3);
    assert.equal(a.beats(), 3);
  } finally {
    mock.timers.reset();
  }
});

test('a failing activity fails as it is, and stops heartbeating', async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  try {
    let fail!: (e: Error) => void;
    const a = intercepted(() => new Promise((_, reject) => (fail = reject)));
    mock.timers.tick(HEARTBEAT_EVERY_MS);
    fail(new Error('engine died'));
    await assert.rejects(a.running, /engine died/);
    mock.timers.tick(HEARTBEAT_EVERY_MS * 2);
    assert.equal(a.beats(), 1);
  } finally {
    mock.timers.reset();
  }
});

test('a local activity does not heartbeat: its workflow task watches its worker', async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  try {
    let finish!: (v: string) => void;
    const a = intercepted(() => new Promise((r) => (finish = r)), true);
    mock.timers.tick(HEARTBEAT_EVERY_MS * 3);
    finish('scored');
    assert.equal(await a.running, 'scored');
    assert.equal(a.beats(), 0);
  } finally {
    mock.timers.reset();
  }
});

test('under a heartbeat timeout shorter than 15 s (recovery.heartbeat_timeout_s in a fault test) it beats three times per timeout', async () => {
  mock.timers.enable({ apis: ['setInterval'] });
  try {
    let finish!: (v: string) => void;
    const a = intercepted(() => new Promise((r) => (finish = r)), false, 6_000);
    mock.timers.tick(6_000);
    assert.equal(a.beats(), 3);
    finish('done');
    await a.running;
  } finally {
    mock.timers.reset();
  }
});
