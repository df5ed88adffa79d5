// An update's read from Kafka on a topic with history: other runs' rollout records (the
// reference's code shape, 4,096 prompt and 8,192 response tokens: about 110 KB each) published
// before this run started, and as many of theirs as of its own during its iteration. The same
// read two ways, each in a process of its own (so that its memory is its own):
//   from the start: a group without offsets, every record decoded (a run's first update before
//     its group was started with the run, and what Kafka's expiry of a paused run's offsets led to);
//   started with the run: the group made at the topic's end when the run started (startAtEnd), and
//     only the run's key kept (readBatch's `key`).
// Then one trim (infra/kafka/retention.ts) with that group as the only holder, and the topic's size on
// disk until the broker's next retention check has removed the segments below it (the topic's
// segments are 64 MiB here, Kafka's default 1 GiB). Needs the local stack's Kafka (`npx tandem stack
// up`), whose log folder it reads; the bench's topic and groups are deleted at the end.
//   node --import tsx bench/update_read.ts [--history-mb N] [--iteration N]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { encodeRollout } from '../activities/records.js';
import { lazyProducer, makeKafka } from '../infra/kafka/client.js';
import { readBatch, startAtEnd } from '../infra/kafka/readBatch.js';
import { deleteGroups, trimTopics } from '../infra/kafka/retention.js';
import { MAX_RECORD_BYTES, stackSettings } from '../infra/settings.js';

const PROMPT = 4096;
const RESPONSE = 8192;
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const kafka = makeKafka(stackSettings().kafkaBrokers, `tandem-bench-${process.pid}`);

/** One read, in this process: its wall time, records kept, and the process's peak memory while reading. */
async function readOnce(topic: string, group: string, key: string | undefined, runId: string) {
  let peak = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
  };
  const timer = setInterval(sample, 20);
  const t0 = performance.now();
  const batch = await readBatch(kafka, group, [topic], key === undefined ? {} : { key });
  // The update's first step over what it read (activities/iterationSamples.ts): decode, keep this run's.
  const mine = batch.records.filter((r) => (JSON.parse(r.value) as { runId: string }).runId === runId).length;
  const seconds = (performance.now() - t0) / 1000;
  sample();
  clearInterval(timer);
  console.log(JSON.stringify({ seconds, read: batch.records.length, mine, peakRssMb: peak / 2 ** 20 }));
}

if (process.argv[2] === '--read') {
  const [topic, group, key, runId] = process.argv.slice(3);
  await readOnce(topic, group, key === '-' ? undefined : key, runId);
  process.exit(0);
}

const historyMb = Number(arg('history-mb', '1024'));
const iteration = Number(arg('iteration', '256'));
const topic = `bench-update-read-${process.pid}`;
const runId = 'bench-run';
const group = `${topic}.started-with-the-run`;

function record(run: string, i: number): string {
  let seed = i + 1;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  return encodeRollout({
    sampleId: `${run}/it0/ep${i}/c0/a1`,
    runId: run,
    iteration: 0,
    policy: 'shared_model',
    policyVersion: 0,
    promptIds: Array.from({ length: PROMPT }, () => Math.floor(rand() * 151_936)),
    responseIds: Array.from({ length: RESPONSE }, () => Math.floor(rand() * 151_936)),
    logprobs: Array.from({ length: RESPONSE }, () => -rand() * 8),
    finishReason: 'length',
  });
}

const admin = kafka.admin();
await admin.connect();
const SEGMENT_BYTES = 64 * 2 ** 20;
await admin.createTopics({
  waitForLeaders: true,
  topics: [{ topic, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: String(MAX_RECORD_BYTES) }, { name: 'segment.bytes', value: String(SEGMENT_BYTES) }] }],
});
/** The topic's bytes on disk, in the stack's Kafka log folder. */
const logDir = join(stackSettings().dataDir, 'kafka', 'log');
const onDisk = () =>
  readdirSync(logDir)
    .filter((d) => d.startsWith(`${topic}-`) && !d.endsWith('-delete'))
    .reduce((n, d) => n + readdirSync(join(logDir, d)).reduce((m, f) => m + statSync(join(logDir, d, f)).size, 0), 0);
