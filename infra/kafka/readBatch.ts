// Reading "everything published so far" from topics, for a consumer group: from the group's
// committed offsets up to the high watermarks taken at the start. The caller commits the new
// offsets only after it has durably used the records (see commit()). A group made with
// startAtEnd() reads only what came after it was made.
import type { Kafka } from 'kafkajs';
import { MAX_RECORD_BYTES } from '../settings.js';

/** A read that has not reached its end by then fails (e.g. the broker died mid-read), so the caller can retry. */
const READ_TIMEOUT_MS = 120_000;

/** One record read: where it is (offset as Kafka gives it, a decimal string) and its value. */
export interface KafkaRecord {
  topic: string;
  partition: number;
  offset: string;
  value: string;
}

export interface BatchRead {
  records: KafkaRecord[];
  /**
   * Sets a group's offsets to the end of what was read: by default the group read from; another
   * group, to leave this one where it was so that the same range can be read again. With `cut`
   * (`topic:partition` -> offset), a partition's offset goes no further than its cut (records from
   * there on are left to the group's next read).
   */
  commit(toGroup?: string, cut?: Map<string, bigint>): Promise<void>;
}

export interface ReadOptions {
  /**
   * Consume as this group instead, its offsets first set to where `groupId`'s are, so that several
   * readers (the replicas of a policy) can each read the same range at once: the members of one
   * group would split the partitions between them. `commit()` still sets `groupId`'s.
   */
  readAs?: string;
  /** Keep only the records with this key; the others are passed over without being decoded. */
  key?: string;
}

/** A group without offsets reads from the start of the topics (or from where they were trimmed). */
export async function readBatch(kafka: Kafka, groupId: string, topics: string[], options: ReadOptions = {}): Promise<BatchRead> {
  const readAs = options.readAs ?? groupId;
  const key = options.key === undefined ? undefined : Buffer.from(options.key);
  const admin = kafka.admin();
  await admin.connect();
  try {
    // Where to stop: the end of each partition now. Where to start: the group's offsets.
    const ends = new Map<string, bigint>();
    const starts = new Map<string, bigint>();
    const remaining = new Set<string>();
    for (const topic of topics) {
      const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
      const start = new Map(committed[0].partitions.map((p) => [p.partition, BigInt(p.offset)]));
      for (const p of await admin.fetchTopicOffsets(topic)) {
        const id = `${topic}:${p.partition}`;
        ends.set(id, BigInt(p.high));
        const from = start.get(p.partition) ?? -1n;
        starts.set(id, from < 0n ? BigInt(p.low) : from);
        if (starts.get(id)! < BigInt(p.high)) remaining.add(id);
      }
    }
    const records: BatchRead['records'] = [];
    if (remaining.size > 0) {
      if (readAs !== groupId) await setOffsets(kafka, readAs, topics, starts);
      // A short session, so that a member left behind by a killed reader stops blocking the group soon.
      const consumer = kafka.consumer({ groupId: readAs, allowAutoTopicCreation: false, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxBytesPerPartition: MAX_RECORD_BYTES });
      await consumer.connect();
      let timer: NodeJS.Timeout | undefined;
      try {
        await consumer.subscribe({ topics, fromBeginning: true });
        await new Promise<void>((resolve, reject) => {
          // kafkajs restarts a crashed consumer by itself; a read must not wait on that forever.
          consumer.on(consumer.events.CRASH, ({ payload }) => reject(new Error(`reading ${topics.join(', ')} for ${readAs}: ${payload.error.message}`)));
          timer = setTimeout(() => reject(new Error(`reading ${topics.join(', ')} for ${readAs}: not at the end after ${READ_TIMEOUT_MS / 1000}s`)), READ_TIMEOUT_MS);
          consumer
            .run({
              autoCommit: false,
              eachBatch: async ({ batch }) => {
                const id = `${batch.topic}:${batch.partition}`;
                const end = ends.get(id)!;
                for (const m of batch.messages) {
                  if (BigInt(m.offset) >= end) break;
                  if (m.value && (!key || m.key?.equals(key))) records.push({ topic: batch.topic, partition: batch.partition, offset: m.offset, value: m.value.toString('utf8') });
                  if (BigInt(m.offset) + 1n >= end) remaining.delete(id);
                }
                if (remaining.size === 0) resolve();
              },
            })
            .catch(reject);
        });
      } finally {
        clearTimeout(timer);
        await consumer.disconnect();
      }
    }
    return {
      records,
      commit: (toGroup = groupId, cut) => setOffsets(kafka, toGroup, topics, cut ? new Map([...ends].map(([id, end]) => [id, cut.has(id) && cut.get(id)! < end ? cut.get(id)! : end])) : ends),
    };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Gives `groupId` offsets at the topics' current ends, unless it has offsets already: it then reads
 * only what is published from now on, however long the topics' history (a run's first update).
 * Idempotent, so that a retried call leaves a group that has moved on where it is.
 */
export async function startAtEnd(kafka: Kafka, groupId: string, topics: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, bigint>();
  try {
    for (const topic of topics) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const has = new Set(committed.partitions.filter((p) => BigInt(p.offset) >= 0n).map((p) => p.partition));
      for (const p of await admin.fetchTopicOffsets(topic)) if (!has.has(p.partition)) ends.set(`${topic}:${p.partition}`, BigInt(p.high));
    }
  } finally {
    await admin.disconnect();
  }
  // Only the partitions in `ends` are sought, so offsets a group already has stay as they are.
  if (ends.size > 0) await setOffsets(kafka, groupId, topics, ends);
}

/**
 * Sets a group's offsets to `ends` (`topic:partition` -> offset) as kafkajs's admin.setOffsets
 * does (a member of the group seeks, which commits, and leaves at its first fetch), with one member
 * for all the topics and a short fetch wait: admin.setOffsets joins once per topic and waits out a
 * fetch of maxWaitTimeInMs (5 s) each time, which made every update 10 s longer.
 */
async function setOffsets(kafka: Kafka, groupId: string, topics: string[], ends: Map<string, bigint>): Promise<void> {
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxBytesPerPartition: MAX_RECORD_BYTES });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    const { state } = await consumer.describeGroup();
    if (!['Empty', 'Dead'].includes(state)) throw new Error(`setting the offsets of ${groupId}: the group has running members (state ${state})`);
    await new Promise<void>((resolve, reject) => {
      const off = consumer.on(consumer.events.FETCH, () => {
        off();
        resolve();
      });
      consumer.run({ eachBatchAutoResolve: false, eachBatch: async () => {} }).catch(reject);
      consumer.pause(topics.map((topic) => ({ topic })));
      for (const [id, offset] of ends) {
        const cut = id.lastIndexOf(':');
        consumer.seek({ topic: id.slice(0, cut), partition: Number(id.slice(cut + 1)), offset: offset.toString() });
      }
    });
  } finally {
    await consumer.disconnect();
  }
}
