// The CLI's Temporal client.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { stackSettings } from '../../infra/settings.js';

/** A fresh workflow id: `<prefix>-<UTC yyyymmddhhmmss>-<6 hex>`. */
export function freshWorkflowId(prefix: string): string {
  return `${prefix}-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}-${randomBytes(3).toString('hex')}`;
}

export async function temporalClient(): Promise<Client> {
  const s = stackSettings();
  const connection = await Connection.connect({ address: s.temporalAddress });
  return new Client({ connection, namespace: s.namespace });
}
