// Bulk content out of workflow history: Temporal's External Storage (the SDK's claim-check
// pattern) with a storage driver on Tandem's Postgres. Every payload over PAYLOAD_THRESHOLD_BYTES
// that a worker or client sends (an agent turn's candidate texts, a scoring result's states, an
// episode's events, a prompt, a config) is written to table `payloads` and replaced in history by
// a claim of about 150 bytes; the SDK fetches it back before workflow or activity code sees it.
// Workflow and activity code is unchanged, and so is determinism: a replay reads the same bytes.
//
// - Key: sha256 of the payload (metadata and data), so a retried store writes nothing new and
//   equal payloads are kept once. Written before the history event that refers to it exists
//   (the SDK stores, then completes the task), so no history ever names a missing payload.
// - Store: the stack's Postgres (the event store's database), durable and shared by a cluster;
//   every worker and client now connects to it (TANDEM_DATABASE_URL), as the projector and the
//   CLI did. A `StorageDriver` on an object store would be a second implementation of the same
//   interface.
// - Retention: as long as the run's events (the audit replays histories that name these rows);
//   `workflow_id` says which workflow stored each row first.
// - Not stored: a local activity's arguments (marked by the workflows' payload converter,
//   payloadConverter.ts), which go from workflow to activity inside the worker, never to history.
// - Bound: a payload in history is at most PAYLOAD_THRESHOLD_BYTES, so an episode's history grows
//   with its number of turns, not with the length of its responses (docs/ARCHITECTURE.md, "Size").
import { createHash } from 'node:crypto';
import { ExternalStorage, StorageDriverClaim, type Payload, type StorageDriver, type StorageDriverStoreContext } from '@temporalio/common';
// (the SDK's own reading of its claim payloads; not re-exported at its top level)
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow/extstore-helpers';
import type pg from 'pg';
import { openPool } from '../db/pool.js';
import { LOCAL_ARGUMENT } from './payloadConverter.js';

/** Payloads larger than this go to the store (the SDK's default is 256 KiB). */
export const PAYLOAD_THRESHOLD_BYTES = 4 * 1024;

/** The driver's name is written into every claim: renaming it orphans the stored rows. */
const DRIVER_NAME = 'tandem-postgres';

const b64 = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('base64');

/** The payload's metadata as a JSON object (base64 values), in key order: part of what the key hashes. */
function metadataOf(p: Payload): Record<string, string> {
  const m = p.metadata ?? {};
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, b64(m[k]!)]));
}

export class PostgresPayloadDriver implements StorageDriver {
  readonly name = DRIVER_NAME;
  readonly type = 'tandem.postgres';

  constructor(private readonly pool: pg.Pool) {}

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const rows = payloads.map((p) => {
      const metadata = metadataOf(p);
      const data = Buffer.from(p.data ?? new Uint8Array());
      const key = createHash('sha256').update(JSON.stringify(metadata)).update('\n').update(data).digest('hex');
      return { key, metadata, data };
    });
    const workflowId = context.target?.kind === 'workflow' ? context.target.id : undefined;
    // One statement for the batch; a key already stored (a retry, an equal payload) is left as it is.
    await this.pool.query(
      `INSERT INTO payloads (key, metadata, data, bytes, workflow_id)
       SELECT * FROM unnest($1::text[], $2::jsonb[], $3::bytea[], $4::int[], $5::text[])
       ON CONFLICT (key) DO NOTHING`,
      [rows.map((r) => r.key), rows.map((r) => JSON.stringify(r.metadata)), rows.map((r) => r.data), rows.map((r) => r.data.length), rows.map(() => workflowId ?? null)],
    );
    return rows.map((r) => new StorageDriverClaim({ key: r.key }));
  }

  async retrieve(_context: unknown, claims: StorageDriverClaim[]): Promise<Payload[]> {
    const keys = claims.map((c) => c.claimData.key);
    const { rows } = await this.pool.query<{ key: string; metadata: Record<string, string>; data: Buffer }>(
      'SELECT key, metadata, data FROM payloads WHERE key = ANY($1::text[])',
      [keys],
    );
    const byKey = new Map(rows.map((r) => [r.key, r]));
    return keys.map((key) => {
      const row = byKey.get(key);
      if (!row) throw new Error(`payload ${key} is named in workflow history but not in table payloads of the database`);
      const metadata = Object.fromEntries(Object.entries(row.metadata).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]));
      return { metadata, data: new Uint8Array(row.data) };
    });
  }
}

/**
 * The data converter every Tandem worker and client uses. Its pool lets the process exit once
 * idle (a CLI command needs no close), and survives Postgres dropping its connections (a restart).
 */
export function tandemDataConverter(databaseUrl: string): { externalStorage: ExternalStorage } {
  const pool = openPool(databaseUrl, { max: 4, allowExitOnIdle: true });
  const driver = new PostgresPayloadDriver(pool);
  return {
    externalStorage: new ExternalStorage({
      drivers: [driver],
      // A local activity's arguments stay inline: they never reach the server (payloadConverter.ts).
      driverSelector: (_context, payload) => (payload.metadata?.[LOCAL_ARGUMENT] ? null : driver),
      payloadSizeThreshold: PAYLOAD_THRESHOLD_BYTES,
    }),
  };
}

/**
 * Replaces, in place, every claim in `node` (a fetched history, say) with the payload it names:
 * what a history saved to a file needs to replay without this database (test/fixtures/histories).
 * Returns how many it replaced.
 */
export async function inlineClaims(node: unknown, databaseUrl: string): Promise<number> {
  const found: { payload: Payload; claim: StorageDriverClaim }[] = [];
  const visit = (n: unknown) => {
    if (n === null || typeof n !== 'object' || n instanceof Uint8Array) return;
    const p = n as Payload;
    if (p.data instanceof Uint8Array && p.metadata && isReferencePayload(p)) {
      found.push({ payload: p, claim: new StorageDriverClaim(decodeReferencePayload(p).claimData) });
      return;
    }
    Object.values(n).forEach(visit);
  };
  visit(node);
  if (found.length === 0) return 0;
  const pool = openPool(databaseUrl, { max: 1 });
  try {
    const payloads = await new PostgresPayloadDriver(pool).retrieve({}, found.map((f) => f.claim));
    found.forEach((f, i) => Object.assign(f.payload, payloads[i]));
  } finally {
    await pool.end();
  }
  return found.length;
}
