// Reading the rows of a data file: JSON Lines (.jsonl, .ndjson, .json) or Parquet (.parquet).
// Every row comes with where it is (file and 1-based line or row number); a line that is not a
// JSON object is a row with an error instead of a value. File-level problems (no such file, not
// a Parquet file) throw.
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import type { RowLocation } from '../../envs/shared/rows.js';

export type RawRow = { where: RowLocation; value: Record<string, unknown> } | { where: RowLocation; error: string };

export type DataFormat = 'jsonl' | 'parquet';

export function formatOf(path: string): DataFormat {
  const ext = extname(path).toLowerCase();
  if (ext === '.jsonl' || ext === '.ndjson' || ext === '.json') return 'jsonl';
  if (ext === '.parquet') return 'parquet';
  throw new Error(`${path}: unknown data file type "${ext}" (expected .jsonl, .ndjson, .json or .parquet)`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function* jsonlRows(path: string): AsyncGenerator<RawRow> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (text.trim() === '') continue;
    const where = { file: path, line };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      yield { where, error: `invalid JSON: ${(e as Error).message}` };
      continue;
    }
    yield isObject(value) ? { where, value } : { where, error: 'not a JSON object' };
  }
}

/** Rows read from a Parquet file at a time. */
const PARQUET_BATCH = 1000;

async function* parquetRows(path: string): AsyncGenerator<RawRow> {
  const file = await asyncBufferFromFile(path);
  let metadata;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw new Error(`${path}: not a readable Parquet file: ${(e as Error).message}`);
  }
  const total = Number(metadata.num_rows);
  for (let start = 0; start < total; start += PARQUET_BATCH) {
    const end = Math.min(total, start + PARQUET_BATCH);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end });
    } catch (e) {
      throw new Error(`${path}: reading rows ${start + 1}-${end} failed: ${(e as Error).message}`);
    }
    for (const [i, value] of rows.entries()) yield { where: { file: path, row: start + i + 1 }, value };
  }
}

/** The rows of a JSON Lines or Parquet file, in order. */
export function readRows(path: string): AsyncGenerator<RawRow> {
  return formatOf(path) === 'jsonl' ? jsonlRows(path) : parquetRows(path);
}
