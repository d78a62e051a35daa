// The timeline: per node a system-thread row (sysBusy spans), a network row (DF transfers
// arriving there, from the first send to the arrival) and one row per worker thread (fragments
// coloured by code fragment), with the critical path's recorded steps marked. Drawn by hand on a
// <canvas>: chart libraries do not draw Gantt rows of 10^6 slices fluidly. Slices narrower than a
// pixel are aggregated into per-pixel buckets (busy fraction → opacity, the longest slice's
// code → colour), so a redraw touches each visible slice once. Wheel zooms, drag pans,
// double-click resets. Data: columns per kind sorted by (row, start), deflated (see encode).
import type { RunData, Spans } from '../collect.js';
import { pack, type NameCols, type Packed, type Section } from '../section.js';
import { NameTable } from '../names.js';

/** Permutation sorting items by (row, start) and the row offsets (counting sort: O(n) when rows are already time-ordered). */
export function byRow(row: Int32Array, start: Float64Array, rows: number): { perm: Int32Array; off: Int32Array } {
  const off = new Int32Array(rows + 1);
  for (let i = 0; i < row.length; i++) off[row[i]! + 1]++;
  for (let r = 0; r < rows; r++) off[r + 1] += off[r]!;
  const pos = off.slice(0, rows), perm = new Int32Array(row.length);
  for (let i = 0; i < row.length; i++) perm[pos[row[i]!]++] = i;
  for (let r = 0; r < rows; r++) {
    let sorted = true;
    for (let k = off[r]! + 1; k < off[r + 1]! && sorted; k++) if (start[perm[k]!]! < start[perm[k - 1]!]!) sorted = false;
    if (!sorted) perm.subarray(off[r]!, off[r + 1]!).sort((a, b) => start[a]! - start[b]!);
  }
  return { perm, off };
}

interface Enc { s: Packed; d: Packed; c: Packed; off: number[]; maxd: number[]; dtick: number }
/** The same columns in the page, inflated by the client core. */
interface Cols { s: Uint32Array; d: Uint32Array; c: Uint16Array; off: number[]; maxd: number[]; dtick: number }

/**
 * Spans of one kind sorted by (row, start): start as u32 ticks since the run's start, stored as
 * the delta to the row's previous start; duration as u32 of `dtick` ns (1 ns unless a span is
 * longer than 4 s). Small integers: deflate packs them to a few bytes per span.
 */
function encode(start: Float64Array, end: Float64Array, colour: ArrayLike<number>, row: Int32Array, rows: number, t0: number, tick: number): Enc & { perm: Int32Array } {
  const { perm, off } = byRow(row, start, rows);
  const n = perm.length;
  let longest = 0;
  for (let i = 0; i < n; i++) longest = Math.max(longest, end[i]! - start[i]!);
  const dtick = Math.max(1, Math.ceil(longest / 4e9));
  const s = new Uint32Array(n), d = new Uint32Array(n), c = new Uint16Array(n);
  const maxd = new Array<number>(rows).fill(0);
  for (let r = 0; r < rows; r++) {
    let prev = 0;
    for (let k = off[r]!; k < off[r + 1]!; k++) {
      const i = perm[k]!;
      const at = Math.min(4294967295, Math.max(prev, Math.round((start[i]! - t0) / tick)));
      s[k] = at - prev;
      prev = at;
      const du = Math.max(0, end[i]! - start[i]!);
      d[k] = Math.round(du / dtick);
      c[k] = Math.max(0, Math.min(65535, colour[i]!));
      if (du > maxd[r]!) maxd[r] = du;
    }
  }
  return { s: pack(s), d: pack(d), c: pack(c), off: [...off], maxd, dtick, perm };
}

function rowOfSpans(x: Spans): Int32Array { return x.node; }

