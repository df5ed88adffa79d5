// Loading a data file into problems: each row is mapped (and checked) by a row mapper; a row
// that cannot be used is a bad row, reported with its file and line (or Parquet row), and
// either skipped (counted, with its reason) or fatal, by `onBadRow`.
import { describeLocation, type RowLocation, type RowResult } from '../../envs/shared/rows.js';
import { readRows } from './rows.js';

export type OnBadRow = 'skip' | 'fail';

export interface LoadOptions {
  /** What a malformed row does: 'skip' it (default; it is listed in `skipped`) or 'fail' the load. */
  onBadRow?: OnBadRow;
  /** Keep at most this many problems (the first ones); default: all. */
  limit?: number;
}

export interface BadRow extends RowLocation {
  reason: string;
}

export interface Loaded<T> {
  items: T[];
  /** The rows skipped, with their reasons (empty with onBadRow 'fail'). */
  skipped: BadRow[];
  /** Rows read (blank lines not counted). */
  rows: number;
}

/** A bad row under onBadRow 'fail'. */
export class BadRowError extends Error {
  override name = 'BadRowError';
  constructor(readonly bad: BadRow) {
    super(`${describeLocation(bad)}: ${bad.reason}`);
  }
}

/**
 * Reads `path` and maps every row with `map`. Ids must be unique: a repeated id is a bad row.
 * Throws BadRowError on the first bad row with onBadRow 'fail', and on file-level problems.
 */
export async function loadRows<T extends { id: string }>(path: string, map: (value: Record<string, unknown>, where: RowLocation) => RowResult<T>, options: LoadOptions = {}): Promise<Loaded<T>> {
  const onBadRow = options.onBadRow ?? 'skip';
  if (onBadRow !== 'skip' && onBadRow !== 'fail') throw new TypeError(`onBadRow must be 'skip' or 'fail', got ${String(onBadRow)}`);
  const limit = options.limit ?? Infinity;
  const items: T[] = [];
  const skipped: BadRow[] = [];
  const seen = new Map<string, RowLocation>();
  let rows = 0;
  const bad = (where: RowLocation, reason: string) => {
    const entry = { ...where, reason };
    if (onBadRow === 'fail') throw new BadRowError(entry);
    skipped.push(entry);
  };
  for await (const raw of readRows(path)) {
    if (items.length >= limit) break;
    rows++;
    if ('error' in raw) {
      bad(raw.where, raw.error);
      continue;
    }
    let r: RowResult<T>;
    try {
      r = map(raw.value, raw.where);
    } catch (e) {
      r = { ok: false, reason: `unreadable row: ${(e as Error).message}` };
    }
    if (!r.ok) {
      bad(raw.where, r.reason);
      continue;
    }
    const first = seen.get(r.item.id);
    if (first !== undefined) {
      bad(raw.where, `duplicate id "${r.item.id}" (first at ${describeLocation(first)})`);
      continue;
    }
    seen.set(r.item.id, raw.where);
    items.push(r.item);
  }
  return { items, skipped, rows };
}
