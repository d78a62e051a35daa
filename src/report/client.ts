// The page's client core, embedded as source text: reads the JSON data block, builds the helpers
// every section renderer gets, and runs the renderers. Self-contained (see section.ts).
import type { fromPlanes } from './planes.js';
import type { Helpers, Render } from './section.js';

declare const echarts: { init(el: HTMLElement, theme?: unknown, o?: object): { setOption(o: object): void; resize(): void } };
declare const fflate: { inflateSync(data: Uint8Array): Uint8Array };

/**
 * Colour of code fragment `code`: a palette of well-separated hues with no red or orange (the
 * critical path is outlined in red, transfers are orange), then hues of the golden angle kept
 * out of that range. Embedded in the page beside the client core (page.ts).
 */
export function codeColor(code: number): string {
  const PALETTE = ['#4e79a7', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#2f4b7c', '#8cd17d', '#d37295', '#499894', '#a0cbe8', '#79706e'];
  if (code < 0) return '#777';
  if (code < PALETTE.length) return PALETTE[code]!;
  // hues 60°..320°: yellow, greens, blues, purples (red and orange are taken)
  const hue = 60 + ((code * 137.508) % 260);
  return 'hsl(' + hue.toFixed(0) + ',' + (45 + (code % 3) * 12) + '%,' + (40 + (code % 4) * 8) + '%)';
}

/**
 * Label of time `t` (ns) on an axis whose ticks are `step` ns apart: in the unit of `t`, with as
 * many decimals as the step needs, so neighbouring ticks never read alike (1.2851 s, 1.2852 s).
 */
export function tickLabel(t: number, step: number): string {
  const a = Math.abs(t);
  const [scale, unit] = a >= 1e9 ? [1e9, 's'] : a >= 1e6 ? [1e6, 'ms'] : a >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / scale) - 1e-9)));
  return (t / scale).toFixed(decimals) + ' ' + unit;
}

export async function clientMain(renderers: Record<string, Render>, fns: { codeColor: typeof codeColor; tickLabel: typeof tickLabel; fromPlanes: typeof fromPlanes }): Promise<void> {
  const dataEl = document.getElementById('luna-data');
  const data = JSON.parse(dataEl ? dataEl.textContent || '{}' : '{}');
  const charts: { resize(): void }[] = [];
  const SLOW_COLORS: Record<string, string> = { S: '#d9534f', L: '#f0ad4e', O: '#8e6bbf', W: '#9aa5b1', U: '#3c9d5d' };
  const SLOW_NAMES: Record<string, string> = { S: 'Starvation', L: 'Latency', O: 'Overhead', W: 'Waiting', U: 'Useful' };
  const dur = (ns: number): string => {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
    return Math.round(ns) + ' ns';
  };
  const esc = (s: string): string => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' } as Record<string, string>)[c]!);
  const el = (tag: string, attrs?: Record<string, string>, ...children: (Node | string)[]): HTMLElement => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs![k]!);
    for (const c of children) e.append(c);
    return e;
  };
  const h: Helpers = {
    dur,
    pct: (x) => x.toFixed(1) + '%',
    esc,
    el,
    table(head, rows) {
      const t = el('table');
      t.append(el('thead', {}, el('tr', {}, ...head.map((x) => el('th', {}, x)))));
      const b = el('tbody');
      for (const r of rows) b.append(el('tr', {}, ...r.map((x) => el('td', {}, x))));
      t.append(b);
      return t;
    },
    chart(parent, option, height) {
      const div = el('div', { class: 'chart' });
      div.style.height = (height || 280) + 'px';
      parent.append(div);
      const c = echarts.init(div, null, { renderer: 'canvas' });
      c.setOption(Object.assign({ animation: false }, option));
      charts.push(c);
      return c;
    },
    decode(s, kind) {
      const bin = atob(s);
      const u8 = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
      const b = u8.buffer;
      return kind === 'f32' ? new Float32Array(b) : kind === 'f64' ? new Float64Array(b) : kind === 'u32' ? new Uint32Array(b) : kind === 'i32' ? new Int32Array(b) : new Uint16Array(b);
    },
    codeColor: fns.codeColor,
    tickLabel: fns.tickLabel,
    name(t, i) {
      let s = t.bases[t.base[i]!] || '?';
      for (let k = t.off[i]!; k < t.off[i + 1]!; k++) s += '[' + t.idx[k] + ']';
      return s;
    },
    slowColors: SLOW_COLORS,
    slowNames: SLOW_NAMES,
    labels: data.labels || [],
  };
  // packed columns ({ z, t }: byte planes, deflated, base64) become typed arrays before anything
  // renders, inflated synchronously (fflate) so the page has drawn by its load event: a headless
  // `chromium --screenshot` sees it whole
  const unpack = (v: unknown): unknown => {
    if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) v[i] = unpack(v[i]); return v; }
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (typeof o.z === 'string' && typeof o.t === 'string' && Object.keys(o).length === 2) {
      const bin = atob(o.z);
      const u8 = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
      const t = o.t;
      const raw = fns.fromPlanes(fflate.inflateSync(u8), t === 'f64' ? 8 : t === 'u16' ? 2 : 4);
      const b = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
      return t === 'f32' ? new Float32Array(b) : t === 'f64' ? new Float64Array(b) : t === 'u32' ? new Uint32Array(b) : t === 'i32' ? new Int32Array(b) : new Uint16Array(b);
    }
    for (const k in o) o[k] = unpack(o[k]);
    return o;
  };
  unpack(data.sections);
  for (const id in renderers) {
    const sec = document.getElementById(id);
    const body = sec && sec.querySelector('.client');
    if (!body) continue;
    try { renderers[id]!(body as HTMLElement, data.sections[id], h); } catch (e) {
      console.error('section ' + id + ': ' + (e instanceof Error ? e.stack || e.message : String(e)));
      body.append(el('p', { class: 'err' }, 'This section could not be drawn: ' + String(e)));
    }
  }
  // charts were sized when their containers were created; the layout has settled since
  for (const c of charts) c.resize();
  window.addEventListener('resize', () => { for (const c of charts) c.resize(); });
  // the signal that everything has drawn (browser tests and screenshots wait for it)
  document.body.setAttribute('data-ready', '1');
  document.dispatchEvent(new Event('luna-ready'));
}
