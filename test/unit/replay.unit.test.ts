// Replay of the saved Temporal histories in test/fixtures/histories/ against the current
// workflow code, so that a non-deterministic change to workflows/ fails the tests. No server is
// needed: the workflow code is bundled and replayed in this process. Re-record the histories
// with test/fixtures/histories/record.sh when workflow code changes on purpose.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { childExecutions, fetchTrainingRun } from '../../infra/temporal/histories.js';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflows } from '../../infra/temporal/bundle.js';
import { parseHistoryJSON, replayHistories, workflowTypeOf } from '../../infra/temporal/replay.js';
import { projectPath } from '../../infra/settings.js';
import { replaySource } from '../../services/cli/replay.js';

const dir = projectPath('test/fixtures/histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
const recorded = files.map((f) => parseHistoryJSON(readFileSync(join(dir, f), 'utf8'), `test/fixtures/histories/${f}`));
const ofType = (type: string) => recorded.filter((r) => workflowTypeOf(r.history) === type);

const tmp = mkdtempSync(join(tmpdir(), 'tandem-replay-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the fixtures hold a two-iteration training run and one of its episodes', () => {
  const [run] = ofType('trainingRun');
  const [episode] = ofType('episode');
  assert.ok(run && episode, `fixtures found: ${files.join(', ')}`);
  const children = childExecutions(run.history).map((c) => c.workflowId);
  assert.ok(children.some((id) => id.startsWith(`${run.workflowId}/it1/`)), `episodes of a second iteration: ${children.join(', ')}`);
  assert.ok(children.includes(episode.workflowId), `${episode.workflowId} is one of the run's episodes`);
});

test('every saved history replays cleanly against workflows/index.ts', async () => {
  const outcomes = await replayHistories(recorded, await bundleWorkflows());
  assert.equal(outcomes.length, recorded.length);
  for (const o of outcomes) assert.equal(o.error, undefined, `${o.source}: ${o.error?.message}`);
});

test('a workflow variant that schedules an extra activity fails the replay of every history with a determinism error', async () => {
  const outcomes = await replayHistories(recorded, await bundleWorkflows(projectPath('test/fixtures/workflows-nondeterministic.ts')));
  assert.equal(outcomes.length, recorded.length);
  for (const o of outcomes) {
    assert.equal(o.error?.name, 'DeterminismViolationError', `${o.source}: ${o.error?.message ?? 'replayed cleanly'}`);
    assert.match(o.error.message, /Nondeterminism error: Activity type of scheduled event '\w+' does not match activity type of activity command 'publishEvents'/);
  }
});

test('tandem replay --file prints each outcome and exits 1 with the determinism error when one fails', () => {
  // The same run under another workflow id: its episodes' ids no longer match the recorded ones.
  const run = ofType('trainingRun')[0];
  const attrs = run.history.events![0].workflowExecutionStartedEventAttributes!;
  const renamed = { ...run.history, events: [{ ...run.history.events![0], workflowExecutionStartedEventAttributes: { ...attrs, workflowId: 'renamed-run' } }, ...run.history.events!.slice(1)] };
  const renamedFile = join(tmp, 'renamed.json');
  writeFileSync(renamedFile, historyToJSON(renamed));

  const cli = spawnSync(process.execPath, ['bin/tandem.js', 'replay', '--file', run.source, renamedFile], { cwd: projectPath('.'), encoding: 'utf8', timeout: 300_000 });
  assert.equal(cli.status, 1, cli.stderr);
  assert.match(cli.stdout, new RegExp(`^ok +trainingRun +${run.workflowId} .*\\(${run.source}\\)$`, 'm'));
  assert.match(cli.stdout, /^FAIL +trainingRun +renamed-run /m);
  assert.match(cli.stdout, /DeterminismViolationError: .*Child workflow id of scheduled event '[^']+' does not match child workflow id of command 'renamed-run\/it0\/ep0'/);
  assert.match(cli.stdout, /^2 replayed: 1 ok, 1 failed$/m);
});

test('tandem replay takes one of WORKFLOW_ID, --run or --file, and names a bad argument', () => {
  // Unknown options and options without their value are commander's (test/unit/cli.unit.test.ts).
  assert.deepEqual(replaySource('r1/it0/ep0', { runId: 'abc' }), { kind: 'workflow', workflowId: 'r1/it0/ep0', runId: 'abc' });
  assert.deepEqual(replaySource(undefined, { run: 'r1' }), { kind: 'run', runId: 'r1' });
  assert.deepEqual(replaySource(undefined, { file: ['a.json', 'b.json'] }), { kind: 'files', files: ['a.json', 'b.json'], workflowId: undefined });
  assert.deepEqual(replaySource(undefined, { file: ['a.json'], workflowId: 'w' }), { kind: 'files', files: ['a.json'], workflowId: 'w' });
  assert.match(String(replaySource(undefined, {})), /exactly one of/);
  assert.match(String(replaySource('w', { run: 'r' })), /exactly one of/);
  assert.match(String(replaySource(undefined, { run: 'r', runId: 'x' })), /--run-id goes with a WORKFLOW_ID/);
  assert.match(String(replaySource(undefined, { file: ['a.json', 'b.json'], workflowId: 'w' })), /--workflow-id goes with one --file/);
});

test('a file that is not a Temporal history is refused with its name', () => {
  assert.throws(() => parseHistoryJSON('{"events": []}', 'empty.json'), /empty\.json: not a Temporal history JSON \(no "events" array\)/);
  assert.throws(() => parseHistoryJSON('not json', 'junk.json'), /junk\.json: not a Temporal history JSON/);
});

test('--run follows a training run back through continue-as-new, then fetches every episode it started', async () => {
  const started = (type: string, continuedFrom = '') => ({ workflowExecutionStartedEventAttributes: { workflowType: { name: type }, continuedExecutionRunId: continuedFrom } });
  const child = (workflowId: string, runId: string) => ({ childWorkflowExecutionStartedEventAttributes: { workflowExecution: { workflowId, runId } } });
  // Keyed `<workflow id>|<run id>`; no run id asks for the latest execution.
  const server: Record<string, { events: object[] }> = {
    'r|': { events: [started('trainingRun', 'first'), child('r/it1/ep0', 'e10')] },
    'r|first': { events: [started('trainingRun'), child('r/it0/ep0', 'e00'), child('r/it0/ep1', 'e01')] },
    'r/it0/ep0|e00': { events: [started('episode')] },
    'r/it0/ep1|e01': { events: [started('episode')] },
    'r/it1/ep0|e10': { events: [started('episode')] },
  };
  const asked: string[] = [];
  const client = {
    workflow: {
      getHandle: (id: string, run?: string) => ({
        fetchHistory: async () => {
          const key = `${id}|${run ?? ''}`;
          asked.push(key);
          if (!server[key]) throw new Error('workflow not found');
          return server[key];
        },
      }),
    },
  } as unknown as Client;

  const got = await fetchTrainingRun(client, 'r');
  assert.deepEqual(asked, ['r|', 'r|first', 'r/it0/ep0|e00', 'r/it0/ep1|e01', 'r/it1/ep0|e10']);
  assert.deepEqual(got.map((g) => `${g.workflowId} ${workflowTypeOf(g.history)}`), ['r trainingRun', 'r trainingRun', 'r/it0/ep0 episode', 'r/it0/ep1 episode', 'r/it1/ep0 episode']);
  assert.equal(got[0].history, server['r|first'], 'the oldest execution comes first');

  await assert.rejects(fetchTrainingRun(client, 'r/it0/ep0'), /cannot fetch the history of r\/it0\/ep0: workflow not found/);
  server['r/it0/ep0|'] = server['r/it0/ep0|e00'];
  await assert.rejects(fetchTrainingRun(client, 'r/it0/ep0'), /r\/it0\/ep0 is a workflow of type episode, not a trainingRun/);
});
