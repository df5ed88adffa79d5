// Bulk content out of workflow history (infra/temporal/payloadStore.ts), on the test stack's real
// Temporal, Postgres, Kafka, CPU worker and projector. No model: a stand-in policy worker, in this
// process, answers agent turns with long texts, through the same data converter as the real ones.
//   - the driver: a payload stored and read back byte for byte, a retried store writing nothing
//     new, a claim naming a missing row failing with its key;
//   - an episode whose candidates' texts total 20 MB completes; its history stays under
//     HISTORY_BOUND and no payload in it exceeds the store's threshold (4 KiB; Temporal warns at
//     512 KB and refuses 2 MB); it replays from the store, and with its claims put back inline
//     (as saved fixtures are) without one; its local activities' arguments (texts among them)
//     are not stored; the audit reads every text back from the event store and `episodes verify`
//     passes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StorageDriverClaim } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import pg from 'pg';
import type { AgentTurnInput, CandidateText } from '../../activities/agentTurn.js';
import { loadRunConfig } from '../../configs/load.js';
import { sampleIdOf } from '../../domain/ids.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { bundleWorkflows } from '../../infra/temporal/bundle.js';
import { inlineClaims, PAYLOAD_THRESHOLD_BYTES, PostgresPayloadDriver, tandemDataConverter } from '../../infra/temporal/payloadStore.js';
import { replayHistories } from '../../infra/temporal/replay.js';
import { verifyEpisode } from '../../services/audit/verify.js';
import type { EpisodeInput } from '../../workflows/episode.js';
import { eventually } from '../support/eventually.js';
import { database, settings, temporal } from '../support/stack.js';

const TURNS = 8;
const K = 8;
const AGENTS = 2;
const TEXT_BYTES = 160 * 1024;
/** The bound this test holds an episode's history to: 16 KiB per agent turn, whatever the texts' length. */
const HISTORY_BOUND = TURNS * AGENTS * 16 * 1024;

const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 2 });
const { client, close } = await temporal();
const db = database();
after(async () => {
  await Promise.all([pool.end(), close(), db.close()]);
});

test('the driver stores a payload once and reads it back byte for byte; a missing row names its key', async () => {
  const driver = new PostgresPayloadDriver(pool);
  const payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: new Uint8Array(Buffer.from(`payload ${Date.now()} `.repeat(1000))) };
  const [claim] = await driver.store({}, [payload]);
  const [again] = await driver.store({}, [payload]);
  assert.deepEqual(again.claimData, claim.claimData, 'a retried store names the same row');
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM payloads WHERE key = $1', [claim.claimData.key]);
  assert.equal(rows[0].n, 1);
  const [back] = await driver.retrieve({}, [claim]);
  assert.deepEqual(Buffer.from(back.data!), Buffer.from(payload.data));
  assert.deepEqual(Buffer.from(back.metadata!.encoding!), Buffer.from(payload.metadata.encoding));
  await assert.rejects(driver.retrieve({}, [new StorageDriverClaim({ key: 'f'.repeat(64) })]), /payload f{64} is named in workflow history but not in table payloads/);
});

/** Every payload (an object with `data` bytes) in a fetched history, with its encoded size. */
function payloadSizes(node: unknown, out: number[] = []): number[] {
  if (node === null || typeof node !== 'object') return out;
  if (node instanceof Uint8Array) return out;
  const o = node as Record<string, unknown>;
  if (o.data instanceof Uint8Array && 'metadata' in o) {
    const meta = Object.values((o.metadata ?? {}) as Record<string, Uint8Array>).reduce((n, v) => n + v.length, 0);
    out.push(o.data.length + meta);
    return out;
  }
  for (const v of Object.values(o)) payloadSizes(v, out);
  return out;
}

describeLongEpisode();

