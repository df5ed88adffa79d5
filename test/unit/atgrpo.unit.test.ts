import assert from 'node:assert/strict';
import { test } from 'node:test';
import { advantageInputs, advantageOptions, chooseCandidate, groupAdvantages, groupKey, groupKeyOf, planIteration, trajectoryGroupKey, type AdvantageInput } from '../../domain/atgrpo.js';

// One member per sample: the at_grpo case.
const at = (sampleId: string, groupKey: string, score: number): AdvantageInput => ({ sampleId, groupKey, member: sampleId, score });
const keep = { normByStd: true, zeroVariance: 'keep' } as const;

test('group keys separate problems, turns and agents', () => {
  const keys = new Set([groupKey(1, 0, 'a'), groupKey(2, 0, 'a'), groupKey(1, 1, 'a'), groupKey(1, 0, 'b')]);
  assert.equal(keys.size, 4);
});

test('advantages are normalised within each group only (hand-computed)', () => {
  const adv = groupAdvantages(
    [
      at('a1', 'g1', 1),
      at('a2', 'g1', 3),
      at('b1', 'g2', 10),
      at('b2', 'g2', 20),
      at('b3', 'g2', 30),
    ],
    keep,
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
      at('x', 'g', -2),
      at('y', 'g', -2),
    ],
    keep,
  );
  assert.deepEqual([adv.get('x'), adv.get('y')], [0, 0]);
});

test('without std normalisation the advantage is the centred reward', () => {
  const adv = groupAdvantages(
    [
      at('x', 'g', 0),
      at('y', 'g', 4),
    ],
    { normByStd: false, zeroVariance: 'keep' },
  );
  assert.deepEqual([adv.get('x'), adv.get('y')], [-2, 2]);
});

test('greedy continuation takes the first best candidate; non-greedy takes candidate 0', () => {
  assert.equal(chooseCandidate([0, 2, 2, 1], true), 1);
  assert.equal(chooseCandidate([0, 2, 2, 1], false), 0);
  assert.equal(chooseCandidate([-1], true), 0);
});

test('drop: a zero-variance group is left out of the update; the others are untouched', () => {
  const adv = groupAdvantages([at('x', 'flat', 1), at('y', 'flat', 1), at('a', 'g', 0), at('b', 'g', 2)], { normByStd: true, zeroVariance: 'drop' });
  assert.deepEqual([...adv.keys()].sort(), ['a', 'b']);
  assert.ok(Math.abs(adv.get('a')! + 1) < 1e-5 && Math.abs(adv.get('b')! - 1) < 1e-5);
});

test('grpo: group statistics count each trajectory once, and every turn of a trajectory shares its advantage', () => {
  // Problem 7, agent a: trajectory e1 (return 3) has three turns, e2 (return 1) has one.
  // Per trajectory: mean 2, std 1 -> +1 and -1. Counting samples instead would give mean 2.5.
  const g = trajectoryGroupKey(7, 'a');
  const adv = groupAdvantages(
    [
      { sampleId: 'e1/t0', groupKey: g, member: 'e1', score: 3 },
      { sampleId: 'e1/t1', groupKey: g, member: 'e1', score: 3 },
      { sampleId: 'e1/t2', groupKey: g, member: 'e1', score: 3 },
      { sampleId: 'e2/t0', groupKey: g, member: 'e2', score: 1 },
    ],
    keep,
  );
  for (const id of ['e1/t0', 'e1/t1', 'e1/t2']) assert.ok(Math.abs(adv.get(id)! - 1) < 1e-5, id);
  assert.ok(Math.abs(adv.get('e2/t0')! + 1) < 1e-5);
});

test('planIteration: at_grpo runs one episode per problem with K candidates; grpo K single-sample episodes per problem', () => {
  assert.deepEqual(planIteration('at_grpo', 100, 2, 3, 4), [
    { index: 0, problemSeed: 106, candidates: 4 },
    { index: 1, problemSeed: 107, candidates: 4 },
    { index: 2, problemSeed: 108, candidates: 4 },
  ]);
  const grpo = planIteration('grpo', 100, 2, 3, 4);
  assert.equal(grpo.length, 12);
  assert.deepEqual(grpo.map((e) => e.problemSeed), [106, 106, 106, 106, 107, 107, 107, 107, 108, 108, 108, 108]);
  assert.ok(grpo.every((e) => e.candidates === 1));
  // Consecutive iterations never revisit a problem.
  const seen = [0, 1, 2].flatMap((it) => planIteration('at_grpo', 0, it, 3, 4).map((e) => e.problemSeed));
  assert.equal(new Set(seen).size, seen.length);
});

test('advantageInputs: at_grpo scores each sample by its own reward; grpo by the agent\'s trajectory return', () => {
  const groups = [
    { episodeId: 'e1', groupKey: 'p7/t0/a', agent: 'a', chosen: 1, samples: [{ sampleId: 'e1/x', reward: 1 }, { sampleId: 'e1/y', reward: 2 }] },
    { episodeId: 'e1', groupKey: 'p7/t0/b', agent: 'b', chosen: 0, samples: [{ sampleId: 'e1/z', reward: 5 }] },
    { episodeId: 'e1', groupKey: 'p7/t1/a', agent: 'a', chosen: 0, samples: [{ sampleId: 'e1/w', reward: 0.5 }] },
    { episodeId: 'e2', groupKey: 'p7/t0/a', agent: 'a', chosen: 0, samples: [{ sampleId: 'e2/x', reward: 4 }] },
  ];
  assert.deepEqual(advantageInputs('at_grpo', groups), [
    { sampleId: 'e1/x', groupKey: 'p7/t0/a', member: 'e1/x', score: 1 },
    { sampleId: 'e1/y', groupKey: 'p7/t0/a', member: 'e1/y', score: 2 },
    { sampleId: 'e1/z', groupKey: 'p7/t0/b', member: 'e1/z', score: 5 },
    { sampleId: 'e1/w', groupKey: 'p7/t1/a', member: 'e1/w', score: 0.5 },
    { sampleId: 'e2/x', groupKey: 'p7/t0/a', member: 'e2/x', score: 4 },
  ]);
  // grpo: agent a's return in e1 is its chosen rewards 2 + 0.5; in e2, 4; agent b's in e1, 5.
  assert.deepEqual(advantageInputs('grpo', groups).map((s) => [s.sampleId, s.member, s.score]), [
    ['e1/x', 'e1', 2.5],
    ['e1/y', 'e1', 2.5],
    ['e1/z', 'e1', 5],
    ['e1/w', 'e1', 2.5],
    ['e2/x', 'e2', 4],
  ]);
  assert.equal(groupKeyOf('at_grpo', 7, 1, 'a'), groupKey(7, 1, 'a'));
  assert.equal(groupKeyOf('grpo', 7, 1, 'a'), trajectoryGroupKey(7, 'a'));
});

