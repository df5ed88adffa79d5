// The projector: consumes the events topic into Postgres. Each event is appended to the
// events table (idempotent by event id, hash-chained per stream) and projected into the read
// models in one transaction (projector/append.ts); the Kafka offset is committed after the
// transaction, so a crash re-delivers, never loses.
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { EventEnvelope } from '../domain/events.js';
import { applyMigrations } from '../infra/db/migrate.js';
import { makeKafka } from '../infra/kafka/client.js';
import { MAX_RECORD_BYTES, READY_LINE, stackSettings, TOPICS } from '../infra/settings.js';
import { appendEvent } from './projector/append.js';

const s = stackSettings();
// The projector writes the schema: a stack whose Postgres was already up gets new migrations here.
await applyMigrations(s.databaseUrl);
const pool = new pg.Pool({ connectionString: s.databaseUrl, max: 2 });
// Postgres going away (a restart, a crash) fails the idle connections: the pool drops them and opens
// new ones when asked. Unheard, the error would end the process. A write that fails meanwhile fails
// its message, which kafkajs delivers again (after its retries, by restarting the consumer).
pool.on('error', (err) => console.error(`projector: a Postgres connection failed (${err.message}); reconnecting on the next write`));
const db = drizzle(pool);
const consumer = makeKafka(s.kafkaBrokers, 'tandem-projector').consumer({ groupId: 'tandem-projector', maxBytesPerPartition: MAX_RECORD_BYTES });

await consumer.connect();
await consumer.subscribe({ topic: TOPICS.events, fromBeginning: true });
await consumer.run({
  eachMessage: async ({ message }) => {
    if (message.value) await appendEvent(db, JSON.parse(message.value.toString('utf8')) as EventEnvelope);
  },
});
console.log(`${READY_LINE} projector consuming ${TOPICS.events}`);

const shutdown = async () => {
  await consumer.disconnect();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
