// A run's live updates for its page, as server-sent events: every POLL_MS the run's state
// (`state`: the progress query's status, iteration and ETA) and, when it changed, its record
// (`record`: charts, evaluations, episodes, from Postgres). The record is read again only when its
// key changes (data.ts recordKey: a few indexed reads), or every RECORD_MAX_AGE_MS whatever (rows
// the key does not count, such as samples projected after their episode's row, show by then). A
// run that Postgres does not have (yet: the projector records a run's start shortly after it
// starts) gives a `failure` event naming it, and the stream carries on, so the page fills in once
// it is there.
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordKey, runRecord, runState, type Deps } from './data.js';

const POLL_MS = 1000;
const RECORD_MAX_AGE_MS = 30_000;

/** Streams RUN_ID's updates into RES until SIGNAL aborts (the page went away, or the server closes). */
export async function streamRun(deps: Deps, runId: string, res: ServerResponse, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
  const send = (event: string, json: string) => res.write(`event: ${event}\ndata: ${json}\n\n`);
  let last: { key: string; at: number; record: Awaited<ReturnType<typeof runRecord>>; json: string } | undefined;
  while (!signal.aborted) {
    try {
      const key = await recordKey(deps.db, runId);
      let changed = false;
      if (!last || key !== last.key || Date.now() - last.at >= RECORD_MAX_AGE_MS) {
        const record = await runRecord(deps.db, runId);
        const json = JSON.stringify(record);
        changed = json !== last?.json; // a re-read after RECORD_MAX_AGE_MS usually finds the same record
        last = { key, at: Date.now(), record, json };
      }
      send('state', JSON.stringify(await runState(deps, last.record.run)));
      if (changed) send('record', last.json);
    } catch (err) {
      send('failure', JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
    }
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined); // aborted: the loop ends
  }
  res.end();
}
