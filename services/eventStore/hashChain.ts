// The per-stream hash chain of the event store. Each stored event carries
//   hash = sha256(hash of the previous event of its stream || canonical JSON of {stream, position, type, data})
// (hex; the first event of a stream chains from the empty string). Changing any stored field
// of an event, or deleting one, breaks the chain from that event on.
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, no whitespace: the same text for the same value, however stored (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new Error(`canonicalJson: ${typeof value} has no JSON form`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export interface ChainedFields {
  stream: string;
  position: number;
  type: string;
  data: unknown;
}

export function eventHash(prevHash: string | null, e: ChainedFields): string {
  return createHash('sha256')
    .update(prevHash ?? '')
    .update(canonicalJson({ stream: e.stream, position: e.position, type: e.type, data: e.data }))
    .digest('hex');
}

export type ChainBreak =
  | { kind: 'gap'; stream: string; position: number; message: string }
  | { kind: 'hash'; stream: string; position: number; message: string }
  | { kind: 'head'; stream: string; position: number; message: string };

/**
 * Checks one stream's stored events (sorted by position) against its recorded head. Returns the
 * first break: a missing position, a hash that does not match the content and chain, or a head
 * (last position and hash) that the rows do not reach.
 */
export function checkChain(
  stream: string,
  rows: (ChainedFields & { hash: string | null })[],
  head: { position: number; hash: string | null } | undefined,
): ChainBreak | null {
  let prev: string | null = null;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.position !== i) return { kind: 'gap', stream, position: i, message: `${stream}: event at position ${i} is missing (next stored is ${r.position})` };
    const expected = eventHash(prev, r);
    if (r.hash !== expected) {
      return {
        kind: 'hash',
        stream,
        position: i,
        message:
          r.hash === null
            ? `${stream}: event at position ${i} (${r.type}) has no hash (recorded before the hash chain)`
            : `${stream}: event at position ${i} (${r.type}) does not match its hash: changed, or an earlier event was`,
      };
    }
    prev = expected;
  }
  if (!head) return { kind: 'head', stream, position: rows.length, message: `${stream}: no recorded stream head` };
  if (head.position !== rows.length - 1) {
    return {
      kind: 'head',
      stream,
      position: rows.length,
      message: `${stream}: the stream head is at position ${head.position}, the stored events end at ${rows.length - 1}: events were deleted`,
    };
  }
  if (head.hash !== prev) return { kind: 'head', stream, position: head.position, message: `${stream}: the stream head's hash does not match its last event` };
  return null;
}
