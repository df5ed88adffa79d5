// The event store against the test stack's projector: idempotent appends under re-delivery,
// the per-stream hash chain, the samples read model (advantages from SamplesConsumed, whichever
// arrives first), the checkpoints read model under a retention, and `projector rebuild` giving
// the read models the live projection gave.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pgDriver from 'pg';
import { envelopes, type EventEnvelope, type TandemEvent } from '../../domain/events.js';
import { episodeStream, runStream, updateStream } from '../../domain/ids.js';
import { checkpoints, events, samples, streams } from '../../infra/db/schema.js';
import { applyMigrations, ensureDatabase } from '../../infra/db/migrate.js';
import { lazyProducer } from '../../infra/kafka/client.js';
import { projectPath, TOPICS } from '../../infra/settings.js';
import { appendEvents } from '../../services/eventStore/append.js';
import { checkChain } from '../../services/eventStore/hashChain.js';
import { READ_MODEL_TABLES, rebuildReadModels } from '../../services/eventStore/rebuild.js';
import { eventually } from '../support/eventually.js';
import { database, kafka, settings } from '../support/stack.js';

const pg = database();
const producer = lazyProducer(kafka());
after(async () => {
  await producer.close();
  await pg.close();
});

const publish = (envs: EventEnvelope[]) => producer.send(TOPICS.events, envs.map((e) => ({ key: e.stream, value: JSON.stringify(e) })));

/** A one-episode, one-update run, as the workflows and the update activity would publish it. */
function syntheticRun(runId: string) {
  const episodeId = `${runId}/it0/ep0`;
  const ids = [0, 1].map((i) => `${episodeId}/t0/a/c${i}/a1`);
  const run: TandemEvent[] = [
    { type: 'RunStarted', runId, config: { env: { name: 'plan_path' } }, totalIterations: 1 },
    { type: 'UpdateApplied', runId, iteration: 0, policy: 'p', fromVersion: 0, toVersion: 1, samples: 2, groups: 1, replayed: false, metrics: { loss: 0.5 } },
    { type: 'CheckpointSaved', runId, iteration: 0, policy: 'p', version: 1, path: '/tmp/ckpt' },
    { type: 'IterationFinished', runId, iteration: 0, episodes: 1, successRate: 1, rewardByAgent: { a: 1 } },
    { type: 'RunFinished', runId, iterations: 1, reason: 'completed' },
  ];
  const episode: TandemEvent[] = [
    { type: 'EpisodeStarted', runId, iteration: 0, episodeId, problemSeed: 7, phase: 'train' },
    {
      type: 'TurnGroupScored',
      runId,
      iteration: 0,
      episodeId,
      groupKey: 'p7/t0/a',
      turn: 0,
      agent: 'a',
      policy: 'p',
      policyVersion: 0,
      chosen: 1,
      samples: ids.map((sampleId, i) => ({ sampleId, candidate: i, local: i, global: 1, reward: i + 0.5, outcome: `o${i}`, text: `answer ${i}`, done: true, solved: i === 1 })),
      state: { board: [1, 2] },
      prompt: [{ role: 'user', content: 'solve' }],
    },
    { type: 'EpisodeFinished', runId, iteration: 0, episodeId, success: true, turns: 1, rewardByAgent: { a: 1.5 }, finalState: { board: [2, 1] } },
  ];
  const update: TandemEvent[] = [
    { type: 'SamplesConsumed', runId, iteration: 0, policy: 'p', fromVersion: 0, toVersion: 1, advantages: { [ids[0]]: -0.7, [ids[1]]: 0.7 } },
  ];
  return {
    episodeId,
    ids,
    run: envelopes(runStream(runId), 0, run),
    episode: envelopes(episodeStream(episodeId), 0, episode),
    update: envelopes(updateStream(runId, 'p', 0), 0, update),
  };
}

async function storedRows(streamNames: string[]) {
  return pg.db.select().from(events).where(inArray(events.stream, streamNames)).orderBy(asc(events.globalPosition));
}

