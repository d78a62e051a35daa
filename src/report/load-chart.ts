// The quantized load plot (seed 004 Fig. 8, 10–12): per node, the mean number of busy lanes in
// each quantum (W_n,i / q) over the run. One ECharts option (plain JSON: the report's page draws
// it in the browser) and the same option rendered to SVG on the server (`luna balance --plot`).
import * as echarts from 'echarts';

export interface LoadPlot {
  title: string;
  /** quantum length, ns */
  quantumNs: number;
  nodes: number;
  /** W_n,i quantum-major: loads[i · nodes + n], ns */
  loads: Float64Array;
  /** the same y range for plots shown side by side (busy lanes) */
  yMax?: number;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
/** Beyond this many nodes the plot shows min / mean / max over the nodes instead of a line each. */
export const MAX_NODE_LINES = 10;

/** The option of one plot (JSON-able: no functions). */
export function loadChartOption(p: LoadPlot): Record<string, unknown> {
  const count = p.loads.length / p.nodes, q = p.quantumNs;
  const x = (i: number): number => +((i * q) / 1e9).toPrecision(6);
  const busy = (i: number, n: number): number => +(p.loads[i * p.nodes + n]! / q).toFixed(4);
  let series: Record<string, unknown>[];
  if (p.nodes <= MAX_NODE_LINES) {
    series = Array.from({ length: p.nodes }, (_, n) => ({
      name: `node ${n}`, type: 'line', step: 'end', showSymbol: false, lineStyle: { width: 1.5 }, color: PALETTE[n % PALETTE.length],
      data: Array.from({ length: count + 1 }, (_, i) => [x(i), busy(Math.min(i, count - 1), n)]),
    }));
  } else {
    const agg = (f: (v: number[]) => number) => Array.from({ length: count + 1 }, (_, i) => {
      const k = Math.min(i, count - 1);
      return [x(i), +f(Array.from({ length: p.nodes }, (_, n) => busy(k, n))).toFixed(4)];
    });
    series = [
      { name: 'max over nodes', type: 'line', step: 'end', showSymbol: false, color: PALETTE[1], data: agg((v) => Math.max(...v)) },
      { name: 'mean', type: 'line', step: 'end', showSymbol: false, color: PALETTE[0], data: agg((v) => v.reduce((a, b) => a + b, 0) / v.length) },
      { name: 'min over nodes', type: 'line', step: 'end', showSymbol: false, color: PALETTE[2], data: agg((v) => Math.min(...v)) },
    ];
  }
  return {
    animation: false,
    backgroundColor: '#ffffff',
    title: { text: p.title, left: 'center', top: 4, textStyle: { fontSize: 14 } },
    legend: { top: 28, type: 'scroll' },
    tooltip: { trigger: 'axis' },
    grid: { left: 60, right: 20, top: 60, bottom: 50 },
    xAxis: { type: 'value', name: `time, s (quantum ${fmtQ(q)})`, nameLocation: 'middle', nameGap: 28, min: 0, max: x(count), axisLabel: { showMaxLabel: false } },
    yAxis: { type: 'value', name: 'busy lanes (W / q)', nameLocation: 'middle', nameGap: 40, min: 0, ...(p.yMax ? { max: p.yMax } : {}) },
    series,
  };
}

/** The plot as a standalone SVG document (ECharts' server-side renderer: no DOM, no browser). */
export function loadChartSvg(p: LoadPlot, width = 900, height = 380): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  chart.setOption(loadChartOption(p));
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg + '\n';
}

/** The largest busy-lane value of several plots, rounded up: one y range for all. */
export function commonYMax(plots: readonly LoadPlot[]): number {
  let m = 0;
  for (const p of plots) for (let k = 0; k < p.loads.length; k++) m = Math.max(m, p.loads[k]! / p.quantumNs);
  return Math.max(1, Math.ceil(m * 1.05 * 4) / 4);
}

function fmtQ(ns: number): string {
  return ns >= 1e9 ? `${+(ns / 1e9).toPrecision(3)} s` : ns >= 1e6 ? `${+(ns / 1e6).toPrecision(3)} ms` : `${+(ns / 1e3).toPrecision(3)} µs`;
}
