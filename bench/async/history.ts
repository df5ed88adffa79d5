// What a training run's history says of its iterations' timing, for the async benches (run.ts,
// cpu.ts): when each iteration's episodes ran, and when each of its policy activities ran.
import type { Client } from '@temporalio/client';
import { fetchRecorded } from '../../infra/temporal/histories.js';

type Time = { seconds?: unknown; nanos?: number | null } | null | undefined;
const ms = (t: Time) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/**
 * When each iteration's episodes ran, from the run's history: from the start of the workflow task that
 * opened its first episode (the opening, in that task, is rollout work) to its last episode's end.
 */
export async function episodeSpans(client: Client, runId: string): Promise<Map<number, { open: number; end: number }>> {
  const events = (await fetchRecorded(client, runId)).history.events ?? [];
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const iterationOf = (workflowId: string | null | undefined) => Number(/\/it(\d+)\/ep\d+$/.exec(workflowId ?? '')?.[1] ?? -1);
  const spans = new Map<number, { open: number; end: number }>();
  const span = (it: number) => spans.get(it) ?? spans.set(it, { open: Infinity, end: -Infinity }).get(it)!;
  for (const e of events) {
    const initiated = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (initiated) {
      const completed = byId.get(String(initiated.workflowTaskCompletedEventId));
      const started = byId.get(String(completed?.workflowTaskCompletedEventAttributes?.startedEventId));
      const s = span(iterationOf(initiated.workflowId));
      s.open = Math.min(s.open, ms(started?.eventTime ?? e.eventTime));
    }
    const done = e.childWorkflowExecutionCompletedEventAttributes;
    if (done) {
      const s = span(iterationOf(done.workflowExecution?.workflowId));
      s.end = Math.max(s.end, ms(e.eventTime));
    }
  }
  return spans;
}

/** The run's activities of type `type`, in the order scheduled, each from scheduled to completed (epoch ms). */
export async function activitySpans(client: Client, runId: string, type: string): Promise<{ start: number; end: number }[]> {
  const events = (await fetchRecorded(client, runId)).history.events ?? [];
  const scheduled = new Map<string, number>();
  const spans: { id: string; start: number; end: number }[] = [];
  for (const e of events) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name === type) scheduled.set(String(e.eventId), ms(e.eventTime));
    const done = e.activityTaskCompletedEventAttributes;
    const start = done ? scheduled.get(String(done.scheduledEventId)) : undefined;
    if (start !== undefined) spans.push({ id: String(done!.scheduledEventId), start, end: ms(e.eventTime) });
  }
  return spans.sort((a, b) => Number(a.id) - Number(b.id)).map(({ start, end }) => ({ start, end }));
}
