// Wraps a worker's activity functions so that each call is counted (started, completed, failed)
// and timed, by activity type.
import type { WorkerMetrics } from './workerMetrics.js';

type ActivityFn = (...args: any[]) => Promise<unknown>;

export function instrumentActivities<A extends Record<string, ActivityFn>>(activities: A, metrics: WorkerMetrics): A {
  const wrapped = Object.entries(activities).map(([activity, fn]) => {
    const metered = async (...args: unknown[]) => {
      metrics.activitiesStarted.inc({ activity });
      const stop = metrics.activityDuration.startTimer({ activity });
      try {
        const result = await fn(...args);
        metrics.activitiesCompleted.inc({ activity });
        stop({ outcome: 'completed' });
        return result;
      } catch (err) {
        metrics.activitiesFailed.inc({ activity });
        stop({ outcome: 'failed' });
        throw err;
      }
    };
    return [activity, metered];
  });
  return Object.fromEntries(wrapped) as A;
}
