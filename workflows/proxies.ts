// The activity proxies of every workflow: one set of timeouts and retries.
// Every activity heartbeats while it runs (services/heartbeat.ts), so a dead worker's attempt
// times out after heartbeatTimeout and is retried, whatever its start-to-close timeout.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { CpuActivities, PolicyActivities } from '../activities/index.js';

const common: ActivityOptions = {
  heartbeatTimeout: '30 seconds',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 20 },
};

/** The CPU worker's activities: env resets, scripted turns, publishing. */
export const cpu = proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '2 minutes' });

/** Scoring runs the candidates' programs, which may queue for the worker's sandbox slots. */
export const scoring = proxyActivities<CpuActivities>({ ...common, startToCloseTimeout: '15 minutes' });

/** The activities of the policy worker serving `taskQueue`: generation, updates, loading. */
export function policyActivities(taskQueue: string) {
  return proxyActivities<PolicyActivities>({ ...common, taskQueue, startToCloseTimeout: '30 minutes' });
}
