// Every activity heartbeats while it runs, so that when its worker dies (kill -9, a lost host)
// Temporal notices within the workflow's heartbeatTimeout and retries it elsewhere, instead of
// waiting out a start-to-close timeout of many minutes. The activities themselves stay unaware.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** How often a running activity heartbeats, or a third of its heartbeatTimeout (recovery.heartbeat_timeout_s) when that is shorter. */
export const HEARTBEAT_EVERY_MS = 5_000;

export function heartbeatEveryMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs ? Math.min(HEARTBEAT_EVERY_MS, heartbeatTimeoutMs / 3) : HEARTBEAT_EVERY_MS;
}

export const heartbeatWhileRunning: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      // A local activity runs inside its workflow task, whose timeout watches the worker instead.
      if (ctx.info.isLocal) return next(input);
      const timer = setInterval(() => ctx.heartbeat(), heartbeatEveryMs(ctx.info.heartbeatTimeoutMs));
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
