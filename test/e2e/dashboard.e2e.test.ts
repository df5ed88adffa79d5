// The dashboard in a real browser: Debian's chromium, driven by playwright-core, on a dashboard
// server started in this process against the test stack, while a short real run goes. The runs
// page and the run page load with no console error; a chart gains a point when an iteration
// finishes, and the engine's busy fraction shows; the pause button pauses the run (the page says
// so, and so does the run's progress query) and resume resumes it; an episode page shows the
// candidates and their rewards; the stop button ends the run. A request addressed to another
// host name (DNS rebinding) gets 403 on every route, and a signal from another origin is refused.
// A screenshot per check goes to <test data>/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { count, eq } from 'drizzle-orm';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { loadRunConfig } from '../../configs/load.js';
import { iterations } from '../../infra/db/schema.js';
import { CPU_QUEUE } from '../../infra/settings.js';
import { startDashboard, type Dashboard } from '../../services/dashboard/server.js';
import { progressQuery } from '../../workflows/messages.js';
import { trainingRun } from '../../workflows/trainingRun.js';
import { eventually, progressUntil } from '../support/eventually.js';
import { database, settings, temporal } from '../support/stack.js';

// Far more iterations than the test lets run: it stops the run at the end.
const ITERATIONS = 20;
const SMALL = [
  `training.total_training_steps=${ITERATIONS}`,
  'training.train_batch_size=2',
  'training.train_sample_num=2',
  'training.max_response_length=16',
  'env.max_turns=1',
  'rollout.episode_window=1', // one episode at a time, so a pause lands between episodes
];
const SLOW = 600_000;
const ACTIVE = ['running', 'updating', 'evaluating'];
const runId = `dashboard-e2e-${Date.now()}`;
const shots = join(settings.dataDir, 'screenshots');

const t = await temporal();
const pg = database();
let dashboard: Dashboard;
let browser: BrowserContext;
let handle: WorkflowHandle<typeof trainingRun>;
const userDataDir = mkdtempSync(join(tmpdir(), 'tandem-chromium-'));
/** Every console error and uncaught page error, of every page the test opens. */
const errors: string[] = [];

before(async () => {
  mkdirSync(shots, { recursive: true });
  dashboard = await startDashboard({ port: 0 });
  // The machine has no internet: without the background-networking flags chromium floods refused connections.
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const cfg = loadRunConfig('configs/planpath/planpath_L1_prompt.yaml', SMALL);
  assert.ok(cfg.ok, JSON.stringify(!cfg.ok && cfg.issues));
  handle = await t.client.workflow.start(trainingRun, { taskQueue: CPU_QUEUE, workflowId: runId, args: [{ config: cfg.config }] });
});

after(async () => {
  await handle?.terminate('the dashboard test ended').catch(() => undefined); // only if the stop did not end it
  await browser?.close();
  await dashboard?.close();
  await t.close();
  await pg.close();
  rmSync(userDataDir, { recursive: true, force: true });
});

