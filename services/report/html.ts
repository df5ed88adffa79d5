// The report's HTML: index.html (run summary, plots, episode table) and the episode pages.
import { CHART_SIZE } from './chartOption.js';
import type { NamedChart } from './runCharts.js';
import { episodePagePath, episodeScore } from './episodes.js';
import type { Transcript, TranscriptStep } from '../audit/transcript.js';
import type { RunData } from './load.js';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const num = (x: number | null | undefined, digits = 3) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–');

const STYLE = `body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}td pre{margin:0;max-width:520px;text-align:left}figure{margin:1.5em 0}figcaption{color:#555;max-width:760px}
pre{background:#f7f7f7;padding:.6em;white-space:pre-wrap;border:1px solid #e3e3e3}.chosen{background:#eaf6ea}`;

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${STYLE}</style></head>\n<body>\n${body}\n</body></html>\n`;
}

/** A table whose first column is left-aligned; `rowClass` names a CSS class per row. */
function table(head: string[], rows: string[][], rowClass: (i: number) => string = () => ''): string {
  const cell = (tag: string, v: string, i: number) => `<${tag}${i === 0 ? ' class="l"' : ''}>${v}</${tag}>`;
  return `<table><tr>${head.map((h, i) => cell('th', esc(h), i)).join('')}</tr>\n${rows
    .map((r, i) => `<tr${rowClass(i) ? ` class="${rowClass(i)}"` : ''}>${r.map((v, j) => cell('td', v, j)).join('')}</tr>`)
    .join('\n')}</table>`;
}

export function indexPage(d: RunData, charts: NamedChart[], linked: Set<string>, generatedAt: Date): string {
  const agents = [...new Set(d.iterations.flatMap((i) => Object.keys(i.rewardByAgent)))].sort();
  const policies = [...new Set(d.updates.map((u) => u.policy))].sort();
  const r = d.run;
  const summary = table(
    ['iteration', 'episodes', 'success', ...agents.map((a) => `reward ${a}`), ...policies.map((p) => `loss ${p}`)],
    d.iterations.map((it) => [
      String(it.iteration + 1),
      String(it.episodes),
      num(it.successRate),
      ...agents.map((a) => num(it.rewardByAgent[a])),
      ...policies.map((p) => num(d.updates.find((u) => u.policy === p && u.iteration === it.iteration)?.metrics.loss)),
    ]),
  );
  const evalAgents = [...new Set(d.evaluations.flatMap((e) => Object.keys(e.rewardByAgent)))].sort();
  const evaluations =
    d.evaluations.length === 0
      ? '<p>The run has no evaluation (training.val_freq is 0).</p>'
      : table(
          ['training iterations done', 'episodes', 'success', ...evalAgents.map((a) => `reward ${a}`)],
          d.evaluations.map((e) => [String(e.iteration ?? '–'), String(e.episodes), num(e.successRate), ...evalAgents.map((a) => num(e.rewardByAgent[a]))]),
        );
  const figures = charts
    .map((c) => `<figure><img src="${c.file}.png" alt="${esc(c.spec.title)}" width="${CHART_SIZE.width}" height="${CHART_SIZE.height}"><figcaption>${esc(c.caption)}</figcaption></figure>`)
    .join('\n');
  const shown = d.episodes.filter((e) => linked.has(e.episodeId));
  const episodeAgents = [...new Set(d.episodes.flatMap((e) => Object.keys(e.rewardByAgent ?? {})))].sort();
  const episodeRows = shown.map((e) => [
    `<a href="${esc(episodePagePath(r.runId, e.episodeId))}">${esc(e.episodeId)}</a>`,
    String(e.iteration + 1),
    String(e.problemSeed),
    e.success === null ? '–' : e.success ? 'yes' : 'no',
    String(e.turns ?? '–'),
    ...episodeAgents.map((a) => num(e.rewardByAgent?.[a])),
    num(episodeScore(e)),
  ]);
  const unlinked = d.episodes.length - shown.length;
  return page(
    `Tandem report: ${r.runId}`,
    `<h1>Run ${esc(r.runId)}</h1>
