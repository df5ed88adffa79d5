// The same rollout work through the stack: a one-iteration training run on the stack that the
// TANDEM_* settings point at. Measured over the rollout phase only, from the iteration's first
// episode's start to its last episode's end (the run loads its policies before, and updates
// after): generated tokens (the policy worker's metrics), the engine's busy time (prefilling and
// decoding), each process's CPU seconds (/proc), and from the episodes' histories the
// orchestration latency per agent turn.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { RunConfig } from '../../configs/schema.js';
import { episodeIdOf } from '../../domain/ids.js';
import { CPU_QUEUE, stackSettings } from '../../infra/settings.js';
import { fetchRecorded } from '../../infra/temporal/histories.js';
import { progressQuery } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import type { RolloutFigures } from './direct.js';

export interface StackFigures extends RolloutFigures {
  /** CPU seconds of each stack process during the rollout. */
  cpuSeconds: Record<string, number>;
  /** Per agent turn: scheduled -> started on the policy worker; the previous turn's result -> its start, the scoring between included. */
  dispatchMs: number[];
  betweenTurnsMs: number[];
  /** Mean run time of one scoring (the CPU worker's metrics). */
  scoringMs: number;
}

const TICKS = 100; // clock ticks per second (USER_HZ)

/** utime + stime of a pid, in seconds; 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** The stack's processes by name (their pid files), plus the engine (the policy worker's child). */
function stackProcesses(): Record<string, number> {
  const runDir = join(stackSettings().dataDir, 'run');
  const pids: Record<string, number> = {};
  for (const f of readdirSync(runDir).filter((n) => n.endsWith('.pid'))) pids[f.slice(0, -4)] = Number(readFileSync(join(runDir, f), 'utf8'));
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const ppid = Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (ppid === pids['policy-worker']) pids.engine = Number(p);
    } catch {
      // gone
    }
  }
  return pids;
}

/** A counter or a histogram's _sum from a worker's /metrics, summed over labels matching `match`. */
async function metric(name: string, match = '', port = stackSettings().policyWorkerMetricsPort): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name) && (l[name.length] === ' ' || l[name.length] === '{') && l.includes(match))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** The CPU worker's scoring: seconds and calls so far. */
async function scoringSoFar(): Promise<{ seconds: number; calls: number }> {
  const port = stackSettings().cpuWorkerMetricsPort;
  const match = 'activity="scoreCandidates",outcome="completed"';
  return { seconds: await metric('tandem_activity_duration_seconds_sum', match, port), calls: await metric('tandem_activity_duration_seconds_count', match, port) };
}

/**
 * Orchestration latency per agent turn, from one episode's history: scheduled -> started, and
 * from the previous turn's result to its start (the scoring between them included: a local
 * activity's marker carries no timings).
 */
function latencies(events: any[]): { dispatch: number[]; between: number[] } {
  const scheduled = new Map<string, { type: string; at: number; started?: number; completed?: number }>();
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType.name, at: ms(e.eventTime) });
    const started = e.activityTaskStartedEventAttributes;
    if (started) scheduled.get(String(started.scheduledEventId))!.started = ms(e.eventTime);
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) scheduled.get(String(completed.scheduledEventId))!.completed = ms(e.eventTime);
  }
  const acts = [...scheduled.values()];
  const dispatch: number[] = [];
  const between: number[] = [];
  let last: (typeof acts)[number] | undefined;
  for (const a of acts) {
    if (a.type !== 'agentTurn' || !a.started) continue;
    dispatch.push(a.started - a.at);
    if (last?.completed) between.push(a.started - last.completed);
    last = a;
  }
  return { dispatch, between };
}

export async function rolloutThroughStack(client: Client, cfg: RunConfig, runId: string): Promise<StackFigures> {
  const episodes = cfg.algorithm === 'at_grpo' ? cfg.training.train_batch_size : cfg.training.train_batch_size * cfg.training.train_sample_num;
  const pids = stackProcesses();
  const cpu = () => Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, cpuOf(p)]));
  const tokens0 = await metric('tandem_generated_tokens_total');
  const engine0 = await metric('tandem_engine_busy_seconds'); // loading a policy is not busy time
  const scoring0 = await scoringSoFar();
  const handle = await client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg }] });
  // The CPU seconds count from the first episode on (the run's start loads the policies first).
  let cpu0: Record<string, number> | undefined;
  for (;;) {
    const p = await handle.query(progressQuery).catch(() => undefined);
    // A run that ended before its rollout was measured (a bad config, a worker on older code) ends the bench with its failure.
    if (!p && (await handle.describe()).status.name !== 'RUNNING') await handle.result();
    if (!cpu0 && p && (p.episodesInFlight > 0 || p.episodesDone > 0)) cpu0 = cpu();
    if (p && (p.status === 'updating' || p.iteration > 0 || (p.episodesDone >= episodes && p.episodesInFlight === 0))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const cpu1 = cpu();
  const cpuSeconds = Object.fromEntries(Object.entries(cpu1).map(([n, s]) => [n, s - (cpu0 ?? cpu1)[n]]));
  const generatedTokens = (await metric('tandem_generated_tokens_total')) - tokens0;
  const engineSeconds = (await metric('tandem_engine_busy_seconds')) - engine0;
  const scoring1 = await scoringSoFar();
  const scoringMs = (1000 * (scoring1.seconds - scoring0.seconds)) / Math.max(1, scoring1.calls - scoring0.calls);
  await handle.result();
  const dispatchMs: number[] = [];
  const betweenTurnsMs: number[] = [];
  let turns = 0;
  let first = Infinity;
  let last = -Infinity;
  for (let j = 0; j < episodes; j++) {
    const events = (await fetchRecorded(client, episodeIdOf(runId, 0, j))).history.events ?? [];
    const l = latencies(events);
    dispatchMs.push(...l.dispatch);
    betweenTurnsMs.push(...l.between);
    turns += l.dispatch.length;
    first = Math.min(first, ms(events[0]?.eventTime));
    last = Math.max(last, ms(events.at(-1)?.eventTime));
  }
  // The rollout: from the first episode's start to the last one's end (their histories' clocks).
  return { seconds: (last - first) / 1000, generatedTokens, turns, engineSeconds, cpuSeconds, dispatchMs, betweenTurnsMs, scoringMs };
}
