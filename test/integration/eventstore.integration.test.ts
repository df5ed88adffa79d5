// The event store against the test stack's projector: idempotent appends under re-delivery,
// the per-stream hash chain, the samples read model (advantages from SamplesConsumed, whichever
// arrives first), and `projector rebuild` giving the read models the live projection gave.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { envelopes, episodeStream, runStream, updateStream, type EventEnvelope, type TandemEvent } from '../../domain/events.js';
import { events, samples, streams } from '../../infra/db/schema.js';
import { lazyProducer } from '../../infra/kafka/client.js';
import { TOPICS } from '../../infra/settings.js';
import { appendEvent } from '../../services/projector/append.js';
import { checkChain } from '../../services/projector/hashChain.js';
import { READ_MODEL_TABLES, rebuildReadModels } from '../../services/projector/rebuild.js';
import { database, eventually, kafka } from '../support/stack.js';

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
    { type: 'EpisodeStarted', runId, iteration: 0, episodeId, problemSeed: 7 },
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
  assert.equal(await appendEvent(pg.db, r.episode[1]), false);
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
