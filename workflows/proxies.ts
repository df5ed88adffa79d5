// The activity proxies of every workflow: one set of timeouts and retries, from the run's
// recovery settings (configs/schema.ts `recovery`). Every activity heartbeats while it runs
// (services/heartbeat.ts), so a dead worker's attempt times out after heartbeat_timeout_s and is
// retried, whatever its start-to-close timeout.
import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { CpuActivities, PolicyActivities } from '../activities/index.js';
import type { RunConfig } from '../configs/schema.js';

export type Recovery = RunConfig['recovery'];

/** What a config recorded before the recovery settings existed had: these values, fixed then. */
export const RECOVERY_DEFAULTS: Recovery = { heartbeat_timeout_s: 30, retry_initial_interval_s: 1, retry_max_interval_s: 30 };

/**
 * One attempt's longest run on a policy worker, where the config does not say: loading a policy's
 * version, freeing it, and the turns of episodes recorded before rollout.turn_timeout_s (their
 * inputs' configs lack it). A run's config is parsed again when its workflow replays, so its
 * updates take update.timeout_s's default: replay matches an activity by its type and id, not its
 * timeouts (test/unit/replay.unit.test.ts replays a run recorded with 30 minutes).
 */
const POLICY_TIMEOUT_S = 1800;

/** The proxies under `recovery` (absent in configs recorded before it: RECOVERY_DEFAULTS). */
export function proxiesOf(recovery: Recovery | undefined) {
  const r = recovery ?? RECOVERY_DEFAULTS;
  const retry = { initialInterval: r.retry_initial_interval_s * 1000, maximumInterval: r.retry_max_interval_s * 1000, maximumAttempts: 20 };
  const common: ActivityOptions = { heartbeatTimeout: r.heartbeat_timeout_s * 1000, retry };
  return {
    /** The CPU worker's activities: env resets, scripted turns, publishing. */
    cpu: proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '2 minutes' }),
    /** Scoring runs the candidates' programs, which may queue for the worker's sandbox slots. */
    scoring: proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '15 minutes' }),
    /**
     * The same scoring as a local activity: run by the worker that runs the episode's workflow
     * task, in that task, without a round trip through the server's task queue (bench/RESULTS.md,
     * "rollout": the round trips between two turns left the engine idle). A worker that dies
     * mid-scoring fails its workflow task, and the next one scores again.
     */
    localScoring: proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '15 minutes', retry }),
    /**
     * The episodes' opening (their EpisodeStarted events and env resets, in the workflow task of
     * the parent that starts them: openings.ts) and an episode's closing (its samples and events
     * to Kafka, in its last workflow task) as local activities: the first turn is scheduled, and
     * the episode ends, without a task queue round trip.
     */
    localCpu: proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '2 minutes', retry }),
    /**
     * The activities of the policy worker serving `taskQueue`: generation, updates, loading.
     * `timeoutS`: one attempt's longest run (rollout.turn_timeout_s for turns, update.timeout_s for updates).
     */
    policyWorker: (taskQueue: string, timeoutS = POLICY_TIMEOUT_S) => proxyActivities<PolicyActivities>({ ...common, taskQueue, startToCloseTimeout: timeoutS * 1000 }),
    /**
     * An engine's part in a collective: a replica's in a data-parallel update, or the trainer's or a
     * rollout engine's in a broadcast of weights. One attempt only, since the others wait for every
     * part: a step over replicas is retried as a whole, with a new rendezvous group, and a failed
     * broadcast falls back to the file (workflows/updates.ts).
     */
    replica: (taskQueue: string, timeoutS = POLICY_TIMEOUT_S) =>
      proxyActivities<PolicyActivities>({ ...common, taskQueue, startToCloseTimeout: timeoutS * 1000, retry: { maximumAttempts: 1 } }),
    /** The longest wait between two tries of a step over replicas. */
    maxBackoffS: r.retry_max_interval_s,
  };
}
