// The same rollout work through the stack: a one-iteration training run on the stack that the
// TANDEM_* settings point at. Measured over the rollout phase only, from the run's workflow task
// that opens the iteration's first episodes to its last episode's end (the run loads its
// policies before, and updates after): generated tokens (the policy worker's metrics), the engine's busy time (prefilling and
// decoding), each process's CPU seconds (/proc), and from the episodes' histories the
// orchestration latency per agent turn.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { RunConfig } from '../../configs/schema.js';
import { episodeIdOf } from '../../domain/ids.js';
import { CPU_QUEUE, stackSettings } from '../../infra/settings.js';
import { fetchRecorded } from '../../infra/temporal/histories.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import type { RolloutFigures } from './direct.js';
import { cpuOf, machineBusy, minus, schedOf, serverCpuOf, type Sched } from './sched.js';

export interface StackFigures extends RolloutFigures {
  /** CPU seconds of each stack process during the rollout (Postgres: with its backends). */
  cpuSeconds: Record<string, number>;
  /** Per agent turn: scheduled -> started on the policy worker. */
  dispatchMs: number[];
  /** Per workflow task of the episodes: scheduled -> started on the CPU worker. */
  workflowTaskMs: number[];
  /** Mean run time of one scoring (the CPU worker's metrics). */
  scoringMs: number;
}

/** The Node that runs the stack's CPU worker (a bench comparing Node versions must say which ran). */
export function stackNode(): string {
  const pid = stackProcesses()['cpu-worker'];
  const exe = readlinkSync(`/proc/${pid}/exe`);
  return execFileSync(exe, ['--version'], { encoding: 'utf8' }).trim();
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
 * activity's marker carries no timings); each workflow task's scheduled -> started; and the
 * episode's start -> its first turn started, and its last turn's result -> its end.
 */
function latencies(events: any[]): { dispatch: number[]; workflowTasks: number[]; between: number[]; opening?: number; closing?: number } {
  const scheduled = new Map<string, { type: string; at: number; started?: number; completed?: number }>();
  const workflowTaskScheduled = new Map<string, number>();
  const workflowTasks: number[] = [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.workflowTaskScheduledEventAttributes) workflowTaskScheduled.set(id, ms(e.eventTime));
    const taskStarted = e.workflowTaskStartedEventAttributes;
    if (taskStarted) workflowTasks.push(ms(e.eventTime) - workflowTaskScheduled.get(String(taskStarted.scheduledEventId))!);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType.name, at: ms(e.eventTime) });
    const started = e.activityTaskStartedEventAttributes;
    if (started) scheduled.get(String(started.scheduledEventId))!.started = ms(e.eventTime);
    const completed = e.activityTaskCompletedEventAttributes;
    if (completed) scheduled.get(String(completed.scheduledEventId))!.completed = ms(e.eventTime);
  }
  const turns = [...scheduled.values()].filter((a) => a.type === 'agentTurn' && a.started !== undefined);
  const dispatch = turns.map((a) => a.started! - a.at);
  const between = turns.slice(1).flatMap((a, i) => (turns[i].completed ? [a.started! - turns[i].completed!] : []));
  const [first, last] = [turns[0], turns.at(-1)];
  return {
    dispatch,
    workflowTasks,
    between,
    opening: first && first.started! - ms(events[0]?.eventTime),
    closing: last?.completed && ms(events.at(-1)?.eventTime) - last.completed,
  };
}

/** In a run's history: when the workflow task that started its first child began. */
function openingTaskStart(events: any[]): number {
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const child = events.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
  const completed = byId.get(String(child?.startChildWorkflowExecutionInitiatedEventAttributes.workflowTaskCompletedEventId));
  const started = byId.get(String(completed?.workflowTaskCompletedEventAttributes?.startedEventId));
  return started ? ms(started.eventTime) : Infinity;
}

