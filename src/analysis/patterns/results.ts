// The engine's results as Cube shows them: pattern → call site → location (an SPMD rank, or a
// worker lane / node of a fragmented program), wasted time summed at each leaf, worst first.
// Accumulation is a typed array per (pattern, call site) indexed by location, so charging a
// rank costs an array store, not an object.
import { PATTERNS, type PatternDef, type PatternId } from './catalog.js';

/**
 * Noise threshold (documented in docs/patterns.md): a pattern is reported as found when its
 * wasted time exceeds both NOISE_PER_INSTANCE_NS per occurrence — the jitter of one
 * synchronisation here (a barrier among the ranks of one process costs up to ~10 µs; waking a
 * thread that sleeps in Atomics.wait costs 13–14 µs to the waker) — and NOISE_SHARE of the time
 * the ranks (or lanes) had. Below it, it is listed but not called a finding.
 */
export const NOISE_PER_INSTANCE_NS = 20_000;
export const NOISE_SHARE = 0.002;

export interface LocationNode { loc: number; label: string; wasted: number; count: number }
export interface SiteNode { site: string; wasted: number; count: number; locations: LocationNode[] }
export interface PatternNode {
  id: PatternId;
  title: string;
  model: PatternDef['model'];
  wasted: number;
  /** occurrences with wasted time (a collective instance, a contended acquisition, an idle interval) */
  count: number;
  /** wasted / the time of the ranks or lanes of its model */
  share: number;
  /** above the noise threshold */
  found: boolean;
  sites: SiteNode[];
}

const SITE_BITS = 2 ** 24;

export class PatternResults {
  private readonly siteIds = new Map<string, number>();
  readonly siteNames: string[] = [];
  /** (pattern · 2^24 + site) → wasted per location, and the count per location after it */
  private readonly rows = new Map<number, Float64Array>();
  /** occurrences per pattern (instances with wasted time) */
  readonly counts = new Float64Array(PATTERNS.length);

  /** the same rows by pattern and call site: a charge finds its row by two array reads, no hashing */
  private readonly grid: (Float64Array | undefined)[][] = PATTERNS.map(() => []);

  constructor(private readonly locs: (p: number) => number) {}

  site(name: string): number {
    let id = this.siteIds.get(name);
    if (id === undefined) {
      id = this.siteNames.length;
      this.siteNames.push(name);
      this.siteIds.set(name, id);
    }
    return id;
  }

  /** Charge `ns` of pattern p to a call site and a location (ns ≤ 0: nothing). */
  add(p: number, site: number, loc: number, ns: number): void {
    if (!(ns > 0)) return;
    let row = this.grid[p]![site];
    if (row === undefined) this.rows.set(p * SITE_BITS + site, (this.grid[p]![site] = row = new Float64Array(2 * this.locs(p))));
    const n = row.length >> 1;
    if (loc >= n) return this.grow(p, site, row, loc, ns);
    row[loc] += ns;
    row[n + loc]++;
  }

  /** A row made before the run's ranks were all known: widened (its counts move up). */
  private grow(p: number, site: number, row: Float64Array, loc: number, ns: number): void {
    const n = row.length >> 1, m = Math.max(loc + 1, n * 2);
    const w = new Float64Array(2 * m);
    w.set(row.subarray(0, n));
    w.set(row.subarray(n), m);
    this.rows.set(p * SITE_BITS + site, w);
    this.grid[p]![site] = w;
    this.add(p, site, loc, ns);
  }

  /** One more occurrence of pattern p (called once per instance that wasted time). */
  occurred(p: number): void {
    this.counts[p]++;
  }

  /** Total wasted time of pattern p. */
  total(p: number): number {
    let s = 0;
    for (const [k, row] of this.rows) {
      if (Math.floor(k / SITE_BITS) !== p) continue;
      for (let i = 0; i < row.length >> 1; i++) s += row[i]!;
    }
    return s;
  }

  /** Wasted time of pattern p per location. */
  perLocation(p: number): Float64Array {
    const out = new Float64Array(this.locs(p));
    for (const [k, row] of this.rows) {
      if (Math.floor(k / SITE_BITS) !== p) continue;
      for (let i = 0; i < Math.min(out.length, row.length >> 1); i++) out[i] += row[i]!;
    }
    return out;
  }

  /** The tree, worst first at every level; `available(model)`: the time its locations had. */
  tree(label: (p: number, loc: number) => string, available: (model: PatternDef['model']) => number): PatternNode[] {
    const byP = new Map<number, SiteNode[]>();
    for (const [k, row] of this.rows) {
      const p = Math.floor(k / SITE_BITS), n = row.length >> 1;
      const locations: LocationNode[] = [];
      let wasted = 0, count = 0;
      for (let i = 0; i < n; i++) {
        if (!(row[i]! > 0)) continue;
        locations.push({ loc: i, label: label(p, i), wasted: row[i]!, count: row[n + i]! });
        wasted += row[i]!;
        count += row[n + i]!;
      }
      if (!locations.length) continue;
      locations.sort((a, b) => b.wasted - a.wasted || a.loc - b.loc);
      let l = byP.get(p);
      if (!l) byP.set(p, (l = []));
      l.push({ site: this.siteNames[k % SITE_BITS]!, wasted, count, locations });
    }
    const out: PatternNode[] = [];
    for (const [p, sites] of byP) {
      const d = PATTERNS[p]!;
      sites.sort((a, b) => b.wasted - a.wasted || (a.site < b.site ? -1 : 1));
      const wasted = sites.reduce((s, x) => s + x.wasted, 0);
      const avail = available(d.model);
      const count = this.counts[p]!;
      out.push({
        id: d.id, title: d.title, model: d.model, wasted, count, share: avail > 0 ? wasted / avail : 0,
        found: wasted > NOISE_PER_INSTANCE_NS * Math.max(1, count) && (avail > 0 ? wasted > NOISE_SHARE * avail : true),
        sites,
      });
    }
    return out.sort((a, b) => b.wasted - a.wasted);
  }
}
