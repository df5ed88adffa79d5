// Line charts as SVG text, drawn by hand: axes with round-number ticks, one polyline with point
// markers per series, a legend. Rasterised to PNG by png.ts.

export interface Series {
  name: string;
  points: [x: number, y: number][];
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Ticks on x only at whole numbers (iterations, turns). */
  integerX?: boolean;
}

const W = 760;
const H = 420;
const M = { left: 70, right: 200, top: 44, bottom: 56 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const FONT = "font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\"";

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Round-number ticks covering [lo, hi]: the step of 1, 2 or 5 times a power of ten that gives closest to `target` ticks. */
export function ticks(lo: number, hi: number, target = 6, integer = false): number[] {
  const mag = 10 ** Math.floor(Math.log10((hi - lo) / target));
  const steps = [1, 2, 5, 10].map((f) => f * mag).filter((st) => !integer || (st >= 1 && Number.isInteger(st)));
  const step = steps.length === 0 ? 1 : steps.reduce((best, st) => (Math.abs((hi - lo) / st - target) < Math.abs((hi - lo) / best - target) ? st : best));
  const out: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The [lo, hi] a chart shows: the data's range with a margin, never empty. */
function extent(values: number[], integer: boolean): [number, number] {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 1e-12) {
    const pad = integer ? 0.5 : Math.max(Math.abs(lo) * 0.1, 0.5);
    return [lo - pad, hi + pad];
  }
  if (!integer) {
    const pad = (hi - lo) * 0.06;
    lo -= pad;
    hi += pad;
  }
  return [lo, hi];
}

const label = (v: number) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(1) : String(Number(v.toPrecision(4))));

export function lineChart(spec: ChartSpec): string {
  const series = spec.series.map((s) => ({ ...s, points: s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)) }));
  const all = series.flatMap((s) => s.points);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT}>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="26" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  if (all.length === 0) {
    out.push(`<text x="${M.left + pw / 2}" y="${M.top + ph / 2}" font-size="14" text-anchor="middle" fill="#666">no data</text>`, '</svg>');
    return out.join('\n');
  }
  const [x0, x1] = extent(all.map((p) => p[0]), spec.integerX ?? false);
  const [y0, y1] = extent(all.map((p) => p[1]), false);
  const sx = (x: number) => M.left + ((x - x0) / (x1 - x0)) * pw;
  const sy = (y: number) => M.top + ph - ((y - y0) / (y1 - y0)) * ph;
  const f = (v: number) => v.toFixed(1);

  for (const t of ticks(y0, y1)) {
    out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${f(sy(t))}" y2="${f(sy(t))}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${f(sy(t) + 4)}" font-size="12" text-anchor="end">${label(t)}</text>`);
  }
  for (const t of ticks(x0, x1, 8, spec.integerX ?? false)) {
    out.push(`<line x1="${f(sx(t))}" x2="${f(sx(t))}" y1="${M.top + ph}" y2="${M.top + ph + 5}" stroke="#333"/>`);
    out.push(`<text x="${f(sx(t))}" y="${M.top + ph + 20}" font-size="12" text-anchor="middle">${label(t)}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 12}" font-size="13" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  out.push(
    `<text x="18" y="${M.top + ph / 2}" font-size="13" text-anchor="middle" transform="rotate(-90 18 ${M.top + ph / 2})">${escapeXml(spec.yLabel)}</text>`,
  );

  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    if (pts.length > 1) {
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${pts.map(([x, y]) => `${f(sx(x))},${f(sy(y))}`).join(' ')}"/>`);
    }
    for (const [x, y] of pts) out.push(`<circle cx="${f(sx(x))}" cy="${f(sy(y))}" r="3.5" fill="${color}"/>`);
    const ly = M.top + 12 + i * 20;
    const lx = M.left + pw + 14;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${lx + 28}" y="${ly}" font-size="12">${escapeXml(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
