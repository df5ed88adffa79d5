// The one way a Tandem process opens a Postgres pool. Postgres going away (a restart, a kill -9)
// fails every open connection, idle or not. pg's pool hears the idle ones; a connection checked
// out for a transaction (drizzle's db.transaction) emits 'error' on its own client, and an
// 'error' nobody hears ends the process. Here both are heard: the failed query fails its caller
// (the projector's message is delivered again, a CLI command reports it), the pool drops the
// connection and opens a new one when next asked.
import pg from 'pg';

export function openPool(databaseUrl: string, opts: { max: number; allowExitOnIdle?: boolean; onError?: (err: Error) => void }): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.max, allowExitOnIdle: opts.allowExitOnIdle });
  const onError = opts.onError ?? (() => {});
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  return pool;
}
