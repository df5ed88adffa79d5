// The activity proxies of every workflow: one set of timeouts and retries.
// Every activity heartbeats while it runs (services/heartbeat.ts), so a dead worker's attempt
// times out after heartbeatTimeout and is retried, whatever its start-to-close timeout.
import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { CpuActivities, PolicyActivities } from '../activities/index.js';

const common: ActivityOptions = {
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
};

/** The CPU worker's activities: env resets, scripted turns, publishing. */
export const cpu = proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '2 minutes' });

/** Scoring runs the candidates' programs, which may queue for the worker's sandbox slots. */
export const scoring = proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '15 minutes' });

/**
 * The same scoring as a local activity: run by the worker that runs the episode's workflow task,
 * in that task, without a round trip through the server's task queue (bench/RESULTS.md,
 * "rollout": the round trips between two turns left the engine idle). A worker that dies
 * mid-scoring fails its workflow task, and the next one scores again.
 */
export const localScoring = proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '15 minutes', retry: common.retry });

/**
 * The episodes' opening (their EpisodeStarted events and env resets, in the workflow task of the
 * parent that starts them: openings.ts) and an episode's closing (its samples and events to
 * Kafka, in its last workflow task) as local activities: the first turn is scheduled, and the
 * episode ends, without a task queue round trip.
 */
export const localCpu = proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '2 minutes', retry: common.retry });

/**
 * One attempt's longest run on a policy worker, where the config does not say: loading a policy's
 * version, freeing it, and the turns of episodes recorded before rollout.turn_timeout_s (their
 * inputs' configs lack it). A run's config is parsed again when its workflow replays, so its
 * updates take update.timeout_s's default: replay matches an activity by its type and id, not its
 * timeouts (test/unit/replay.unit.test.ts replays a run recorded with 30 minutes).
 */
const POLICY_TIMEOUT_S = 1800;

/**
 * The activities of the policy worker serving `taskQueue`: generation, updates, loading.
 * `timeoutS`: one attempt's longest run (rollout.turn_timeout_s for turns, update.timeout_s for updates).
 */
export function policyActivities(taskQueue: string, timeoutS = POLICY_TIMEOUT_S) {
  return proxyActivities<PolicyActivities>({ ...common, taskQueue, startToCloseTimeout: timeoutS * 1000 });
}

/**
 * A replica's part in a data-parallel update: one attempt only, since a step over replicas is
 * retried as a whole, with a new rendezvous group (workflows/updates.ts).
 */
export function replicaActivities(taskQueue: string, timeoutS = POLICY_TIMEOUT_S) {
  return proxyActivities<PolicyActivities>({ ...common, taskQueue, startToCloseTimeout: timeoutS * 1000, retry: { maximumAttempts: 1 } });
}
