// `tandem dashboard`'s web server: plain node:http, bound to 127.0.0.1 by default. It serves the
// static pages (static/: plain HTML and a JS module each, no build step) and ECharts' browser
// build from node_modules (no CDN), and these endpoints:
//   GET  /api/runs                   the latest runs with their state (data.ts)
//   GET  /api/runs/RUN_ID/stream     the run's state and record, live (server-sent events, stream.ts)
//   POST /api/runs/RUN_ID/pause      (resume, stop) sends the run's own signal (services/client/lifecycle.ts)
//   GET  /episode?id=EPISODE_ID      the episode's page from its audit transcript (services/report/html.ts)
// It answers only requests whose Host is its own (hostsServed): a page on another site whose name
// is re-pointed at 127.0.0.1 (DNS rebinding) would otherwise be same-origin with it and could read
// every run and send signals. A lifecycle POST must also come from its own page's Origin.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { EpisodeNotFoundError, loadTranscript } from '../audit/transcript.js';
import { openDatabase } from '../client/database.js';
import { LIFECYCLE_ACTIONS, sendLifecycleSignal, type LifecycleAction } from '../client/lifecycle.js';
import { temporalClient } from '../client/temporal.js';
import { episodePage } from '../report/html.js';
import { listRuns, type Deps } from './data.js';
import { engineBusySampler } from './engineBusy.js';
import { streamRun } from './stream.js';

export const DEFAULT_PORT = 8765;

/** The header a lifecycle POST must carry (static/run.js sends it). */
const SIGNAL_HEADER = 'x-tandem-dashboard';

const STATIC: Record<string, { file: URL | string; type: string }> = {
  '/': { file: new URL('static/index.html', import.meta.url), type: 'text/html' },
  '/run.html': { file: new URL('static/run.html', import.meta.url), type: 'text/html' },
  '/runs.js': { file: new URL('static/runs.js', import.meta.url), type: 'text/javascript' },
  '/run.js': { file: new URL('static/run.js', import.meta.url), type: 'text/javascript' },
  '/page.js': { file: new URL('static/page.js', import.meta.url), type: 'text/javascript' },
  '/dashboard.css': { file: new URL('static/dashboard.css', import.meta.url), type: 'text/css' },
  '/vendor/echarts.min.js': { file: createRequire(import.meta.url).resolve('echarts/dist/echarts.min.js'), type: 'text/javascript' },
};

export interface Dashboard {
  url: string;
  close: () => Promise<void>;
}

/** An error answered with its HTTP status and message (as JSON on /api/, as text elsewhere). */
class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * The Host header values the dashboard answers: its port under each loopback name (127.0.0.1,
 * localhost, [::1]), under the address it is bound to, and under each name the user allows
 * (`tandem dashboard --allow-host NAME`). Lower case; without the port when it is 80.
 */
export function hostsServed(host: string, port: number, names: string[] = []): Set<string> {
  const bound = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host; // an IPv6 address
  const all = ['127.0.0.1', 'localhost', '[::1]', bound, ...names].map((n) => n.toLowerCase());
  return new Set(all.flatMap((n) => (port === 80 ? [n, `${n}:80`] : [`${n}:${port}`])));
}

