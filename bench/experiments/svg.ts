// The SVG charts of the SLOW experiments (docs/experiments/*.svg), rendered by ECharts on the
// server (renderer 'svg', ssr: no DOM, no browser): one panel of 100 % stacked bars (P_S, P_L,
// P_O, P_W, P_U per run) and one panel of lines (T_X in seconds per run), side by side, with
// categorical x labels. ECharts is the report's chart library too (docs/report.md).
import * as echarts from 'echarts';

export interface Series {
  name: string;
  color: string;
  values: number[];
  /** dashed line (line panel only) */
  dashed?: boolean;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  /** one label per run (categorical x axis) */
  categories: string[];
  /** stacked-bar panel: shares in percent (each column should sum to ~100) */
  stacked: { yLabel: string; series: Series[] };
  /** line panel: absolute values */
  lines: { yLabel: string; series: Series[] };
}

export const COLORS: Record<string, string> = {
  S: '#d62728', L: '#9467bd', O: '#ff7f0e', W: '#8c564b', U: '#2ca02c', total: '#444444', work: '#1f77b4',
};

/** Render the two-panel chart as a standalone SVG document. */
export function renderChart(spec: ChartSpec): string {
  const W = 980, H = 420;
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: W, height: H });
  const cats = spec.categories;
  const rotate = cats.some((c) => c.length * 6.5 > 380 / cats.length) ? 35 : 0;
  const xAxis = (gridIndex: number) => ({
    type: 'category' as const, gridIndex, data: cats, name: spec.xLabel, nameLocation: 'middle' as const, nameGap: rotate ? 58 : 30,
    axisLabel: { rotate, interval: 0, fontSize: 11 }, axisTick: { alignWithLabel: true },
  });
  chart.setOption({
    animation: false,
    backgroundColor: '#ffffff',
    textStyle: { fontFamily: 'Helvetica, Arial, sans-serif' },
    title: { text: spec.title, left: 'center', top: 6, textStyle: { fontSize: 15 } },
    legend: [
      { data: spec.stacked.series.map((s) => s.name), left: 70, top: 34, itemWidth: 11, itemHeight: 11, textStyle: { fontSize: 11 } },
      { data: spec.lines.series.map((s) => s.name), left: 570, top: 34, textStyle: { fontSize: 11 } },
    ],
    grid: [
      { left: 70, top: 60, width: 380, height: 270 },
      { left: 570, top: 60, width: 380, height: 270 },
    ],
    xAxis: [xAxis(0), xAxis(1)],
    yAxis: [
      { type: 'value', gridIndex: 0, max: (v: { max: number }) => Math.max(100, Math.ceil(v.max / 20) * 20), interval: 20, name: spec.stacked.yLabel, nameLocation: 'middle', nameGap: 44, axisLabel: { formatter: '{value}%' } },
      { type: 'value', gridIndex: 1, name: spec.lines.yLabel, nameLocation: 'middle', nameGap: 44 },
    ],
    series: [
      ...spec.stacked.series.map((s) => ({
        name: s.name, type: 'bar' as const, stack: 'share', xAxisIndex: 0, yAxisIndex: 0, barWidth: '70%',
        itemStyle: { color: s.color }, data: s.values.map((v) => Math.max(0, v || 0)),
      })),
      ...spec.lines.series.map((s) => ({
        name: s.name, type: 'line' as const, xAxisIndex: 1, yAxisIndex: 1, symbolSize: 6,
        itemStyle: { color: s.color }, lineStyle: { color: s.color, width: 2, type: s.dashed ? 'dashed' as const : 'solid' as const },
        data: s.values,
      })),
    ],
  });
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg + '\n';
}
