// One policy's update of one iteration: on its policy worker, or, for a policy with replicas
// (placement.<base>.replicas > 1), as one data-parallel step over all of them. Each replica's
// activity runs once per attempt on its own update queue (policy/spec.ts replicaQueue); if any fails,
// the others are cancelled and the step is tried again as a whole, under a new rendezvous group,
// so that no replica ever meets a member of an earlier attempt. The engines write the checkpoint
// only once all replicas have stepped (tandem_engine/replicas.py), and an update is idempotent by
// version, so a step that did get through before a failure is replayed, not repeated.
// A policy with rollout engines (placement.<base>.rollout) then has the new version installed on each
// of them (syncRollouts: by file, or by broadcast from the trainer's engine) before the run hands it to any turn.
import { ActivityFailure, ApplicationFailure, CancellationScope, patched, sleep, workflowInfo } from '@temporalio/workflow';
import type { SyncResult } from '../activities/policy.js';
import type { RolloutSync } from '../domain/events.js';
import type { UpdateInput, UpdateSummary } from '../activities/updatePolicy.js';
import type { PolicyRef } from '../policy/ref.js';
import { replicaQueue, rolloutQueues, type PolicySpec } from '../policy/spec.js';
import type { proxiesOf } from './proxies.js';

/** Attempts of a step over replicas. */
const MAX_ATTEMPTS = 20;

/** `proxies`: the run's (proxiesOf its recovery settings). */
export async function updatePolicyOf(p: PolicySpec, input: Omit<UpdateInput, 'replica'>, proxies: ReturnType<typeof proxiesOf>): Promise<UpdateSummary> {
  const world = p.replicas?.count ?? 1;
  if (world === 1) return proxies.policyWorker(p.taskQueue, input.update.timeout_s).updatePolicy(input);
  for (let attempt = 1; ; attempt++) {
    // (The workflow run's id too: a run that continued as new asks again for a step its predecessor
    // may still be taking, and the two must not meet.)
    const run = patched('replica-groups-name-the-workflow-run') ? `${workflowInfo().runId}/` : '';
    const group = `${input.policy.runId}/${p.name}/v${input.fromVersion}/${run}attempt-${attempt}`;
    const scope = new CancellationScope();
    try {
      const results = await scope.run(() =>
        Promise.all(Array.from({ length: world }, (_, rank) =>
          proxies.replica(replicaQueue(p.taskQueue, rank), input.update.timeout_s).updatePolicy({ ...input, replica: { rank, world, group } }))),
      );
      return results[0];
    } catch (err) {
      scope.cancel(); // the other replicas' parts of this attempt
      if (attempt >= MAX_ATTEMPTS || !retryable(err)) throw err;
      await sleep(Math.min(2 ** (attempt - 1), proxies.maxBackoffS) * 1000);
    }
  }
}

/**
 * Installs `version` on every rollout engine of the policy (none when colocated), and waits for all:
 * by broadcast from the trainer's engine (placement.<base>.rollout.weights), else, or when the round
 * fails, each from the checkpoint on its own queue. A sync is idempotent by version, so its retries
 * (an engine that died mid-sync, or restarted and loaded a newer checkpoint) do no harm. `load`: the
 * engines load the policy now (the run's start), by file: a load (a large model from disk) can take
 * longer than a round's join timeout would wait for it.
 */
export async function syncRollouts(p: PolicySpec, policy: PolicyRef, version: number, proxies: ReturnType<typeof proxiesOf>, load = false): Promise<RolloutSync | null> {
  const queues = rolloutQueues(p);
  if (queues.length === 0) return null;
  let fallback: string | undefined;
  if (p.rollout?.broadcast && !load) {
    try {
      return { engines: queues.length, seconds: await broadcastRound(p, policy, version, queues, proxies), by: 'broadcast' };
    } catch (err) {
      fallback = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    }
  }
  const results: SyncResult[] = await Promise.all(queues.map((q) => proxies.policyWorker(q).syncPolicy({ policy, version })));
  return { engines: queues.length, seconds: Math.max(...results.map((r) => r.seconds ?? 0)), by: 'file', ...(fallback ? { fallback } : {}) };
}

/**
 * One round of a broadcast: the trainer's engine (replica 0's with replicas) publishes as rank 0 while
 * each rollout engine receives as rank 1..N, each part one attempt (the others' collectives wait for
 * every rank: a part alone cannot be retried), in a group named for this workflow run and version. A
 * part that fails ends the others' (their collectives fail once it leaves); the others are cancelled.
 * -> the round's seconds on the trainer's engine.
 */
async function broadcastRound(p: PolicySpec, policy: PolicyRef, version: number, queues: string[], proxies: ReturnType<typeof proxiesOf>): Promise<number> {
  const { joinTimeoutS, timeoutS } = p.rollout!.broadcast!;
  const round = { world: queues.length + 1, group: `${policy.runId}/${p.name}/v${version}/${workflowInfo().runId}/weights` };
  const trainer = (p.replicas?.count ?? 1) > 1 ? replicaQueue(p.taskQueue, 0) : p.taskQueue;
  const scope = new CancellationScope();
  try {
    const [published] = await scope.run(() =>
      Promise.all([
        proxies.replica(trainer, joinTimeoutS + timeoutS).publishPolicy({ policy, version, round }),
        ...queues.map((q, i) => proxies.replica(q, joinTimeoutS + timeoutS).syncPolicy({ policy, version, round: { ...round, rank: i + 1 } })),
      ]),
    );
    return published.seconds;
  } catch (err) {
    scope.cancel();
    throw err;
  }
}

function retryable(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return !(cause instanceof ApplicationFailure && cause.nonRetryable);
}
