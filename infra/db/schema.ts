// Postgres schema (drizzle): the append-only event table and the read models projected from it.
// Migrations in infra/db/migrations are generated from this file by `npm run db:generate`.
import { bigserial, boolean, customType, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

/** Every domain event, in global order; `event_id` makes re-delivered events no-ops. */
export const events = pgTable('events', {
  globalPosition: bigserial('global_position', { mode: 'number' }).primaryKey(),
  eventId: text('event_id').notNull().unique(),
  stream: text('stream').notNull(),
  position: integer('position').notNull(),
  type: text('type').notNull(),
  data: jsonb('data').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
  /**
   * Hash chain per stream: sha256(hash of the stream's previous event || canonical JSON of
   * (stream, position, type, data)), hex (services/eventStore/hashChain.ts). Null on rows
   * recorded before the chain existed.
   */
  hash: text('hash'),
}, (t) => [unique('events_stream_position').on(t.stream, t.position)]);

/** The head of every stream: its last position and hash. Makes a deleted last event detectable. */
export const streams = pgTable('streams', {
  stream: text('stream').primaryKey(),
  position: integer('position').notNull(),
  hash: text('hash'),
});

export const runs = pgTable('runs', {
  runId: text('run_id').primaryKey(),
  config: jsonb('config').notNull(),
  status: text('status').notNull(),
  totalIterations: integer('total_iterations').notNull(),
  iterationsDone: integer('iterations_done').notNull().default(0),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
});

export const episodes = pgTable('episodes', {
  episodeId: text('episode_id').primaryKey(),
  runId: text('run_id').notNull(),
  iteration: integer('iteration').notNull(),
  problemSeed: integer('problem_seed').notNull(),
  /** train, or eval: an evaluation episode, never trained on. */
  phase: text('phase').notNull().default('train'),
  status: text('status').notNull(),
  success: boolean('success'),
  turns: integer('turns'),
  rewardByAgent: jsonb('reward_by_agent'),
}, (t) => [index('episodes_run').on(t.runId, t.iteration)]);

export const turnGroups = pgTable('turn_groups', {
  episodeId: text('episode_id').notNull(),
  turn: integer('turn').notNull(),
  agent: text('agent').notNull(),
  runId: text('run_id').notNull(),
  iteration: integer('iteration').notNull(),
  groupKey: text('group_key').notNull(),
  policy: text('policy').notNull(),
  policyVersion: integer('policy_version').notNull(),
  samples: jsonb('samples').notNull(),
  chosen: integer('chosen').notNull(),
  /** The event's position in its episode stream: the order of the groups within a turn. */
  position: integer('position'),
  /** Audit content (null on older events): the state the candidates acted from, the handoff, the prompt. */
  state: jsonb('state'),
  handoff: jsonb('handoff'),
  prompt: jsonb('prompt'),
}, (t) => [primaryKey({ columns: [t.episodeId, t.turn, t.agent] })]);

/** One row per sample (candidate), with the advantage and the update that consumed it once it has. */
export const samples = pgTable('samples', {
  sampleId: text('sample_id').primaryKey(),
  runId: text('run_id').notNull(),
  iteration: integer('iteration').notNull(),
  episodeId: text('episode_id').notNull(),
  turn: integer('turn').notNull(),
  agent: text('agent').notNull(),
  groupKey: text('group_key').notNull(),
  policy: text('policy').notNull(),
  policyVersion: integer('policy_version').notNull(),
  candidate: integer('candidate').notNull(),
  local: doublePrecision('local').notNull(),
  global: doublePrecision('global').notNull(),
  /** The mixed reward, local + alpha * global. */
  reward: doublePrecision('reward').notNull(),
  chosen: boolean('chosen').notNull(),
  /** From SamplesConsumed: null until an update has consumed the sample (never, for scripted players). */
  advantage: doublePrecision('advantage'),
  consumedFromVersion: integer('consumed_from_version'),
  consumedToVersion: integer('consumed_to_version'),
}, (t) => [index('samples_episode').on(t.episodeId), index('samples_run').on(t.runId, t.iteration)]);

export const updates = pgTable('updates', {
  runId: text('run_id').notNull(),
  policy: text('policy').notNull(),
  iteration: integer('iteration').notNull(),
  fromVersion: integer('from_version').notNull(),
  toVersion: integer('to_version').notNull(),
  samples: integer('samples').notNull(),
  groups: integer('groups').notNull(),
  loss: doublePrecision('loss'),
  metrics: jsonb('metrics').notNull(),
}, (t) => [primaryKey({ columns: [t.runId, t.policy, t.iteration] })]);

export const checkpoints = pgTable('checkpoints', {
  runId: text('run_id').notNull(),
  policy: text('policy').notNull(),
  version: integer('version').notNull(),
  iteration: integer('iteration').notNull(),
  path: text('path').notNull(),
  /** Removed from disk by the run's retention (checkpoints.keep_last, keep_every). */
  pruned: boolean('pruned').notNull().default(false),
}, (t) => [primaryKey({ columns: [t.runId, t.policy, t.version] })]);

export const iterations = pgTable('iterations', {
  runId: text('run_id').notNull(),
  iteration: integer('iteration').notNull(),
  episodes: integer('episodes').notNull(),
  successRate: doublePrecision('success_rate').notNull(),
  rewardByAgent: jsonb('reward_by_agent').notNull(),
}, (t) => [primaryKey({ columns: [t.runId, t.iteration] })]);

/** One row per evaluation (EvaluationFinished): held-out success and rewards of the policies at some point of a run. */
export const evaluations = pgTable('evaluations', {
  evalId: text('eval_id').primaryKey(),
  runId: text('run_id').notNull(),
  /** Training iterations done before it (0: before training); null for an evaluation on demand. */
  iteration: integer('iteration'),
  versions: jsonb('versions').notNull(),
  episodes: integer('episodes').notNull(),
  successRate: doublePrecision('success_rate').notNull(),
  meanTurns: doublePrecision('mean_turns').notNull(),
  rewardByAgent: jsonb('reward_by_agent').notNull(),
  /** Per agent, the mean reward at each turn (null: the agent never acted at that turn). */
  rewardByAgentTurn: jsonb('reward_by_agent_turn').notNull(),
}, (t) => [index('evaluations_run').on(t.runId)]);

/**
 * Temporal payloads kept out of workflow history (infra/temporal/payloadStore.ts): written once,
 * by content hash, before the history event that names them; read back by workers, clients and
 * replay. Kept as long as the events (the audit replays the histories that name them).
 */
export const payloads = pgTable('payloads', {
  key: text('key').primaryKey(),
  metadata: jsonb('metadata').notNull(),
  data: bytea('data').notNull(),
  bytes: integer('bytes').notNull(),
  /** The workflow that stored it first (null: a client or an activity). */
  workflowId: text('workflow_id'),
  storedAt: timestamp('stored_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [index('payloads_workflow').on(t.workflowId)]);
