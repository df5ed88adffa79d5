// What `tandem status` shows: the ETA from measured iteration durations (paused time excluded),
// the share done, the bar, and the fields of the full view.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etaMs, formatDuration, fractionDone, progressBar, progressLine, progressLines, watchRenderer } from '../../services/client/progressView.js';
import type { IterationSummary, RunProgress } from '../../workflows/messages.js';

const iteration = (i: number, durationMs: number): IterationSummary => ({
  iteration: i,
  episodes: 4,
  successRate: 0.5,
  rewardByAgent: { plan_agent: 0.25, tool_call_agent: -0.5 },
  updates: { shared_model: { toVersion: i + 1, loss: 0.1, samples: 12, groups: 4 } },
  durationMs,
});

const progress = (over: Partial<RunProgress> = {}): RunProgress => ({
  runId: 'r1',
  status: 'running',
  iteration: 2,
  totalIterations: 5,
  episodesDone: 1,
  episodesInFlight: 1,
  episodesPerIteration: 4,
  versions: { shared_model: 2 },
  updatesApplied: 2,
  tokensTrained: 4096,
  lastCheckpoint: '/data/runs/r1/checkpoints/shared_model/v000002',
  recent: [iteration(0, 60_000), iteration(1, 40_000)],
  evaluations: [],
  iterationStartedAt: 1_000_000,
  iterationPausedMs: 0,
  pausedSince: null,
  ...over,
});

test('ETA: the rest of the current iteration plus the mean for each one after it', () => {
  // mean 50 s; 20 s into iteration 3 of 5: 30 s left of it, then 2 more iterations.
  assert.equal(etaMs(progress(), 1_020_000), 30_000 + 2 * 50_000);
  // An iteration running over the mean counts as nearly done, never as negative time.
  assert.equal(etaMs(progress(), 1_090_000), 2 * 50_000);
});

test('ETA: paused time does not count, and the estimate stands still while paused', () => {
  const closed = progress({ iterationPausedMs: 15_000 });
  assert.equal(etaMs(closed, 1_020_000), 45_000 + 2 * 50_000);
  const paused = progress({ status: 'paused', pausedSince: 1_010_000 });
  assert.equal(etaMs(paused, 1_020_000), 40_000 + 2 * 50_000);
  assert.equal(etaMs(paused, 1_500_000), 40_000 + 2 * 50_000);
});

test('ETA: unknown before the first iteration ends; zero once the run has ended', () => {
  assert.equal(etaMs(progress({ recent: [] }), 1_020_000), null);
  assert.equal(etaMs(progress({ status: 'stopped', iteration: 3 }), 9_999_999), 0);
  assert.equal(etaMs(progress({ status: 'completed', iteration: 5 }), 9_999_999), 0);
});

test('share done counts each episode and the update of an iteration as a step', () => {
  assert.equal(fractionDone(progress({ iteration: 0, episodesDone: 0 })), 0);
  assert.equal(fractionDone(progress({ iteration: 2, episodesDone: 4 })), (2 + 4 / 5) / 5);
  assert.equal(fractionDone(progress({ status: 'stopped', iteration: 3 })), 3 / 5);
  assert.equal(fractionDone(progress({ status: 'completed', iteration: 5 })), 1);
});

test('bar and durations', () => {
  assert.equal(progressBar(0.5, 10), '[#####-----]  50%');
  assert.equal(progressBar(1, 4), '[####] 100%');
  assert.equal(formatDuration(42_400), '42s');
  assert.equal(formatDuration(125_000), '2m05s');
  assert.equal(formatDuration(3_780_000), '1h03m');
});

test('the one-line view names iteration, episodes, status and ETA', () => {
  assert.equal(progressLine(progress(), 1_020_000), '[###########-------------]  44%  iteration 3/5  episodes 1/4  running  ETA 2m10s');
  assert.match(progressLine(progress({ status: 'paused', pausedSince: 1_010_000 }), 1_020_000), /paused {2}ETA 2m20s \(paused\)$/);
  assert.match(progressLine(progress({ status: 'stopped', iteration: 3 }), 0), /iteration 3\/5 done .* stopped$/);
  assert.doesNotMatch(progressLine(progress({ status: 'completed', iteration: 5 }), 0), /episodes/, 'an ended run has no current episodes');
});

