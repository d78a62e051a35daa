// The report's section registry contract. A section is a small module: from the runs it builds
// server-side HTML (tables, words) and the data its client renderer draws (charts, the canvas
// timeline). The renderer is a self-contained function — page.ts embeds its source text
// (Function.prototype.toString), so it may use only its arguments and browser globals, never
// imports or closures of this process.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { fromPlanes, toPlanes } from './planes.js';
import type { RunData } from './collect.js';

export interface ReportCtx {
  runs: RunData[];
  /** what each run is called on the page ("A: before", …; the trace directory for one run) */
  labels: string[];
  /** a distribution to show applied to the runs (its CF entries: global id → node) */
  distribution?: { path: string; nodes: number; cfs: Record<string, number> };
}

export interface BuiltSection {
  html: string;
  /** JSON-able data handed to the renderer (typed arrays go in as base64 strings: see b64) */
  data?: unknown;
}

/** Helpers the page's client core passes to every renderer (see client.ts). */
export interface Helpers {
  dur(ns: number): string;
  pct(x: number): string;
  esc(s: string): string;
  el(tag: string, attrs?: Record<string, string>, ...children: (Node | string)[]): HTMLElement;
  table(head: string[], rows: (string | Node)[][]): HTMLElement;
  /** an ECharts chart of this height in a new div appended to `parent` */
  chart(parent: HTMLElement, option: object, height?: number): unknown;
  decode(b64: string, kind: 'f32' | 'f64' | 'u32' | 'i32' | 'u16'): Float32Array | Float64Array | Uint32Array | Int32Array | Uint16Array;
  codeColor(code: number): string;
  /** a time axis label: `t` ns with as many decimals as ticks `step` ns apart need */
  tickLabel(t: number, step: number): string;
  /** name i of a name table (NameTable, inflated): `sw[57][0]` */
  name(t: NameCols, i: number): string;
  slowColors: Record<string, string>;
  slowNames: Record<string, string>;
  labels: string[];
}

/** A NameTable (names.ts) as the page holds it once inflated. */
export interface NameCols { bases: string[]; base: Int32Array; off: Int32Array; idx: Int32Array }

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Render = (el: HTMLElement, data: any, h: Helpers) => void;

export interface Section {
  id: string;
  title: string;
  build(ctx: ReportCtx): BuiltSection;
  render?: Render;
}

/**
 * A typed array packed for the page: its bytes as byte planes (planes.ts), deflated, in base64.
 * The client core inflates every `{ z, t }` of the data (fflate, no network) into the typed array
 * `t` before the renderers run. Integer columns of small values (deltas, ticks) shrink several
 * times.
 */
export interface Packed { z: string; t: 'u32' | 'i32' | 'u16' | 'f32' | 'f64' }
export function pack(a: Uint32Array | Int32Array | Uint16Array | Float32Array | Float64Array): Packed {
  const t = a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : a instanceof Uint16Array ? 'u16' : a instanceof Float32Array ? 'f32' : 'f64';
  const planes = toPlanes(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), a.BYTES_PER_ELEMENT);
  return { z: deflateRawSync(planes, { level: 6 }).toString('base64'), t };
}

/** The typed array a Packed holds (what the page's client core does, in Node: tests, tools). */
export function unpack(p: Packed): Uint32Array | Int32Array | Uint16Array | Float32Array | Float64Array {
  const C = { u32: Uint32Array, i32: Int32Array, u16: Uint16Array, f32: Float32Array, f64: Float64Array }[p.t];
  const bytes = fromPlanes(new Uint8Array(inflateRawSync(Buffer.from(p.z, 'base64'))), C.BYTES_PER_ELEMENT);
  return new C(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength / C.BYTES_PER_ELEMENT);
}

/** A typed array as base64 of its bytes (little-endian, as every browser reads it). */
export function b64(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
}

/** Text for HTML. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Columns for one run, or the runs side by side. */
export function sideBySide(ctx: ReportCtx, one: (r: RunData, i: number) => string): string {
  if (ctx.runs.length === 1) return one(ctx.runs[0]!, 0);
  return `<div class="cmp">${ctx.runs.map((r, i) => `<div class="col"><h3>${esc(ctx.labels[i]!)}</h3>${one(r, i)}</div>`).join('')}</div>`;
}
