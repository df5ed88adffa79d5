// A run's page (run.html?id=RUN_ID): follows /api/runs/RUN_ID/stream (server-sent events) and
// shows the run's state (and the engine's busy fraction while it runs), its charts (ECharts options made on the server from the report's chart
// definitions; each chart's box carries data-points, its number of points), the evaluations and
// the episodes, each linked to its transcript page. The buttons send the run's pause, resume and
// stop signals.
import { cell, link, num, showMessage } from './page.js';

/* global echarts */
const runId = new URLSearchParams(location.search).get('id');
const $ = (id) => document.getElementById(id);
/** Episodes shown, the latest first. */
const EPISODES_SHOWN = 200;
const ACTIVE = ['running', 'updating', 'evaluating'];
const charts = new Map();

function showState(s) {
  $('status').textContent = s.status;
  document.body.dataset.status = s.status;
  $('iteration').textContent = s.iteration;
  const p = s.progress;
  $('episodes').textContent = p && ACTIVE.includes(s.status) ? `episodes ${p.episodesDone}/${p.episodesPerIteration} (${p.episodesInFlight} in flight) ·` : '';
  $('eta').textContent = s.eta ?? '–';
  $('engine-busy').textContent = s.engineBusy === null ? '' : ` · engine busy ${Math.round(s.engineBusy * 100)}%`;
  $('versions').textContent = p ? ` · ${versionsText(p)}` : '';
  $('fraction').value = s.fraction;
  $('pause').disabled = !ACTIVE.includes(s.status);
  $('resume').disabled = s.status !== 'paused';
  $('stop').disabled = !(ACTIVE.includes(s.status) || s.status === 'paused');
}

/**
 * Each policy's version (new episodes generate with it), the update in flight from it, and under
 * asynchronous training the staleness of the samples of its last update.
 */
function versionsText(p) {
  const last = p.recent.at(-1);
  return Object.entries(p.versions)
    .map(([name, v]) => {
      const training = p.training?.[name] === undefined ? '' : ` (training v${p.training[name]}→v${p.training[name] + 1})`;
      const stale = last?.updates[name]?.staleness;
      return `${name} v${v}${training}${stale ? `, samples ${stale.mean.toFixed(2)} versions old (max ${stale.max})` : ''}`;
    })
    .join(' · ');
}

function showCharts(list) {
  for (const c of list) {
    let entry = charts.get(c.file);
    if (!entry) {
      const figure = document.createElement('figure');
      const box = document.createElement('div');
      box.className = 'chart';
      box.dataset.chart = c.file;
      const caption = document.createElement('figcaption');
      caption.textContent = c.caption;
      figure.append(box, caption);
      $('charts').append(figure);
      entry = { box, chart: echarts.init(box, null, { renderer: 'svg' }) };
      charts.set(c.file, entry);
    }
    entry.chart.setOption(c.option, { notMerge: true });
    entry.box.dataset.points = String(c.points);
  }
}

function headRow(names) {
  const tr = document.createElement('tr');
  names.forEach((n, i) => {
    const th = document.createElement('th');
    if (i === 0) th.className = 'l';
    th.textContent = n;
    tr.append(th);
  });
  return tr;
}

const agentsOf = (rows) => [...new Set(rows.flatMap((r) => Object.keys(r.rewardByAgent ?? {})))].sort();

function showEvaluations(evaluations) {
  const agents = agentsOf(evaluations);
  $('evaluations').tHead.replaceChildren(headRow(['training iterations done', 'episodes', 'success', ...agents.map((a) => `reward ${a}`)]));
  $('evaluations').tBodies[0].replaceChildren(
    ...evaluations.map((e) => {
      const tr = document.createElement('tr');
      tr.append(cell(String(e.iteration ?? '–'), 'l'), cell(String(e.episodes)), cell(num(e.successRate)), ...agents.map((a) => cell(num(e.rewardByAgent[a]))));
      return tr;
    }),
  );
}

function showEpisodes(episodes) {
  const agents = agentsOf(episodes);
  const shown = episodes.slice(-EPISODES_SHOWN).reverse();
  $('episodes-note').textContent = shown.length < episodes.length ? `The latest ${shown.length} of ${episodes.length} training episodes.` : `${episodes.length} training episodes, the latest first.`;
  $('episode-table').tHead.replaceChildren(headRow(['episode', 'iteration', 'problem seed', 'status', 'success', 'turns', ...agents.map((a) => `reward ${a}`), 'mean reward']));
  $('episode-table').tBodies[0].replaceChildren(
    ...shown.map((e) => {
      const tr = document.createElement('tr');
      tr.dataset.episode = e.episodeId;
      tr.append(
        cell(link(`/episode?id=${encodeURIComponent(e.episodeId)}`, e.episodeId), 'l'),
        cell(String(e.iteration + 1)),
        cell(String(e.problemSeed)),
        cell(e.status),
        cell(e.success === null ? '–' : e.success ? 'yes' : 'no'),
        cell(String(e.turns ?? '–')),
        ...agents.map((a) => cell(num(e.rewardByAgent?.[a]))),
        cell(num(e.score)),
      );
      return tr;
    }),
  );
}

function showRecord(r) {
  const run = r.run;
  $('times').textContent = `Started ${new Date(run.startedAt).toLocaleString()}${run.finishedAt ? `, finished ${new Date(run.finishedAt).toLocaleString()}` : ''}; ${run.iterationsDone}/${run.totalIterations} iterations recorded.`;
  showCharts(r.charts);
  showEvaluations(r.evaluations);
  showEpisodes(r.episodes);
}

async function send(action) {
  for (const b of ['pause', 'resume', 'stop']) $(b).disabled = true; // until the next state
  try {
    const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/${action}`, { method: 'POST', headers: { 'x-tandem-dashboard': '1' } });
    const body = await res.json();
    if (!res.ok) throw new Error(body.error);
    showMessage(body.message);
  } catch (err) {
    showMessage(`${action} failed: ${err.message}`, true);
  }
}

if (!runId) {
  showMessage('no run: open this page as run.html?id=RUN_ID', true);
} else {
  $('run-id').textContent = runId;
  document.title = `Tandem run ${runId}`;
  for (const action of ['pause', 'resume', 'stop']) $(action).addEventListener('click', () => send(action));
  const events = new EventSource(`/api/runs/${encodeURIComponent(runId)}/stream`);
  events.addEventListener('state', (e) => showState(JSON.parse(e.data)));
  events.addEventListener('record', (e) => showRecord(JSON.parse(e.data)));
  events.addEventListener('failure', (e) => showMessage(JSON.parse(e.data).error, true));
  addEventListener('resize', () => charts.forEach(({ chart }) => chart.resize()));
}
