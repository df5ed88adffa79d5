// A chart's PNG without a browser: ECharts draws the chart's option (chartOption.ts) as SVG on the server
// (its `ssr` mode), and resvg (Rust, prebuilt in the @resvg/resvg-js npm package) rasterises it.
// Text uses the system's fonts (DejaVu Sans on Debian); with no font installed the PNG is still
// drawn, without its labels.
import { Resvg } from '@resvg/resvg-js';
import * as echarts from 'echarts';
import { CHART_SIZE, chartOption, type ChartSpec } from './chartOption.js';

function chartSvg(spec: ChartSpec): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, ...CHART_SIZE });
  try {
    chart.setOption(chartOption(spec));
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

export function chartPng(spec: ChartSpec): Buffer {
  return new Resvg(chartSvg(spec), { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: '#ffffff' }).render().asPng();
}
