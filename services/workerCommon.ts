// What Tandem's worker processes share: the Temporal connection, a worker's standard options,
// command-line options, the metrics endpoint.
import type { Server } from 'node:http';
import { NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Registry } from 'prom-client';
import { stackSettings } from '../infra/settings.js';
import { tandemDataConverter } from '../infra/temporal/payloadStore.js';
import { heartbeatWhileRunning } from './heartbeat.js';
import { serveMetrics } from './metrics/server.js';

export async function connectTemporal(): Promise<NativeConnection> {
  const s = stackSettings();
  return NativeConnection.connect({ address: s.temporalAddress, ...(s.temporalApiKey ? { apiKey: s.temporalApiKey, tls: true } : {}) });
}

/**
 * What every worker on `taskQueue` is created with: the stack's namespace, the data converter
 * whose payloads over 4 KiB live in Postgres (every worker must read them), and the interceptor
 * that heartbeats its running activities.
 */
export function workerOptions(connection: NativeConnection, taskQueue: string): Pick<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'dataConverter' | 'interceptors'> {
  const s = stackSettings();
  return { connection, namespace: s.namespace, taskQueue, dataConverter: tandemDataConverter(s.databaseUrl), interceptors: { activity: [heartbeatWhileRunning] } };
}

/** Every value of a repeatable `--name value` option. */
export function options(argv: string[], name: string): string[] {
  return argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] !== undefined ? [argv[i + 1]] : []));
}

/** The last value of `--name value`, or the fallback. */
export function option(argv: string[], name: string, fallback: string): string {
  return options(argv, name).pop() ?? fallback;
}

/** `--name PORT` as a TCP port, or the fallback; a bad value stops the worker naming the option. */
export function portOption(argv: string[], name: string, fallback: number): number {
  const value = option(argv, name, String(fallback));
  const port = Number(value);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--${name} ${value} is not a TCP port`);
  return port;
}

/** Serves the worker's metrics; a port already in use stops the worker with the port in the error. */
export async function startMetricsEndpoint(port: number, registry: Registry): Promise<Server> {
  const server = await serveMetrics(port, registry);
  console.log(`metrics at http://127.0.0.1:${port}/metrics`);
  return server;
}
