// Older event shapes, upgraded in this one place when they are read (from Kafka or the event
// store). The stored form is never rewritten: the hash chain covers it as it was written.
//   EpisodeStarted without `phase` (recorded before evaluations existed): a training episode.
// Audit content that older events lack (TurnGroupScored's state, handoff, prompt and texts;
// EpisodeStarted's setup) cannot be made up: it stays absent, and the audit says so.
import type { TandemEvent } from './events.js';

type EpisodeStarted = Extract<TandemEvent, { type: 'EpisodeStarted' }>;

/** Any shape an event was ever written in. */
export type StoredEvent = Exclude<TandemEvent, EpisodeStarted> | (Omit<EpisodeStarted, 'phase'> & { phase?: EpisodeStarted['phase'] });

/** An event as read from Kafka or the event store (JSON of any shape ever written), in today's shape. */
export const readEvent = (data: unknown): TandemEvent => upcast(data as StoredEvent);

export function upcast(event: StoredEvent): TandemEvent {
  if (event.type === 'EpisodeStarted' && event.phase === undefined) return { ...event, phase: 'train' };
  return event as TandemEvent;
}
