import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseCandidate, groupAdvantages, groupKey } from '../../domain/atgrpo.js';

test('group keys separate problems, turns and agents', () => {
  const keys = new Set([groupKey(1, 0, 'a'), groupKey(2, 0, 'a'), groupKey(1, 1, 'a'), groupKey(1, 0, 'b')]);
  assert.equal(keys.size, 4);
});

test('advantages are normalised within each group only (hand-computed)', () => {
  const adv = groupAdvantages(
    [
      { sampleId: 'a1', groupKey: 'g1', reward: 1 },
      { sampleId: 'a2', groupKey: 'g1', reward: 3 },
      { sampleId: 'b1', groupKey: 'g2', reward: 10 },
      { sampleId: 'b2', groupKey: 'g2', reward: 20 },
      { sampleId: 'b3', groupKey: 'g2', reward: 30 },
    ],
    true,
  );
  // g1: mean 2, population std 1 -> -1, +1
  assert.ok(Math.abs(adv.get('a1')! + 1) < 1e-5);
  assert.ok(Math.abs(adv.get('a2')! - 1) < 1e-5);
  // g2: mean 20, std sqrt(200/3) = 8.165 -> -1.2247, 0, +1.2247
  assert.ok(Math.abs(adv.get('b1')! + 1.22474) < 1e-4);
  assert.equal(adv.get('b2'), 0);
  assert.ok(Math.abs(adv.get('b3')! - 1.22474) < 1e-4);
});

test('a group with equal rewards carries no signal', () => {
  const adv = groupAdvantages(
    [
      { sampleId: 'x', groupKey: 'g', reward: -2 },
      { sampleId: 'y', groupKey: 'g', reward: -2 },
    ],
    true,
  );
  assert.deepEqual([adv.get('x'), adv.get('y')], [0, 0]);
});

test('without std normalisation the advantage is the centred reward', () => {
  const adv = groupAdvantages(
    [
      { sampleId: 'x', groupKey: 'g', reward: 0 },
      { sampleId: 'y', groupKey: 'g', reward: 4 },
    ],
    false,
  );
  assert.deepEqual([adv.get('x'), adv.get('y')], [-2, 2]);
});

test('greedy continuation takes the first best candidate; non-greedy takes candidate 0', () => {
  assert.equal(chooseCandidate([0, 2, 2, 1], true), 1);
  assert.equal(chooseCandidate([0, 2, 2, 1], false), 0);
  assert.equal(chooseCandidate([-1], true), 0);
});
