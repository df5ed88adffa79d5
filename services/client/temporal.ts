// The CLI's Temporal client.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { freshId } from '../../domain/ids.js';
import { stackSettings } from '../../infra/settings.js';
import { tandemDataConverter } from '../../infra/temporal/payloadStore.js';

/** A fresh run or evaluation id (domain/ids.ts), from now and 3 random bytes. */
export const freshWorkflowId = (prefix: 'run' | 'eval') => freshId(prefix, new Date(), randomBytes(3).toString('hex'));

export async function temporalClient(): Promise<Client> {
  const s = stackSettings();
  const connection = await Connection.connect({ address: s.temporalAddress, ...(s.temporalApiKey ? { apiKey: s.temporalApiKey, tls: true } : {}) });
  return new Client({ connection, namespace: s.namespace, dataConverter: tandemDataConverter(s.databaseUrl) });
}