export async function rolloutThroughStack(client: Client, cfg: RunConfig, runId: string): Promise<StackFigures> {
  const episodes = cfg.algorithm === 'at_grpo' ? cfg.training.train_batch_size : cfg.training.train_batch_size * cfg.training.train_sample_num;
  const pids = stackProcesses();
  const cpu = () => Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, n === 'postgres' ? serverCpuOf(p) : cpuOf(p)]));
  const tokens0 = await metric('tandem_generated_tokens_total');
  const engine0 = await metric('tandem_engine_busy_seconds'); // loading a policy is not busy time
  const steps0 = await metric('tandem_engine_decode_steps');
  const prefills0 = await metric('tandem_engine_prefills');
  const copies0 = await metric('tandem_engine_cache_copies');
  const scoring0 = await scoringSoFar();
  // Every 100 ms, each process's CPU seconds and the engine's scheduling, read from /proc: no
  // request to the stack while it runs (a progress query every 100 ms would itself load Temporal
  // and the CPU worker, ten times what `tandem train --wait` asks).
  const samples: { at: number; cpu: Record<string, number>; sched: Sched; busy: number }[] = [];
  const sample = () => samples.push({ at: Date.now(), cpu: cpu(), sched: schedOf(pids.engine), busy: machineBusy() });
  sample();
  const sampler = setInterval(sample, 100);
  const handle = await client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg }] });
  try {
    await handle.result(); // one iteration: the policies loaded, the rollout, the update
  } finally {
    clearInterval(sampler);
  }
  const generatedTokens = (await metric('tandem_generated_tokens_total')) - tokens0;
  const engineSeconds = (await metric('tandem_engine_busy_seconds')) - engine0;
  const engineSteps = (await metric('tandem_engine_decode_steps')) - steps0;
  const enginePrefills = (await metric('tandem_engine_prefills')) - prefills0;
  const engineCacheCopies = (await metric('tandem_engine_cache_copies')) - copies0;
  const scoring1 = await scoringSoFar();
  const scoringMs = (1000 * (scoring1.seconds - scoring0.seconds)) / Math.max(1, scoring1.calls - scoring0.calls);
  const dispatchMs: number[] = [];
  const workflowTaskMs: number[] = [];
  const betweenTurnsMs: number[] = [];
  const openingMs: number[] = [];
  const closingMs: number[] = [];
  let turns = 0;
  let first = Infinity;
  let last = -Infinity;
  for (let j = 0; j < episodes; j++) {
    const events = (await fetchRecorded(client, episodeIdOf(runId, 0, j))).history.events ?? [];
    const l = latencies(events);
    dispatchMs.push(...l.dispatch);
    workflowTaskMs.push(...l.workflowTasks);
    betweenTurnsMs.push(...l.between);
    if (l.opening !== undefined) openingMs.push(l.opening);
    if (l.closing !== undefined) closingMs.push(l.closing);
    turns += l.dispatch.length;
    first = Math.min(first, ms(events[0]?.eventTime));
    last = Math.max(last, ms(events.at(-1)?.eventTime));
  }
  // The rollout: from the start of the run's workflow task that opened and started the first
  // episodes (the opening, in it, is rollout work) to the last episode's end (the histories'
  // clocks, this machine's); the CPU figures from the samples nearest to both.
  first = Math.min(first, openingTaskStart((await fetchRecorded(client, runId)).history.events ?? []));
  const near = (t: number) => samples.reduce((best, x) => (Math.abs(x.at - t) < Math.abs(best.at - t) ? x : best));
  const [s0, s1] = [near(first), near(last)];
  const cpuSeconds = Object.fromEntries(Object.keys(pids).map((n) => [n, s1.cpu[n] - s0.cpu[n]]));
  const engineSched = minus(s1.sched, s0.sched);
  const besideEngine = s1.busy - s0.busy - engineSched.onCpu;
  return { seconds: (last - first) / 1000, generatedTokens, turns, engineSeconds, engineSteps, enginePrefills, engineCacheCopies, engineSched, besideEngine, cpuSeconds, dispatchMs, workflowTaskMs, betweenTurnsMs, openingMs, closingMs, scoringMs };
}