test('the full view has every field', () => {
  const text = progressLines(progress(), 1_020_000).join('\n');
  for (const field of [
    /status {11}running/,
    /iteration {8}3\/5/,
    /episodes done {4}1\/4 this iteration, 1 in flight/,
    /policy versions {2}shared_model=v2/,
    /updates applied {2}2, 4096 response tokens trained on/,
    /last checkpoint {2}\/data\/runs\/r1\/checkpoints\/shared_model\/v000002/,
    /mean reward {6}plan_agent=0\.250 tool_call_agent=-0\.500 \(iteration 2\)/,
    /success rate {5}0\.500 \(iteration 2;/,
    /ETA {14}2m10s/,
  ]) assert.match(text, field);
});

test('the samples of advantage 0 in the last update, per policy (absent from older runs)', () => {
  const last = { ...iteration(1, 40_000), updates: { plan: { toVersion: 2, loss: 0, samples: 12, groups: 4, zeroAdvantage: 9 }, tool: { toVersion: 2, loss: 0.1, samples: 8, groups: 2 } } };
  const text = progressLines(progress({ recent: [iteration(0, 60_000), last] }), 1_020_000).join('\n');
  assert.match(text, /no signal {8}plan 9 of 12 samples of advantage 0, their group's scores all equal \(iteration 2's update\)/);
  assert.doesNotMatch(progressLines(progress(), 1_020_000).join('\n'), /no signal/);
});

test("each policy's entropy over the recent updates, first to last (absent from older runs)", () => {
  const at = (i: number, plan: number, tool?: number) => ({
    ...iteration(i, 40_000),
    updates: { plan: { toVersion: i + 1, loss: 0, samples: 12, groups: 4, entropy: plan }, tool: { toVersion: i + 1, loss: 0, samples: 8, groups: 2, ...(tool === undefined ? {} : { entropy: tool }) } },
  });
  const text = progressLines(progress({ recent: [at(0, 0.88), at(1, 2.7), at(2, 5.09, 1.1)] }), 1_020_000).join('\n');
  assert.match(text, /entropy {10}plan 0\.880 -> 5\.090 \(iterations 1-3\), tool 1\.100 \(iteration 3\), nats a token in the updates/);
  assert.doesNotMatch(progressLines(progress(), 1_020_000).join('\n'), /entropy/);
});

