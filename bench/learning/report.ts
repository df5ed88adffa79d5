// The learning bench's report: from a results file's runs, the Markdown section for
// bench/RESULTS.md (the tuning table, the table of rows on test problems, sampled and greedy, with
// each row's area under its validation curve, the paired contrasts named in advance with Holm's
// correction and their minimum detectable effects) and the learning curves as a PNG beside the
// results file.
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { chartPng } from '../../services/report/png.js';
import type { RunResult, Settings } from './resultsFile.js';
import { CONTRASTS, type Family, type Row, type Suite } from './rows.js';
import { curveArea, holm, interval, mean, pairedContrast } from './stats.js';

export interface ReportInput {
  suite: Suite;
  settings: Settings;
  rows: Row[];
  results: RunResult[];
  resultsFile: string;
  rates: Record<Family, { lr: number; source: string }>;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const pts = (x: number) => (Number.isFinite(x) ? (100 * x).toFixed(1) : '-');
const ALPHA = 0.05;

function command(s: Settings, stamp: string): string {
  const parts = [`--stamp ${stamp}`, `--suite ${s.suite}`, ...(s.preset ? [`--preset ${s.preset}`] : []), ...(s.evalOn !== 'test' ? [`--eval-on ${s.evalOn}`] : []), `--iterations ${s.iterations}`, `--batch ${s.batch}`];
  if (s.lr) parts.push(`--lr ${Object.entries(s.lr).map(([f, v]) => `${f}=${v}`).join(',')}`);
  if (s.map !== null) parts.push(`--map ${s.map}`);
  parts.push(`--test-problems ${s.testProblems}`, `--test-samples ${s.testSamples}`, `--curve-every ${s.curveEvery}`, `--curve-problems ${s.curveProblems}`);
  if (s.set.length) parts.push(`--set ${s.set.join(',')}`);
  if (s.dtype !== 'auto') parts.push(`--dtype ${s.dtype}`);
  return `node --import tsx bench/learning/run.ts ${parts.join(' ')}`;
}

/** The learning curves: each trained row's validation success, the mean over its seeds at each evaluated iteration. */
function drawCurves(input: ReportInput, finals: Map<string, RunResult[]>, file: string): boolean {
  const series = input.rows
    .filter((r) => r.algorithm !== null && (finals.get(r.id) ?? []).some((x) => x.curve.length > 0))
    .map((r) => {
      const byIt = new Map<number, number[]>();
      for (const run of finals.get(r.id)!) for (const p of run.curve) byIt.set(p.iteration, [...(byIt.get(p.iteration) ?? []), p.success]);
      return { name: `${r.id} (${finals.get(r.id)!.length} seeds)`, points: [...byIt].map(([it, xs]): [number, number] => [it, 100 * mean(xs)]) };
    });
  if (!series.length) return false;
  writeFileSync(file, chartPng({ title: `${input.suite.name}${input.settings.preset ? ` (${input.settings.preset} preset)` : ''}: held-out success while training`, xLabel: 'iteration', yLabel: `validation success, % (${input.settings.curveProblems} problems)`, series, integerX: true }));
  return true;
}

export function report(input: ReportInput): string {
  const { suite, settings, rows, results, rates } = input;
  const stamp = basename(input.resultsFile, '.jsonl');
  const rateOf = (row: Row) => (row.algorithm === null ? null : rates[row.family].lr);
  // The final runs at the rates in force (a file may also hold runs at rates tuned away from).
  const finals = new Map(rows.map((row) => [row.id, results.filter((r) => r.kind === 'final' && r.row === row.id && r.lr === rateOf(row)).sort((a, b) => a.seed - b.seed)]));
  const tuned = results.filter((r) => r.kind === 'tune');
  const out: string[] = [];
  const commits = [...new Set(results.map((r) => r.commit))];
  const machines = [...new Set(results.map((r) => r.machine))];
  const dates = results.map((r) => r.at.slice(0, 10)).sort();

  out.push(`## learning: ${suite.name}${settings.preset ? `, ${settings.preset} preset` : ''} (${dates.length ? `${dates[0]}${dates.at(-1) !== dates[0] ? ` to ${dates.at(-1)}` : ''}` : 'no runs yet'})`, '');
  out.push(`\`${command(settings, stamp)}\`; results: \`bench/learning/results/${stamp}.jsonl\`.`);
  out.push(`What: ${suite.caption}${settings.map !== null ? `, map ${settings.map}x${settings.map}` : ', map and turns as in the configs'}${settings.preset ? `, with configs/${suite.dir.split('/')[1]}/${settings.preset}.preset.yaml` : ''}${settings.set.length ? `, overrides ${settings.set.join(', ')}` : ''}.`);
  out.push(`Training: ${settings.iterations} iterations of ${settings.batch} problems per row and seed (seed s trains on problems from training.seed = s x 1,000,000${suite.name.startsWith('smollm2-arith') ? ', in its own training file' : ''}), each config's own update settings at its family's learning rate: ${[...new Set(rows.map((r) => r.family))].map((f) => `${f} ${rates[f].lr} (${rates[f].source})`).join(', ')}. Every run's resolved config is in its line of the results file.`);
  const held = settings.evalOn === 'test' ? 'test problems (seeds never used for tuning)' : 'validation problems (choosing the task: no RL row plays them finally)';
  out.push(`Evaluation: ${settings.testProblems} ${held} each played ${settings.testSamples} times with the configs' val_llm_config (sampled: the primary figure, which the contrasts test), then once greedily (temperature 0); every row of a seed plays the same problems with the same sampling seeds. One evaluation's standard error at 50%: ${(100 * Math.sqrt(0.25 / (settings.testProblems * settings.testSamples))).toFixed(1)} points sampled, ${(100 * Math.sqrt(0.25 / settings.testProblems)).toFixed(1)} greedy.`);
  out.push(`Machine: ${machines.join('; ') || '-'}, no GPU. Commits: ${commits.join(', ') || '-'}.`, '');

  if (tuned.length) {
    out.push('Learning rates tried (validation problems; the chosen one has the highest mean):', '', '| family | lr | runs (row seed: success) | mean |', '|---|---|---|---|');
    for (const family of ['full', 'lora'] as const) {
      const mine = tuned.filter((r) => rows.some((row) => row.id === r.row && row.family === family));
      for (const lr of [...new Set(mine.map((r) => r.lr!))].sort((a, b) => a - b)) {
        const at = mine.filter((r) => r.lr === lr);
        out.push(`| ${family} | ${lr} | ${at.map((r) => `${r.row} s${r.seed}: ${pct(r.success)}`).join(', ')} | ${pct(mean(at.map((r) => r.success)))} |`);
      }
    }
    out.push('');
  }

  const reference = suite.reference ?? {};
  const where = settings.evalOn === 'test' ? 'test' : 'validation';
  out.push(`| method | level | lr | ${where} success per seed, sampled | mean | 95% interval | greedy per seed | greedy mean | curve area | iterations | sampled tokens per seed | wall min per seed | reference, Qwen3-1.7B |`, '|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const runs = finals.get(row.id)!;
    if (!runs.length) {
      out.push(`| ${row.label} | ${row.level} | ${rateOf(row) ?? '-'} | (not run yet) | | | | | | | | | ${reference[row.id] !== undefined ? `${reference[row.id]}%` : '-'} |`);
      continue;
    }
    const ci = interval(runs.map((r) => 100 * r.success));
    const greedy = runs.map((r) => r.greedy?.success);
    const greedyCells = greedy.every((g) => g === undefined) ? '- | -' : `${greedy.map((g) => (g === undefined ? '?' : pct(g))).join(', ')} | ${greedy.some((g) => g === undefined) ? '-' : pct(mean(greedy as number[]))}`;
    const areas = runs.map((r) => curveArea(r.curve)).filter(Number.isFinite);
    out.push(
      `| ${row.label} | ${row.level} | ${rateOf(row) ?? '-'} | ${runs.map((r) => pct(r.success)).join(', ')} | ${ci.mean.toFixed(1)}% | ${Number.isNaN(ci.half) ? '-' : `${Math.max(0, ci.mean - ci.half).toFixed(1)} to ${Math.min(100, ci.mean + ci.half).toFixed(1)}`} | ${greedyCells} | ${areas.length ? pct(mean(areas)) : '-'} | ${[...new Set(runs.map((r) => r.iterations))].join(', ')} | ${runs.map((r) => r.tokens ?? '?').join(', ')} | ${runs.map((r) => r.minutes.toFixed(0)).join(', ')} | ${reference[row.id] !== undefined ? `${reference[row.id]}%` : '-'} |`,
    );
  }
  out.push('', 'Curve area: a row\'s mean validation success over its training (trapezoids between the evaluated iterations, divided by their span), the mean over its seeds: how fast it rises, beside where it ends. Wall minutes: from the bench taking up the run (starting it, or attaching to it again after a stop) to its result; the runs shared the machine, so they time no speed. 95% interval: the t interval of the mean over the seeds, cut to 0-100%.', '');

  const named = (suite.contrasts ?? CONTRASTS).filter(([a, b]) => rows.some((r) => r.id === a) && rows.some((r) => r.id === b));
  if (named.length) {
    const bySeed = (id: string) => new Map(finals.get(id)!.map((r) => [r.seed, r.success]));
    const tests = named.map(([a, b]) => ({ a, b, c: pairedContrast(bySeed(a), bySeed(b), ALPHA / named.length) }));
    const testable = tests.filter((t) => Number.isFinite(t.c.p));
    const adjusted = holm(testable.map((t) => t.c.p));
    out.push(
      `Paired contrasts named in advance (per seed, sampled success of A minus B, the primary figure; one-sided paired t-tests, Holm's correction over the ${named.length}; MDE: the smallest true difference each would detect with power 0.8 at level ${ALPHA}/${named.length}, given the spread seen):`,
      '',
      '| A > B | pairs | mean difference, points | sd | t | p | Holm p | at 0.05 | MDE, points |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const t of tests) {
      const i = testable.indexOf(t);
      const holmP = i >= 0 ? adjusted[i] : NaN;
      out.push(`| ${t.a} > ${t.b} | ${t.c.n} | ${pts(t.c.meanDiff)} | ${pts(t.c.sdDiff)} | ${Number.isFinite(t.c.t) ? t.c.t.toFixed(2) : '-'} | ${Number.isFinite(t.c.p) ? t.c.p.toFixed(3) : '-'} | ${Number.isFinite(holmP) ? holmP.toFixed(3) : '-'} | ${Number.isFinite(holmP) ? (holmP < ALPHA ? 'yes' : 'no') : '-'} | ${pts(t.c.mde)} |`);
    }
    out.push('');
  }

  const png = input.resultsFile.replace(/\.jsonl$/, '-curves.png');
  if (drawCurves(input, finals, png)) out.push(`Learning curves (validation success every ${settings.curveEvery} iterations, mean over seeds): [${basename(png)}](learning/results/${basename(png)}).`, '');
  return out.join('\n');
}
