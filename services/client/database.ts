// The stack's Postgres, for CLI commands that read or rebuild the record.
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { openPool } from '../../infra/db/pool.js';
import { stackSettings } from '../../infra/settings.js';

/** A pool of up to MAX connections to the stack's Postgres; `close` ends it. */
export function openDatabase(max = 2): { db: NodePgDatabase; close: () => Promise<void> } {
  const pool = openPool(stackSettings().databaseUrl, { max });
  return { db: drizzle(pool), close: () => pool.end() };
}

/** Runs `use` with a database connection, and closes it afterwards. */
export async function withDatabase<T>(use: (db: NodePgDatabase) => Promise<T>): Promise<T> {
  const { db, close } = openDatabase();
  try {
    return await use(db);
  } finally {
    await close();
  }
}
