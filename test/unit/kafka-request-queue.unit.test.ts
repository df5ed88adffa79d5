// kafkajs's request queue as patched in infra/kafka/requestQueue.ts: idle, it arms no timer;
// a request held back (by a throttle, by the in-flight limit) is still sent when it may be.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KafkajsRequestQueue } from '../../infra/kafka/requestQueue.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };

interface Queue {
  throttleCheckTimeoutId: unknown;
  checkPendingRequests(): void;
  maybeThrottle(ms: number): void;
  push(request: unknown): void;
  fulfillRequest(response: { correlationId: number; payload: unknown; size: number }): void;
  destroy(): void;
}

function queue(maxInFlightRequests: number | null = null): Queue {
  const Q = KafkajsRequestQueue as unknown as new (o: object) => Queue;
  return new Q({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'broker:9092', logger });
}

/** A request as the connection pushes it; `sent()` says whether it went out. */
function request(correlationId: number) {
  let sent = false;
  const pushed = {
    entry: { correlationId, apiKey: 0, apiName: 'Produce', apiVersion: 7, resolve() {}, reject() {} },
    expectResponse: true,
    sendRequest: () => (sent = true),
  };
  return { pushed, sent: () => sent };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an idle request queue arms no timer (kafkajs 2.2.4 re-armed one every millisecond)', () => {
  const q = queue();
  q.checkPendingRequests();
  assert.equal(q.throttleCheckTimeoutId, null);
  const r = request(1);
  q.push(r.pushed);
  assert.ok(r.sent());
  q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
  assert.equal(q.throttleCheckTimeoutId, null, 'nothing pending after a response: no timer');
});

test('a request held by a throttle is sent when the throttle ends', async () => {
  const q = queue();
  q.maybeThrottle(30);
  const r = request(1);
  q.push(r.pushed);
  assert.equal(r.sent(), false);
  assert.notEqual(q.throttleCheckTimeoutId, null);
  await sleep(100);
  assert.ok(r.sent());
  q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
  assert.equal(q.throttleCheckTimeoutId, null);
  q.destroy();
});

test('a request held by the in-flight limit is sent when the one in flight is answered', () => {
  const q = queue(1);
  const [a, b] = [request(1), request(2)];
  q.push(a.pushed);
  q.push(b.pushed);
  assert.ok(a.sent());
  assert.equal(b.sent(), false);
  q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
  assert.ok(b.sent());
  q.destroy();
});
