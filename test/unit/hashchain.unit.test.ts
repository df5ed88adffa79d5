// The event store's per-stream hash chain: the same value hashes the same however its keys are
// ordered, and a changed, deleted or re-ordered event breaks the chain at that event; and the
// record's texts hold no U+0000 (which Postgres cannot store).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordable, recordableText } from '../../domain/events.js';
import { canonicalJson, checkChain, eventHash } from '../../services/eventStore/hashChain.js';

const stream = 'episode:r/it0/ep0';

function chain(datas: unknown[]) {
  let prev: string | null = null;
  return datas.map((data, position) => {
    const row = { stream, position, type: 'T', data };
    prev = eventHash(prev, row);
    return { ...row, hash: prev };
  });
}

const head = (rows: ReturnType<typeof chain>) => ({ position: rows.length - 1, hash: rows[rows.length - 1].hash });

test('canonical JSON sorts keys at every level and drops undefined fields', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null }, u: undefined }), '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
  assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
});

test('an intact stream checks out', () => {
  const rows = chain([{ a: 1 }, { b: 2 }, { c: 3 }]);
  assert.equal(checkChain(stream, rows, head(rows)), null);
});

test('a changed event breaks the chain at that event', () => {
  const rows = chain([{ reward: 1 }, { reward: 2 }, { reward: 3 }]);
  const h = head(rows);
  rows[1] = { ...rows[1], data: { reward: 2.5 } };
  const broken = checkChain(stream, rows, h);
  assert.equal(broken?.kind, 'hash');
  assert.equal(broken?.position, 1);
});

test('a changed event whose hash is recomputed still breaks the chain at the next event', () => {
  const rows = chain([{ reward: 1 }, { reward: 2 }, { reward: 3 }]);
  const h = head(rows);
  rows[1] = { ...rows[1], data: { reward: 9 }, hash: eventHash(rows[0].hash, { ...rows[1], data: { reward: 9 } }) };
  const broken = checkChain(stream, rows, h);
  assert.equal(broken?.position, 2);
});

test('a deleted event is a gap; a deleted last event falls short of the stream head', () => {
  const rows = chain([{ a: 1 }, { b: 2 }, { c: 3 }]);
  const gap = checkChain(stream, [rows[0], rows[2]], head(rows));
  assert.deepEqual([gap?.kind, gap?.position], ['gap', 1]);
  const tail = checkChain(stream, rows.slice(0, 2), head(rows));
  assert.equal(tail?.kind, 'head');
  assert.match(tail!.message, /deleted/);
});

test('rows recorded before the chain existed are reported as unhashed', () => {
  const rows = chain([{ a: 1 }]).map((r) => ({ ...r, hash: null }));
  assert.match(checkChain(stream, rows, { position: 0, hash: null })!.message, /no hash/);
});

test('U+0000 in a text of the record becomes U+FFFD, in every string of an event, keys too', () => {
  assert.equal(recordableText('a\u0000b\u0000'), 'a\uFFFDb\uFFFD');
  const clean = { type: 'T', samples: [{ text: 'ok' }] };
  assert.deepEqual(recordable(clean), { value: clean, changed: false });
  assert.equal(recordable(clean).value, clean, 'a clean event is passed through as it is');
  const event = { type: 'T', n: 1, none: null, samples: [{ text: 'moves = ["R\u0000"]', outcome: 'code error' }], state: { 'k\u0000': ['\u0000'] } };
  assert.deepEqual(recordable(event), {
    value: { type: 'T', n: 1, none: null, samples: [{ text: 'moves = ["R\uFFFD"]', outcome: 'code error' }], state: { 'k\uFFFD': ['\uFFFD'] } },
    changed: true,
  });
  assert.equal(event.samples[0].text, 'moves = ["R\u0000"]', 'the input is not changed');
});
