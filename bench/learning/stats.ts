// The learning bench's statistics: Student's t distribution, a mean's 95% interval, one-sided
// paired t-tests over seeds with Holm's correction, and the minimum detectable effect. Pure.
//
// A paired contrast "A > B" pairs the runs of the two rows that share a seed (the same training
// problems, and the same held-out problems sampled with the same seeds), so the run-to-run spread
// both rows share cancels: d_s = A_s - B_s, t = mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of
// freedom, p = P(T >= t) (one-sided: the direction is named in advance).

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
function lnGamma(x: number): number {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of the regularised incomplete beta function (Numerical Recipes' betacf, modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    for (const num of [(m * (b - m) * x) / ((a + m2 - 1) * (a + m2)), (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))]) {
      d = 1 + num * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

/** I_x(a, b), the regularised incomplete beta function. */
function incompleteBeta(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The fraction converges fast for x < (a + 1) / (a + b + 2); otherwise use I_x(a, b) = 1 - I_{1-x}(b, a).
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom. */
export function tCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

/** The t with P(T <= t) = p (bisection on tCdf). */
export function tQuantile(p: number, df: number): number {
  let lo = -1e3;
  let hi = 1e3;
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

export const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
/** The sample standard deviation (n - 1). */
export const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));

/** A mean and the half-width of its two-sided 95% interval (Student's t; NaN for one value). */
export function interval(xs: number[]): { mean: number; half: number } {
  const m = mean(xs);
  return { mean: m, half: xs.length < 2 ? NaN : (tQuantile(0.975, xs.length - 1) * sd(xs)) / Math.sqrt(xs.length) };
}

/** Holm's step-down adjusted p-values (family-wise error), in the input's order. */
export function holm(ps: number[]): number[] {
  const order = ps.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
  const adjusted = new Array<number>(ps.length);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (ps.length - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}

export interface PairedContrast {
  /** Seeds both rows have. */
  n: number;
  meanDiff: number;
  sdDiff: number;
  t: number;
  /** One-sided: P(T >= t) under "no difference". */
  p: number;
  /**
   * The smallest true mean difference this many pairs would detect with power 0.8 in a one-sided
   * test at level `alpha`, given the observed spread: (t_{1-alpha} + t_{0.8}) sd / sqrt(n).
   */
  mde: number;
}

/** The one-sided paired t-test of "a > b" over the seeds both have (NaN figures below 2 pairs). */
export function pairedContrast(a: Map<number, number>, b: Map<number, number>, alpha: number): PairedContrast {
  const d = [...a.keys()].filter((s) => b.has(s)).map((s) => a.get(s)! - b.get(s)!);
  const n = d.length;
  if (n < 2) return { n, meanDiff: n ? d[0] : NaN, sdDiff: NaN, t: NaN, p: NaN, mde: NaN };
  const s = sd(d);
  const m = mean(d);
  const t = s === 0 ? (m > 0 ? Infinity : m < 0 ? -Infinity : 0) : m / (s / Math.sqrt(n));
  const p = t === Infinity ? 0 : t === -Infinity ? 1 : s === 0 ? 0.5 : 1 - tCdf(t, n - 1);
  return { n, meanDiff: m, sdDiff: s, t, p, mde: ((tQuantile(1 - alpha, n - 1) + tQuantile(0.8, n - 1)) * s) / Math.sqrt(n) };
}

/**
 * The area under a learning curve, as the mean success over the iterations it spans (trapezoids
 * between evaluated iterations, divided by the span): how fast a row rises, beside where it ends.
 * NaN for fewer than two points.
 */
export function curveArea(points: { iteration: number; success: number }[]): number {
  const p = [...points].sort((a, b) => a.iteration - b.iteration);
  if (p.length < 2 || p.at(-1)!.iteration === p[0].iteration) return NaN;
  let area = 0;
  for (let i = 1; i < p.length; i++) area += ((p[i].success + p[i - 1].success) / 2) * (p[i].iteration - p[i - 1].iteration);
  return area / (p.at(-1)!.iteration - p[0].iteration);
}
