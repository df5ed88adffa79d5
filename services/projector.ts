// The projector process (`stack up` starts it by this path, as service `projector`; `tandem
// projector rebuild` is the CLI's command, services/cli/projector.ts): consumes the events topic
// into Postgres. Each event is appended to the events table (idempotent by event id, hash-chained
// per stream) and projected into the read models; the events of one Kafka batch (at most
// maxBytesPerPartition of them) in one transaction (the event store's eventStore/append.ts). The
// Kafka offsets are committed after the transaction, so a crash re-delivers, never loses.
import { drizzle } from 'drizzle-orm/node-postgres';
import type { EventEnvelope } from '../domain/events.js';
import { applyMigrations } from '../infra/db/migrate.js';
import { openPool } from '../infra/db/pool.js';
import { makeKafka } from '../infra/kafka/client.js';
import { MAX_RECORD_BYTES, PROJECTOR_GROUP, readyLine, stackSettings, TOPICS } from '../infra/settings.js';
import { appendEvents } from './eventStore/append.js';

const s = stackSettings();
// The projector writes the schema: a stack whose Postgres was already up gets new migrations here.
await applyMigrations(s.databaseUrl);
// A write that fails while Postgres is away fails its message, which kafkajs delivers again
// (after its retries, by restarting the consumer).
const pool = openPool(s.databaseUrl, {
  max: 2,
  onError: (err) => console.error(`projector: a Postgres connection failed (${err.message}); reconnecting on the next write`),
});
const db = drizzle(pool);
// A projector that died without leaving its group (kill -9, a lost host) holds the group's partitions
// until its session times out: its successor's join waits that long (with kafkajs's 30 s default, a
// restarted projector stood 24-27 s before consuming). 10 s, heartbeats every second, as the
// updates' readers (infra/kafka/readBatch.ts); a batch whose transaction outlasts it is delivered
// again after the rebalance, and appended once (idempotent by event id).
const consumer = makeKafka(s.kafkaBrokers, PROJECTOR_GROUP).consumer({
  groupId: PROJECTOR_GROUP,
  maxBytesPerPartition: MAX_RECORD_BYTES,
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
});

// kafkajs restarts its consumer after a retriable failure (a write failing while Postgres is
// away, a broker restart). After any other it stops consuming and the process would live on idle:
// end it instead, so that `stack status` shows the projector down rather than up and silent.
consumer.on(consumer.events.CRASH, ({ payload }) => {
  if (payload.restart) return;
  console.error(`projector: the consumer stopped for good (${payload.error.message}); exiting`);
  process.exit(1);
});
await consumer.connect();
await consumer.subscribe({ topic: TOPICS.events, fromBeginning: true });
await consumer.run({
  // kafkajs resolves and commits the batch's offsets once this returns; a throw re-delivers it whole.
  eachBatch: async ({ batch }) => {
    const envelopes = batch.messages.flatMap((m) => (m.value ? [JSON.parse(m.value.toString('utf8')) as EventEnvelope] : []));
    if (envelopes.length > 0) await appendEvents(db, envelopes);
  },
});
console.log(readyLine(`projector consuming ${TOPICS.events}`));

const shutdown = async () => {
  await consumer.disconnect();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