/** Every read model's rows, as JSON text in a stable order. */
async function readModels(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of READ_MODEL_TABLES) {
    const r = await pg.pool.query(`SELECT to_jsonb(t)::text AS row FROM ${table} t ORDER BY 1`);
    out[table] = r.rows.map((x: { row: string }) => x.row);
  }
  return out;
}

test('re-delivered events are stored once, with an intact hash chain and stream heads', { timeout: 180_000 }, async () => {
  const r = syntheticRun(`es-dup-${Date.now()}`);
  const all = [...r.run, ...r.episode, ...r.update];
  const names = [...new Set(all.map((e) => e.stream))];
  await publish(all);
  // Re-delivery: the same envelopes again, twice, and then a marker behind them in the run's partition.
  await publish(all);
  await publish(all);
  const marker = envelopes(r.run[0].stream, r.run.length, [{ type: 'RunFinished', runId: 'marker', iterations: 0, reason: 'completed' }]);
  await publish(marker);
  await eventually('the marker projected', async () => ((await storedRows(names)).some((e) => e.eventId === marker[0].eventId) ? true : undefined), 120_000);
  await eventually('every event projected', async () => ((await storedRows(names)).length === all.length + 1 ? true : undefined), 120_000);

  const rows = await storedRows(names);
  assert.equal(new Set(rows.map((e) => e.eventId)).size, rows.length, 'each event id once');
  for (const stream of names) {
    const mine = rows.filter((e) => e.stream === stream).sort((a, b) => a.position - b.position);
    const [head] = await pg.db.select().from(streams).where(eq(streams.stream, stream));
    assert.equal(checkChain(stream, mine, head), null, stream);
  }
  const sampleRows = await pg.db.select().from(samples).where(inArray(samples.sampleId, r.ids));
  assert.equal(sampleRows.length, 2, 'each sample once');

  // The append itself is idempotent too: a re-delivered envelope is skipped whole.
  assert.deepEqual(await appendEvents(pg.db, [r.episode[1]]), [false]);
  assert.equal((await storedRows(names)).length, all.length + 1);
});

test('advantages reach the samples whichever stream is projected first, and rebuild equals the live projection', { timeout: 180_000 }, async () => {
  const r = syntheticRun(`es-rebuild-${Date.now()}`);
  // The update's stream first: events of different streams may be projected in any order.
  await publish(r.update);
  await eventually('the update stored', async () => ((await storedRows([r.update[0].stream])).length === 1 ? true : undefined), 120_000);
  await publish([...r.run, ...r.episode]);
  await eventually('the run finished', async () => ((await storedRows([r.run[0].stream])).length === r.run.length ? true : undefined), 120_000);
  await eventually('the episode stored', async () => ((await storedRows([r.episode[0].stream])).length === r.episode.length ? true : undefined), 120_000);

  const sampleRows = await pg.db.select().from(samples).where(inArray(samples.sampleId, r.ids)).orderBy(asc(samples.candidate));
  assert.deepEqual(
    sampleRows.map((s) => [s.candidate, s.chosen, s.reward, s.advantage, s.consumedFromVersion, s.consumedToVersion]),
    [
      [0, false, 0.5, -0.7, 0, 1],
      [1, true, 1.5, 0.7, 0, 1],
    ],
  );

  const live = await readModels();
  const rebuilt = await rebuildReadModels(pg.db);
  assert.ok(rebuilt.events >= r.run.length + r.episode.length + 1);
  const again = await readModels();
  for (const table of READ_MODEL_TABLES) assert.deepEqual(again[table], live[table], `${table} after rebuild`);
  assert.ok(live.samples.some((row) => row.includes(r.ids[0])), 'the run is in the compared content');
  // The event table itself is untouched by a rebuild.
  const [{ n }] = (await pg.db.execute(sql`SELECT count(*)::int AS n FROM events WHERE stream = ${r.episode[0].stream}`)).rows as { n: number }[];
  assert.equal(n, r.episode.length);
});

