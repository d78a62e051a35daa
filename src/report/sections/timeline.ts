// The timeline: per node a system-thread row (sysBusy spans), a network row (DF transfers
// arriving there, from the first send to the arrival) and one row per worker thread (fragments
// coloured by code fragment), with the critical path's recorded steps marked. Drawn by hand on a
// <canvas>: chart libraries do not draw Gantt rows of 10^6 slices fluidly. Slices narrower than a
// pixel are aggregated into per-pixel buckets (busy fraction → opacity, the longest slice's
// code → colour), so a redraw touches each visible slice once. Wheel zooms, drag pans,
// double-click resets. Data: columns per kind sorted by (row, start), deflated (see encode).
import type { RunData, Spans } from '../collect.js';
import { pack, type Packed, type Section } from '../section.js';

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
  return { N, T, span, tick, codes: r.manifest.codes, f: strip(f), net: strip(net), sys: strip(sys), crit: pack(crit) };
}

export const timeline: Section = {
  id: 'timeline',
  title: 'Timeline',
  build(ctx) {
    return {
      html: '<p class="mut">Per node: system thread (grey), DF transfers arriving (orange, first send → arrival), worker threads (fragments coloured by code fragment; critical-path steps outlined in red). Wheel: zoom; drag: pan; double-click: whole run.</p>',
      data: ctx.runs.map(timelineData),
    };
  },
  render: function (el, runs: { N: number; T: number; span: number; tick: number; codes: string[]; f: Cols; net: Cols; sys: Cols; crit: Int32Array }[], h) {
    const LABEL_W = 74, AXIS_H = 22;
    const w = window as unknown as { LUNA_FOCUS?: ((t0: number, t1: number) => void)[] };
    w.LUNA_FOCUS = [];
    runs.forEach((r, ri) => {
      if (runs.length > 1) el.append(h.el('h3', {}, h.labels[ri] || ''));
      const tick = r.tick;
      // starts: deltas within a row → ticks since the start; durations: dtick units → ns
      const dec = (e: Cols) => {
        const d = new Float64Array(e.d.length);
        for (let i = 0; i < d.length; i++) d[i] = e.d[i]! * e.dtick;
        for (let row = 0; row + 1 < e.off.length; row++) for (let k = e.off[row]! + 1; k < e.off[row + 1]!; k++) e.s[k] += e.s[k - 1]!;
        return { s: e.s, d, c: e.c, off: e.off, maxd: e.maxd };
      };
      const F = dec(r.f), NET = dec(r.net), SYS = dec(r.sys);
      const crit = r.crit;
      const colours: string[] = [];
      const colour = (c: number): string => colours[c] || (colours[c] = h.codeColor(c === 65535 ? -1 : c));
      interface Row { label: string; kind: string; node: number; thread: number; e: ReturnType<typeof dec>; r: number; y: number; hg: number }
      const rows: Row[] = [];
      let y = AXIS_H;
      for (let n = 0; n < r.N; n++) {
        rows.push({ label: 'n' + n + ' sys', kind: 'sys', node: n, thread: 0, e: SYS, r: n, y, hg: 7 }); y += 9;
        rows.push({ label: 'n' + n + ' net', kind: 'net', node: n, thread: 0, e: NET, r: n, y, hg: 7 }); y += 9;
        for (let t = 0; t < r.T; t++) { rows.push({ label: 'n' + n + ' t' + (t + 1), kind: 'cf', node: n, thread: t + 1, e: F, r: n * r.T + t, y, hg: 16 }); y += 18; }
        y += 4;
      }
      const H = y + 4;
      // legend: the codes that ran, most fragments first
      const counts = new Map<number, number>();
      for (let i = 0; i < F.c.length; i++) counts.set(F.c[i]!, (counts.get(F.c[i]!) || 0) + 1);
      const legend = h.el('div', { class: 'mut' });
      [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 24).forEach(([c]) => {
        const sw = h.el('span', { class: 'sw' }); sw.style.background = colour(c);
        legend.append(h.el('span', { style: 'margin-right:10px' }, sw, c === 65535 ? '?' : (r.codes[c] || 'code#' + c)));
      });
      const critSw = h.el('span', { class: 'sw' }); critSw.style.border = '2px solid #e00';
      legend.append(h.el('span', {}, critSw, 'critical path'));
      el.append(legend);
      const box = h.el('div', { class: 'tl' });
      const cv = document.createElement('canvas');
      cv.setAttribute('data-run', String(ri));
      const tip = h.el('div', { class: 'tip' });
      box.append(cv, tip);
      el.append(box);
      const g = cv.getContext('2d')!;
      let v0 = 0, v1 = r.span;
      let pending = false;
      const first = (e: ReturnType<typeof dec>, ri2: number, from: number): number => {
        // first index of the row whose start ≥ from (rows are sorted by start)
        let lo = e.off[ri2]!, hi = e.off[ri2 + 1]!;
        while (lo < hi) { const m = (lo + hi) >> 1; if (e.s[m]! * tick < from) lo = m + 1; else hi = m; }
        return lo;
      };
      let busy = new Float32Array(0), best = new Float32Array(0), bestC = new Int32Array(0);
      const drawRow = (row: Row, pw: number, k: number): void => {
        const e = row.e, end = e.off[row.r + 1]!;
        if (busy.length < pw + 1) { busy = new Float32Array(pw + 1); best = new Float32Array(pw + 1); bestC = new Int32Array(pw + 1); }
        busy.fill(0); best.fill(0);
        const fixed = row.kind === 'sys' ? '#8795a1' : row.kind === 'net' ? '#e08a2c' : '';
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
      const rowOfFrag = (i: number): Row | undefined => {
        for (const row of rows) if (row.kind === 'cf' && i >= F.off[row.r]! && i < F.off[row.r + 1]!) return row;
        return undefined;
      };
      const critRows = Array.from(crit, (i) => rowOfFrag(i));
      const critStart = Float64Array.from(crit, (i) => F.s[i]! * tick), critEnd = Float64Array.from(crit, (i) => F.s[i]! * tick + F.d[i]!);
      const draw = (): void => {
        pending = false;
        const dpr = window.devicePixelRatio || 1;
        const W = Math.max(400, box.clientWidth || 1000), pw = W - LABEL_W;
        cv.width = Math.round(W * dpr); cv.height = Math.round(H * dpr); cv.style.height = H + 'px';
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
        const k = pw / (v1 - v0);
        // time axis: 1-2-5 steps about 110 px apart
        const raw = (v1 - v0) / Math.max(1, pw / 110), p10 = Math.pow(10, Math.floor(Math.log10(raw)));
        const step = raw / p10 < 2 ? 2 * p10 : raw / p10 < 5 ? 5 * p10 : 10 * p10;
        g.font = '11px system-ui,sans-serif'; g.textBaseline = 'middle';
        g.strokeStyle = '#eef1f4'; g.fillStyle = '#5c6773';
        for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
          const x = LABEL_W + (t - v0) * k;
          g.beginPath(); g.moveTo(x, AXIS_H - 4); g.lineTo(x, H); g.stroke();
          g.fillText(h.dur(t).replace(/(\.\d*?)0+ /, '$1 ').replace('. ', ' '), x + 2, 9);
        }
        for (const row of rows) {
          g.fillStyle = '#5c6773';
          g.fillText(row.label, 4, row.y + row.hg / 2);
          drawRow(row, pw, k);
        }
        // critical path: outline each step, joined in order. Steps are in time order: start at
        // the first that ends in view, stop after the view, one outline per pixel and row (a long
        // path seen whole is a band, not 10^5 rectangles)
        g.strokeStyle = '#e00'; g.lineWidth = 1.5;
        let px = NaN, py = NaN, lastX = -Infinity, lastRow: Row | undefined;
        let lo = 0, hi = crit.length;
        while (lo < hi) { const m = (lo + hi) >> 1; if (critEnd[m]! < v0) lo = m + 1; else hi = m; }
        for (let j = Math.max(0, lo - 1); j < crit.length; j++) {
          const row = critRows[j];
          if (!row) continue;
          const st = critStart[j]!, en = critEnd[j]!;
          const x0 = LABEL_W + (st - v0) * k, x1 = LABEL_W + (en - v0) * k;
          const last = st > v1;
          if (!last && row === lastRow && x1 < lastX + 1) continue;
          const cx = (x0 + x1) / 2, cy = row.y + row.hg / 2;
          if (x1 >= LABEL_W && x0 <= W) g.strokeRect(Math.max(LABEL_W, x0), row.y, Math.max(3, Math.min(W, x1) - Math.max(LABEL_W, x0)), row.hg);
          if (px === px && (Math.max(px, cx) >= LABEL_W)) { g.beginPath(); g.moveTo(Math.max(LABEL_W, px), py); g.lineTo(Math.max(LABEL_W, Math.min(W, cx)), cy); g.stroke(); }
          px = cx; py = cy; lastX = x1; lastRow = row;
          if (last) break;
        }
        g.lineWidth = 1;
        cv.setAttribute('data-view', v0.toFixed(0) + ',' + v1.toFixed(0));
      };
      const redraw = (): void => { if (!pending) { pending = true; requestAnimationFrame(draw); } };
      const setView = (a: number, b: number): void => {
        const minW = 1000, wid = Math.max(minW, Math.min(r.span, b - a));
        a = Math.max(0, Math.min(r.span - wid, a));
        v0 = a; v1 = a + wid;
        redraw();
      };
      w.LUNA_FOCUS![ri] = (a: number, b: number) => { const pad = Math.max(1000, (b - a) * 2); setView(a - pad, b + pad); box.scrollIntoView({ block: 'center' }); };
      const tAt = (mx: number): number => v0 + (mx - LABEL_W) / (cv.clientWidth - LABEL_W) * (v1 - v0);
      cv.addEventListener('wheel', (ev) => {
        ev.preventDefault();
        const rect = cv.getBoundingClientRect(), mx = ev.clientX - rect.left;
        const c = tAt(Math.max(LABEL_W, mx)), f = Math.exp(ev.deltaY * 0.0015);
        setView(c - (c - v0) * f, c + (v1 - c) * f);
      }, { passive: false });
      let drag: { x: number; a: number; b: number } | null = null;
      cv.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, a: v0, b: v1 }; cv.style.cursor = 'grabbing'; });
      window.addEventListener('mouseup', () => { drag = null; cv.style.cursor = 'grab'; });
      cv.addEventListener('dblclick', () => setView(0, r.span));
      cv.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
      // dragging goes on outside the canvas until the button is released
      window.addEventListener('mousemove', (ev) => {
        if (!drag) return;
        const dt = (drag.x - ev.clientX) / (cv.clientWidth - LABEL_W) * (drag.b - drag.a);
        setView(drag.a + dt, drag.b + dt);
      });
      cv.addEventListener('mousemove', (ev) => {
        const rect = cv.getBoundingClientRect(), mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
        if (drag) { tip.style.display = 'none'; return; }
        const row = rows.find((x) => my >= x.y && my < x.y + x.hg);
        if (!row || mx < LABEL_W) { tip.style.display = 'none'; return; }
        const t = tAt(mx), slack = 3 * (v1 - v0) / (cv.clientWidth - LABEL_W);
        const e = row.e;
        let hit = -1;
        for (let i = first(e, row.r, t - e.maxd[row.r]! - slack); i < e.off[row.r + 1]!; i++) {
          const st = e.s[i]! * tick;
          if (st > t + slack) break;
          if (st + e.d[i]! >= t - slack) { hit = i; if (row.kind === 'cf') break; }
        }
        if (hit < 0) { tip.style.display = 'none'; return; }
        const st = e.s[hit]! * tick, du = e.d[hit]!;
        const what = row.kind === 'cf' ? (e.c[hit] === 65535 ? '?' : r.codes[e.c[hit]!] || 'code#' + e.c[hit]) : row.kind === 'net' ? 'DF from node ' + e.c[hit] + ' to node ' + row.node : 'system thread busy';
        tip.textContent = what + '\n' + row.label + '\nstart ' + h.dur(st) + '\nlasting ' + h.dur(du);
        tip.style.display = 'block';
        tip.style.left = Math.min(mx + 12, cv.clientWidth - 160) + 'px';
        tip.style.top = (my + 12) + 'px';
      });
      window.addEventListener('resize', redraw);
      draw();
    });
  },
};
