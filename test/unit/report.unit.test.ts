// The report's pieces without services: charts from read-model rows, their ECharts options (the
// report's and the dashboard's), PNGs, pages and their links.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LineSeriesOption } from 'echarts';
import { CHART_SIZE, chartOption, pointCount } from '../../services/report/chartOption.js';
import { reportCharts } from '../../services/report/runCharts.js';
import { episodePagePath, episodesToLink, LINK_ALL_UP_TO } from '../../services/report/episodes.js';
import { episodePage, indexPage } from '../../services/report/html.js';
import type { RunData } from '../../services/report/load.js';
import type { Transcript } from '../../services/audit/transcript.js';
import { chartPng } from '../../services/report/png.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);

function runData(episodesPerIteration: number, iterations = 2): RunData {
  const eps: RunData['episodes'] = [];
  for (let i = 0; i < iterations; i++) {
    for (let j = 0; j < episodesPerIteration; j++) {
      eps.push({ episodeId: `r1/it${i}/ep${j}`, iteration: i, problemSeed: i * 10 + j, status: 'finished', success: j % 2 === 0, turns: 2, rewardByAgent: { coder: j, tester: -j } });
    }
  }
  return {
    run: { runId: 'r1', status: 'completed', totalIterations: iterations, iterationsDone: iterations, startedAt: t0, finishedAt: at(100) },
    iterations: [...Array(iterations).keys()].map((i) => ({ iteration: i, episodes: episodesPerIteration, successRate: 0.5, rewardByAgent: { coder: i, tester: 0.5 } })),
    episodes: eps,
    turnRewards: [
      { agent: 'coder', turn: 0, chosen: 1, all: 0.5 },
      { agent: 'coder', turn: 1, chosen: 2, all: 1.5 },
      { agent: 'tester', turn: 0, chosen: null, all: 0 },
    ],
    updates: [...Array(iterations).keys()].map((i) => ({
      policy: 'shared', iteration: i, fromVersion: i, toVersion: i + 1, samples: 6, groups: 3,
      metrics: { loss: 0.1 * i, pg_loss: 0.1, approx_kl: 0.01, clip_fraction: 0.2, entropy: 0.8 + i, tokens: 500, zero_advantage_samples: 2 * i },
    })),
    evaluations: [
      { iteration: 0, episodes: 4, successRate: 0.25, rewardByAgent: { coder: -1 } },
      { iteration: iterations, episodes: 4, successRate: 0.5, rewardByAgent: { coder: 0.5 } },
    ],
    times: { started: t0, iterationFinished: new Map([...Array(iterations).keys()].map((i) => [i, at(10 * (i + 1))])) },
  };
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(png: Buffer): { width: number; height: number } {
  assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE);
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

test('a chart option has one line series per spec series, its finite points in x order, dashed where asked; JSON only', () => {
  const option = chartOption({
    title: 'T', xLabel: 'iteration', yLabel: 'reward', integerX: true,
    series: [{ name: 'a', points: [[2, 1], [1, 0.5], [3, Number.NaN]] }, { name: 'b', dashed: true, points: [[1, -1]] }],
  });
  const series = option.series as LineSeriesOption[];
  assert.deepEqual(series.map((s) => [s.type, s.name, s.data, s.lineStyle?.type]), [['line', 'a', [[1, 0.5], [2, 1]], 'solid'], ['line', 'b', [[1, -1]], 'dashed']]);
  assert.equal(pointCount(option), 3);
  assert.deepEqual(option.title, { text: 'T', left: 70, top: 12, textStyle: { fontSize: 16 } });
  assert.equal((option.xAxis as { minInterval?: number }).minInterval, 1, 'iterations on whole numbers');
  assert.equal(option.graphic, undefined);
  assert.deepEqual(JSON.parse(JSON.stringify(option)), option, 'the dashboard sends it as JSON to the browser');
  const empty = chartOption({ title: 'E', xLabel: 'x', yLabel: 'y', series: [] });
  assert.equal(pointCount(empty), 0);
  assert.match(JSON.stringify(empty.graphic), /no data/);
});

test('every chart renders to a valid PNG of the chart size, also with no data or a single point', () => {
  const empty = { ...runData(0, 0), turnRewards: [], updates: [], evaluations: [] };
  for (const c of [...reportCharts(runData(2)), ...reportCharts(runData(1, 1)), ...reportCharts(empty)]) {
    const png = chartPng(c.spec);
    assert.ok(png.length > 3000, `${c.file}: ${png.length} bytes`);
    assert.deepEqual(pngSize(png), CHART_SIZE, c.file);
  }
});

test('the charts carry the read models: reward per agent, per-turn reward, evaluations, update metrics, tokens/s', () => {
  const charts = Object.fromEntries(reportCharts(runData(2)).map((c) => [c.file, c.spec]));
  assert.deepEqual(charts.reward_per_agent.series.find((s) => s.name === 'coder')?.points, [[1, 0], [2, 1]]);
  assert.deepEqual(charts.reward_per_turn.series.find((s) => s.name === 'coder chosen')?.points, [[1, 1], [2, 2]]);
  assert.deepEqual(charts.reward_per_turn.series.find((s) => s.name === 'coder all K')?.points, [[1, 0.5], [2, 1.5]]);
  assert.deepEqual(charts.reward_per_turn.series.find((s) => s.name === 'tester chosen')?.points, [], 'no chosen candidate: no point');
  assert.deepEqual(charts.evaluation.series.map((s) => [s.name, s.points]), [['success rate', [[0, 0.25], [2, 0.5]]], ['reward coder', [[0, -1], [2, 0.5]]]]);
  assert.deepEqual(charts.update_loss.series.map((s) => s.name), ['shared loss', 'shared pg_loss']);
  assert.deepEqual(charts.update_kl.series.map((s) => s.name), ['shared approx_kl'], 'kl is absent when kl_coef is 0');
  assert.deepEqual(charts.update_entropy.series.map((s) => [s.name, s.points]), [['shared', [[1, 0.8], [2, 1.8]]]]);
  assert.deepEqual(charts.update_no_signal.series.map((s) => [s.name, s.points]), [['shared', [[1, 0], [2, 2 / 6]]]]);
  // 500 tokens per iteration; iterations end 10 s apart.
  assert.deepEqual(charts.tokens_per_second.series[0].points, [[1, 50], [2, 50]]);
});

test('a few episodes are all linked; many: the best and worst of each iteration', () => {
  assert.equal(episodesToLink(runData(3).episodes).size, 6);
  const many = runData(LINK_ALL_UP_TO);
  assert.deepEqual([...episodesToLink(many.episodes)].sort(), [`r1/it0/ep0`, `r1/it0/ep${LINK_ALL_UP_TO - 1}`, `r1/it1/ep0`, `r1/it1/ep${LINK_ALL_UP_TO - 1}`].sort());
  assert.equal(episodePagePath('r1', 'r1/it3/ep1'), 'episodes/it3-ep1.html');
});

test('the index links every plot and every linked episode page', () => {
  const d = runData(2);
  const charts = reportCharts(d);
  const linked = episodesToLink(d.episodes);
  const html = indexPage(d, charts, linked, t0);
  const hrefs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(hrefs.filter((h) => h.endsWith('.png')), charts.map((c) => `${c.file}.png`));
  assert.deepEqual(hrefs.filter((h) => h.endsWith('.html')).sort(), [...linked].map((id) => episodePagePath('r1', id)).sort());
});

test('an episode page shows each step: observation, prompt, every candidate with its response, scores, advantage and update', () => {
  const candidate = (c: number, chosen: boolean) => ({
    sampleId: `s${c}`, candidate: c, text: c ? 'print(<1>)' : null, outcome: 'ok & fine', local: c, global: 1, reward: c + 1,
    done: null, solved: null, chosen, advantage: c ? 0.7 : null, update: c ? { policy: 'shared', fromVersion: 0, toVersion: 1 } : null,
  });
  const t: Transcript = {
    episodeId: 'r1/it0/ep1', runId: 'r1', iteration: 0, problemSeed: 7, phase: 'train', env: 'planpath', status: 'finished', success: false, turns: 1,
    rewardByAgent: { coder: 2 },
    steps: [
      { turn: 0, agent: 'coder', groupKey: 'g0', policy: 'shared', policyVersion: 0, observation: { grid: '#.<' }, handoff: null,
        prompt: [{ role: 'user', content: 'solve <this>' }], chosen: 1, candidates: [candidate(0, false), candidate(1, true)] },
      { turn: 0, agent: 'tester', groupKey: 'g1', policy: 'shared', policyVersion: 0, observation: null, handoff: { code: 'x' },
        prompt: null, chosen: 0, candidates: [candidate(0, true)] },
    ],
  };
  const ep = episodePage(t);
  assert.match(ep, /href="..\/index.html"/);
  assert.match(episodePage(t, '/run.html?id=r1&x'), /<a href="\/run.html\?id=r1&amp;x">← run r1<\/a>/, 'the link back, escaped');
  assert.deepEqual(ep.match(/<h3>[^<]*<\/h3>/g), ['<h3>Turn 1 · coder · shared v0</h3>', '<h3>Turn 1 · tester · shared v0</h3>']);
  assert.equal(ep.match(/<tr class="chosen">/g)?.length, 2, 'one chosen candidate per step');
  assert.match(ep, /&quot;grid&quot;: &quot;#.&lt;&quot;/, 'the observation, escaped');
  assert.match(ep, /<pre>solve &lt;this&gt;<\/pre>/);
  assert.match(ep, /<pre>print\(&lt;1&gt;\)<\/pre>/);
  assert.match(ep, /ok &amp; fine/);
  assert.match(ep, /0\.700<\/td><td>shared v0→v1<\/td>/);
  assert.match(ep, /<h4>Handoff<\/h4>/);
  assert.match(ep, /\(not recorded\)/);
});
