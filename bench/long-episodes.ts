// Episodes of the reference's math shape (4 turns x 2 agents x K=8, one problem) at growing
// response lengths, each one training iteration through the running stack with the tiny model
// generating to the limit (ignore_eos). Per length: the episode's workflow history as Temporal
// stores it and as it would be with every payload inline (the payload store's references carry
// each payload's size), the bytes written to Kafka per topic, the iteration's wall time, the
// tokens generated and trained on, and the engine's peak resident memory so far (VmHWM).
//   node --import tsx bench/long-episodes.ts [--lengths 256,1024,4096,8192]
// Needs a running stack (`npx tandem stack up`) with nothing else training on it. The tiny model's
// config says 2,048 positions; its rotary embeddings have no such limit, so the bench uses a copy
// of it that says 16,384.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeReferencePayload, isReferencePayload } from '@temporalio/common/lib/internal-non-workflow/extstore-helpers';
import { loadRunConfig } from '../configs/load.js';
import { readBatch, startAtEnd } from '../infra/kafka/readBatch.js';
import { deleteGroups } from '../infra/kafka/retention.js';
import { makeKafka } from '../infra/kafka/client.js';
import { CPU_QUEUE, projectPath, stackSettings, TOPICS } from '../infra/settings.js';
import { temporalClient } from '../services/client/temporal.js';
import { trainingRun } from '../workflows/trainingRun.js';

const argv = process.argv.slice(2);
const at = argv.indexOf('--lengths');
const lengths = (at >= 0 ? argv[at + 1] : '256,1024,4096,8192').split(',').map(Number);
const s = stackSettings();

const model = mkdtempSync(join(tmpdir(), 'tandem-tiny-16k-'));
cpSync(projectPath('.tools/models/tandem-tiny'), model, { recursive: true });
const modelConfig = JSON.parse(readFileSync(join(model, 'config.json'), 'utf8'));
writeFileSync(join(model, 'config.json'), JSON.stringify({ ...modelConfig, max_position_embeddings: 16384 }));

/** The policy worker's engine process (a child of the pid in <data>/run/policy-worker.pid). */
function enginePid(): number {
  const worker = Number(readFileSync(join(s.dataDir, 'run', 'policy-worker.pid'), 'utf8'));
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === worker) return Number(p);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('no engine process under the policy worker');
}
const peakRssMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${enginePid()}/status`, 'utf8'))![1]) / 1024;

/** Bytes of every payload in a history, as stored and as it would be inline. */
function historyPayloads(node: unknown, acc = { stored: 0, inline: 0, references: 0, largest: 0, largestInline: 0 }) {
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array) return acc;
  const o = node as { data?: unknown; metadata?: Record<string, Uint8Array> };
  if (o.data instanceof Uint8Array && o.metadata) {
    const size = o.data.length + Object.values(o.metadata).reduce((n, v) => n + v.length, 0);
    acc.stored += size;
    acc.largest = Math.max(acc.largest, size);
    const inline = isReferencePayload(o as never) ? decodeReferencePayload(o as never).sizeBytes : size;
    if (inline !== size) acc.references++;
    acc.inline += inline;
    acc.largestInline = Math.max(acc.largestInline, inline);
    return acc;
  }
  for (const v of Object.values(o)) historyPayloads(v, acc);
  return acc;
}

const client = await temporalClient();
const kafka = makeKafka(s.kafkaBrokers, 'tandem-bench-long');
const topics = [TOPICS.rollouts, TOPICS.trajectories, TOPICS.events];
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}; engine peak RSS before: ${peakRssMb().toFixed(0)} MB`);
console.log('| response tokens | episode history | its largest payload | payloads referenced | history were all inline | largest payload inline | Kafka rollouts | Kafka trajectories | Kafka events | iteration wall s | tokens trained | engine peak RSS MB |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const length of lengths) {
  const loaded = loadRunConfig('configs/math/math_L1_prompt.yaml', [
    `base_models.policy_0.path=${model}`,
    'training.total_training_steps=1',
    'training.train_batch_size=1',
    'training.train_sample_num=8',
    'env.max_turns=4',
    `training.max_response_length=${length}`,
    'training.max_prompt_length=4096',
    'training.truncation=left',
    'agent_policy_configs.agent_configs.agent_0.train_llm_config.ignore_eos=true',
    'agent_policy_configs.agent_configs.agent_1.train_llm_config.ignore_eos=true',
  ]);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  const runId = `bench-long-${length}-${Date.now()}`;
  const group = `${runId}-bytes`;
  // This bench's reader, made before the run: it reads only what the run publishes, and holds it (infra/kafka/retention.ts).
  await startAtEnd(kafka, group, topics);
  const t0 = Date.now();
  await client.workflow.execute(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: loaded.config }] });
  const wall = (Date.now() - t0) / 1000;
  const episode = client.workflow.getHandle(`${runId}/it0/ep0`);
  const { historySize } = await episode.describe();
  const payloads = historyPayloads(await episode.fetchHistory());
  const read = await readBatch(kafka, group, topics);
  await deleteGroups(kafka, [group]);
  const bytes = Object.fromEntries(topics.map((t) => [t, read.records.filter((r) => r.topic === t).reduce((n, r) => n + Buffer.byteLength(r.value), 0)]));
  const update = read.records.filter((r) => r.topic === TOPICS.events).map((r) => JSON.parse(r.value).event).find((e) => e.type === 'UpdateApplied');
  console.log(
    `| ${length} | ${kb(historySize ?? NaN)} | ${kb(payloads.largest)} | ${payloads.references} | ${kb((historySize ?? NaN) - payloads.stored + payloads.inline)} | ${kb(payloads.largestInline)} | ${kb(bytes[TOPICS.rollouts])} | ${kb(bytes[TOPICS.trajectories])} | ${kb(bytes[TOPICS.events])} | ${wall.toFixed(0)} | ${update?.metrics?.tokens ?? '?'} | ${peakRssMb().toFixed(0)} |`,
  );
}
await client.connection.close();
rmSync(model, { recursive: true, force: true });
