// The update groups' names (domain/ids.ts): the groups an iteration's update uses, and the run ids
// an update group's name can stand for, read back whatever dots the run id and policy name hold.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { updateConsumerGroup, updateGroupRunIds, updateGroupsOf, updateReaderGroup } from '../../domain/ids.js';

test("an iteration's update groups: its own, and one reader per replica when it has replicas", () => {
  assert.deepEqual(updateGroupsOf('run-1', 'shared_model', 3), ['tandem-update.run-1.shared_model.it3']);
  assert.deepEqual(updateGroupsOf('run-1', 'p', 0, 2), ['tandem-update.run-1.p.it0', 'tandem-update.run-1.p.it0.replica-0', 'tandem-update.run-1.p.it0.replica-1']);
});

test('the run ids an update group can belong to, for every group the update names', () => {
  for (const name of [updateConsumerGroup('run-1', 'shared_model', 12), updateReaderGroup('run-1', 'shared_model', 2, 1)]) {
    assert.deepEqual(updateGroupRunIds(name), ['run-1']);
  }
  // A dot in the run id or the policy name: every split is a candidate, the true one among them.
  assert.deepEqual(updateGroupRunIds(updateConsumerGroup('a.b', 'c', 0)), ['a', 'a.b']);
  assert.deepEqual(updateGroupRunIds(updateConsumerGroup('a', 'b.c', 0)), ['a', 'a.b']);
  for (const other of ['tandem-projector', 'tandem-update.x.it0', 'e2e-check-run', 'tandem-update.run.p.itx']) assert.deepEqual(updateGroupRunIds(other), [], other);
});
