// Fault injection on the test stack: kill -9 a service, bring it back with `stack up <service>`,
// and wait out outages. Every random choice comes from one seeded generator whose seed is
// printed, so a failing schedule can be replayed with TANDEM_FAULT_SEED=<seed>.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { loadRunConfig } from '../../configs/load.js';
import type { RunConfig } from '../../configs/schema.js';
import { mulberry32 } from '../../envs/shared/rng.js';
import { stackSettings } from '../../infra/settings.js';
import { lastLines, stackUp } from '../../infra/stack.js';
import { alive, childPids } from './hostProcesses.js';
import { servicePid } from './processes.js';

/** What a fault test can kill: the stack's services, plus the engine inside the policy worker. */
export type FaultTarget = 'cpu-worker' | 'policy-worker' | 'engine' | 'projector' | 'kafka' | 'temporal' | 'postgres';

/**
 * The fault tests' recovery settings (configs/schema.ts `recovery`): a dead worker's attempt is
 * noticed after 10 s of missed heartbeats instead of 30, and retries wait at most 5 s instead of
 * 30, so that each kill costs the test seconds, not a minute.
 */
export const FAST_RECOVERY = ['recovery.heartbeat_timeout_s=10', 'recovery.retry_max_interval_s=5'];
export const FAST_HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * The run the fault and resume tests play under their outages: Plan-Path L1, 2 problems x 2
 * samples an iteration, two turns of 24-token responses, FAST_RECOVERY; strictly on-policy at
 * staleness 0, else asynchronous (rollout.max_staleness, its behaviour weights capped at 2, four PPO epochs).
 */
export function outageRunConfig(iterations: number, staleness: number): RunConfig {
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', [
    `training.total_training_steps=${iterations}`,
    'training.train_batch_size=2',
    'training.train_sample_num=2',
    'training.max_response_length=24',
    'env.max_turns=2',
    ...FAST_RECOVERY,
    // Asynchronous: four PPO epochs make each update (about 1 s of this model's at one epoch) outlast
    // the next iteration's opening on a loaded machine, so that its turns play beside the update and
    // samples one version old are trained (the tests require some): at one epoch, beside a test lane,
    // a whole run opened each next iteration after the update had ended (all samples of age 0).
    ...(staleness > 0 ? [`rollout.max_staleness=${staleness}`, 'update.behaviour_weight_cap=2', 'update.ppo_epochs=4'] : []),
  ]);
  assert.ok(cfg.ok);
  return cfg.config;
}

/** A small seeded generator of floats in [0, 1): the environments' own mulberry32. */
export const seededRandom = mulberry32;

/** The seed: TANDEM_FAULT_SEED if set (to replay a failure), else a fresh one. */
export function faultSeed(): number {
  const fixed = process.env.TANDEM_FAULT_SEED;
  if (fixed !== undefined && fixed !== '') {
    const n = Number(fixed);
    if (!Number.isInteger(n)) throw new Error(`TANDEM_FAULT_SEED=${fixed} is not an integer`);
    return n;
  }
  return Math.floor(Math.random() * 2 ** 31);
}

export function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function pidOf(target: FaultTarget): number {
  if (target !== 'engine') return servicePid(target);
  const [engine] = childPids(servicePid('policy-worker'), 'engine.py');
  if (!engine) throw new Error('the policy worker has no engine process to kill');
  return engine;
}

/** kill -9 the target's process and wait until it is gone; returns its pid. */
export async function kill9(target: FaultTarget): Promise<number> {
  const pid = pidOf(target);
  process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + 30_000;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`${target} (pid ${pid}) survived SIGKILL for 30s`);
    await sleep(100);
  }
  return pid;
}

/** Starts the target again (the engine needs nothing: the policy worker starts a fresh one). */
export async function restart(target: FaultTarget, say: (line: string) => void): Promise<void> {
  if (target === 'engine') return;
  await stackUp({ only: [target], say });
}

/**
 * A workflow's result, waited for across Temporal outages: a call that fails because the
 * server is down (or restarting) is repeated until the deadline.
 */
export async function resultAcrossOutages<T>(handle: WorkflowHandle<(...args: any[]) => Promise<T>>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await handle.result();
    } catch (err) {
      const name = (err as Error).name;
      // The run itself failed: report it as it is.
      if (name === 'WorkflowFailedError' || Date.now() > deadline) throw err;
      await sleep(2_000);
    }
  }
}

/**
 * Why a run shows no progress, for a failure message: its status, the workflow task pending and
 * its attempt, the activities and children pending (with their last failures), the last failed or
 * timed-out workflow task in its history, and the last error its progress query gave.
 */
export async function whyStuck(handle: WorkflowHandle, queryError: unknown): Promise<string> {
  const lines = [`progress query: ${queryError === undefined ? 'answered' : String((queryError as Error)?.message ?? queryError)}`];
  try {
    const d = await handle.describe();
    lines.push(`status ${d.status.name}, history length ${d.historyLength}`);
    const task = d.raw.pendingWorkflowTask;
    if (task) lines.push(`workflow task pending: ${task.state} attempt ${task.attempt}`);
    for (const a of d.raw.pendingActivities ?? []) {
      lines.push(`activity pending: ${a.activityType?.name} ${a.state} attempt ${a.attempt}${a.lastFailure?.message ? `, last failure: ${a.lastFailure.message}` : ''}`);
    }
    for (const c of d.raw.pendingChildren ?? []) lines.push(`child pending: ${c.workflowId}`);
    const events = (await handle.fetchHistory()).events ?? [];
    const failed = events.filter((e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes);
    const last = failed.at(-1);
    if (last) {
      const f = last.workflowTaskFailedEventAttributes;
      lines.push(`${failed.length} workflow tasks failed or timed out; the last (event ${last.eventId}): ${f ? `cause ${f.cause}: ${f.failure?.message ?? ''}`.slice(0, 1500) : 'timed out'}`);
    }
  } catch (err) {
    lines.push(`describe failed: ${String(err)}`);
  }
  // The workers' last words (CI keeps only what the test prints), without Kafka's reconnect noise.
  const noise = /"logger":"kafkajs".*"message":"\[(Connection|BrokerPool)\]/;
  for (const svc of ['cpu-worker', 'policy-worker']) {
    const log = await readFile(join(stackSettings().dataDir, 'logs', `${svc}.log`), 'utf8').catch(() => '');
    const text = log.split('\n').filter((l) => !noise.test(l)).join('\n');
    lines.push(`${svc}.log, its last lines:`, ...lastLines(text, 30).split('\n').map((l) => `  | ${l.slice(0, 400)}`));
  }
  return lines.join('\n  ');
}
