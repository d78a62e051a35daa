// The critical path (longest DF-dependency chain weighted by CPU time, from the SLOW analysis):
// its length against the wall time, what it is made of, and every one of its steps in a paged
// table (the whole path, however long), each of which can be shown on the timeline (where the
// steps are outlined in red).
import { dur, pct, share } from '../../analysis/slow/fmt.js';
import type { Culprit, Floor } from '../../analysis/slow/types.js';
import { esc, pack, sideBySide, type NameCols, type Section } from '../section.js';

export function culpritTable(head: string, xs: Culprit[], shareOf: string): string {
  if (xs.length === 0) return '<p class="mut">none</p>';
  return `<table><thead><tr><th>${esc(head)}</th><th class="n">time</th><th class="n">${esc(shareOf)}</th></tr></thead><tbody>${xs.map((x) =>
    `<tr><td>${esc(x.label ?? x.key)}${x.code && x.code !== (x.label ?? x.key) ? ` <span class="mut">(${esc(x.code)})</span>` : ''}</td><td class="n" data-ns="${x.ns}">${dur(x.ns)}</td><td class="n">${share(x.share)}</td></tr>`).join('')}</tbody></table>`;
}

/** The graph's floor in a sentence (empty when the analysis did not keep the graph). */
function floorText(f: Floor | null): string {
  if (!f) return '';
  return ` With a runtime that cost nothing (each fragment its CPU time, all known at the start, critical path first) this graph would take <b data-floor-ns="${f.ns}">${dur(f.ns)}</b> = ${pct(100 * f.ofWall)} of the wall time; no schedule on these workers is shorter than ${dur(f.boundNs)}.`;
}

export const critical: Section = {
  id: 'critical',
  title: 'Critical path',
  build(ctx) {
    const html = sideBySide(ctx, (r) => {
      const c = r.slow.criticalPath;
      const shown = c.steps >= c.cfs
        ? (c.cfs === 1 ? 'Its one step is listed below and outlined on the timeline.' : `All ${c.cfs.toLocaleString('en')} steps are listed below and outlined on the timeline.`)
        : `The path has ${c.cfs.toLocaleString('en')} steps: the last ${c.steps.toLocaleString('en')} are listed below and outlined on the timeline; the ${(c.cfs - c.steps).toLocaleString('en')} before them are counted in the totals and tables only.`;
      return `<p>Length <b data-ns="${c.length}">${dur(c.length)}</b> of CPU time over ${c.cfs.toLocaleString('en')} fragments = ${pct(100 * c.ofWall)} of the wall time; average parallelism T_U / length = ${c.parallelism.toFixed(2)} (worker threads: ${r.slow.cores}).${floorText(r.slow.floor)} <span data-path-steps="${c.steps}" data-path-cfs="${c.cfs}">${shown}</span></p>
<div class="cmp"><div class="col"><h3>By code fragment</h3>${culpritTable('code', c.byCode, 'of path')}</div><div class="col"><h3>By label</h3>${culpritTable('label', c.byLabel, 'of path')}</div></div>
<h3>Last steps (latest first)</h3><table><thead><tr><th>fragment</th><th>global id</th><th>code</th><th class="n">CPU</th></tr></thead><tbody>${c.tail.map((s) => `<tr><td>${esc(s.name)}</td><td><code>${esc(s.gid)}</code></td><td>${esc(s.code)}</td><td class="n">${dur(s.ns)}</td></tr>`).join('')}</tbody></table>`;
    });
    // every step, as columns: a paged table in the page, whatever the path's length
    const data = ctx.runs.map((r) => {
      const t0 = r.slow.tStart, n = r.critical.length;
      const start = new Float64Array(n), end = new Float64Array(n), cpu = new Float64Array(n), slot = new Int32Array(n), code = new Int32Array(n);
      r.critical.forEach((i, k) => {
        start[k] = r.frags.start[i]! - t0; end[k] = r.frags.finish[i]! - t0; cpu[k] = r.frags.cpu[i]!;
        slot[k] = r.frags.slot[i]!; code[k] = r.frags.code[i]!;
      });
      return { T: r.slow.threads, codes: r.manifest.codes, start: pack(start), end: pack(end), cpu: pack(cpu), slot: pack(slot), code: pack(code), names: r.criticalNames.packed() };
    });
    return { html, data };
  },
  render: function (el, runs: { T: number; codes: string[]; start: Float64Array; end: Float64Array; cpu: Float64Array; slot: Int32Array; code: Int32Array; names: NameCols }[], h) {
    const w = window as unknown as { LUNA_FOCUS?: ((t0: number, t1: number) => void)[] };
    const PAGE = 50;
    runs.forEach((r, ri) => {
      const n = r.start.length;
      const det = h.el('details', { class: 'steps' }, h.el('summary', {}, (n === 1 ? 'The step' : 'All ' + n.toLocaleString('en') + ' steps, earliest first') + (runs.length > 1 ? ' (' + (h.labels[ri] || '') + ')' : '')));
      const nav = h.el('div', { class: 'pager' });
      const body = h.el('div');
      det.append(nav, body);
      el.append(det);
      const pages = Math.max(1, Math.ceil(n / PAGE));
      let page = 0;
      const show = (p: number): void => {
        page = Math.max(0, Math.min(pages - 1, p));
        const rows: (string | Node)[][] = [];
        for (let k = page * PAGE; k < Math.min(n, (page + 1) * PAGE); k++) {
          const a = h.el('a', { href: '#timeline' }, 'show');
          const s = r.start[k]!, e = r.end[k]!;
          a.addEventListener('click', (ev) => { ev.preventDefault(); const f = w.LUNA_FOCUS && w.LUNA_FOCUS[ri]; if (f) f(s, e); });
          const slot = r.slot[k]!, c = r.code[k]!;
          rows.push([String(k + 1), h.name(r.names, k), r.codes[c] || 'code#' + c, 'node ' + Math.floor(slot / r.T) + ' thread ' + (slot % r.T + 1), h.dur(s), h.dur(e - s), h.dur(r.cpu[k]!), a]);
        }
        body.replaceChildren(h.table(['#', 'fragment', 'code', 'where', 'start', 'wall', 'CPU', ''], rows));
        label.textContent = ' steps ' + (page * PAGE + 1).toLocaleString('en') + '–' + Math.min(n, (page + 1) * PAGE).toLocaleString('en') + ' of ' + n.toLocaleString('en') + ' ';
        det.setAttribute('data-page', String(page));
      };
      const btn = (text: string, to: () => number): HTMLElement => {
        const b = h.el('button', { type: 'button' }, text);
        b.addEventListener('click', () => show(to()));
        return b;
      };
      const label = h.el('span');
      const go = h.el('input', { type: 'number', min: '1', max: String(n), placeholder: 'step', style: 'width:7em' }) as HTMLInputElement;
      go.addEventListener('change', () => show(Math.floor((Number(go.value) - 1) / PAGE)));
      nav.append(btn('«', () => 0), btn('‹', () => page - 1), label, btn('›', () => page + 1), btn('»', () => pages - 1), ' go to ', go);
      show(0);
    });
  },
};
