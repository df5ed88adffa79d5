// One policy's update of one iteration: on its policy worker, or, for a policy with replicas
// (placement.<base>.replicas > 1), as one data-parallel step over all of them. Each replica's
// activity runs once per attempt on its own update queue (policy/spec.ts replicaQueue); if any fails,
// the others are cancelled and the step is tried again as a whole, under a new rendezvous group,
// so that no replica ever meets a member of an earlier attempt. The engines write the checkpoint
// only once all replicas have stepped (tandem_engine/replicas.py), and an update is idempotent by
// version, so a step that did get through before a failure is replayed, not repeated.
// A policy with rollout engines (placement.<base>.rollout) then has the new version installed on each
// of them (syncRollouts) before the run hands it to any turn.
import { ActivityFailure, ApplicationFailure, CancellationScope, patched, sleep, workflowInfo } from '@temporalio/workflow';
import type { SyncResult } from '../activities/policy.js';
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
 * Installs `version` on every rollout engine of the policy (none when colocated), each on its own
 * queue, and waits for all: a sync is idempotent by version, so its retries (an engine that died
 * mid-sync, or restarted and loaded a newer checkpoint) do no harm. -> the slowest sync's seconds.
 */
export async function syncRollouts(p: PolicySpec, policy: PolicyRef, version: number, proxies: ReturnType<typeof proxiesOf>): Promise<{ engines: number; seconds: number } | null> {
  const queues = rolloutQueues(p);
  if (queues.length === 0) return null;
  const results: SyncResult[] = await Promise.all(queues.map((q) => proxies.policyWorker(q).syncPolicy({ policy, version })));
  return { engines: queues.length, seconds: Math.max(...results.map((r) => r.seconds ?? 0)) };
}

function retryable(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return !(cause instanceof ApplicationFailure && cause.nonRetryable);
}
