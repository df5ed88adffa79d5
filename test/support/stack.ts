// Clients for the test stack that infra/test.sh brings up (settings from infra/test-env.sh).
import { Client, Connection } from '@temporalio/client';
import { drizzle } from 'drizzle-orm/node-postgres';
import { openPool } from '../../infra/db/pool.js';
import { makeKafka } from '../../infra/kafka/client.js';
import { stackSettings } from '../../infra/settings.js';
import { tandemDataConverter } from '../../infra/temporal/payloadStore.js';

export const settings = stackSettings();

export async function temporal(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: settings.temporalAddress });
  return { client: new Client({ connection, namespace: settings.namespace, dataConverter: tandemDataConverter(settings.databaseUrl) }), close: () => connection.close() };
}

export const kafka = () => makeKafka(settings.kafkaBrokers, `tandem-test-${process.pid}`);

export function database() {
  const pool = openPool(settings.databaseUrl, { max: 2 });
  return { db: drizzle(pool), pool, close: () => pool.end() };
}
