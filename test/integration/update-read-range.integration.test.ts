// The update's read range is fixed per iteration (activities/updatePolicy.ts): iteration i reads
// from group it<i> and, once done, commits where it stopped to group it<i+1>. A retry of
// iteration i after that commit (the worker died, or Temporal lost the activity's completion)
// reads exactly the same records again; iteration i+1 reads only what came after.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { lazyProducer } from '../../infra/kafka/client.js';
import { readBatch, startAtEnd } from '../../infra/kafka/readBatch.js';
import { deleteGroups } from '../../infra/kafka/retention.js';
import { TOPICS } from '../../infra/settings.js';
import { kafka } from '../support/stack.js';

const k = kafka();
const producer = lazyProducer(k);
after(() => producer.close());

test('a read committed to the next group can be repeated from its own group; the next group starts after it', { timeout: 120_000 }, async () => {
  const topic = TOPICS.trajectories;
  const base = `test-read-range-${process.pid}-${Date.now()}`;
  const it = (i: number) => `${base}.it${i}`;
  const tag = `t${Date.now()}`;
  const mine = (read: { records: { value: string }[] }) =>
    read.records.map((r) => JSON.parse(r.value)).filter((v) => v.tag === tag).map((v) => v.i).sort();
  // Iteration 0's group starts at the current end, so other tests' records do not count.
  await startAtEnd(k, it(0), [topic]);
  after(() => deleteGroups(k, [it(0), it(1)]));

  await producer.send(topic, [0, 1, 2].map((i) => ({ key: `k${i}`, value: JSON.stringify({ tag, i }) })));
  const first = await readBatch(k, it(0), [topic]);
  assert.deepEqual(mine(first), [0, 1, 2]);
  await first.commit(it(1));

  // Iteration 1 starts publishing; a retry of iteration 0 still reads all of iteration 0.
  await producer.send(topic, [{ key: 'k0', value: JSON.stringify({ tag, i: 3 }) }]);
  const retry = await readBatch(k, it(0), [topic]);
  assert.deepEqual(mine(retry), [0, 1, 2, 3], 'the retry reads from where iteration 0 started (and filters by iteration)');
  const next = await readBatch(k, it(1), [topic]);
  assert.deepEqual(mine(next), [3], 'iteration 1 reads only what came after iteration 0');
});
