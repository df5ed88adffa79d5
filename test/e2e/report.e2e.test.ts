// End to end: `tandem report` writes the plots and pages of a short real run (the shared run of
// test/support/sharedRun.ts) from Postgres. Every PNG is a valid, non-empty PNG; every link of the
// HTML resolves to a file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { episodes } from '../../infra/db/schema.js';
import { SHARED_RUN, sharedRun } from '../support/sharedRun.js';
import { database } from '../support/stack.js';

const { runId, iterations: ITERATIONS, episodes: EPISODES, valProblems: VAL_PROBLEMS } = SHARED_RUN;
const out = mkdtempSync(join(tmpdir(), 'tandem-report-'));
const pg = database();
after(async () => {
  await pg.close();
  rmSync(out, { recursive: true, force: true });
});

const tandem = (...args: string[]) => spawnSync(process.execPath, ['bin/tandem.js', ...args], { encoding: 'utf8', timeout: 900_000 });

let report: ReturnType<typeof tandem>;

before(async () => {
  await sharedRun();
  report = tandem('report', runId, '--out', out);
});

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  assert.deepEqual(b.subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), `${file} is a PNG`);
  assert.equal(b.subarray(12, 16).toString('latin1'), 'IHDR', file);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

const links = (html: string) => [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]);

test('tandem report writes index.html, the plots and the episode pages', () => {
  assert.equal(report.status, 0, report.stderr);
  assert.match(report.stdout, new RegExp(`${join(out, 'index.html')}`));
  const pngs = readdirSync(out).filter((f) => f.endsWith('.png')).sort();
  assert.deepEqual(pngs, [
    'evaluation.png', 'reward_per_agent.png', 'reward_per_turn.png', 'success_rate.png', 'tokens_per_second.png',
    'update_clip_fraction.png', 'update_entropy.png', 'update_kl.png', 'update_loss.png', 'update_no_signal.png',
  ]);
  for (const f of pngs) {
    assert.ok(statSync(join(out, f)).size > 5_000, `${f} has the drawing in it`);
    assert.deepEqual(pngSize(join(out, f)), { width: 760, height: 420 }, f);
  }
});

test('every link of index.html and of the episode pages resolves to a file; every training episode is linked, no evaluation episode', async () => {
  const index = join(out, 'index.html');
  const html = readFileSync(index, 'utf8');
  const indexLinks = links(html);
  const pages = indexLinks.filter((l) => l.endsWith('.html'));
  const rows = await pg.db.select({ episodeId: episodes.episodeId }).from(episodes).where(eq(episodes.runId, runId));
  const training = rows.filter((r) => /\/it\d+\/ep\d+$/.test(r.episodeId) && !r.episodeId.includes('/eval/'));
  assert.equal(training.length, ITERATIONS * EPISODES);
  assert.equal(rows.length, training.length + 2 * VAL_PROBLEMS, 'the two evaluations\' episodes are recorded under the run too');
  assert.equal(pages.length, training.length, 'few episodes: each training episode has a page');
  assert.deepEqual(indexLinks.filter((l) => l.endsWith('.png')).sort(), readdirSync(out).filter((f) => f.endsWith('.png')).sort(), 'every plot shown, once');
  for (const file of [index, ...pages.map((p) => join(out, p))]) {
    for (const link of links(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), link);
      assert.ok(existsSync(target), `${file} links ${link}, which is missing`);
    }
  }
  for (const { episodeId } of training) assert.match(html, new RegExp(`>${episodeId}</a>`));
  assert.doesNotMatch(html, /\/eval\//, 'evaluation episodes are not in the episode table');
  // The evaluations table: before training (0 iterations done) and after the last iteration.
  const evals = html.slice(html.indexOf('<h2>Evaluations</h2>'), html.indexOf('<h2>Plots</h2>'));
  assert.deepEqual([...evals.matchAll(/<tr><td class="l">(\d+)<\/td><td>(\d+)<\/td>/g)].map((m) => [Number(m[1]), Number(m[2])]), [
    [0, VAL_PROBLEMS],
    [ITERATIONS, VAL_PROBLEMS],
  ]);
});

test("an episode page shows each (turn, agent) step from the audit transcript: prompt, candidates' responses and scores", () => {
  const page = links(readFileSync(join(out, 'index.html'), 'utf8')).find((l) => l.endsWith('.html'))!;
  const html = readFileSync(join(out, page), 'utf8');
  const steps = html.match(/<h3>Turn \d+ · \w+ · shared_model v\d+<\/h3>/g) ?? [];
  assert.ok(steps.length >= 2, 'both agents act in the first turn');
  assert.equal(html.match(/<tr class="chosen">/g)?.length, steps.length, 'one chosen candidate per step');
  assert.equal(html.match(/<h4>Prompt<\/h4>/g)?.length, steps.length);
  assert.doesNotMatch(html, /\(not recorded\)<\/pre><\/td>/, 'every response is recorded');
  assert.match(html, /shared_model v0→v1/, 'candidates name the update that consumed them');
});

test('a run that is not in the database is an error naming it', () => {
  const r = tandem('report', 'no-such-run', '--out', join(out, 'none'));
  assert.equal(r.status, 1);
  assert.match(r.stderr, /run no-such-run is not in the database/);
  assert.equal(existsSync(join(out, 'none')), false);
});
