// SLOW: the five characteristics for the whole run (table: the analysis' own numbers), bars per
// node and worker thread, and their dynamics over time windows (the analysis' series).
import { dur, pct } from '../../analysis/slow/fmt.js';
import { FACTORS, type SlowReport } from '../../analysis/slow/types.js';
import { sideBySide, type Section } from '../section.js';

const NAMES: Record<string, string> = { S: 'Starvation', L: 'Latency', O: 'Overhead', W: 'Waiting', U: 'Useful work' };

/** Before/after: wall time and every characteristic of A and B, with the change. */
function compareTable(a: SlowReport, b: SlowReport): string {
  const speed = b.tWall > 0 ? a.tWall / b.tWall : 0;
  const rows = FACTORS.map((f) => {
    const d = b.t[f] - a.t[f];
    return `<tr><td>${f} — ${NAMES[f]}</td><td class="n">${dur(a.t[f])} (${pct(a.p[f])})</td><td class="n">${dur(b.t[f])} (${pct(b.p[f])})</td><td class="n">${d >= 0 ? '+' : '−'}${dur(Math.abs(d))}</td><td class="n">${(b.p[f] - a.p[f] >= 0 ? '+' : '−') + Math.abs(b.p[f] - a.p[f]).toFixed(1)} pts</td></tr>`;
  }).join('');
  return `<h3>A → B</h3><table class="slow-compare"><thead><tr><th></th><th class="n">A (before)</th><th class="n">B (after)</th><th class="n">change</th><th class="n">share change</th></tr></thead><tbody>
<tr><td>Wall time</td><td class="n">${dur(a.tWall)}</td><td class="n">${dur(b.tWall)}</td><td class="n" data-speedup="${speed}">${speed >= 1 ? `${speed.toFixed(2)}× faster` : speed > 0 ? `${(1 / speed).toFixed(2)}× slower` : '—'}</td><td></td></tr>
<tr><td>Worker threads</td><td class="n">${a.cores}</td><td class="n">${b.cores}</td><td></td><td></td></tr>${rows}</tbody></table>`;
}

export const slow: Section = {
  id: 'slow',
  title: 'SLOW',
  build(ctx) {
    const html = sideBySide(ctx, (r, i) => {
      const s = r.slow;
      const rows = FACTORS.map((f) => `<tr data-slow-total="${f}" data-run="${i}" data-ns="${s.t[f]}" data-pct="${s.p[f]}"><td><span class="sw" style="background:var(--${f})"></span>${f} — ${NAMES[f]}</td><td class="n">${dur(s.t[f])}</td><td class="n pct">${pct(s.p[f])}</td></tr>`).join('');
      const o = s.overhead;
      return `<table class="slow-totals"><thead><tr><th>T_total = ${dur(s.tWall)} × ${s.cores} worker threads</th><th class="n">time</th><th class="n">of T_total</th></tr></thead><tbody>${rows}</tbody></table>
<p class="mut">Overhead parts: pre-emption ${dur(o.preempt)}, send delay ${dur(o.sendDelay)}, start delay ${dur(o.startDelay)} (start-up ${dur(o.startup)}; with the system thread busy <span data-start-sys-ns="${o.startDelaySystemBusy}">${dur(o.startDelaySystemBusy)}</span>)${o.systemCores ? `, system cores ${dur(o.systemCores)}` : ''}; starvation after the last fragment ${dur(s.starvationTail)}; coverage ${pct(100 * s.coverage)}. Model ${s.model}.</p>`;
    }).replace(/var\(--([SLOWU])\)/g, (_, f: string) => ({ S: '#d9534f', L: '#f0ad4e', O: '#8e6bbf', W: '#9aa5b1', U: '#3c9d5d' })[f]!);
    const html2 = ctx.runs.length === 2 ? compareTable(ctx.runs[0]!.slow, ctx.runs[1]!.slow) + html : html;
    const data = ctx.runs.map((r) => ({
      perNode: r.slow.perNode, perThread: r.slow.perThread, t: r.slow.t,
      series: r.slow.series,
    }));
    return { html: html2, data };
  },
  render: function (el, runs: { perNode: Record<string, number>[]; perThread: ({ node: number; thread: number } & Record<string, number>)[]; t: Record<string, number>; series: { windowNs: number; points: Record<string, number>[] } }[], h) {
    const F = ['S', 'L', 'O', 'W', 'U'];
    const wrap = runs.length > 1 ? h.el('div', { class: 'cmp' }) : el;
    if (wrap !== el) el.append(wrap);
    runs.forEach((r, i) => {
      const col = runs.length > 1 ? h.el('div', { class: 'col' }, h.el('h3', {}, h.labels[i] || '')) : el;
      if (col !== el) wrap.append(col);
      const cats = ['run'];
      const rows: Record<string, number>[] = [r.t];
      r.perNode.forEach((n, k) => { cats.push('node ' + k); rows.push(n); });
      if (r.perThread.length > 1) r.perThread.forEach((t) => { cats.push('n' + t.node + ' t' + t.thread); rows.push(t); });
      const share = (row: Record<string, number>, f: string): number => {
        let tot = 0;
        for (const g of F) tot += row[g] || 0;
        return tot > 0 ? +(100 * (row[f] || 0) / tot).toFixed(2) : 0;
      };
      col.append(h.el('h3', { id: 'slow-bars' + i }, 'Per node and worker thread (% of its time)'));
      h.chart(col, {
        tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, valueFormatter: (v: number) => v.toFixed(1) + '%' },
        legend: { top: 0 },
        grid: { left: 80, right: 20, top: 30, bottom: 20 },
        xAxis: { type: 'value', max: 100 },
        yAxis: { type: 'category', data: cats, inverse: true },
        series: F.map((f) => ({ name: f + ' ' + h.slowNames[f], type: 'bar', stack: 'x', itemStyle: { color: h.slowColors[f] }, data: rows.map((row) => share(row, f)) })),
      }, Math.min(900, 60 + cats.length * 22));
      const pts = r.series.points, w = r.series.windowNs;
      if (pts.length > 0 && w > 0) {
        col.append(h.el('h3', { id: 'slow-dynamics' + i }, 'Dynamics (worker threads in each state, windows of ' + h.dur(w) + ')'));
        h.chart(col, {
          tooltip: { trigger: 'axis', valueFormatter: (v: number) => v.toFixed(2) },
          legend: { top: 0 },
          grid: { left: 50, right: 20, top: 30, bottom: 40 },
          xAxis: { type: 'category', name: 'ms', nameLocation: 'middle', nameGap: 25, data: pts.map((_, k) => (k * w / 1e6).toFixed(k * w < 1e7 ? 2 : 0)) },
          yAxis: { type: 'value', name: 'threads' },
          series: F.map((f) => ({ name: f + ' ' + h.slowNames[f], type: 'line', stack: 'x', areaStyle: {}, symbol: 'none', lineStyle: { width: 0 }, itemStyle: { color: h.slowColors[f] }, data: pts.map((p) => +((p[f] || 0) / w).toFixed(4)) })),
        }, 300);
      }
    });
  },
};
