// Fragment durations (wall time on the lane) per code fragment: log-spaced histograms, the same
// bins for every compared run, for the codes that ran the most fragments.
import type { Section } from '../section.js';

const BINS = 30, TOP = 12;

export const histograms: Section = {
  id: 'histograms',
  title: 'Fragment durations',
  build(ctx) {
    const count = new Map<number, number>();
    for (const r of ctx.runs) for (const c of r.frags.code) count.set(c, (count.get(c) ?? 0) + 1);
    const codes = [...count.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([c]) => c);
    const data = codes.map((code) => {
      let lo = Infinity, hi = 0;
      for (const r of ctx.runs) {
        const f = r.frags;
        for (let i = 0; i < f.code.length; i++) if (f.code[i] === code) { const d = Math.max(1, f.finish[i]! - f.start[i]!); if (d < lo) lo = d; if (d > hi) hi = d; }
      }
      if (!(hi >= lo)) { lo = 1; hi = 1; }
      // one bin when every duration is (nearly) the same
      const bins = hi / lo < 1.05 ? 1 : BINS;
      const l0 = Math.log10(lo) - 1e-9, l1 = Math.log10(hi) + 1e-9;
      const width = (l1 - l0) / bins;
      const counts = ctx.runs.map((r) => {
        const f = r.frags, c = new Array<number>(bins).fill(0);
        for (let i = 0; i < f.code.length; i++) {
          if (f.code[i] !== code) continue;
          const b = Math.floor((Math.log10(Math.max(1, f.finish[i]! - f.start[i]!)) - l0) / width);
          c[Math.max(0, Math.min(bins - 1, b))]++;
        }
        return c;
      });
      const name = code < 0 ? '?' : ctx.runs[0]!.manifest.codes[code] ?? `code#${code}`;
      return { name, edges: Array.from({ length: bins + 1 }, (_, k) => Math.pow(10, l0 + k * width)), counts };
    });
    return { html: data.length ? '' : '<p class="mut">No fragment ran.</p>', data };
  },
  render: function (el, codes: { name: string; edges: number[]; counts: number[][] }[], h) {
    const grid = h.el('div', { class: 'grid' });
    el.append(grid);
    for (const c of codes) {
      const n = c.counts.reduce((a, x) => a + x.reduce((p, q) => p + q, 0), 0);
      const col = h.el('div', { class: 'col' }, h.el('h3', {}, c.name + ' (' + n.toLocaleString('en') + (n === 1 ? ' fragment)' : ' fragments)')));
      grid.append(col);
      h.chart(col, {
        tooltip: { trigger: 'axis' },
        legend: c.counts.length > 1 ? { top: 0 } : undefined,
        grid: { left: 50, right: 10, top: c.counts.length > 1 ? 28 : 10, bottom: 40 },
        xAxis: { type: 'category', name: 'wall time', nameLocation: 'middle', nameGap: 26, data: c.edges.slice(0, -1).map((e, k) => h.dur(Math.sqrt(e * c.edges[k + 1]!))) },
        // counts are whole: no 0.5 ticks
        yAxis: { type: 'value', name: 'fragments', minInterval: 1 },
        series: c.counts.map((n, i) => ({ name: h.labels[i] || 'run', type: 'bar', barGap: '0%', data: n })),
      }, 220);
    }
  },
};