test('asynchronous training: the update in flight beside each version, the iteration in play, the staleness of the last update', () => {
  const last = { ...iteration(1, 40_000), updates: { shared_model: { toVersion: 2, loss: 0.1, samples: 12, groups: 4, staleness: { mean: 0.5, max: 1 } } } };
  const text = progressLines(progress({ training: { shared_model: 2 }, playingIteration: 3, recent: [iteration(0, 60_000), last] }), 1_020_000).join('\n');
  assert.match(text, /policy versions {2}shared_model=v2 \(training v2->v3\)/);
  assert.match(text, /playing {10}iteration 4 \(asynchronous/);
  assert.match(text, /sample staleness shared_model mean 0\.500 max 1 versions \(iteration 2's update\)/);
  const sync = progressLines(progress({ training: {} }), 1_020_000).join('\n');
  assert.doesNotMatch(sync, /training v|playing|staleness/);
});

test('--watch on a terminal redraws the view in place', () => {
  const render = watchRenderer(true);
  const first = render(progress(), 1_020_000);
  assert.ok(!first.includes('\x1b'), 'the first view is drawn as is');
  const lines = first.trimEnd().split('\n').length;
  assert.equal(lines, progressLines(progress(), 1_020_000).length);
  const second = render(progress({ episodesDone: 2 }), 1_021_000);
  assert.ok(second.startsWith(`\x1b[${lines}F\x1b[J`), 'cursor up over the previous view, then clear');
  assert.match(second, /episodes done {4}2\/4/);
});

test('--watch elsewhere writes a plain line only when more than the ETA changed', () => {
  const render = watchRenderer(false);
  assert.equal(render(progress(), 1_020_000), `${progressLine(progress(), 1_020_000)}\n`);
  assert.equal(render(progress(), 1_025_000), '', 'only the ETA moved');
  assert.match(render(progress({ status: 'paused', pausedSince: 1_025_000 }), 1_026_000), /paused/);
  assert.match(render(progress({ status: 'completed', iteration: 5 }), 1_030_000), /iteration 5\/5 done .* completed\n$/);
});

test('evaluating after the last iteration: that iteration, done, never one past the total', () => {
  // The progress counts an iteration done before its evaluation: iteration == total here.
  const p = progress({ status: 'evaluating', iteration: 5, episodesDone: 0, recent: [iteration(3, 60_000), iteration(4, 40_000)] });
  assert.equal(progressLine(p, 1_020_000), '[########################] 100%  iteration 5/5 done  evaluating  ETA 0s');
  const text = progressLines(p, 1_020_000).join('\n');
  assert.match(text, /status {11}evaluating/);
  assert.match(text, /iteration {8}5 of 5 done$/m);
  assert.doesNotMatch(text, /episodes done/, 'no iteration is in progress');
  assert.doesNotMatch(`${progressLine(p, 1_020_000)}\n${text}`, /\b6\/5|6 of 5/);
  // Paused or stopping before the run ends: still no iteration past the total.
  assert.match(progressLine(progress({ status: 'stopping', iteration: 5 }), 1_020_000), /iteration 5\/5 done {2}stopping {2}ETA 0s$/);
  assert.match(progressLine(progress({ status: 'paused', iteration: 5, pausedSince: 1_010_000 }), 1_020_000), /iteration 5\/5 done {2}paused/);
});

test('completed: all iterations done', () => {
  const p = progress({ status: 'completed', iteration: 5, episodesDone: 0 });
  assert.equal(progressLine(p, 1_020_000), '[########################] 100%  iteration 5/5 done  completed');
  const text = progressLines(p, 1_020_000).join('\n');
  assert.match(text, /iteration {8}5 of 5 done$/m);
  assert.doesNotMatch(text, /episodes done|ETA/);
});

test('evaluating mid-run: the iterations done so far, and all the ones left in the ETA', () => {
  // After 2 of 5 iterations (mean 50 s): 3 left, none started.
  const p = progress({ status: 'evaluating', iteration: 2, episodesDone: 0 });
  assert.equal(etaMs(p, 1_020_000), 3 * 50_000);
  assert.equal(progressLine(p, 1_020_000), '[##########--------------]  40%  iteration 2/5 done  evaluating  ETA 2m30s');
  const text = progressLines(p, 1_020_000).join('\n');
  assert.match(text, /iteration {8}2 of 5 done$/m);
  assert.doesNotMatch(text, /episodes done/);
  // Before training (evaluation at 0 iterations): nothing done yet, no ETA.
  assert.match(progressLine(progress({ status: 'evaluating', iteration: 0, episodesDone: 0, recent: [] }), 0), /iteration 0\/5 done {2}evaluating {2}ETA \?$/);
  // Once the evaluation ends the next iteration runs as before.
  assert.match(progressLine(progress({ iteration: 2, episodesDone: 0 }), 1_020_000), /iteration 3\/5 {2}episodes 0\/4 {2}running/);
});

test("the weights' dtype of the last update, with why auto fell back to float32", () => {
  const updates = {
    a: { toVersion: 2, loss: 0.1, samples: 12, groups: 4, dtype: 'bfloat16' },
    b: { toVersion: 2, loss: 0.1, samples: 12, groups: 4, dtype: 'float32', dtypeNote: 'auto chose float32: no bf16 units' },
  };
  const text = progressLines(progress({ recent: [iteration(0, 60_000), { ...iteration(1, 40_000), updates }] }), 1_020_000).join('\n');
  assert.match(text, /dtype {12}a bfloat16, b float32 \(auto chose float32: no bf16 units\) \(iteration 2's update\)/);
  assert.doesNotMatch(progressLines(progress(), 1_020_000).join('\n'), /dtype/); // runs from before the field
});

test('the rollout engines of the last update: how many hold its version, how it reached them, and in how long', () => {
  const updates = { a: { toVersion: 2, loss: 0.1, samples: 12, groups: 4, rolloutSync: { engines: 2, seconds: 0.25 } }, b: { toVersion: 2, loss: 0.1, samples: 12, groups: 4 } };
  const text = progressLines(progress({ recent: [iteration(0, 60_000), { ...iteration(1, 40_000), updates }] }), 1_020_000).join('\n');
  assert.match(text, /rollout engines {2}a on 2, synced in 0\.250 s \(iteration 2's update\)/);
  const broadcast = { ...updates, b: { ...updates.b, rolloutSync: { engines: 1, seconds: 0.5, by: 'broadcast' as const } }, a: { ...updates.a, rolloutSync: { engines: 2, seconds: 2, by: 'file' as const, fallback: 'rank 2 never came' } } };
  const both = progressLines(progress({ recent: [{ ...iteration(1, 40_000), updates: broadcast }] }), 1_020_000).join('\n');
  assert.match(both, /a on 2, synced by file \(the broadcast failed: rank 2 never came\) in 2\.000 s, b on 1, synced by broadcast in 0\.500 s/);
  assert.doesNotMatch(progressLines(progress(), 1_020_000).join('\n'), /rollout engines/); // colocated, or runs from before
});

test('episodes with a prompt cut to max_prompt_length, counted over the recent iterations', () => {
  const text = progressLines(progress({ recent: [{ ...iteration(0, 60_000), truncatedEpisodes: 1 }, { ...iteration(1, 40_000), truncatedEpisodes: 2 }] }), 1_020_000).join('\n');
  assert.match(text, /prompts cut {6}3 of 8 episodes \(iterations 1-2\) had a prompt over training\.max_prompt_length, cut by training\.truncation/);
  assert.doesNotMatch(progressLines(progress(), 1_020_000).join('\n'), /prompts cut/); // none cut, or runs from before the count
});
