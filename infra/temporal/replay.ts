// Replays recorded Temporal histories against workflow code: the determinism check behind
// `tandem replay` and test/unit/replay.unit.test.ts. No server is needed; the workflow code is
// bundled once and every history is fed through one replay worker.
import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { stackSettings } from '../settings.js';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';
import { tandemDataConverter } from './payloadStore.js';

/** One recorded workflow execution, as fetched from the server or read from a JSON file. */
export interface RecordedHistory {
  /** Workflows read their own id (a training run names its episodes after it), so replay needs it. */
  workflowId: string;
  history: History;
  /** Where it came from, for messages: a file path or `server`. */
  source: string;
}

export interface ReplayOutcome {
  workflowId: string;
  runId: string;
  workflowType: string;
  events: number;
  source: string;
  /** Set when the workflow code does not reproduce the history. */
  error?: { name: string; message: string };
}

/**
 * Keeps the SDK's own logs to errors: a replay that fails is reported through its outcome, and
 * SDK Core would otherwise log the same determinism error once more. The SDK shuts its runtime
 * down when its last worker stops, so this installs one before each replay worker, unless one
 * is already running.
 */
function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR' }, forward: {} } } });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

function startedAttributes(history: History) {
  const attrs = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!attrs) throw new Error('the history does not begin with a WorkflowExecutionStarted event');
  return attrs;
}

/** The workflow type recorded in a history (`trainingRun`, `episode`). */
export function workflowTypeOf(history: History): string {
  return startedAttributes(history).workflowType?.name ?? '?';
}

/**
 * Reads a history saved as JSON (`temporal workflow show --output json`, or `historyToJSON`).
 * The workflow id is the one the server recorded in the first event, unless given.
 */
export function parseHistoryJSON(text: string, source: string, workflowId?: string): RecordedHistory {
  let history: History;
  try {
    const json = JSON.parse(text);
    if (!Array.isArray(json?.events) || json.events.length === 0) throw new Error('no "events" array');
    history = historyFromJSON(json);
    startedAttributes(history);
  } catch (err) {
    throw new Error(`${source}: not a Temporal history JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const id = workflowId ?? startedAttributes(history).workflowId;
  if (!id) throw new Error(`${source}: the history does not record its workflow id; pass --workflow-id`);
  return { workflowId: id, history, source };
}

/** Replays each history against the bundled workflow code, in order; never throws for a replay failure. */
export async function replayHistories(recorded: RecordedHistory[], bundle: { code: string }): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  installQuietRuntime();
  const results = Worker.runReplayHistories(
    // Payloads kept out of history are read back from the stack's database (only when a history names one).
    { workflowBundle: bundle, replayName: 'tandem-replay', dataConverter: tandemDataConverter(stackSettings().databaseUrl) },
    recorded.map((r) => ({ workflowId: r.workflowId, history: r.history })),
  );
  // The worker replays one history at a time and yields their results in the order given.
  for await (const result of results) {
    const r = recorded[outcomes.length];
    outcomes.push({
      workflowId: r.workflowId,
      runId: result.runId,
      workflowType: workflowTypeOf(r.history),
      events: r.history.events?.length ?? 0,
      source: r.source,
      error: result.error ? { name: result.error.name, message: result.error.message } : undefined,
    });
  }
  return outcomes;
}