<p>Status <b>${esc(r.status)}</b>, ${r.iterationsDone}/${r.totalIterations} iterations, started ${esc(r.startedAt.toISOString())}${
      r.finishedAt ? `, finished ${esc(r.finishedAt.toISOString())}` : ''
    }. Report written ${esc(generatedAt.toISOString())} from the run's Postgres read models.</p>
<h2>Iterations</h2>
${summary}
<h2>Evaluations</h2>
${evaluations}
<h2>Plots</h2>
${figures}
<h2>Episodes</h2>
<p>${
      unlinked > 0
        ? `The best and the worst episode of each iteration, by mean reward over agents. ${unlinked} other episodes are not shown.`
        : 'Every finished episode of the run.'
    }</p>
${table(['episode', 'iteration', 'problem seed', 'success', 'turns', ...episodeAgents.map((a) => `reward ${a}`), 'mean reward'], episodeRows)}`,
  );
}

const json = (x: unknown) => JSON.stringify(x, null, 2);

function step(s: TranscriptStep): string {
  const shown = [
    `<h4>Observation</h4>\n<pre>${s.observation === null ? '(not recorded)' : esc(json(s.observation))}</pre>`,
    s.handoff === null ? '' : `<h4>Handoff</h4>\n<pre>${esc(json(s.handoff))}</pre>`,
    `<h4>Prompt</h4>\n${s.prompt === null ? '<pre>(not recorded)</pre>' : s.prompt.map((m) => `<p><b>${esc(m.role)}</b></p><pre>${esc(m.content)}</pre>`).join('\n')}`,
  ];
  const rows = s.candidates.map((c) => [
    `${c.candidate}${c.chosen ? ' (chosen)' : ''}`,
    `<pre>${esc(c.text ?? '(not recorded)')}</pre>`,
    esc(c.outcome),
    num(c.local),
    num(c.global),
    num(c.reward),
    num(c.advantage),
    c.update ? `${esc(c.update.policy)} v${c.update.fromVersion}→v${c.update.toVersion}` : '–',
  ]);
  const rowClass = (i: number) => (s.candidates[i].chosen ? 'chosen' : '');
  return `<h3>Turn ${s.turn + 1} · ${esc(s.agent)} · ${esc(s.policy)} v${s.policyVersion}</h3>
<p>Group ${esc(s.groupKey)}; the episode continued from candidate ${s.chosen}.</p>
${shown.join('\n')}
<h4>Candidates</h4>
${table(['candidate', 'response', 'outcome', 'local', 'global', 'reward', 'advantage', 'update'], rows, rowClass)}`;
}

/**
 * An episode's page, from its audit transcript: per (turn, agent) step what the agent was shown and
 * every candidate. BACK: where its link to the run goes (the report's index; the dashboard's run page).
 */
export function episodePage(t: Transcript, back = '../index.html'): string {
  const rewards = Object.entries(t.rewardByAgent ?? {}).map(([a, v]) => `${esc(a)} ${num(v)}`).join(', ');
  return page(
    `Episode ${t.episodeId}`,
    `<p><a href="${esc(back)}">← run ${esc(t.runId)}</a></p>
<h1>Episode ${esc(t.episodeId)}</h1>
<p>${esc(t.env ?? 'env ?')}, iteration ${t.iteration + 1}, problem seed ${t.problemSeed}, ${esc(t.status)}, success ${
      t.success === null ? '–' : t.success ? 'yes' : 'no'
    }, ${t.turns ?? '–'} turns. Reward of the chosen candidates: ${rewards || '–'}. The same transcript as text: <code>npx tandem episodes show ${esc(t.episodeId)}</code>.</p>
${t.steps.map(step).join('\n')}`,
  );
}
