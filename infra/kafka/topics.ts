// Creates Tandem's topics if they are missing, with their settings (idempotent; run by `stack up`):
// the record size limit, and no deletion by age or size, whatever the broker's defaults: Tandem
// deletes what every consumer group has read past (retention.ts), and a paused run's records must
// outlast its pause.
import kafkajs, { Kafka, logLevel } from 'kafkajs';
import { MAX_RECORD_BYTES, TOPICS } from '../settings.js';
import './requestQueue.js'; // kafkajs's idle timer, stopped (see there): without it `stack up` warns TimeoutNegativeWarning on Node 24

export const TOPIC_PARTITIONS = 3;

export async function ensureTopics(brokers: string[]): Promise<void> {
  const admin = new Kafka({ clientId: 'tandem-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.values(TOPICS).filter((t) => !existing.has(t));
    const limit = [
      { name: 'max.message.bytes', value: String(MAX_RECORD_BYTES) },
      { name: 'retention.ms', value: '-1' },
      { name: 'retention.bytes', value: '-1' },
    ];
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: TOPIC_PARTITIONS, replicationFactor: 1, configEntries: limit })),
      });
    }
    // Topics made before these settings get them too (alterConfigs sets a topic's whole list).
    await admin.alterConfigs({
      validateOnly: false,
      resources: Object.values(TOPICS).map((name) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name, configEntries: limit })),
    });
  } finally {
    await admin.disconnect();
  }
}
