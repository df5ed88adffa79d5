// kafkajs clients for Tandem's processes: one Kafka instance and one connected producer each.
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';

export function makeKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({ clientId, brokers, logLevel: logLevel.WARN, retry: { retries: 8 } });
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
      await (await get()).send({ topic, acks: -1, messages });
    },
    async close() {
      if (producer) await (await producer).disconnect();
    },
  };
}

export type LazyProducer = ReturnType<typeof lazyProducer>;
