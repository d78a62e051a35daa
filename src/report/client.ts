// The page's client core, embedded as source text: reads the JSON data block, builds the helpers
// every section renderer gets, and runs the renderers. Self-contained (see section.ts).
import type { Helpers, Render } from './section.js';

declare const echarts: { init(el: HTMLElement, theme?: unknown, o?: object): { setOption(o: object): void; resize(): void } };

export async function clientMain(renderers: Record<string, Render>): Promise<void> {
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
    codeColor(code) {
      // golden-angle hues: neighbouring code numbers get distant colours
      return code < 0 ? '#777' : 'hsl(' + ((code * 137.508 + 200) % 360).toFixed(0) + ',62%,52%)';
    },
    name(t, i) {
      let s = t.bases[t.base[i]!] || '?';
      for (let k = t.off[i]!; k < t.off[i + 1]!; k++) s += '[' + t.idx[k] + ']';
      return s;
    },
    slowColors: SLOW_COLORS,
    slowNames: SLOW_NAMES,
    labels: data.labels || [],
  };
  // packed columns ({ z, t }: deflated base64) become typed arrays before anything renders
  const unpack = async (v: unknown): Promise<unknown> => {
    if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) v[i] = await unpack(v[i]); return v; }
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (typeof o.z === 'string' && typeof o.t === 'string' && Object.keys(o).length === 2) {
      const bin = atob(o.z);
      const u8 = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
      const b = await new Response(new Blob([u8]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer();
      const t = o.t;
      return t === 'f32' ? new Float32Array(b) : t === 'f64' ? new Float64Array(b) : t === 'u32' ? new Uint32Array(b) : t === 'i32' ? new Int32Array(b) : new Uint16Array(b);
    }
    for (const k in o) o[k] = await unpack(o[k]);
    return o;
  };
  await unpack(data.sections);
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
  document.body.setAttribute('data-ready', '1');
}
