// `tandem kafka groups` and `tandem kafka release` on the real stack: the update groups of a run
// that Temporal does not know are deleted; those of a running run are kept, also when its id has a
// dot that makes its group's name readable two ways (run `live` with policy `<ts>.p`, or run
// `live.<ts>` with policy `p`); the projector's group is never touched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { updateConsumerGroup } from '../../domain/ids.js';
import { lazyProducer } from '../../infra/kafka/client.js';
import { startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { PROJECTOR_GROUP, TOPICS, UPDATE_TOPICS } from '../../infra/settings.js';
import { kafka, temporal } from '../support/stack.js';

const stamp = Date.now();
const gone = `gone-${stamp}`;
const liveRun = `live.${stamp}`;
const goneGroup = updateConsumerGroup(gone, 'p', 0);
const liveGroup = updateConsumerGroup(liveRun, 'p', 0);
const k = kafka();
const t = await temporal();
after(async () => {
  await t.client.workflow.getHandle(liveRun).terminate('test over').catch(() => {});
  await deleteGroups(k, [goneGroup, liveGroup]);
  await t.close();
});

function tandem(...args: string[]) {
  const r = spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function groupIds(): Promise<string[]> {
  const admin = k.admin();
  await admin.connect();
  try {
    return (await admin.listGroups()).groups.map((g) => g.groupId);
  } finally {
    await admin.disconnect();
  }
}

test("release deletes the update groups of runs that are not running, and keeps a running run's", { timeout: 180_000 }, async () => {
  // A running run: a workflow that no worker polls for stays running.
  await t.client.workflow.start('trainingRun', { taskQueue: `nobody-polls-${stamp}`, workflowId: liveRun, args: [{ config: {} }] });
  await startAtEnd(k, goneGroup, UPDATE_TOPICS);
  await startAtEnd(k, liveGroup, UPDATE_TOPICS);
  const producer = lazyProducer(k);
  await producer.send(TOPICS.trajectories, [{ key: `${liveRun}/p`, value: JSON.stringify({ runId: liveRun }) }]);
  await producer.close();

  const listed = tandem('kafka', 'groups', '--json') as { topics: Record<string, number>; groups: { groupId: string; topic: string; records: number; runs?: Record<string, string> }[] };
  const row = (groupId: string) => listed.groups.find((g) => g.groupId === groupId && g.topic === TOPICS.trajectories);
  assert.deepEqual(row(goneGroup)?.runs, { [gone]: 'not found' });
  assert.deepEqual(row(liveGroup)?.runs, { live: 'not found', [liveRun]: 'RUNNING' });
  assert.ok(row(liveGroup)!.records >= 1, 'it holds the record published after it started');
  assert.ok(listed.topics[TOPICS.trajectories] >= row(liveGroup)!.records);

  const released = tandem('kafka', 'release', '--json') as { deleted: string[]; trimmed: Record<string, number> };
  assert.ok(released.deleted.includes(goneGroup), released.deleted.join(', '));
  assert.ok(!released.deleted.includes(liveGroup));
  assert.ok(!released.deleted.includes(PROJECTOR_GROUP));
  assert.deepEqual(Object.keys(released.trimmed).sort(), Object.values(TOPICS).sort());
  const left = await groupIds();
  assert.ok(!left.includes(goneGroup));
  assert.ok(left.includes(liveGroup));
});
