// Where the local stack lives and listens. Every value can be overridden by an environment
// variable, so a second stack (the tests' own) can run beside a developer's.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_POLICY_QUEUE } from '../domain/queues.js';

export const projectRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Resolves a path from a config or the environment against the project root. */
export function projectPath(p: string): string {
  return resolve(projectRoot, p);
}

function port(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new Error(`${name}=${v} is not a TCP port`);
  return n;
}

export function stackSettings() {
  const dataDir = projectPath(process.env.TANDEM_DATA_DIR ?? '.data');
  const temporalPort = port('TANDEM_TEMPORAL_PORT', 7233);
  const kafkaPort = port('TANDEM_KAFKA_PORT', 9092);
  const pgPort = port('TANDEM_PG_PORT', 5433);
  return {
    dataDir,
    temporalPort,
    temporalUiPort: port('TANDEM_TEMPORAL_UI_PORT', 8233),
    // A Temporal cluster or Temporal Cloud instead of the local dev server (docs/DEPLOYMENT.md):
    // its address, and for Cloud an API key (which turns TLS on).
    temporalAddress: process.env.TANDEM_TEMPORAL_ADDRESS ?? `127.0.0.1:${temporalPort}`,
    temporalApiKey: process.env.TANDEM_TEMPORAL_API_KEY || undefined,
    namespace: process.env.TANDEM_NAMESPACE ?? 'default',
    kafkaPort,
    kafkaControllerPort: port('TANDEM_KAFKA_CONTROLLER_PORT', 9093),
    // A Kafka cluster instead of the local broker: comma-separated host:port.
    kafkaBrokers: (process.env.TANDEM_KAFKA_BROKERS ?? `127.0.0.1:${kafkaPort}`).split(',').filter(Boolean),
    pgPort,
    databaseUrl: process.env.TANDEM_DATABASE_URL ?? `postgres://tandem@127.0.0.1:${pgPort}/tandem`,
    /** The policy worker `stack up` starts: its task queue and device. */
    policyQueue: process.env.TANDEM_POLICY_QUEUE ?? DEFAULT_POLICY_QUEUE,
    policyDevice: process.env.TANDEM_POLICY_DEVICE ?? 'cpu',
    /** Models the policy worker checks at start (comma-separated paths). */
    policyModels: (process.env.TANDEM_POLICY_MODELS ?? '.tools/models/tandem-tiny').split(',').filter(Boolean),
    /** Each worker's Prometheus endpoint, http://127.0.0.1:<port>/metrics. */
    cpuWorkerMetricsPort: port('TANDEM_CPU_WORKER_METRICS_PORT', 9464),
    policyWorkerMetricsPort: port('TANDEM_POLICY_WORKER_METRICS_PORT', 9465),
  };
}

export type StackSettings = ReturnType<typeof stackSettings>;

// The task queues' names live in domain/queues.ts (pure, for workflow code); the CPU worker's is
// re-exported here beside the rest of the stack's settings.
export { CPU_QUEUE } from '../domain/queues.js';

/** Kafka topics. */
export const TOPICS = {
  /** Domain events, consumed by the projector into Postgres. */
  events: 'tandem.events',
  /** Token-level generation records (prompt ids, response ids, log-probs), one per candidate. */
  rollouts: 'tandem.rollouts',
  /** Scored samples (group key, reward parts), one per candidate, published by episodes. */
  trajectories: 'tandem.trajectories',
} as const;

/** The topics an update reads its iteration from. */
export const UPDATE_TOPICS: string[] = [TOPICS.trajectories, TOPICS.rollouts];

/** The projector's consumer group on the events topic (its committed offsets say how far Postgres has got). */
export const PROJECTOR_GROUP = 'tandem-projector';

/**
 * Kafka's size limit, in bytes: the broker's message.max.bytes, each topic's max.message.bytes and
 * the consumers' fetch size per partition are set to it. The broker applies it to a produce
 * request's batch per partition, so the producer (infra/kafka/client.ts) splits a send into
 * requests within it and refuses (naming the record) one record that cannot fit a request with its
 * key and framing, rather than let the broker drop it. A rollout record of 4,096 prompt and 8,192
 * response tokens packs into about 110 KB.
 */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** The line a Tandem process prints once it serves; `stack up` waits for it in the log. */
export const READY_LINE = 'tandem:ready';

/** The ready line of this process: what serves where, and its pid. */
export function readyLine(what: string): string {
  return `${READY_LINE} ${what} (pid ${process.pid})`;
}

/**
 * Whether `log` holds the ready line of process `pid`. A service's log is shared by its starts, so
 * a line another start wrote (one that lingered, say) does not count.
 */
export function readyIn(log: string, pid: number): boolean {
  return log.split('\n').some((line) => line.startsWith(READY_LINE) && line.trimEnd().endsWith(`(pid ${pid})`));
}
