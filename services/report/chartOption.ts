// A chart spec (title, axis labels, series of points) as an Apache ECharts option object: one pure
// function, and JSON only (no callbacks), so the same object is drawn by `tandem report` (ECharts'
// server-side SVG, rasterised by png.ts) and sent to the dashboard's page, where ECharts draws it
// in the browser.
import type { EChartsOption, LineSeriesOption } from 'echarts';

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

/** The size of a chart: the report's PNGs and the dashboard's chart boxes. */
export const CHART_SIZE = { width: 760, height: 420 } as const;

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const FONT = 'DejaVu Sans, Liberation Sans, Arial, sans-serif';

/** The series' points that can be drawn (finite x and y), in x order. */
function drawnPoints(s: Series): [number, number][] {
  return s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]);
}

export function chartOption(spec: ChartSpec): EChartsOption {
  const series: LineSeriesOption[] = spec.series.map((s) => ({
    type: 'line',
    name: s.name,
    data: drawnPoints(s),
    symbol: 'circle',
    symbolSize: 7,
    lineStyle: { width: 2, type: s.dashed ? 'dashed' : 'solid' },
  }));
  const empty = series.every((s) => (s.data as unknown[]).length === 0);
  return {
    animation: false,
    backgroundColor: '#ffffff',
    color: COLORS,
    textStyle: { fontFamily: FONT },
    title: { text: spec.title, left: 70, top: 12, textStyle: { fontSize: 16 } },
    legend: { orient: 'vertical', right: 10, top: 44, itemWidth: 22 },
    tooltip: { trigger: 'axis' },
    grid: { left: 70, right: 200, top: 44, bottom: 56 },
    xAxis: { type: 'value', name: spec.xLabel, nameLocation: 'middle', nameGap: 32, scale: true, axisLine: { onZero: false }, ...(spec.integerX ? { minInterval: 1 } : {}) },
    yAxis: { type: 'value', name: spec.yLabel, nameLocation: 'middle', nameGap: 50, scale: true },
    ...(empty ? { graphic: { type: 'text', left: 'center', top: 'middle', style: { text: 'no data', fill: '#666', fontSize: 14 } } } : {}),
    series,
  };
}

/** How many points the option draws, over all its series (the dashboard shows it to its tests). */
export function pointCount(option: EChartsOption): number {
  const series = (Array.isArray(option.series) ? option.series : [option.series]) as LineSeriesOption[];
  return series.reduce((n, s) => n + ((s?.data as unknown[] | undefined)?.length ?? 0), 0);
}
