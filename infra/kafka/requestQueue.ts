// kafkajs 2.2.4 (its last release) keeps a timer re-arming itself every millisecond on every broker
// connection, for as long as the connection lives: its request queue's scheduleCheckPendingRequests
// sets a timeout of (throttledUntil - now), a negative delay when nothing is throttled, even when no
// request is pending; the check it schedules schedules the next (tulios/kafkajs#1556, fixes proposed
// in #1667 and #1768, unmerged). Every process with a Kafka client (the CPU worker, the policy
// worker, the projector) woke about 930 times a second, busy or idle, for 0.01-0.02 CPU seconds a
// second each: over a real model's two-minute rollout, half the orchestration's CPU
// (bench/notes/rollout.md, "kafkajs's idle timer").
//
// Patched here, once per process, as the proposed fixes do: with nothing pending and no throttle
// to wait out there is nothing to check later. A request that cannot be sent at once is queued by
// `push`, which schedules its own check (at the throttle's end, or in 10 ms while the in-flight
// limit holds it), and every response checks the queue again (`fulfillRequest`).
import { createRequire } from 'node:module';

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

const RequestQueueClass = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue };
const proto = RequestQueueClass.prototype;
const schedule = proto.scheduleCheckPendingRequests;
proto.scheduleCheckPendingRequests = function (this: RequestQueue) {
  if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
  schedule.call(this);
};

/** kafkajs's request queue class, patched (for tests). */
export const KafkajsRequestQueue = RequestQueueClass;
