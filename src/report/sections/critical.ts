// The critical path (longest DF-dependency chain weighted by CPU time, from the SLOW analysis):
// its length against the wall time, what it is made of, and its recorded steps, each of which
// can be shown on the timeline (where the steps are outlined in red).
import { dur, pct, share } from '../../analysis/slow/fmt.js';
import type { Culprit } from '../../analysis/slow/types.js';
import { esc, sideBySide, type Section } from '../section.js';

export function culpritTable(head: string, xs: Culprit[], shareOf: string): string {
  if (xs.length === 0) return '<p class="mut">none</p>';
  return `<table><thead><tr><th>${esc(head)}</th><th class="n">time</th><th class="n">${esc(shareOf)}</th></tr></thead><tbody>${xs.map((x) =>
    `<tr><td>${esc(x.label ?? x.key)}${x.code && x.code !== (x.label ?? x.key) ? ` <span class="mut">(${esc(x.code)})</span>` : ''}</td><td class="n" data-ns="${x.ns}">${dur(x.ns)}</td><td class="n">${share(x.share)}</td></tr>`).join('')}</tbody></table>`;
}

export const critical: Section = {
  id: 'critical',
  title: 'Critical path',
  build(ctx) {
    const html = sideBySide(ctx, (r) => {
      const c = r.slow.criticalPath;
      return `<p>Length <b data-ns="${c.length}">${dur(c.length)}</b> of CPU time over ${c.cfs.toLocaleString('en')} fragments = ${pct(100 * c.ofWall)} of the wall time; average parallelism T_U / length = ${c.parallelism.toFixed(2)} (worker threads: ${r.slow.cores}).</p>
<div class="cmp"><div class="col"><h3>By code fragment</h3>${culpritTable('code', c.byCode, 'of path')}</div><div class="col"><h3>By label</h3>${culpritTable('label', c.byLabel, 'of path')}</div></div>
<h3>Last steps (latest first)</h3><table><thead><tr><th>fragment</th><th>global id</th><th>code</th><th class="n">CPU</th></tr></thead><tbody>${c.tail.map((s) => `<tr><td>${esc(s.label)}</td><td><code>${esc(s.gid)}</code></td><td>${esc(s.code)}</td><td class="n">${dur(s.ns)}</td></tr>`).join('')}</tbody></table>`;
    });
    const data = ctx.runs.map((r) => {
      const T = r.slow.threads, t0 = r.slow.tStart;
      return [...r.critical].map((i) => {
        const slot = r.frags.slot[i]!, code = r.frags.code[i]!;
        return { code: r.manifest.codes[code] ?? `code#${code}`, node: Math.floor(slot / T), thread: (slot % T) + 1, start: r.frags.start[i]! - t0, end: r.frags.finish[i]! - t0, cpu: r.frags.cpu[i]! };
      });
    });
    return { html, data };
  },
  render: function (el, runs: { code: string; node: number; thread: number; start: number; end: number; cpu: number }[][], h) {
    const w = window as unknown as { LUNA_FOCUS?: ((t0: number, t1: number) => void)[] };
    runs.forEach((steps, ri) => {
      const det = h.el('details', {}, h.el('summary', {}, 'All ' + steps.length + ' recorded steps on the timeline' + (runs.length > 1 ? ' (' + (h.labels[ri] || '') + ')' : '')));
      det.append(h.table(['#', 'code', 'where', 'start', 'wall', 'CPU', ''], steps.map((s, k) => {
        const a = h.el('a', { href: '#timeline' }, 'show');
        a.addEventListener('click', (ev) => { ev.preventDefault(); const f = w.LUNA_FOCUS && w.LUNA_FOCUS[ri]; if (f) f(s.start, s.end); });
        return [String(k + 1), s.code, 'node ' + s.node + ' thread ' + s.thread, h.dur(s.start), h.dur(s.end - s.start), h.dur(s.cpu), a];
      })));
      el.append(det);
    });
  },
};
