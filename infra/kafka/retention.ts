// What Kafka keeps: a record stays until every consumer group that reads its topic has committed
// past it, then trimTopics() deletes it (the broker keeps records forever otherwise:
// log.retention.hours=-1, since a paused run's next update must find its iteration whatever the
// pause's length). The holders are the groups themselves, so no list of runs is needed: a run's
// update groups hold its current iteration (activities/updatePolicy.ts deletes those it has used,
// the run's end the rest), the projector's group the events it has not stored, and any other
// consumer its own position.
import type { Kafka } from 'kafkajs';

/** Per topic, the records deleted by one trim (summed over partitions). */
export type Trimmed = Record<string, number>;

/** One group's committed offsets on one topic (-1: none on that partition). */
interface GroupOffsets {
  groupId: string;
  topic: string;
  offsets: Map<number, bigint>;
}

type Admin = ReturnType<Kafka['admin']>;

/** Every consumer group that has committed offsets on any partition of each of `topics`. */
async function committedOffsets(admin: Admin, topics: string[]): Promise<GroupOffsets[]> {
  const found: GroupOffsets[] = [];
  const { groups } = await admin.listGroups();
  for (const { groupId } of groups) {
    for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
      // A group that never committed on this topic does not read it.
      if (partitions.every((p) => BigInt(p.offset) < 0n)) continue;
      found.push({ groupId, topic, offsets: new Map(partitions.map((p) => [p.partition, BigInt(p.offset)])) });
    }
  }
  return found;
}

/** Each partition's first and next offsets. */
async function watermarks(admin: Admin, topics: string[]): Promise<Map<string, { low: bigint; high: bigint }>> {
  const marks = new Map<string, { low: bigint; high: bigint }>();
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) marks.set(`${topic}:${p.partition}`, { low: BigInt(p.low), high: BigInt(p.high) });
  }
  return marks;
}

/**
 * Deletes, per partition of `topics`, the records below the lowest offset any consumer group has
 * committed there. The high watermarks are taken before the groups are listed: a group made after
 * the listing starts at or after them (readBatch's startAtEnd), so nothing it reads is deleted.
 * A group with offsets on some of a topic's partitions but not on one holds all of that partition.
 * `readers`: per topic, a group that must have read a record before it goes, whether or not it
 * exists yet (the projector's, for the events: they are needed until they are in Postgres); while
 * it has no offsets there, that topic is not trimmed.
 */
export async function trimTopics(kafka: Kafka, topics: string[], readers: Record<string, string> = {}): Promise<Trimmed> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const marks = await watermarks(admin, topics);
    const cuts = new Map([...marks].map(([id, m]) => [id, m.high]));
    const holders = await committedOffsets(admin, topics);
    for (const h of holders) {
      for (const [partition, offset] of h.offsets) {
        const id = `${h.topic}:${partition}`;
        const m = marks.get(id);
        if (!m) continue; // a partition added since the watermarks were taken: not trimmed this time
        const at = offset < 0n ? m.low : offset;
        if (at < cuts.get(id)!) cuts.set(id, at);
      }
    }
    const trimmed: Trimmed = {};
    for (const topic of topics) {
      trimmed[topic] = 0;
      const required = readers[topic];
      if (required !== undefined && !holders.some((h) => h.topic === topic && h.groupId === required)) continue; // not read yet
      const partitions = [...marks]
        .filter(([id, m]) => id.startsWith(`${topic}:`) && cuts.get(id)! > m.low)
        .map(([id, m]) => ({ partition: Number(id.slice(topic.length + 1)), offset: cuts.get(id)!, records: Number(cuts.get(id)! - m.low) }));
      if (partitions.length > 0) await admin.deleteTopicRecords({ topic, partitions: partitions.map((p) => ({ partition: p.partition, offset: p.offset.toString() })) });
      trimmed[topic] = partitions.reduce((n, p) => n + p.records, 0);
    }
    return trimmed;
  } finally {
    await admin.disconnect();
  }
}

/** What one group holds on one topic: the records at or after its committed offsets (those it has still to read). */
export interface Holding {
  groupId: string;
  topic: string;
  records: number;
}

/** Every group that holds records of `topics` from deletion, with how many; the topics' records in all. */
export async function holdings(kafka: Kafka, topics: string[]): Promise<{ holdings: Holding[]; records: Record<string, number> }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const marks = await watermarks(admin, topics);
    const records = Object.fromEntries(topics.map((t) => [t, [...marks].filter(([id]) => id.startsWith(`${t}:`)).reduce((n, [, m]) => n + Number(m.high - m.low), 0)]));
    const found = (await committedOffsets(admin, topics)).map((h) => ({
      groupId: h.groupId,
      topic: h.topic,
      records: [...h.offsets].reduce((n, [partition, offset]) => {
        const m = marks.get(`${h.topic}:${partition}`);
        return m ? n + Number(m.high - (offset < 0n || offset < m.low ? m.low : offset)) : n;
      }, 0),
    }));
    return { holdings: found, records };
  } finally {
    await admin.disconnect();
  }
}

/** Deletes consumer groups, those that do not exist passed over (a retried call). */
export async function deleteGroups(kafka: Kafka, groupIds: string[]): Promise<void> {
  if (groupIds.length === 0) return;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
    const gone = groupIds.filter((g) => existing.has(g));
    if (gone.length > 0) await admin.deleteGroups(gone);
  } finally {
    await admin.disconnect();
  }
}