/** Starts the server on HOST:PORT (port 0: any free port) with its own Postgres pool and Temporal client. */
export async function startDashboard({ port = DEFAULT_PORT, host = '127.0.0.1', allowHosts = [] }: { port?: number; host?: string; allowHosts?: string[] } = {}): Promise<Dashboard> {
  const database = openDatabase(4);
  const temporal = await temporalClient();
  const deps: Deps = { db: database.db, temporal, engineBusy: engineBusySampler() };
  const closing = new AbortController();
  let served = new Set<string>(); // set once the port is bound
  const server = createServer((req, res) => {
    handle(deps, served, req, res, closing.signal).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (res.headersSent) return void res.end();
      const api = req.url?.startsWith('/api/');
      res.writeHead(status, { 'content-type': api ? 'application/json' : 'text/plain; charset=utf-8' });
      res.end(api ? JSON.stringify({ error: message }) : `${message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is in use (choose another with --port N)`) : err),
    );
    server.listen(port, host, resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  served = hostsServed(host, bound, allowHosts);
  return {
    url: `http://${host}:${bound}/`,
    close: async () => {
      closing.abort(); // ends the event streams
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await Promise.all([database.close(), temporal.connection.close()]);
    },
  };
}

async function handle(deps: Deps, served: Set<string>, req: IncomingMessage, res: ServerResponse, closing: AbortSignal): Promise<void> {
  const hostHeader = (req.headers.host ?? '').toLowerCase();
  if (!served.has(hostHeader)) {
    throw new HttpError(403, `Host ${hostHeader || '(none)'} is not this dashboard's (${[...served].join(', ')}); to serve another name, start it with --allow-host NAME`);
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const page = STATIC[url.pathname];
  if (req.method === 'GET' && page) {
    res.writeHead(200, { 'content-type': `${page.type}; charset=utf-8`, 'cache-control': 'no-cache' });
    return void res.end(readFileSync(page.file));
  }
  if (req.method === 'GET' && url.pathname === '/favicon.ico') return void res.writeHead(204).end();
  if (req.method === 'GET' && url.pathname === '/api/runs') return json(res, await listRuns(deps));
  if (req.method === 'GET' && url.pathname === '/episode') {
    const id = url.searchParams.get('id');
    if (!id) throw new HttpError(400, '/episode needs ?id=EPISODE_ID');
    const t = await loadTranscript(deps.db, id).catch((err: unknown) => {
      throw err instanceof EpisodeNotFoundError ? new HttpError(404, err.message) : err;
    });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end(episodePage(t, `/run.html?id=${encodeURIComponent(t.runId)}`));
  }
  const run = /^\/api\/runs\/([^/]+)\/(stream|pause|resume|stop)$/.exec(url.pathname);
  if (run) {
    const [runId, what] = [decodeURIComponent(run[1]), run[2]];
    if (what === 'stream' && req.method === 'GET') {
      const gone = AbortSignal.any([closing, abortOnClose(req)]);
      return streamRun(deps, runId, res, gone);
    }
    if (LIFECYCLE_ACTIONS.includes(what as LifecycleAction) && req.method === 'POST') {
      // A custom header makes a browser ask first (CORS preflight, which this server never grants)
      // before another site's page could post here: only the dashboard's own page sends signals.
      if (req.headers[SIGNAL_HEADER] !== '1') throw new HttpError(403, `${url.pathname}: send it with the header ${SIGNAL_HEADER}: 1 (the dashboard's page does)`);
      if (!served.has(originHost(req.headers.origin))) throw new HttpError(403, `${url.pathname}: only the dashboard's own page may send signals (Origin ${req.headers.origin ?? 'missing'})`);
      const said = await sendLifecycleSignal(deps.temporal, runId, what as LifecycleAction).catch((err: unknown) => {
        throw new HttpError(409, err instanceof Error ? err.message : String(err));
      });
      return json(res, { message: said });
    }
    throw new HttpError(405, `${req.method} ${url.pathname}: use ${what === 'stream' ? 'GET' : 'POST'}`);
  }
  throw new HttpError(404, `no such page: ${url.pathname}`);
}

function json(res: ServerResponse, data: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(data));
}

/** The host:port of an Origin header ('' when there is none or it is not a URL). */
function originHost(origin: string | undefined): string {
  try {
    return origin ? new URL(origin).host.toLowerCase() : '';
  } catch {
    return '';
  }
}

/** Aborts when the client goes away. */
function abortOnClose(req: IncomingMessage): AbortSignal {
  const gone = new AbortController();
  req.socket.once('close', () => gone.abort());
  return gone.signal;
}
