// Appending events to the event store (this folder: the events table with its hash chain, and the
// read models projected from it; run by the projector process, services/projector.ts, and by
// `tandem projector rebuild`): each event's row with its place in the hash chain, its
// stream head and the read models; the events of one Kafka batch in one transaction (one commit,
// one WAL flush, for the lot: the projector's cost per event at a training's rate). Idempotent by
// event id: a re-delivered event is skipped whole, so it neither duplicates a row nor projects
// twice; a failed transaction stores none of its events, and Kafka delivers them all again.
import { eq, lt } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { recordable, type EventEnvelope } from '../../domain/events.js';
import { readEvent } from '../../domain/upcast.js';
import { events, streams } from '../../infra/db/schema.js';
import { eventHash } from './hashChain.js';
import { project, type Tx } from './project.js';

/** Appends and projects `envelopes`, in order, in one transaction; per event, false when its event id was already stored. */
export async function appendEvents(db: NodePgDatabase, envelopes: EventEnvelope[]): Promise<boolean[]> {
  return db.transaction(async (tx) => {
    const appended: boolean[] = [];
    for (const envelope of envelopes) appended.push(await append(tx, envelope));
    return appended;
  });
}

async function append(tx: Tx, envelope: EventEnvelope): Promise<boolean> {
  const { stream, position } = envelope;
  const { value: event, changed } = recordable(envelope.event);
  if (changed) console.warn(`projector: ${envelope.eventId} holds U+0000, which Postgres cannot store; stored and chained with U+FFFD in its place`);
  // Events of one stream share a Kafka key, so they arrive in order: the head is the previous event.
  const [head] = await tx.select().from(streams).where(eq(streams.stream, stream)).for('update');
  if (head && position <= head.position) {
    const [stored] = await tx.select({ id: events.eventId }).from(events).where(eq(events.eventId, envelope.eventId));
    if (stored) return false; // a re-delivery
  }
  if (position !== (head ? head.position + 1 : 0)) {
    // Not expected: stored anyway (losing it would be worse), chained to the head; `episodes verify` reports the gap.
    console.warn(`projector: ${envelope.eventId} at position ${position} of ${stream}, whose head is at ${head ? head.position : 'none'}`);
  }
  const hash = eventHash(head?.hash ?? null, { stream, position, type: event.type, data: event });
  const inserted = await tx
    .insert(events)
    .values({ eventId: envelope.eventId, stream, position, type: event.type, data: event, hash })
    .onConflictDoNothing({ target: events.eventId })
    .returning({ recordedAt: events.recordedAt });
  if (inserted.length === 0) return false;
  await tx
    .insert(streams)
    .values({ stream, position, hash })
    .onConflictDoUpdate({ target: streams.stream, set: { position, hash }, setWhere: lt(streams.position, position) }); // never backwards
  // Stored and chained as written; projected in today's shape.
  await project(tx, readEvent(event), { at: inserted[0].recordedAt, position });
  return true;
}
