// Load balance: the quantized load of each node over the run (seed 004 §2.2.3, Fig. 10–12), and
// — when the report is given the distribution applied to it (`luna report TRACE --distribution
// FILE`) — the same fragments with the traced durations on the nodes the file names: the load
// the balancer expects of the next run.
import { dur } from '../../analysis/slow/fmt.js';
import { loads, quantize } from '../../analysis/balance/quantize.js';
import { commonYMax, loadChartOption, type LoadPlot } from '../load-chart.js';
import { esc, sideBySide, type Section } from '../section.js';
import type { RunData } from '../collect.js';

/** Quanta per plot: fine enough to show phases, coarse enough that one fragment does not make a spike. */
export const PLOT_QUANTA = 100;

function placement(r: RunData): { node: Int32Array; nodes: number } {
  const T = Math.max(1, r.manifest.threads), nodes = Math.max(1, r.manifest.nodes);
  return { node: Int32Array.from(r.frags.slot, (s) => Math.floor(s / T)), nodes };
}

function perNode(r: RunData, node: Int32Array, nodes: number): number[] {
  const busy = new Array<number>(nodes).fill(0);
  for (let k = 0; k < node.length; k++) busy[node[k]!] += r.frags.finish[k]! - r.frags.start[k]!;
  return busy;
}

function row(label: string, busy: number[]): string {
  const mean = busy.reduce((a, b) => a + b, 0) / busy.length, max = Math.max(...busy);
  return `<tr><th>${esc(label)}</th><td class="n">${dur(Math.min(...busy))}</td><td class="n">${dur(mean)}</td><td class="n">${dur(max)}</td><td class="n" data-max-over-avg="${(mean > 0 ? max / mean : 1).toFixed(3)}">${(mean > 0 ? max / mean : 1).toFixed(2)}</td></tr>`;
}

export const balance: Section = {
  id: 'balance',
  title: 'Load per node',
  build(ctx) {
    const plots: LoadPlot[][] = [];
    const html = sideBySide(ctx, (r, i) => {
      const { node, nodes } = placement(r);
      const f = r.frags, t0 = r.slow.tStart;
      const iv = { n: node.length, start: f.start.map((t) => t - t0), finish: f.finish.map((t) => t - t0) };
      const tEnd = Math.max(1, r.slow.tWall);
      const q = tEnd / PLOT_QUANTA;
      const qt = quantize(iv, q, tEnd);
      const mine: LoadPlot[] = [{ title: 'traced', quantumNs: q, nodes, loads: loads(qt, node, nodes) }];
      let rows = row('traced', perNode(r, node, nodes));
      const d = ctx.distribution;
      if (d && f.gid) {
        const moved = Int32Array.from(node, (m, k) => d.cfs[f.gid![k]!] ?? m);
        const n2 = Math.max(nodes, d.nodes);
        const count = moved.reduce((a, m, k) => a + (m !== node[k] ? 1 : 0), 0);
        mine.push({ title: `as ${d.path} places them (traced durations)`, quantumNs: q, nodes: n2, loads: loads(qt, moved, n2) });
        rows += row(`with ${d.path} (${count.toLocaleString('en')} moved)`, perNode(r, moved, n2));
      }
      plots[i] = mine;
      return `<table><tr><th></th><th class="n">min</th><th class="n">mean</th><th class="n">max</th><th class="n">max/avg</th></tr>${rows}</table><p class="mut">Busy time per node (fragments' wall time on its lanes); the plots show it per quantum of ${dur(q)}.</p>`;
    });
    const yMax = commonYMax(plots.flat());
    return { html, data: plots.flat().map((p) => loadChartOption({ ...p, yMax })) };
  },
  render: function (el, options: object[], h) {
    const grid = h.el('div', { class: 'grid' });
    el.append(grid);
    for (const o of options) h.chart(grid, o, 320);
  },
};
