// Proves kafkajs 2.2.4 against the pinned broker (infra/kafka/pom.xml): topics, acks=all
// produce, consumer groups (which fail on some 4.x single-node set-ups), committed offsets,
// and readBatch's "everything since the last commit" contract the update relies on.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import kafkajs from 'kafkajs';
import { lazyProducer } from '../../infra/kafka/client.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { TOPIC_PARTITIONS } from '../../infra/kafka/topics.js';
import { MAX_RECORD_BYTES, TOPICS } from '../../infra/settings.js';
import { kafka } from '../support/stack.js';

const k = kafka();
const producer = lazyProducer(k);
after(() => producer.close());

test('the broker is the pinned 3.x KRaft node and has Tandem topics', async () => {
  const admin = k.admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: Object.values(TOPICS) });
    for (const t of meta.topics) assert.equal(t.partitions.length, TOPIC_PARTITIONS, t.name);
    const cluster = await admin.describeCluster();
    assert.equal(cluster.brokers.length, 1);
  } finally {
    await admin.disconnect();
  }
});

test('readBatch reads everything since the committed offsets, and only that after commit', async () => {
  const topic = TOPICS.trajectories;
  const group = `test-readbatch-${Date.now()}`;
  const tag = `t${Date.now()}`;
  // Start the group at the current end, so other tests' records do not count.
  await startAtEnd(k, group, [topic]);
  after(() => deleteGroups(k, [group]));

  const first = Array.from({ length: 7 }, (_, i) => ({ key: `k${i % 3}`, value: JSON.stringify({ tag, i }) }));
  await producer.send(topic, first);
  const read1 = await readBatch(k, group, [topic]);
  const mine1 = read1.records.map((r) => JSON.parse(r.value)).filter((v) => v.tag === tag);
  assert.deepEqual(mine1.map((v) => v.i).sort(), [0, 1, 2, 3, 4, 5, 6]);

  // Not committed: a second read sees the same records again (what a retried update does).
  const again = await readBatch(k, group, [topic]);
  assert.equal(again.records.filter((r) => JSON.parse(r.value).tag === tag).length, 7);
  await again.commit();

  await producer.send(topic, [{ key: 'k0', value: JSON.stringify({ tag, i: 7 }) }]);
  const read2 = await readBatch(k, group, [topic]);
  assert.deepEqual(read2.records.map((r) => JSON.parse(r.value)).filter((v) => v.tag === tag).map((v) => v.i), [7]);
  await read2.commit();

  const read3 = await readBatch(k, group, [topic]);
  assert.equal(read3.records.filter((r) => JSON.parse(r.value).tag === tag).length, 0);
});

test("readBatch's commit with a cut leaves each partition's records from its cut to the group's next read (the next iteration's, under asynchronous training)", async () => {
  const topic = TOPICS.rollouts;
  const group = `test-readbatch-cut-${Date.now()}`;
  const tag = `c${Date.now()}`;
  await startAtEnd(k, group, [topic]);
  after(() => deleteGroups(k, [group]));
  // One key: one partition, in order; records 0-3 are "this iteration", 4-5 "the next".
  await producer.send(topic, Array.from({ length: 6 }, (_, i) => ({ key: 'cut-key', value: JSON.stringify({ tag, i }) })));
  const read = await readBatch(k, group, [topic]);
  const mine = read.records.filter((r) => JSON.parse(r.value).tag === tag);
  assert.deepEqual(mine.map((r) => JSON.parse(r.value).i), [0, 1, 2, 3, 4, 5]);
  assert.ok(mine.every((r) => r.topic === topic && r.partition === mine[0].partition), 'one partition');
  assert.deepEqual(mine.map((r) => BigInt(r.offset) - BigInt(mine[0].offset)), [0n, 1n, 2n, 3n, 4n, 5n], 'offsets in publish order');
  const fifth = mine[4];
  await read.commit(undefined, new Map([[`${topic}:${fifth.partition}`, BigInt(fifth.offset)]]));
  const next = await readBatch(k, group, [topic]);
  assert.deepEqual(next.records.filter((r) => JSON.parse(r.value).tag === tag).map((r) => JSON.parse(r.value).i), [4, 5]);
  // A cut past the end changes nothing: the group goes to the end of what was read.
  await next.commit(undefined, new Map([[`${topic}:${fifth.partition}`, BigInt(fifth.offset) + 100n]]));
  assert.equal((await readBatch(k, group, [topic])).records.filter((r) => JSON.parse(r.value).tag === tag).length, 0);
});

test('record size limits are set explicitly: every topic takes MAX_RECORD_BYTES and deletes nothing by age or size, and a 3 MB record (over Kafka’s 1 MB default) goes through and back', async () => {
  const admin = k.admin();
  await admin.connect();
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: Object.values(TOPICS).map((name) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name, configNames: ['max.message.bytes', 'retention.ms', 'retention.bytes'] })),
    });
    for (const r of resources) {
      const value = (name: string) => r.configEntries.find((e) => e.configName === name)?.configValue;
      assert.deepEqual([value('max.message.bytes'), value('retention.ms'), value('retention.bytes')], [String(MAX_RECORD_BYTES), '-1', '-1'], r.resourceName);
    }
  } finally {
    await admin.disconnect();
  }
  const topic = TOPICS.trajectories;
  const group = `test-big-${Date.now()}`;
  await startAtEnd(k, group, [topic]);
  after(() => deleteGroups(k, [group]));
  const tag = `big${Date.now()}`;
  const value = JSON.stringify({ tag, pad: 'x'.repeat(3 * 1024 * 1024) });
  await producer.send(topic, [{ key: 'big', value }]);
  const read = await readBatch(k, group, [topic]);
  const mine = read.records.filter((r) => r.value.includes(tag));
  assert.equal(mine.length, 1);
  assert.equal(mine[0].value, value);
  await read.commit();
});
