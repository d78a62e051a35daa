// Accumulators of the breakdowns: fixed vectors of the five factors, time-window series with
// automatic coarsening (bounded memory), and approximate top lists for unbounded key spaces.

import { FACTORS, F_U, type Culprit, type Slou } from './types.js';

const NF = FACTORS.length;

/** Factor vectors (+ a CF count) keyed by anything; the key space must be small (codes, labels). */
export class KeyedRows<K> {
  readonly rows = new Map<K, Float64Array>();
  get(k: K): Float64Array {
    let r = this.rows.get(k);
    if (!r) { r = new Float64Array(NF + 1); this.rows.set(k, r); }
    return r;
  }
}

/** Windows of a width asked for (--window): a run that would need more doubles the width. */
export const MAX_WINDOWS = 10_000;

/**
 * SLOW over time windows [origin + i·w, origin + (i+1)·w). The width starts at 1 µs (`fixed`:
 * at the width asked for) and doubles (merging neighbours) whenever more than `max` windows
 * would be needed, so the series stays within max windows whatever the run's length: bounded
 * memory and output also for `--window 1ns` on a long run.
 */
export class Series {
  private v: Float64Array;
  private n = 0;
  /** the width first given (what was asked for, when fixed) */
  readonly requested: number;
  constructor(public origin: number, public width: number, fixed: boolean, private readonly max = fixed ? MAX_WINDOWS : 256) {
    this.requested = width;
    this.v = new Float64Array(NF * (fixed ? 64 : max));
  }
  /** Spread `amount` of factor f uniformly over [x, y) (y ≤ x: a point mass at x). */
  add(f: number, x: number, y: number, amount: number): void {
    if (amount === 0) return;
    if (!(y > x)) { this.bump(this.index(x), f, amount); return; }
    const i1 = this.lastIndex(y), i0 = this.index(x); // y first: it may coarsen
    if (i0 === i1) { this.bump(i0, f, amount); return; }
    const rate = amount / (y - x);
    for (let i = i0; i <= i1; i++) {
      const lo = Math.max(x, this.origin + i * this.width), hi = Math.min(y, this.origin + (i + 1) * this.width);
      if (hi > lo) this.bump(i, f, (hi - lo) * rate);
    }
  }
  private index(t: number): number {
    let i = Math.floor((t - this.origin) / this.width);
    if (i < 0) i = 0;
    while (i >= this.max) { this.coarsen(); i = Math.floor((t - this.origin) / this.width); }
    return i;
  }
  /** window holding the last instant before y */
  private lastIndex(y: number): number {
    const i = this.index(y);
    return i > 0 && this.origin + i * this.width >= y ? i - 1 : i;
  }
  private coarsen(): void {
    if (this.v.length < this.max * NF) this.bump(this.max - 1, 0, 0);
    const v = this.v, half = this.max >> 1;
    for (let i = 0; i < half; i++) for (let f = 0; f < NF; f++) v[i * NF + f] = v[2 * i * NF + f] + v[(2 * i + 1) * NF + f];
    v.fill(0, half * NF);
    this.n = Math.ceil(this.n / 2);
    this.width *= 2;
  }
  private bump(i: number, f: number, amount: number): void {
    if ((i + 1) * NF > this.v.length) {
      const nv = new Float64Array(Math.max(this.v.length * 2, (i + 1) * NF));
      nv.set(this.v); this.v = nv;
    }
    this.v[i * NF + f] += amount;
    if (i + 1 > this.n) this.n = i + 1;
  }
  /** Windows up to `end` (inclusive of the partial last one). */
  points(end: number): Slou[] {
    const n = Math.max(this.n, Math.ceil((end - this.origin) / this.width));
    const out: Slou[] = [];
    for (let i = 0; i < n; i++) {
      const o = i * NF, v = this.v;
      out.push(o + NF <= v.length
        ? { S: v[o], L: v[o + 1], O: v[o + 2], W: v[o + 3], U: v[o + F_U] }
        : { S: 0, L: 0, O: 0, W: 0, U: 0 });
    }
    return out;
  }
}

/**
 * Approximate heavy hitters for unbounded key spaces (CF gids, DF names): an exact map pruned to
 * its `keep` largest entries whenever it reaches 4 × keep; afterwards newcomers lighter than 1/8
 * of the smallest kept entry are ignored. Pruned or ignored mass is lost, so small culprits may be
 * under-counted; big ones survive.
 */
export class TopK {
  private readonly m = new Map<string, { ns: number; code?: string; label?: string }>();
  /** smallest weight kept by the last prune: newcomers far below it are not tracked */
  private floor = 0;
  constructor(private readonly keep = 256) {}
  add(key: string, ns: number, code?: string, label?: string): void {
    const e = this.m.get(key);
    if (e) { e.ns += ns; return; }
    if (ns < this.floor) return;
    this.m.set(key, { ns, code, label });
    if (this.m.size >= 4 * this.keep) this.prune();
  }
  private prune(): void {
    const kept = [...this.m.entries()].sort((a, b) => b[1].ns - a[1].ns).slice(0, this.keep);
    this.floor = kept[kept.length - 1][1].ns / 8;
    this.m.clear();
    for (const [k, v] of kept) this.m.set(k, v);
  }
  top(k: number, total: number): Culprit[] {
    return [...this.m.entries()].sort((a, b) => b[1].ns - a[1].ns).slice(0, k)
      .map(([key, v]) => ({ key, ns: v.ns, share: total > 0 ? v.ns / total : 0, code: v.code, label: v.label }));
  }
}

/** Exact sums for small key spaces, turned into a sorted culprit list. */
export function topOf<K>(m: Map<K, number>, k: number, total: number, name: (key: K) => string): Culprit[] {
  return [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, k)
    .map(([key, ns]) => ({ key: name(key), ns, share: total > 0 ? ns / total : 0 }));
}

export function addTo<K>(m: Map<K, number>, k: K, ns: number): void {
  m.set(k, (m.get(k) ?? 0) + ns);
}
