// `tandem runs [--limit N] [--json]`: the recent training runs, newest first: id, config, status,
// iterations done, the last held-out success, when each started. Temporal says which runs exist
// and how each stands (a run's executions across continue-as-new are one run); the record
// (Postgres) says how far each got and what its last evaluation measured.
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { and, inArray, isNotNull } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { evaluations, runs } from '../../infra/db/schema.js';
import { positiveInteger, type Act } from './args.js';
import { withDatabase } from '../client/database.js';
import { temporalClient } from '../client/temporal.js';

export interface RunListing {
  runId: string;
  /** The config file `tandem train` was given; else what the recorded config is (env, agents, level, algorithm); null: not recorded yet. */
  config: string | null;
  /** Temporal's status of the run's latest execution, lower case: running, completed, failed, terminated, ... */
  status: string;
  iterationsDone: number | null;
  totalIterations: number | null;
  /** The last evaluation of the run's training (its held-out success after `iteration` iterations); null: none yet. */
  heldOut: { successRate: number; iteration: number } | null;
  startedAt: string;
}

export function registerRuns(program: Command, act: Act): void {
  program
    .command('runs')
    .description('the recent training runs, newest first: id, config, status, iteration, last held-out success, started')
    .option('--limit <N>', 'how many (default 20)', positiveInteger, 20)
    .option('--json', 'print them as JSON (a list of RunListing)')
    .action(act(runsCommand));
}

async function runsCommand(opts: { limit: number; json?: boolean }): Promise<number> {
  const client = await temporalClient();
  try {
    const found = await recentRuns(client, opts.limit);
    const listed = await withDatabase((db) => listings(db, found));
    if (opts.json) console.log(JSON.stringify(listed, null, 2));
    else for (const line of runsTable(listed)) console.log(line);
    return 0;
  } finally {
    await client.connection.close();
  }
}

interface FoundRun {
  runId: string;
  status: string;
  startedAt: Date;
  configFile: string | null;
}

/** The `limit` newest training runs on Temporal: each run once, its status the latest execution's, its start the first's. */
async function recentRuns(client: Client, limit: number): Promise<FoundRun[]> {
  const byId = new Map<string, FoundRun & { latest: Date }>();
  for await (const w of client.workflow.list({ query: "WorkflowType = 'trainingRun'" })) {
    const seen = byId.get(w.workflowId);
    const configFile = typeof w.memo?.config === 'string' ? w.memo.config : null;
    if (!seen) {
      byId.set(w.workflowId, { runId: w.workflowId, status: w.status.name, startedAt: w.startTime, latest: w.startTime, configFile });
      continue;
    }
    if (w.startTime > seen.latest) Object.assign(seen, { status: w.status.name, latest: w.startTime });
    if (w.startTime < seen.startedAt) Object.assign(seen, { startedAt: w.startTime, configFile: configFile ?? seen.configFile });
  }
  return [...byId.values()].sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime()).slice(0, limit);
}

/** What a recorded config is, in a few words (runs started by other means than `tandem train FILE`). */
function describeConfig(config: unknown): string | null {
  const c = config as { env?: { name?: string }; agent_policy_configs?: { agent_configs?: Record<string, unknown> }; specialization?: string; algorithm?: string } | null;
  if (!c?.env?.name) return null;
  const agents = Object.keys(c.agent_policy_configs?.agent_configs ?? {}).length;
  return `${c.env.name}, ${agents} agent${agents === 1 ? '' : 's'}, ${c.specialization ?? '?'}, ${c.algorithm ?? '?'}`;
}

async function listings(db: NodePgDatabase, found: FoundRun[]): Promise<RunListing[]> {
  const ids = found.map((r) => r.runId);
  if (ids.length === 0) return [];
  const recorded = new Map((await db.select().from(runs).where(inArray(runs.runId, ids))).map((r) => [r.runId, r]));
  const evals = await db
    .select({ runId: evaluations.runId, iteration: evaluations.iteration, successRate: evaluations.successRate })
    .from(evaluations)
    .where(and(inArray(evaluations.runId, ids), isNotNull(evaluations.iteration)));
  const last = new Map<string, { successRate: number; iteration: number }>();
  for (const e of evals) if ((last.get(e.runId)?.iteration ?? -1) < e.iteration!) last.set(e.runId, { successRate: e.successRate, iteration: e.iteration! });
  return found.map((r) => {
    const rec = recorded.get(r.runId);
    return {
      runId: r.runId,
      config: r.configFile ?? describeConfig(rec?.config),
      status: r.status.toLowerCase().replace('_', ' '),
      iterationsDone: rec?.iterationsDone ?? null,
      totalIterations: rec?.totalIterations ?? null,
      heldOut: last.get(r.runId) ?? null,
      startedAt: r.startedAt.toISOString(),
    };
  });
}

/** The listing as aligned columns under a header line. */
export function runsTable(listed: RunListing[]): string[] {
  if (listed.length === 0) return ['no training runs on this stack'];
  const rows = listed.map((r) => [
    r.runId,
    r.config ?? '-',
    r.status,
    r.iterationsDone === null ? '-' : `${r.iterationsDone}/${r.totalIterations}`,
    r.heldOut === null ? '-' : `${(100 * r.heldOut.successRate).toFixed(1)}% after ${r.heldOut.iteration}`,
    r.startedAt.slice(0, 19).replace('T', ' '),
  ]);
  const header = ['RUN', 'CONFIG', 'STATUS', 'ITERATIONS', 'HELD-OUT SUCCESS', 'STARTED (UTC)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows].map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
}
