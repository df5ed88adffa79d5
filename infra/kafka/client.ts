// kafkajs clients for Tandem's processes: one Kafka instance and one connected producer each.
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { MAX_RECORD_BYTES } from '../settings.js';

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
        const bytes = Buffer.byteLength(m.value);
        if (bytes > MAX_RECORD_BYTES) throw new RecordTooLarge(`a record for ${topic} (key ${m.key}) is ${bytes} bytes, over the ${MAX_RECORD_BYTES}-byte limit`, index);
      });
      await (await get()).send({ topic, acks: -1, messages });
    },
    async close() {
      if (producer) await (await producer).disconnect();
    },
  };
}

export type LazyProducer = ReturnType<typeof lazyProducer>;
