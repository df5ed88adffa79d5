// Rows of a problem file as the environments map them (pure): where a row is, what mapping it
// gave, and the wording of a bad row's reason. Reading the files is infra/data/.
import type { z } from 'zod';

/** Where a row is: `line` for JSON Lines, `row` for Parquet (both 1-based). */
export interface RowLocation {
  file: string;
  line?: number;
  row?: number;
}

/** "data.jsonl:12" or "data.parquet row 12". */
export function describeLocation(where: RowLocation): string {
  if (where.line !== undefined) return `${where.file}:${where.line}`;
  if (where.row !== undefined) return `${where.file} row ${where.row}`;
  return where.file;
}

export type RowResult<T> = { ok: true; item: T } | { ok: false; reason: string };

/** The issues of a failed zod parse as one line: "path: message; path: message". */
export function zodReason(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'row'}: ${i.message}`)
    .join('; ');
}

/** An id for a row without one: "<file name>:<line>" or "<file name>#<row>". */
export function fallbackId(where: RowLocation): string {
  const name = where.file.split(/[\\/]/).pop() ?? where.file;
  return where.line !== undefined ? `${name}:${where.line}` : `${name}#${where.row}`;
}
