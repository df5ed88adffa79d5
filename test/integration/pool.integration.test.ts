// infra/db/pool.ts on the test stack's real Postgres: a connection that Postgres ends in the
// middle of a transaction (as a restart or a kill -9 of Postgres does to every connection) fails
// that transaction, and the process lives on and queries again through a new connection. A bare
// pg.Pool ends the process there, which is how the projector once died mid-run, and with it
// every event after (the fault test waited for a RunFinished that was never projected).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { database } from '../support/stack.js';

const db = database();
after(() => db.close());

/** Runs the child, ends its transaction's backend from here, and returns its exit code and output. */
async function endBackendMidTransaction(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', './infra/node/v8Flags.js', '--import', 'tsx', 'test/support/poolChild.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const backend = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /backend (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`the child exited before its transaction began: ${out}`)));
  });
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const pid = await backend;
  await db.db.execute(sql`select pg_terminate_backend(${pid})`);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, out };
}

test('a connection ended mid-transaction fails the transaction, and the process queries again', async () => {
  const { code, out } = await endBackendMidTransaction({});
  assert.match(out, /transaction failed/, out);
  assert.match(out, /queried again: 1/, out);
  assert.equal(code, 0, out);
});

test('without openPool the same event ends the process (what the test above guards against)', async () => {
  const { code, out } = await endBackendMidTransaction({ BARE: '1' });
  assert.notEqual(code, 0, out);
  // How the client learns of it depends on timing: Postgres's termination message, or a reset
  // socket when the connection is torn down before the client reads that message.
  assert.match(out, /Connection terminated unexpectedly|terminating connection|read ECONNRESET/, out);
});
