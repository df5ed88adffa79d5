// The stack's Postgres, for CLI commands that read or rebuild the record.
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { stackSettings } from '../../infra/settings.js';

/** Runs `use` with a database connection, and closes it afterwards. */
export async function withDatabase<T>(use: (db: NodePgDatabase) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: stackSettings().databaseUrl, max: 2 });
  try {
    return await use(drizzle(pool));
  } finally {
    await pool.end();
  }
}
