// Child process for test/integration/pool.integration.test.ts: opens a pool (openPool, or a bare
// pg.Pool with BARE=1), starts a transaction, prints its backend pid and sleeps in it; once the
// parent has ended that backend, it prints how the transaction ended, then queries again.
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { openPool } from '../../infra/db/pool.js';
import { stackSettings } from '../../infra/settings.js';

const url = stackSettings().databaseUrl;
const pool = process.env.BARE ? new pg.Pool({ connectionString: url, max: 1 }) : openPool(url, { max: 1 });
const db = drizzle(pool);
try {
  await db.transaction(async (tx) => {
    const { rows } = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
    console.log(`backend ${rows[0].pid}`);
    await tx.execute(sql`select pg_sleep(30)`);
  });
  console.log('transaction committed');
} catch {
  console.log('transaction failed');
}
const { rows } = await db.execute<{ one: number }>(sql`select 1 as one`);
console.log(`queried again: ${rows[0].one}`);
await pool.end();