test('checkpoint retention: a CheckpointSaved naming the versions left on disk marks the others of its policy pruned', { timeout: 120_000 }, async () => {
  const runId = `es-retention-${Date.now()}`;
  const saved = (version: number, policy: string, keptVersions?: number[]): TandemEvent => ({
    type: 'CheckpointSaved', runId, iteration: version - 1, policy, version, path: `/tmp/${policy}/v${version}`, ...(keptVersions ? { keptVersions } : {}),
  });
  // keep_last 1, keep_every 2 for p; q keeps all (its events name no versions).
  const run = envelopes(runStream(runId), 0, [saved(1, 'p', [1]), saved(1, 'q'), saved(2, 'p', [2]), saved(2, 'q'), saved(3, 'p', [2, 3]), saved(3, 'q')]);
  await publish(run);
  await eventually('the run projected', async () => ((await storedRows([run[0].stream])).length === run.length ? true : undefined), 120_000);
  const rows = await pg.db.select().from(checkpoints).where(eq(checkpoints.runId, runId)).orderBy(asc(checkpoints.policy), asc(checkpoints.version));
  assert.deepEqual(rows.map((c) => [c.policy, c.version, c.pruned]), [
    ['p', 1, true], ['p', 2, false], ['p', 3, false],
    ['q', 1, false], ['q', 2, false], ['q', 3, false],
  ]);
});

