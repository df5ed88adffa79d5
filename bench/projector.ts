// The projector's throughput on a backlog: publishes N episodes' EpisodeStarted and EpisodeFinished
// events to the events topic at once (2N events, an episode stream each, as a training's episodes
// would), and times the running projector until every one is in the events table. Prints events/s
// and the projector's CPU per event; removes its rows after.
//   node --import tsx bench/projector.ts [episodes]   (default 1000; needs a running stack)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envelopes, type EventEnvelope } from '../domain/events.js';
import { openPool } from '../infra/db/pool.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { stackSettings, TOPICS } from '../infra/settings.js';
import { cpuOf } from './rollout/sched.js';

const N = Number(process.argv[2] ?? 1000);
const s = stackSettings();
const runId = `bench-projector-${Date.now()}`;
const pool = openPool(s.databaseUrl, { max: 1 });
const producer = lazyProducer(makeKafka(s.kafkaBrokers, 'tandem-bench-projector'));

const projectorPid = Number(readFileSync(join(s.dataDir, 'run', 'projector.pid'), 'utf8'));
const projectorCpu = () => cpuOf(projectorPid);

const all: EventEnvelope[] = [];
for (let j = 0; j < N; j++) {
  const episodeId = `${runId}/it0/ep${j}`;
  all.push(
    ...envelopes(`episode:${episodeId}`, 0, [
      { type: 'EpisodeStarted', runId, iteration: 0, episodeId, problemSeed: j, phase: 'train' },
      { type: 'EpisodeFinished', runId, iteration: 0, episodeId, success: j % 2 === 0, turns: 4, rewardByAgent: { a: 0.5, b: 0.25 }, finalState: { grid: 'x'.repeat(200) } },
    ]),
  );
}
const stored = async () =>
  Number((await pool.query('SELECT count(*)::int AS n FROM events WHERE stream LIKE $1', [`episode:${runId}/%`])).rows[0].n);

const cpu0 = projectorCpu();
const t0 = performance.now();
await producer.send(TOPICS.events, all.map((e) => ({ key: e.stream, value: JSON.stringify(e) })));
const published = performance.now();
let n = 0;
while ((n = await stored()) < all.length) {
  if (performance.now() - t0 > 600_000) throw new Error(`after 10 minutes ${n} of ${all.length} events are stored`);
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (performance.now() - t0) / 1000;
const cpu = projectorCpu() - cpu0;
console.log(`published ${all.length} events in ${((published - t0) / 1000).toFixed(2)} s`);
console.log(`projected ${all.length} events in ${seconds.toFixed(2)} s: ${(all.length / seconds).toFixed(0)} events/s; projector CPU ${((1000 * cpu) / all.length).toFixed(2)} ms per event`);

await pool.query('DELETE FROM episodes WHERE run_id = $1', [runId]);
await pool.query('DELETE FROM events WHERE stream LIKE $1', [`episode:${runId}/%`]);
await pool.query('DELETE FROM streams WHERE stream LIKE $1', [`episode:${runId}/%`]);
await producer.close();
await pool.end();
