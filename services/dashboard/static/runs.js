// The runs page (index.html): polls /api/runs and fills the table; each run links to its page.
import { cell, link, showMessage } from './page.js';

const POLL_MS = 2000;

async function refresh() {
  try {
    const res = await fetch('/api/runs');
    const runs = await res.json();
    if (!res.ok) throw new Error(runs.error);
    const body = document.querySelector('#runs tbody');
    body.replaceChildren(
      ...runs.map((r) => {
        const tr = document.createElement('tr');
        tr.dataset.run = r.runId;
        tr.append(
          cell(link(`/run.html?id=${encodeURIComponent(r.runId)}`, r.runId), 'l'),
          cell(r.state.status, 'l status'),
          cell(r.state.iteration),
          cell(`${Math.floor(r.state.fraction * 100)}%`),
          cell(r.state.eta ?? '–'),
          cell(new Date(r.startedAt).toLocaleString(), 'l'),
        );
        return tr;
      }),
    );
    showMessage(runs.length === 0 ? 'No run yet: start one with `npx tandem train CONFIG`.' : '');
  } catch (err) {
    showMessage(`cannot list the runs: ${err.message}`, true);
  }
}

refresh();
setInterval(refresh, POLL_MS);
