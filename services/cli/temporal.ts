// The CLI's Temporal client.
import { Client, Connection } from '@temporalio/client';
import { stackSettings } from '../../infra/settings.js';

export async function temporalClient(): Promise<Client> {
  const s = stackSettings();
  const connection = await Connection.connect({ address: s.temporalAddress });
  return new Client({ connection, namespace: s.namespace });
}