export function timelineData(r: RunData): unknown {
  const N = r.slow.nodes, T = r.slow.threads, t0 = r.slow.tStart;
  let end = t0 + r.slow.tWall;
  for (const a of [r.frags.finish, r.transfers.end, r.sys.end]) for (let i = 0; i < a.length; i++) if (a[i]! > end) end = a[i]!;
  const span = Math.max(1, end - t0);
  // u32 ticks: 1 ns resolution for runs up to 4.29 s, coarser beyond
  const tick = Math.max(1, span / 4e9);
  const code = Int32Array.from(r.frags.code, (c) => (c < 0 ? 65535 : c));
  const f = encode(r.frags.start, r.frags.finish, code, r.frags.slot, N * T, t0, tick);
  const inv = new Int32Array(f.perm.length);
  for (let k = 0; k < f.perm.length; k++) inv[f.perm[k]!] = k;
  const crit = Int32Array.from(r.critical, (i) => inv[i]!);
  const net = encode(r.transfers.start, r.transfers.end, r.transfers.from, rowOfSpans(r.transfers), N, t0, tick);
  const sys = encode(r.sys.start, r.sys.end, new Int32Array(r.sys.node.length), rowOfSpans(r.sys), N, t0, tick);
  const strip = ({ perm: _p, ...e }: Enc & { perm: Int32Array }): Enc => e;
  // what the tooltips, the search and the selection say of a fragment or transfer, in row order
  const cpu = new Uint32Array(f.perm.length);
  for (let k = 0; k < f.perm.length; k++) cpu[k] = Math.round(Math.max(0, r.frags.cpu[f.perm[k]!]!) / f.dtick);
  const inputs = r.frags.inNames.packedGroups(f.perm, r.frags.inOff);
  const about = {
    names: r.frags.names.packed(f.perm), cpu: pack(cpu), inCount: pack(Int32Array.from(f.perm, (i) => r.frags.inCount[i]!)),
    inNames: inputs.names, inOff: inputs.off,
    dfs: (r.transfers.names ?? new NameTable()).packed(net.perm), bytes: pack(Float64Array.from(net.perm, (i) => r.transfers.bytes[i]!)),
  };
  return { N, T, span, tick, codes: r.manifest.codes, f: strip(f), net: strip(net), sys: strip(sys), crit: pack(crit), about };
}

interface About { names: NameCols; cpu: Uint32Array; inCount: Int32Array; inNames: NameCols; inOff: Int32Array; dfs: NameCols; bytes: Float64Array }