function describeLongEpisode() {
  const queue = `tandem-test-bulk-${process.pid}`;
  let worker: Worker;
  let running: Promise<void>;
  let connection: NativeConnection;
  let texts = 0;

  before(async () => {
    connection = await NativeConnection.connect({ address: settings.temporalAddress });
    worker = await Worker.create({
      connection,
      namespace: settings.namespace,
      taskQueue: queue,
      dataConverter: tandemDataConverter(settings.databaseUrl),
      activities: {
        // A stand-in for the policy worker's agentTurn: K long texts, each its own.
        async agentTurn(input: AgentTurnInput): Promise<CandidateText[]> {
          return Array.from({ length: input.k }, (_, i) => {
            const head = `${input.agent} turn ${input.turn} candidate ${i}: `;
            const text = head + 'I move up, then left, then think again. '.repeat(Math.ceil(TEXT_BYTES / 40)).slice(0, TEXT_BYTES - head.length);
            texts += text.length;
            return { sampleId: sampleIdOf(input.episodeId, input.turn, input.agent, i, 1), text, finishReason: 'length', responseTokens: 40_000 };
          });
        },
      },
    });
    running = worker.run();
  });
  after(async () => {
    worker.shutdown();
    await running;
    await connection.close();
  });

  test(`an episode with 20 MB of candidate texts completes with its history under ${HISTORY_BOUND / 1024} KiB`, async () => {
    const loaded = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [`placement.shared_model.task_queue=${queue}`, `env.max_turns=${TURNS}`]);
    assert.ok(loaded.ok);
    const runId = `bulk-${Date.now()}`;
    const episodeId = `${runId}/it0/ep0`;
    const input: EpisodeInput = { runId, iteration: 0, episodeId, problemSeed: 7, phase: 'eval', candidates: K, config: loaded.config, versions: { shared_model: 0 } };
    const handle = await client.workflow.start('episode', { taskQueue: CPU_QUEUE, workflowId: episodeId, args: [input] });
    const summary = (await handle.result()) as { turns: number };
    assert.equal(summary.turns, TURNS, 'the texts solve nothing: every turn is played');
    assert.equal(texts, TURNS * AGENTS * K * TEXT_BYTES, 'every candidate was generated once (no retried turn)');
    assert.ok(texts >= 20e6, `${texts} bytes of texts`);

    const { historySize, historyLength } = await handle.describe();
    console.log(`episode of ${texts} bytes of candidate texts: history of ${historyLength} events, ${historySize} bytes`);
    assert.ok(historySize !== undefined && historySize < HISTORY_BOUND, `history of ${historyLength} events is ${historySize} bytes`);
    const history = await handle.fetchHistory();
    const sizes = payloadSizes(history);
    assert.ok(sizes.length > TURNS * AGENTS, `${sizes.length} payloads`);
    assert.ok(Math.max(...sizes) < PAYLOAD_THRESHOLD_BYTES, `largest payload in history: ${Math.max(...sizes)} bytes`);

    // The history replays against the workflow code, reading its payloads back from the store;
    // and with them put back inline (as saved fixtures are), it replays with no store at all.
    const bundle = await bundleWorkflows();
    const [replayed] = await replayHistories([{ workflowId: episodeId, history, source: 'server' }], bundle);
    assert.equal(replayed.error, undefined);
    const inlinedCount = await inlineClaims(history, settings.databaseUrl);
    assert.ok(inlinedCount >= TURNS * AGENTS, `${inlinedCount} claims put back`);
    assert.ok(payloadSizes(history).reduce((a, b) => a + b, 0) > texts, 'every text is back in the history');
    const [inlined] = await replayHistories([{ workflowId: episodeId, history, source: 'inlined' }], bundle);
    assert.equal(inlined.error, undefined);

    // The texts are stored once: as the agent turns' results (one row per turn). The episode's
    // local activities (its scoring, fed the candidates' texts, and its closing, fed every sample
    // and event) get them again as arguments, which never leave the worker and are not stored.
    const { rows: stored } = await pool.query('SELECT count(*)::int AS n, coalesce(sum(bytes), 0)::bigint AS bytes FROM payloads WHERE workflow_id = $1', [episodeId]);
    assert.equal(stored[0].n, TURNS * AGENTS, `${stored[0].n} payloads of ${stored[0].bytes} bytes stored for the episode`);
    assert.ok(Number(stored[0].bytes) < texts * 1.1, `${stored[0].bytes} bytes stored for ${texts} bytes of texts`);

    // The audit reads the content back: every text, whole, from the event store.
    const inEvents = await eventually(`the episode's ${TURNS * AGENTS * K} scored samples in the event store`, async () => {
      const { rows } = await pool.query(
        `SELECT coalesce(sum(length(s->>'text')), 0)::bigint AS chars, count(*)::int AS n
           FROM events, jsonb_array_elements(data->'samples') s
          WHERE stream = $1 AND type = 'TurnGroupScored'`,
        [`episode:${episodeId}`],
      );
      return rows[0].n === TURNS * AGENTS * K ? Number(rows[0].chars) : undefined;
    }, 120_000);
    assert.equal(inEvents, texts);
    const verdict = await verifyEpisode(db.db, episodeId);
    assert.deepEqual(verdict.problems, []);
    assert.equal(verdict.steps, TURNS * AGENTS);
  });
}
