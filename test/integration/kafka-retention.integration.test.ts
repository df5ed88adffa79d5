// What Kafka keeps, on a topic of this test's own (so that no other test's groups hold it):
// startAtEnd gives a group offsets at the topic's end, once; readBatch with a key keeps only that
// key's records; trimTopics deletes the records below every consumer group's committed offsets,
// never one a group has still to read; deleting a group lets its records go; a topic whose required
// reader (the projector, for the events) has no offsets yet is not trimmed at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lazyProducer } from '../../infra/kafka/client.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups, trimTopics } from '../../infra/kafka/retention.js';
import { kafka } from '../support/stack.js';

const k = kafka();
const producer = lazyProducer(k);
const topic = `test-retention-${process.pid}-${Date.now()}`;
const group = (name: string) => `${topic}.${name}`;
const PARTITIONS = 3;

before(async () => {
  const admin = k.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }] });
  await admin.disconnect();
});
after(async () => {
  const admin = k.admin();
  await admin.connect();
  await deleteGroups(k, [group('a'), group('b'), group('fresh'), group('reader')]);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  await producer.close();
});

/** Records i..j-1, keyed by i's parity, so that they spread over the partitions. */
const publish = (from: number, to: number) =>
  producer.send(topic, Array.from({ length: to - from }, (_, n) => ({ key: `k${(from + n) % 2}`, value: String(from + n) })));
const values = (read: { records: { value: string }[] }) => read.records.map((r) => Number(r.value)).sort((x, y) => x - y);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, n) => from + n);

async function lowWatermarks(): Promise<number> {
  const admin = k.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

test('a group started at the end reads only what came after; a second start leaves it where it is; a key keeps only its records', async () => {
  await publish(0, 10);
  await startAtEnd(k, group('a'), [topic]);
  await publish(10, 16);
  assert.deepEqual(values(await readBatch(k, group('a'), [topic])), range(10, 16), 'not the 10 records from before it');
  await startAtEnd(k, group('a'), [topic]);
  assert.deepEqual(values(await readBatch(k, group('a'), [topic])), range(10, 16), 'started once: a retried start does not move it');
  assert.deepEqual(values(await readBatch(k, group('a'), [topic], { key: 'k1' })), [11, 13, 15]);
});

test('a trim deletes what every group has read past, and no record a group has still to read', async () => {
  // Group a holds from record 10 on (above); b starts at the end, then 4 more records come.
  await startAtEnd(k, group('b'), [topic]);
  await publish(16, 20);
  const first = await trimTopics(k, [topic]);
  assert.deepEqual(first, { [topic]: 10 }, 'records 0-9: before group a, the lowest holder');
  assert.equal(await lowWatermarks(), 10);
  assert.deepEqual(values(await readBatch(k, group('a'), [topic])), range(10, 20), 'a reads all it held');
  assert.deepEqual(values(await readBatch(k, group('b'), [topic])), range(16, 20));
  assert.deepEqual(await trimTopics(k, [topic]), { [topic]: 0 }, 'nothing more while a holds');

  // Group a commits past what it read: now b is the lowest holder.
  await (await readBatch(k, group('a'), [topic])).commit();
  assert.deepEqual(await trimTopics(k, [topic]), { [topic]: 6 }, 'records 10-15');
  assert.deepEqual(values(await readBatch(k, group('b'), [topic])), range(16, 20));

  // Deleting b lets its records go; a, at the end, holds nothing.
  await deleteGroups(k, [group('b'), group('never-made')]);
  assert.deepEqual(await trimTopics(k, [topic]), { [topic]: 4 });
  assert.equal(await lowWatermarks(), 20);
  await publish(20, 22);
  assert.deepEqual(values(await readBatch(k, group('a'), [topic])), [20, 21], 'what comes after a trim is read as before');
});

test('a group without offsets reads from where the topic was trimmed', async () => {
  assert.deepEqual(values(await readBatch(k, group('fresh'), [topic])), [20, 21]);
});

test('a topic whose required reader has no offsets yet is not trimmed; once it has, it is', async () => {
  await publish(22, 25);
  await (await readBatch(k, group('a'), [topic])).commit();
  const readers = { [topic]: group('reader') };
  assert.deepEqual(await trimTopics(k, [topic], readers), { [topic]: 0 }, 'group a has read all, but the reader has not begun');
  assert.equal(await lowWatermarks(), 20);
  await startAtEnd(k, group('reader'), [topic]);
  assert.deepEqual(await trimTopics(k, [topic], readers), { [topic]: 5 }, 'records 20-24');
});
