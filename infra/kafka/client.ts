// kafkajs clients for Tandem's processes: one Kafka instance and one connected producer each.
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { MAX_RECORD_BYTES } from '../settings.js';
import './requestQueue.js'; // kafkajs's idle timer, stopped (see there)

export function makeKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.WARN, retry: { retries: 8 } });
}

/** A record over MAX_RECORD_BYTES, refused before anything of its batch was sent; `index` is its place in the batch. */
export class RecordTooLarge extends Error {
  override name = 'RecordTooLarge';
  constructor(
    message: string,
    readonly index: number,
  ) {
    super(message);
  }
}

/** What a record adds to its batch besides its key and value (lengths, offsets, timestamps), and a batch's header, generously. */
const RECORD_OVERHEAD = 128;

/** A record's share of a batch, in bytes. */
const recordBytes = (m: { key: string; value: string }) => Buffer.byteLength(m.value) + Buffer.byteLength(m.key) + RECORD_OVERHEAD;

/**
 * Consecutive runs of messages, each within MAX_RECORD_BYTES in all: the broker's limit applies to
 * the batch a produce request carries per partition, not to one record, so an episode's events
 * (each under the limit, together 20 MB) go in several requests, in order.
 */
export function batchesOf<M extends { key: string; value: string }>(messages: M[]): M[][] {
  const out: M[][] = [];
  let bytes = RECORD_OVERHEAD;
  for (const m of messages) {
    const b = recordBytes(m);
    if (out.length === 0 || bytes + b > MAX_RECORD_BYTES) {
      out.push([]);
      bytes = RECORD_OVERHEAD;
    }
    out[out.length - 1].push(m);
    bytes += b;
  }
  return out;
}

/** A lazily connected producer; acks from all in-sync replicas before a send resolves. */
export function lazyProducer(kafka: Kafka): { send(topic: string, messages: { key: string; value: string }[]): Promise<void>; close(): Promise<void> } {
  let producer: Promise<Producer> | undefined;
  const get = () =>
    (producer ??= (async () => {
      const p = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      await p.connect();
      return p;
    })().catch((err) => {
      producer = undefined;
      throw err;
    }));
  return {
    async send(topic, messages) {
      if (messages.length === 0) return;
      // Refused here, named, rather than dropped by the broker (infra/settings.ts MAX_RECORD_BYTES).
      messages.forEach((m, index) => {
        const bytes = recordBytes(m) + RECORD_OVERHEAD;
        if (bytes > MAX_RECORD_BYTES) throw new RecordTooLarge(`a record for ${topic} (key ${m.key}) is ${Buffer.byteLength(m.value)} bytes, over the ${MAX_RECORD_BYTES}-byte limit (with its key and framing)`, index);
      });
      // One request per batch, in order: a retried send repeats records, which every reader keeps once by id.
      for (const batch of batchesOf(messages)) await (await get()).send({ topic, acks: -1, messages: batch });
    },
    async close() {
      if (producer) await (await producer).disconnect();
    },
  };
}

export type LazyProducer = ReturnType<typeof lazyProducer>;
