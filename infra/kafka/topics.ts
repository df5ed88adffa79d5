// Creates Tandem's topics if they are missing (idempotent; run by `stack up`).
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '../settings.js';

export const TOPIC_PARTITIONS = 3;

export async function ensureTopics(brokers: string[]): Promise<void> {
  const admin = new Kafka({ clientId: 'tandem-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(TOPICS).filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: TOPIC_PARTITIONS, replicationFactor: 1 })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
