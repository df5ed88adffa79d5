// The learning bench's statistics (bench/learning/stats.ts) against values from tables and by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { curveArea, holm, interval, pairedContrast, tCdf, tQuantile } from '../../bench/learning/stats.js';

const near = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) < tol, `${what}: ${a} vs ${b}`);

test("Student's t: the CDF and quantiles of the tables", () => {
  near(tCdf(-1, 1), 0.25, 1e-9, 'Cauchy: 1/2 + atan(t)/pi'); // df 1 is the Cauchy distribution
  near(tCdf(1, 2), 0.5 + 1 / (2 * Math.sqrt(3)), 1e-9, 'df 2: 1/2 + t / (2 sqrt(2 + t^2))');
  near(tCdf(0, 7), 0.5, 1e-12, 'symmetric');
  near(tQuantile(0.975, 4), 2.776445, 1e-5, 't_{0.975,4}');
  near(tQuantile(0.95, 4), 2.131847, 1e-5, 't_{0.95,4}');
  near(tQuantile(0.8, 4), 0.940965, 1e-5, 't_{0.8,4}');
  near(tQuantile(0.975, 30), 2.042272, 1e-5, 't_{0.975,30}');
});

test('a 95% interval: mean +- t_{0.975,n-1} sd / sqrt(n)', () => {
  const r = interval([10, 12, 14]); // mean 12, sd 2, n 3: 4.302653 x 2 / sqrt(3)
  near(r.mean, 12, 1e-12, 'mean');
  near(r.half, (4.302653 * 2) / Math.sqrt(3), 1e-4, 'half-width');
  assert.ok(Number.isNaN(interval([5]).half));
});

test("Holm's adjusted p-values, in the input's order", () => {
  // sorted 0.01, 0.03, 0.04 with m = 3: 0.03, max(0.03, 2 x 0.03) = 0.06, max(0.06, 1 x 0.04) = 0.06
  const adj = holm([0.01, 0.04, 0.03]);
  [0.03, 0.06, 0.06].forEach((want, i) => near(adj[i], want, 1e-12, `p${i}`));
  assert.deepEqual(holm([0.5, 0.9]), [1, 1]);
});

test('a one-sided paired contrast over the seeds both rows have (hand-computed)', () => {
  // d = 2, 4, 6 on seeds 0-2 (seed 3 only in a): mean 4, sd 2, t = 4 / (2 / sqrt 3) = 3.4641, df 2
  const a = new Map([[0, 12], [1, 14], [2, 16], [3, 99]]);
  const b = new Map([[0, 10], [1, 10], [2, 10]]);
  const c = pairedContrast(a, b, 0.05);
  assert.equal(c.n, 3);
  near(c.meanDiff, 4, 1e-12, 'mean difference');
  near(c.t, 3.464102, 1e-5, 't');
  near(c.p, 1 - (0.5 + 3.464102 / (2 * Math.sqrt(2 + 3.464102 ** 2))), 1e-6, 'p (df 2 closed form)');
  // mde = (t_{0.95,2} 2.919986 + t_{0.8,2} 1.060660) x 2 / sqrt 3
  near(c.mde, ((2.919986 + 1.06066) * 2) / Math.sqrt(3), 1e-4, 'mde');
  assert.ok(Number.isNaN(pairedContrast(new Map([[0, 1]]), new Map([[0, 0]]), 0.05).p));
});

test('the area under a learning curve: the mean success over the span it covers', () => {
  // 0 -> 0.5 over 10 iterations (area 2.5), 0.5 -> 1 over 20 (15): 17.5 / 30
  near(curveArea([{ iteration: 30, success: 1 }, { iteration: 0, success: 0 }, { iteration: 10, success: 0.5 }]), 17.5 / 30, 1e-12, 'area');
  near(curveArea([{ iteration: 0, success: 0.4 }, { iteration: 30, success: 0.4 }]), 0.4, 1e-12, 'flat');
  assert.ok(Number.isNaN(curveArea([{ iteration: 0, success: 1 }])));
});