test('the migrations apply to a database that holds events from before the hash chain', { timeout: 120_000 }, async () => {
  const url = new URL(settings.databaseUrl);
  const name = `tandem_migrate_${process.pid}`;
  url.pathname = `/${name}`;
  const admin = new pgDriver.Client({ connectionString: Object.assign(new URL(settings.databaseUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
  await ensureDatabase(url.toString());
  const pool = new pgDriver.Pool({ connectionString: url.toString(), max: 1 });
  // The first migration only, as a database created before the event store's second one holds it.
  const first = mkdtempSync(join(tmpdir(), 'tandem-migrations-'));
  try {
    const db = drizzle(pool);
    const journal = JSON.parse(readFileSync(projectPath('infra/db/migrations/meta/_journal.json'), 'utf8'));
    mkdirSync(join(first, 'meta'));
    cpSync(projectPath('infra/db/migrations/0000_init.sql'), join(first, '0000_init.sql'));
    cpSync(projectPath('infra/db/migrations/meta/0000_snapshot.json'), join(first, 'meta/0000_snapshot.json'));
    writeFileSync(join(first, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: journal.entries.slice(0, 1) }));
    await migrate(db, { migrationsFolder: first });
    await pool.query(`INSERT INTO events (event_id, stream, position, type, data) VALUES ('s#0', 's', 0, 'RunStarted', '{}'), ('s#1', 's', 1, 'RunFinished', '{}')`);

    await applyMigrations(url.toString());
    const [head] = await db.select().from(streams).where(eq(streams.stream, 's'));
    assert.deepEqual(head, { stream: 's', position: 1, hash: null }, 'the stream head is backfilled');
    const rows = await db.select().from(events).where(eq(events.stream, 's')).orderBy(asc(events.position));
    assert.deepEqual(rows.map((r) => r.hash), [null, null]);
    assert.match(checkChain('s', rows, head)!.message, /no hash \(recorded before the hash chain\)/);
    // A later event of the old stream still appends after its head.
    const next = envelopes('s', 2, [{ type: 'RunFinished', runId: 'old', iterations: 0, reason: 'completed' }])[0];
    assert.deepEqual(await appendEvents(db, [next]), [true]);
    assert.equal((await db.select().from(streams).where(eq(streams.stream, 's')))[0].position, 2);
    await applyMigrations(url.toString()); // applying again changes nothing
  } finally {
    rmSync(first, { recursive: true, force: true });
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin.end();
  }
});

test('an event out of its stream order is stored, the head never moves back, and the chain shows it', { timeout: 60_000 }, async () => {
  const stream = `test:order-${Date.now()}`;
  const [e0, e1, e2] = envelopes(stream, 0, [0, 1, 2].map((i) => ({ type: 'RunFinished', runId: `order-${i}`, iterations: i, reason: 'completed' }) as TandemEvent));
  assert.deepEqual(await appendEvents(pg.db, [e0]), [true]);
  assert.deepEqual(await appendEvents(pg.db, [e2]), [true]); // ahead of its turn
  assert.deepEqual(await appendEvents(pg.db, [e1]), [true]); // late
  const [head] = await pg.db.select().from(streams).where(eq(streams.stream, stream));
  assert.equal(head.position, 2);
  const rows = await pg.db.select().from(events).where(eq(events.stream, stream)).orderBy(asc(events.position));
  assert.deepEqual(rows.map((r) => r.position), [0, 1, 2]);
  assert.equal(checkChain(stream, rows, head)?.position, 1, 'the late event does not chain from its predecessor');
});

test('a batch is one transaction: its events append in order, a re-delivered one among them is skipped, and a batch that fails stores none', { timeout: 60_000 }, async () => {
  const stream = `test:batch-${Date.now()}`;
  const [e0, e1, e2] = envelopes(stream, 0, [0, 1, 2].map((i) => ({ type: 'RunFinished', runId: `batch-${i}`, iterations: i, reason: 'completed' }) as TandemEvent));
  assert.deepEqual(await appendEvents(pg.db, [e0, e1, e0, e2]), [true, true, false, true]);
  const [head] = await pg.db.select().from(streams).where(eq(streams.stream, stream));
  const rows = await pg.db.select().from(events).where(eq(events.stream, stream)).orderBy(asc(events.position));
  assert.deepEqual(rows.map((r) => r.position), [0, 1, 2]);
  assert.equal(checkChain(stream, rows, head), null);

  // An event whose projection the database refuses (an episode without an id) fails its whole batch.
  const other = `test:batch-failed-${Date.now()}`;
  const [good] = envelopes(other, 0, [{ type: 'RunFinished', runId: 'batch-failed', iterations: 0, reason: 'completed' }]);
  const [bad] = envelopes(`episode:batch-bad-${Date.now()}`, 0, [{ type: 'EpisodeStarted', runId: 'batch-failed', iteration: 0, episodeId: null as unknown as string, problemSeed: 0, phase: 'train', setup: {} } as TandemEvent]);
  await assert.rejects(appendEvents(pg.db, [good, bad]));
  assert.deepEqual(await pg.db.select().from(events).where(eq(events.stream, other)), [], 'the good event of the failed batch is not stored');
  assert.deepEqual(await appendEvents(pg.db, [good]), [true], 'delivered again, it appends');
});

test('an event with U+0000 in a text is stored with U+FFFD in its place, chained, and the stream goes on', { timeout: 60_000 }, async () => {
  // A model can sample the NUL byte; Postgres refuses it in jsonb (22P05), which once stopped the
  // projector on that event's partition for good.
  const stream = `test:nul-${Date.now()}`;
  const [e0, e1] = envelopes(stream, 0, [
    { type: 'RunFinished', runId: 'nul\u0000run', iterations: 0, reason: 'completed' },
    { type: 'RunFinished', runId: 'after-nul', iterations: 1, reason: 'completed' },
  ]);
  assert.deepEqual(await appendEvents(pg.db, [e0, e1]), [true, true]);
  const [head] = await pg.db.select().from(streams).where(eq(streams.stream, stream));
  const rows = await pg.db.select().from(events).where(eq(events.stream, stream)).orderBy(asc(events.position));
  assert.equal((rows[0].data as { runId: string }).runId, 'nul\uFFFDrun');
  assert.equal(checkChain(stream, rows, head), null);
  assert.deepEqual(await appendEvents(pg.db, [e0]), [false], 'a re-delivery of it is still recognised');
});
