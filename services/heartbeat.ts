// Every activity heartbeats while it runs, so that when its worker dies (kill -9, a lost host)
// Temporal notices within the workflow's heartbeatTimeout and retries it elsewhere, instead of
// waiting out a start-to-close timeout of many minutes. The activities themselves stay unaware.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** How often a running activity heartbeats; workflows set heartbeatTimeout to a few times this. */
export const HEARTBEAT_EVERY_MS = 5_000;

export const heartbeatWhileRunning: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      // A local activity runs inside its workflow task, whose timeout watches the worker instead.
      if (ctx.info.isLocal) return next(input);
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