// The Sokoban case of issue 39: a group [-5, safe, safe, safe] and groups of near-equal scores.
// Four groups of K = 4; means: flat -2 (all -2), deadlock -1.5025 (-5, -0.33, -0.34, -0.34),
// near 0.0025 (0.0, 0.01, 0.0, 0.0), solved 2.5 (10, 0, 0, 0).
const sokobanLike = [
  ...[-5, -0.33, -0.34, -0.34].map((s, i) => at(`d${i}`, 'deadlock', s)),
  ...[0, 0.01, 0, 0].map((s, i) => at(`n${i}`, 'near', s)),
  ...[10, 0, 0, 0].map((s, i) => at(`w${i}`, 'solved', s)),
  ...[-2, -2, -2, -2].map((s, i) => at(`f${i}`, 'flat', s)),
];
const groupsOf = (adv: Map<string, number>) => [...new Set([...adv.keys()].map((id) => ({ d: 'deadlock', n: 'near', w: 'solved', f: 'flat', e: 'easy' })[id[0]]!))].sort();

test('group filter mean, 0.5: the two groups with the lowest mean scores are left out (hand-computed)', () => {
  const adv = groupAdvantages(sokobanLike, { ...keep, filter: { method: 'mean', ratio: 0.5 } });
  // ranks: flat -2 < deadlock -1.5025 < near 0.0025 < solved 2.5; floor(4 x 0.5) = 2 dropped
  assert.deepEqual(groupsOf(adv), ['near', 'solved']);
  // the kept groups' advantages are what they are without the filter
  const all = groupAdvantages(sokobanLike, keep);
  for (const [id, a] of adv) assert.equal(a, all.get(id));
  // near: mean 0.0025, std 0.004330 -> the 0.01 answer +1.732, the others -0.577
  assert.ok(Math.abs(adv.get('n1')! - 1.7320) < 1e-3 && Math.abs(adv.get('n0')! + 0.5773) < 1e-3);
});

test('group filter std: groups ranked by var / range^2, the flat group counting 0 (hand-computed)', () => {
  // deadlock: scores -5, -0.33, -0.34, -0.34: mean -1.5025, var 4.0775 (population), range 4.67 -> 0.18697
  // near and solved: one apart from three equal ones -> var / range^2 = 3/16 = 0.1875; flat: 0
  const adv = groupAdvantages(sokobanLike, { ...keep, filter: { method: 'std', ratio: 0.25 } });
  assert.deepEqual(groupsOf(adv), ['deadlock', 'near', 'solved']); // floor(4 x 0.25) = 1: flat
  const two = groupAdvantages(sokobanLike, { ...keep, filter: { method: 'std', ratio: 0.5 } });
  assert.deepEqual(groupsOf(two), ['near', 'solved']); // then deadlock (0.18697 < 0.1875)
  // near and solved tie at 3/16: the group key's order decides, 'near' < 'solved'
  const three = groupAdvantages(sokobanLike, { ...keep, filter: { method: 'std', ratio: 0.75 } });
  assert.deepEqual(groupsOf(three), ['solved']);
});

test('group filter: none, a ratio that rounds to no group, and one-member groups ranking as 0', () => {
  assert.equal(groupAdvantages(sokobanLike, { ...keep, filter: { method: 'none', ratio: 0.5 } }).size, 16);
  assert.equal(groupAdvantages(sokobanLike, { ...keep, filter: { method: 'mean', ratio: 0.2 } }).size, 16); // floor(0.8) = 0
  // a one-member group of score 5 ranks as 0 (the reference's rule), below a group of mean 1
  const adv = groupAdvantages([at('s', 'single', 5), at('a', 'pair', 0), at('b', 'pair', 2)], { ...keep, filter: { method: 'mean', ratio: 0.5 } });
  assert.deepEqual([...adv.keys()].sort(), ['a', 'b']);
});

test('group filter and zero-variance drop compose; advantageOptions reads the update section', () => {
  const opts = advantageOptions({ norm_adv_by_std: true, zero_variance_groups: 'drop', group_filter: { method: 'mean', ratio: 0.2 } });
  assert.deepEqual(opts, { normByStd: true, zeroVariance: 'drop', filter: { method: 'mean', ratio: 0.2 } });
  // five groups: floor(5 x 0.2) = 1, the flat one (mean -2); 'drop' then leaves out 'easy' (all 1)
  const withEasy = [...sokobanLike, ...[1, 1, 1, 1].map((s, i) => at(`e${i}`, 'easy', s))];
  const adv = groupAdvantages(withEasy, opts);
  assert.deepEqual(groupsOf(adv), ['deadlock', 'near', 'solved']);
});
