// The projector: consumes the events topic into Postgres. Each event is appended to the
// events table (idempotent by event id) and projected into the read models in one transaction;
// the Kafka offset is committed after the transaction, so a crash re-delivers, never loses.
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { EventEnvelope } from '../domain/events.js';
import { events } from '../infra/db/schema.js';
import { makeKafka } from '../infra/kafka/client.js';
import { READY_LINE, stackSettings, TOPICS } from '../infra/settings.js';
import { project } from './projector/project.js';

const s = stackSettings();
const pool = new pg.Pool({ connectionString: s.databaseUrl, max: 2 });
const db = drizzle(pool);
const consumer = makeKafka(s.kafkaBrokers, 'tandem-projector').consumer({ groupId: 'tandem-projector' });

async function append(envelope: EventEnvelope): Promise<void> {
  await db.transaction(async (tx) => {
    const inserted = await tx
      .insert(events)
      .values({ eventId: envelope.eventId, stream: envelope.stream, position: envelope.position, type: envelope.event.type, data: envelope.event })
      .onConflictDoNothing({ target: events.eventId })
      .returning({ recordedAt: events.recordedAt });
    if (inserted.length === 1) await project(tx, envelope.event, inserted[0].recordedAt);
  });
}

await consumer.connect();
await consumer.subscribe({ topic: TOPICS.events, fromBeginning: true });
await consumer.run({
  eachMessage: async ({ message }) => {
    if (message.value) await append(JSON.parse(message.value.toString('utf8')) as EventEnvelope);
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