const producer = lazyProducer(kafka);
try {
  const size = Buffer.byteLength(record('x', 0));
  const history = Math.ceil((historyMb * 2 ** 20) / size);
  console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; records of ${PROMPT} + ${RESPONSE} tokens, ${(size / 1024).toFixed(0)} KiB each`);
  const t0 = performance.now();
  // Published in chunks of one batch of distinct records each (their contents do not matter to the read).
  const chunk = Array.from({ length: 32 }, (_, i) => record('other', i));
  for (let n = 0; n < history; n += chunk.length) {
    await producer.send(topic, chunk.slice(0, Math.min(chunk.length, history - n)).map((value, i) => ({ key: `other-${(n + i) % 8}/shared_model`, value })));
  }
  console.log(`history: ${history} records of other runs (${((history * size) / 2 ** 20).toFixed(0)} MiB), published in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await startAtEnd(kafka, group, [topic]);
  const mine = Array.from({ length: 32 }, (_, i) => record(runId, i));
  for (let n = 0; n < iteration; n += mine.length) {
    await producer.send(topic, mine.map((value) => ({ key: `${runId}/shared_model`, value })));
    await producer.send(topic, chunk.map((value, i) => ({ key: `other-${i % 8}/shared_model`, value })));
  }
  console.log(`the run's iteration: ${iteration} records of its own and ${iteration} of other runs, beside`);

  const child = (g: string, key: string) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/update_read.ts', '--read', topic, g, key, runId], { encoding: 'utf8' });
    if (r.status !== 0) return { failed: r.stderr.split('\n').find((l) => /FATAL ERROR|Error/.test(l))?.trim() ?? `exit ${r.status ?? r.signal}` };
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { seconds: number; read: number; mine: number; peakRssMb: number };
  };
  const after = child(group, `${runId}/shared_model`);
  const before = child(`${topic}.from-the-start`, '-');
  const line = (name: string, r: ReturnType<typeof child>) =>
    'failed' in r ? `${name}: failed: ${r.failed}` : `${name}: ${r.seconds.toFixed(2)} s, ${r.read} records read, ${r.mine} of the run's, peak RSS ${r.peakRssMb.toFixed(0)} MiB`;
  console.log(line('from the start         ', before));
  console.log(line('started with the run   ', after));
  if (!('failed' in before) && !('failed' in after)) console.log(`ratio of read times (from the start / started with the run): ${(before.seconds / after.seconds).toFixed(1)}x`);

  const t1 = performance.now();
  const trimmed = await trimTopics(kafka, [topic]);
  const kept = (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  const trimmedBytes = onDisk();
  console.log(`trim with the run's group the only holder: ${trimmed[topic]} records deleted in ${((performance.now() - t1) / 1000).toFixed(2)} s, ${kept} kept; on disk ${(trimmedBytes / 2 ** 20).toFixed(0)} MiB`);
  const t2 = performance.now();
  // Segments below the start are renamed *.deleted at the retention check, and removed a minute later.
  const pending = () => readdirSync(logDir).filter((d) => d.startsWith(`${topic}-`)).some((d) => readdirSync(join(logDir, d)).some((f) => f.endsWith('.deleted')));
  while ((onDisk() > trimmedBytes / 2 || pending()) && performance.now() - t2 < 400_000) await new Promise((r) => setTimeout(r, 2000));
  console.log(`on disk after the broker's retention check: ${(onDisk() / 2 ** 20).toFixed(0)} MiB, ${((performance.now() - t2) / 1000).toFixed(0)} s after the trim`);
} finally {
  await producer.close();
  await admin.deleteTopics({ topics: [topic] });
  // A reader that died keeps its group's member until its session times out (10 s).
  await deleteGroups(kafka, [group, `${topic}.from-the-start`]).catch(() => new Promise((r) => setTimeout(r, 11_000)).then(() => deleteGroups(kafka, [group, `${topic}.from-the-start`])));
  await admin.disconnect();
}
