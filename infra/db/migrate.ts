// Creates the database if needed and applies the drizzle migrations (run by `stack up`).
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { projectPath } from '../settings.js';
import { openPool } from './pool.js';

/** Does the server take queries? (Its port opens before it does: "the database system is starting up".) */
export async function acceptsQueries(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export async function applyMigrations(databaseUrl: string): Promise<void> {
  const pool = openPool(databaseUrl, { max: 1 });
  try {
    await migrate(drizzle(pool), { migrationsFolder: projectPath('infra/db/migrations') });
  } finally {
    await pool.end();
  }
}