async function open(url: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (m) => m.type() === 'error' && errors.push(`${page.url()}: console: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  await page.goto(new URL(url, dashboard.url).href);
  return page;
}

const shoot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

/** Polls the page until `read` gives a value that `ok` accepts. */
function pageUntil<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  return eventually(what, async () => {
    const v = await read();
    return ok(v) ? v : undefined;
  }, SLOW);
}

let runPage: Page;
const status = () => runPage.locator('#status').innerText();
const points = async (chart: string) => Number(await runPage.locator(`[data-chart="${chart}"]`).getAttribute('data-points', { timeout: SLOW }));

test('the runs page lists the run, and loads with no console error', { timeout: SLOW }, async () => {
  const page = await open('/');
  const row = page.locator(`tr[data-run="${runId}"]`);
  await row.waitFor({ timeout: SLOW }); // once the projector has recorded the run's start
  assert.match(await row.locator('td.status').innerText(), /^(running|updating|evaluating)$/);
  await shoot(page, 'runs');
  assert.deepEqual(errors, []);
  await page.close();
});

test("a chart gains a point when an iteration finishes; the run page has no console error", { timeout: 2 * SLOW }, async () => {
  runPage = await open(`/run.html?id=${encodeURIComponent(runId)}`);
  // Every chart of the report is on the page.
  await pageUntil('the charts drawn', () => runPage.locator('[data-chart]').count(), (n) => n === 10);
  const before = await pageUntil('the first iteration on the success chart', () => points('success_rate'), (n) => n >= 1);
  const grown = await pageUntil('a point more on the success chart', () => points('success_rate'), (n) => n > before);
  // One point per recorded iteration: never more points than iterations recorded (two iterations
  // may land between two of the page's updates on a fast machine, so not exactly before + 1).
  const [recorded] = await pg.db.select({ n: count() }).from(iterations).where(eq(iterations.runId, runId));
  assert.ok(recorded.n >= grown, `${recorded.n} iterations recorded, ${grown} points shown`);
  assert.ok((await points('reward_per_agent')) >= 2 * grown, 'both agents gain a point per iteration');
  await pageUntil('an ETA, once iterations have finished', () => runPage.locator('#eta').innerText(), (eta) => /^(\d+s|\d+m\d\ds|\d+h\d\dm)$/.test(eta));
  await pageUntil("the engine's busy fraction", () => runPage.locator('#engine-busy').innerText(), (text) => /engine busy \d+%/.test(text));
  await shoot(runPage, 'run-chart-grew');
  assert.deepEqual(errors, []);
});

/** A request to the dashboard with the headers a browser would send from `host` (fetch cannot set Host). */
function raw(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, dashboard.url), { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a request addressed to another host name gets 403 on every route; a signal from another origin is refused', { timeout: SLOW }, async () => {
  const port = new URL(dashboard.url).port;
  const evil = { host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}`, 'x-tandem-dashboard': '1' };
  const routes: [string, string][] = [
    ['GET', '/'],
    ['GET', '/run.html'],
    ['GET', '/run.js'],
    ['GET', '/api/runs'],
    ['GET', `/api/runs/${runId}/stream`],
    ['GET', `/episode?id=${runId}/it0/ep0`],
    ['POST', `/api/runs/${runId}/pause`],
    ['POST', `/api/runs/${runId}/stop`],
  ];
  for (const [method, path] of routes) {
    const r = await raw(method, path, evil);
    assert.equal(r.status, 403, `${method} ${path}`);
    assert.match(r.body, /Host evil\.example\.com:\d+ is not this dashboard's/, `${method} ${path}`);
    assert.ok(!r.body.includes(runId), `${method} ${path}: nothing of the run`);
  }
  // Its own names are answered...
  for (const name of ['127.0.0.1', 'localhost', '[::1]']) assert.equal((await raw('GET', '/api/runs', { host: `${name}:${port}` })).status, 200, name);
  // ...but a signal needs its own page's Origin too, with the page's header.
  const own = { host: `localhost:${port}`, 'x-tandem-dashboard': '1' };
  for (const origin of [undefined, `http://evil.example.com:${port}`, 'null']) {
    const r = await raw('POST', `/api/runs/${runId}/pause`, origin === undefined ? own : { ...own, origin });
    assert.equal(r.status, 403, `Origin ${origin}`);
    assert.match(r.body, /only the dashboard's own page may send signals/);
  }
  assert.notEqual((await handle.query(progressQuery)).status, 'paused', 'no refused signal reached the run');
});

test('the pause button pauses the run, and resume resumes it; a post from elsewhere is refused', { timeout: 2 * SLOW }, async () => {
  // Without the page's header (as another site's form would post): refused, nothing sent.
  const foreign = await fetch(new URL(`/api/runs/${runId}/pause`, dashboard.url), { method: 'POST' });
  assert.equal(foreign.status, 403);
  assert.match(((await foreign.json()) as { error: string }).error, /x-tandem-dashboard/);
  assert.notEqual((await handle.query(progressQuery)).status, 'paused');
  await pageUntil('the pause button enabled', () => runPage.locator('#pause').isEnabled(), (on) => on);
  await runPage.click('#pause');
  await pageUntil('the page says paused', status, (s) => s === 'paused');
  const paused = await progressUntil(handle, 'the run paused', (p) => p.status === 'paused');
  assert.ok(paused.pausedSince !== null);
  assert.match(await runPage.locator('#message').innerText(), /pause sent/);
  await shoot(runPage, 'run-paused');

  await pageUntil('the resume button enabled', () => runPage.locator('#resume').isEnabled(), (on) => on);
  await runPage.click('#resume');
  await pageUntil('the page says running', status, (s) => ACTIVE.includes(s));
  const resumed = await progressUntil(handle, 'the run resumed', (p) => p.status !== 'paused');
  assert.equal(resumed.pausedSince, null);
  await shoot(runPage, 'run-resumed');
  assert.deepEqual(errors, []);
});

test("an episode page shows each step's candidates and their rewards", { timeout: SLOW }, async () => {
  // The latest finished episode (the table lists the latest first, running ones too).
  const first = runPage.locator('#episode-table tbody tr', { has: runPage.locator('td', { hasText: /^finished$/ }) }).first().locator('a');
  await first.waitFor({ timeout: SLOW });
  const episodeId = await first.innerText();
  const page = await open((await first.getAttribute('href'))!);
  assert.equal(await page.locator('h1').innerText(), `Episode ${episodeId}`);
  assert.ok((await page.locator('h3').count()) >= 2, 'both agents act in the turn');
  const candidates = page.locator('table').filter({ has: page.locator('th', { hasText: 'reward' }) });
  assert.equal(await candidates.count(), await page.locator('h3').count(), 'a candidates table per step');
  assert.deepEqual(await candidates.first().locator('th').allInnerTexts(), ['candidate', 'response', 'outcome', 'local', 'global', 'reward', 'advantage', 'update']);
  const rows = candidates.first().locator('tr:has(td)');
  assert.equal(await rows.count(), 2, 'K = 2 candidates');
  assert.match(await rows.first().locator('td').nth(5).innerText(), /^-?\d+\.\d{3}$/, 'a reward');
  assert.equal(await page.locator('tr.chosen').count(), await page.locator('h3').count(), 'one chosen candidate per step');
  assert.equal(await page.locator(`a[href="/run.html?id=${runId}"]`).count(), 1, 'a link back to the run');
  await shoot(page, 'episode');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the stop button ends the run, stopped', { timeout: 2 * SLOW }, async () => {
  await runPage.click('#stop');
  const result = await handle.result();
  assert.equal(result.status, 'stopped');
  await pageUntil('the page says stopped', status, (s) => s === 'stopped');
  await shoot(runPage, 'run-stopped');
  assert.deepEqual(errors, []);
});