export const timeline: Section = {
  id: 'timeline',
  title: 'Timeline',
  build(ctx) {
    return {
      html: '<p class="mut">Per node: system thread (grey), DF transfers arriving (orange, first send → arrival; arrows from the sending node when zoomed in), worker threads (fragments coloured by code fragment; critical-path steps outlined in red). Wheel: zoom; drag: pan; shift-drag: select a time range (statistics below the timeline); double-click: whole run; the search box finds fragments by name (<code>sw[57][0]</code>, <code>sw[57]</code>, <code>sw</code>) or code.' +
        (ctx.runs.length > 1 ? ' The two timelines share their time axis: zooming or panning one moves both.' : '') + '</p>',
      data: ctx.runs.map(timelineData),
    };
  },
  render: function (el, runs: { N: number; T: number; span: number; tick: number; codes: string[]; f: Cols; net: Cols; sys: Cols; crit: Int32Array; about: About }[], h) {
    const LABEL_W = 74, AXIS_H = 22, NET = '#e08a2c', SYS = '#8795a1', CRIT = '#e00', FOUND = '#111';
    const w = window as unknown as { LUNA_FOCUS?: ((t0: number, t1: number) => void)[] };
    w.LUNA_FOCUS = [];
    // compared runs share one view of time, so the same instant is at the same x in both
    const shared = { v0: 0, v1: Math.max(...runs.map((r) => r.span)), span: Math.max(...runs.map((r) => r.span)), redraws: [] as (() => void)[] };
    const bar = h.el('div', { class: 'tlbar' });
    const search = h.el('input', { type: 'search', placeholder: 'find a fragment: sw[57][0], sw[57], sw or a code', size: '42', 'data-search': '1' }) as HTMLInputElement;
    const found = h.el('span', { class: 'mut', 'data-found': '' });
    bar.append(search, ' ', found);
    el.append(bar);
    const finders: ((q: string) => number)[] = [];
    const nexts: (() => void)[] = [];
    let lastQuery = '';
    const runSearch = (): void => {
      const q = search.value.trim();
      if (q === lastQuery) { nexts.forEach((f) => f()); return; }
      lastQuery = q;
      const n = finders.reduce((a, f) => a + f(q), 0);
      found.textContent = q ? n.toLocaleString('en') + ' fragment' + (n === 1 ? '' : 's') + (n ? ' (outlined in black; Enter: the next one)' : '') : '';
      found.setAttribute('data-found', String(n));
      if (n) nexts.forEach((f) => f());
    };
    search.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') runSearch(); });
    search.addEventListener('search', runSearch);
    runs.forEach((r, ri) => {
      if (runs.length > 1) el.append(h.el('h3', {}, h.labels[ri] || ''));
      const tick = r.tick, A = r.about;
      // starts: deltas within a row → ticks since the start; durations: dtick units → ns
      const dec = (e: Cols) => {
        const d = new Float64Array(e.d.length);
        for (let i = 0; i < d.length; i++) d[i] = e.d[i]! * e.dtick;
        for (let row = 0; row + 1 < e.off.length; row++) for (let k = e.off[row]! + 1; k < e.off[row + 1]!; k++) e.s[k] += e.s[k - 1]!;
        return { s: e.s, d, c: e.c, off: e.off, maxd: e.maxd, dtick: e.dtick };
      };
      const F = dec(r.f), NETS = dec(r.net), SYSS = dec(r.sys);
      const crit = r.crit;
      const colours: string[] = [];
      const colour = (c: number): string => colours[c] || (colours[c] = h.codeColor(c === 65535 ? -1 : c));
      const codeName = (c: number): string => (c === 65535 ? '?' : r.codes[c] || 'code#' + c);
      interface Row { label: string; kind: string; node: number; thread: number; e: ReturnType<typeof dec>; r: number; y: number; hg: number }
      const rows: Row[] = [];
      const netRow: Row[] = [];
      let y = AXIS_H;
      for (let n = 0; n < r.N; n++) {
        rows.push({ label: 'n' + n + ' sys', kind: 'sys', node: n, thread: 0, e: SYSS, r: n, y, hg: 7 }); y += 9;
        const nr: Row = { label: 'n' + n + ' net', kind: 'net', node: n, thread: 0, e: NETS, r: n, y, hg: 7 };
        rows.push(nr); netRow.push(nr); y += 9;
        for (let t = 0; t < r.T; t++) { rows.push({ label: 'n' + n + ' t' + (t + 1), kind: 'cf', node: n, thread: t + 1, e: F, r: n * r.T + t, y, hg: 16 }); y += 18; }
        y += 4;
      }
      const H = y + 4;
      // legend: the codes that ran, most fragments first
      const counts = new Map<number, number>();
      for (let i = 0; i < F.c.length; i++) counts.set(F.c[i]!, (counts.get(F.c[i]!) || 0) + 1);
      const legend = h.el('div', { class: 'mut' });
      const sw = (style: string, text: string): HTMLElement => { const x = h.el('span', { class: 'sw' }); x.setAttribute('style', style); return h.el('span', { style: 'margin-right:10px' }, x, text); };
      [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 24).forEach(([c]) => {
        const item = sw('background:' + colour(c), codeName(c));
        item.setAttribute('data-code-colour', colour(c));
        legend.append(item);
      });
      legend.append(sw('background:' + NET, 'DF transfer'), sw('background:' + SYS, 'system thread'), sw('border:2px solid ' + CRIT, 'critical path'));
      el.append(legend);
      const box = h.el('div', { class: 'tl' });
      const cv = document.createElement('canvas');
      cv.setAttribute('data-run', String(ri));
      const tip = h.el('div', { class: 'tip' });
      box.append(cv, tip);
      el.append(box);
      const stats = h.el('div', { class: 'tlstats', 'data-run': String(ri) });
      el.append(stats);
      const g = cv.getContext('2d')!;
      const view = runs.length > 1 ? shared : { v0: 0, v1: r.span, span: r.span, redraws: [] as (() => void)[] };
      let pending = false;
      let sel: [number, number] | null = null;
      let matches = new Int32Array(0), matchAt = -1;
      const first = (e: ReturnType<typeof dec>, ri2: number, from: number): number => {
        // first index of the row whose start ≥ from (rows are sorted by start)
        let lo = e.off[ri2]!, hi = e.off[ri2 + 1]!;
        while (lo < hi) { const m = (lo + hi) >> 1; if (e.s[m]! * tick < from) lo = m + 1; else hi = m; }
        return lo;
      };
      let busy = new Float32Array(0), best = new Float32Array(0), bestC = new Int32Array(0);
      const drawRow = (row: Row, pw: number, k: number, v0: number, v1: number): void => {
        const e = row.e, end = e.off[row.r + 1]!;
        if (busy.length < pw + 1) { busy = new Float32Array(pw + 1); best = new Float32Array(pw + 1); bestC = new Int32Array(pw + 1); }
        busy.fill(0); best.fill(0);
        const fixed = row.kind === 'sys' ? SYS : row.kind === 'net' ? NET : '';
        for (let i = first(e, row.r, v0 - e.maxd[row.r]! - tick); i < end; i++) {
          const st = e.s[i]! * tick;
          if (st > v1) break;
          const en = st + e.d[i]!;
          if (en < v0) continue;
          const x0 = Math.max(0, (st - v0) * k), x1 = Math.min(pw, (en - v0) * k);
          if (x1 - x0 >= 1) {
            g.fillStyle = fixed || colour(e.c[i]!);
            g.fillRect(LABEL_W + x0, row.y, x1 - x0 > 3 ? x1 - x0 - 0.5 : x1 - x0, row.hg);
          } else {
            const px = Math.min(pw, x0 | 0), wd = Math.max(x1 - x0, 0.02);
            busy[px] += wd;
            if (wd >= best[px]!) { best[px] = wd; bestC[px] = e.c[i]!; }
          }
        }
        for (let px = 0; px <= pw; px++) {
          if (busy[px]! <= 0) continue;
          g.globalAlpha = Math.min(1, 0.3 + 0.7 * busy[px]!);
          g.fillStyle = fixed || colour(bestC[px]!);
          g.fillRect(LABEL_W + px, row.y, 1, row.hg);
        }
        g.globalAlpha = 1;
      };
      const cfRows = rows.filter((x) => x.kind === 'cf');
      const rowOfFrag = (i: number): Row | undefined => cfRows.find((row) => i >= F.off[row.r]! && i < F.off[row.r + 1]!);
      const critRows = Array.from(crit, (i) => rowOfFrag(i));
      const critStart = Float64Array.from(crit, (i) => F.s[i]! * tick), critEnd = Float64Array.from(crit, (i) => F.s[i]! * tick + F.d[i]!);
      // outlines of fragments in time order, one per pixel and row (a long list seen whole is a band)
      const outline = (idx: ArrayLike<number>, rowsOf: (Row | undefined)[], st: ArrayLike<number>, en: ArrayLike<number>, colourOf: string, join: boolean, W: number, k: number, v0: number, v1: number): void => {
        g.strokeStyle = colourOf; g.lineWidth = 1.5;
        let px = NaN, py = NaN, lastX = -Infinity, lastRow: Row | undefined;
        let lo = 0, hi = idx.length;
        while (lo < hi) { const m = (lo + hi) >> 1; if (en[m]! < v0) lo = m + 1; else hi = m; }
        for (let j = Math.max(0, lo - 1); j < idx.length; j++) {
          const row = rowsOf[j];
          if (!row) continue;
          const a = st[j]!, b = en[j]!;
          const x0 = LABEL_W + (a - v0) * k, x1 = LABEL_W + (b - v0) * k;
          const last = a > v1;
          if (!last && row === lastRow && x1 < lastX + 1) continue;
          const cx = (x0 + x1) / 2, cy = row.y + row.hg / 2;
          if (x1 >= LABEL_W && x0 <= W) g.strokeRect(Math.max(LABEL_W, x0), row.y, Math.max(3, Math.min(W, x1) - Math.max(LABEL_W, x0)), row.hg);
          if (join && px === px && (Math.max(px, cx) >= LABEL_W)) { g.beginPath(); g.moveTo(Math.max(LABEL_W, px), py); g.lineTo(Math.max(LABEL_W, Math.min(W, cx)), cy); g.stroke(); }
          px = cx; py = cy; lastX = x1; lastRow = row;
          if (last) break;
        }
        g.lineWidth = 1;
      };
      let matchRows: (Row | undefined)[] = [], matchStart = new Float64Array(0), matchEnd = new Float64Array(0);
      // transfers as arrows from the sending node's row to the receiving one, when few enough are in view to read
      const ARROWS = 400;
      const arrows = (W: number, k: number, v0: number, v1: number): void => {
        const todo: [number, number, number, number][] = [];
        for (const row of netRow) {
          for (let i = first(NETS, row.r, v0 - NETS.maxd[row.r]! - tick); i < NETS.off[row.r + 1]!; i++) {
            const st = NETS.s[i]! * tick;
            if (st > v1) break;
            const en = st + NETS.d[i]!;
            if (en < v0) continue;
            const from = netRow[NETS.c[i]!];
            if (!from || from === row) continue;
            todo.push([st, from.y + from.hg / 2, en, row.y + row.hg / 2]);
            if (todo.length > ARROWS) return;
          }
        }
        g.strokeStyle = NET; g.fillStyle = NET; g.globalAlpha = 0.8;
        for (const [a, ya, b, yb] of todo) {
          const xa = Math.max(LABEL_W, LABEL_W + (a - v0) * k), xb = Math.min(W, LABEL_W + (b - v0) * k);
          g.beginPath(); g.moveTo(xa, ya); g.lineTo(xb, yb); g.stroke();
          const ang = Math.atan2(yb - ya, xb - xa);
          g.beginPath(); g.moveTo(xb, yb); g.lineTo(xb - 6 * Math.cos(ang - 0.4), yb - 6 * Math.sin(ang - 0.4)); g.lineTo(xb - 6 * Math.cos(ang + 0.4), yb - 6 * Math.sin(ang + 0.4)); g.fill();
        }
        g.globalAlpha = 1;
        cv.setAttribute('data-arrows', String(todo.length));
      };
      const draw = (): void => {
        pending = false;
        const v0 = view.v0, v1 = view.v1;
        const dpr = window.devicePixelRatio || 1;
        const W = Math.max(400, box.clientWidth || 1000), pw = W - LABEL_W;
        cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr); cv.style.height = H + 'px';
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
        const k = pw / (v1 - v0);
        if (sel) { g.fillStyle = '#dbe8fb'; g.fillRect(LABEL_W + (sel[0] - v0) * k, AXIS_H - 4, (sel[1] - sel[0]) * k, H); }
        // time axis: 1-2-5 steps about 110 px apart, labels as precise as the steps
        const raw = (v1 - v0) / Math.max(1, pw / 110), p10 = Math.pow(10, Math.floor(Math.log10(raw)));
        const step = raw / p10 < 2 ? 2 * p10 : raw / p10 < 5 ? 5 * p10 : 10 * p10;
        g.font = '11px system-ui,sans-serif'; g.textBaseline = 'middle';
        g.strokeStyle = '#eef1f4'; g.fillStyle = '#5c6773';
        const ticks: string[] = [];
        for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
          const x = LABEL_W + (t - v0) * k;
          g.beginPath(); g.moveTo(x, AXIS_H - 4); g.lineTo(x, H); g.stroke();
          const label = h.tickLabel(t, step);
          ticks.push(label);
          g.fillText(label, x + 2, 9);
        }
        cv.setAttribute('data-ticks', ticks.join('|'));
        for (const row of rows) {
          g.fillStyle = '#5c6773';
          g.fillText(row.label, 4, row.y + row.hg / 2);
          drawRow(row, pw, k, v0, v1);
        }
        arrows(W, k, v0, v1);
        outline(crit, critRows, critStart, critEnd, CRIT, true, W, k, v0, v1);
        if (matches.length) outline(matches, matchRows, matchStart, matchEnd, FOUND, false, W, k, v0, v1);
        cv.setAttribute('data-view', v0.toFixed(0) + ',' + v1.toFixed(0));
      };
      const redraw = (): void => { if (!pending) { pending = true; requestAnimationFrame(draw); } };
      view.redraws.push(redraw);
      const setView = (a: number, b: number): void => {
        const minW = 1000, wid = Math.max(minW, Math.min(view.span, b - a));
        a = Math.max(0, Math.min(view.span - wid, a));
        view.v0 = a; view.v1 = a + wid;
        for (const f of view.redraws) f();
      };
      w.LUNA_FOCUS![ri] = (a: number, b: number) => { const pad = Math.max(1000, (b - a) * 2); setView(a - pad, b + pad); box.scrollIntoView({ block: 'center' }); };
      const tAt = (mx: number): number => view.v0 + (mx - LABEL_W) / (cv.clientWidth - LABEL_W) * (view.v1 - view.v0);
      // the search: by name (exact, or a prefix of whole indices), label or code
      const nameOf = (i: number): string => h.name(A.names, i);
      finders.push((q: string): number => {
        const hits: number[] = [];
        if (q) {
          const codeHit = new Set<number>();
          r.codes.forEach((c, i) => { if (c === q) codeHit.add(i); });
          for (let i = 0; i < F.s.length; i++) {
            if (codeHit.has(F.c[i]!)) { hits.push(i); continue; }
            const n = nameOf(i);
            if (n === q || (n.startsWith(q) && n.charAt(q.length) === '[')) hits.push(i);
          }
        }
        hits.sort((a, b) => F.s[a]! - F.s[b]!);
        matches = Int32Array.from(hits); matchAt = -1;
        matchRows = hits.map((i) => rowOfFrag(i));
        matchStart = Float64Array.from(hits, (i) => F.s[i]! * tick); matchEnd = Float64Array.from(hits, (i) => F.s[i]! * tick + F.d[i]!);
        redraw();
        return hits.length;
      });
      nexts.push(() => {
        if (!matches.length) return;
        matchAt = (matchAt + 1) % matches.length;
        w.LUNA_FOCUS![ri]!(matchStart[matchAt]!, matchEnd[matchAt]!);
      });
      // statistics of a time range: what ran in it, per code, and what crossed between nodes
      const select = (a: number, b: number): void => {
        sel = [Math.max(0, Math.min(a, b)), Math.min(view.span, Math.max(a, b))];
        const [s0, s1] = sel, len = Math.max(1, s1 - s0);
        let n = 0, busyNs = 0, cpuNs = 0;
        const per = new Map<number, [number, number]>();
        for (const row of cfRows) {
          for (let i = first(F, row.r, s0 - F.maxd[row.r]! - tick); i < F.off[row.r + 1]!; i++) {
            const st = F.s[i]! * tick;
            if (st > s1) break;
            const en = st + F.d[i]!;
            if (en < s0) continue;
            const part = Math.min(en, s1) - Math.max(st, s0);
            n++; busyNs += part; cpuNs += F.d[i]! > 0 ? A.cpu[i]! * F.dtick * part / F.d[i]! : 0;
            const p = per.get(F.c[i]!) || [0, 0]; p[0]++; p[1] += part; per.set(F.c[i]!, p);
          }
        }
        let tn = 0, bytes = 0;
        for (const row of netRow) for (let i = first(NETS, row.r, s0); i < NETS.off[row.r + 1]!; i++) { const st = NETS.s[i]! * tick + NETS.d[i]!; if (NETS.s[i]! * tick > s1) break; if (st >= s0 && st <= s1) { tn++; bytes += A.bytes[i]!; } }
        const lanes = cfRows.length;
        stats.replaceChildren(
          h.el('h3', {}, 'Selection ' + h.dur(s0) + ' – ' + h.dur(s1) + ' (' + h.dur(len) + ')'),
          h.el('p', { 'data-selection': s0.toFixed(0) + ',' + s1.toFixed(0), 'data-fragments': String(n), 'data-transfers': String(tn) },
            n.toLocaleString('en') + ' fragments in it; worker threads busy ' + (100 * busyNs / (len * lanes)).toFixed(1) + '% of the range (' + h.dur(busyNs) + ' of ' + lanes + ' × ' + h.dur(len) + '), CPU ' + h.dur(cpuNs) + '; ' +
            tn.toLocaleString('en') + ' DF transfers arrived (' + (bytes / 1048576).toFixed(2) + ' MiB).'),
          h.table(['code', 'fragments', 'time in range', 'of busy'], [...per.entries()].sort((x, y) => y[1][1] - x[1][1]).slice(0, 10).map(([c, [cnt, ns]]) => [codeName(c), cnt.toLocaleString('en'), h.dur(ns), (100 * ns / Math.max(1, busyNs)).toFixed(1) + '%'])),
        );
        const zoom = h.el('button', { type: 'button' }, 'zoom to the selection');
        zoom.addEventListener('click', () => setView(s0, s1));
        stats.append(zoom);
        redraw();
      };
      cv.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        const rect = cv.getBoundingClientRect(), mx = ev.clientX - rect.left;
        const c = tAt(Math.max(LABEL_W, mx)), f = Math.exp(ev.deltaY * 0.0015);
        setView(c - (c - view.v0) * f, c + (view.v1 - c) * f);
      }, { passive: false });
      let drag: { x: number; a: number; b: number; select: boolean; t: number } | null = null;
      cv.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, a: view.v0, b: view.v1, select: ev.shiftKey, t: tAt(ev.clientX - cv.getBoundingClientRect().left) }; cv.style.cursor = ev.shiftKey ? 'col-resize' : 'grabbing'; });
      window.addEventListener('mouseup', (ev) => {
        if (drag && drag.select) { const t1 = tAt(ev.clientX - cv.getBoundingClientRect().left); if (Math.abs(ev.clientX - drag.x) > 2) select(drag.t, t1); }
        drag = null; cv.style.cursor = 'grab';
      });
      cv.addEventListener('dblclick', () => setView(0, view.span));
      cv.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
      // dragging goes on outside the canvas until the button is released
      window.addEventListener('mousemove', (ev) => {
        if (!drag || drag.select) return;
        const dt = (drag.x - ev.clientX) / (cv.clientWidth - LABEL_W) * (drag.b - drag.a);
        setView(drag.a + dt, drag.b + dt);
      });
      cv.addEventListener('mousemove', (ev) => {
        const rect = cv.getBoundingClientRect(), mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
        if (drag) { tip.style.display = 'none'; return; }
        const row = rows.find((x) => my >= x.y && my < x.y + x.hg);
        if (!row || mx < LABEL_W) { tip.style.display = 'none'; return; }
        const t = tAt(mx), slack = 3 * (view.v1 - view.v0) / (cv.clientWidth - LABEL_W);
        const e = row.e;
        let hit = -1;
        for (let i = first(e, row.r, t - e.maxd[row.r]! - slack); i < e.off[row.r + 1]!; i++) {
          const st = e.s[i]! * tick;
          if (st > t + slack) break;
          if (st + e.d[i]! >= t - slack) { hit = i; if (row.kind === 'cf') break; }
        }
        if (hit < 0) { tip.style.display = 'none'; return; }
        const st = e.s[hit]! * tick, du = e.d[hit]!;
        let text: string;
        if (row.kind === 'cf') {
          const ins: string[] = [];
          for (let k = A.inOff[hit]!; k < A.inOff[hit + 1]!; k++) ins.push(h.name(A.inNames, k));
          const more = A.inCount[hit]! - ins.length;
          text = nameOf(hit) + '  (' + codeName(e.c[hit]!) + ')\n' + row.label + '\nstart ' + h.dur(st) + ', wall ' + h.dur(du) + ', CPU ' + h.dur(A.cpu[hit]! * F.dtick) +
            '\ninputs: ' + (A.inCount[hit] ? ins.join(', ') + (more > 0 ? ' and ' + more + ' more' : '') : 'none');
        } else if (row.kind === 'net') {
          text = 'DF ' + h.name(A.dfs, hit) + ' from node ' + e.c[hit] + ' to node ' + row.node + '\n' + (A.bytes[hit]! / 1024).toFixed(1) + ' KiB, first sent ' + h.dur(st) + ', arrived ' + h.dur(st + du) + ' (' + h.dur(du) + ')';
        } else text = 'system thread busy\n' + row.label + '\nstart ' + h.dur(st) + '\nlasting ' + h.dur(du);
        tip.textContent = text;
        tip.style.display = 'block';
        tip.style.left = Math.min(mx + 12, cv.clientWidth - 260) + 'px';
        tip.style.top = (my + 12) + 'px';
      });
      window.addEventListener('resize', redraw);
      draw();
    });
  },
};
