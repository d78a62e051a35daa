// What a fragment's measured CPU time owes to the cores that slowed each other while it ran.
//
// On a host whose cores slow each other when all are busy (HostModel.contention: 1.316 on the
// 2-vCPU machine here), a CF traced while another lane of its host ran a CF took up to that
// factor longer than it will alone. The host replay stretches work while the cores are busy, so
// it must start from the time alone: a trace with one busy core (test_1, everything on node 0)
// measured it, a trace with both busy (test_2) measured it stretched. Here each CF's measurement
// is divided by 1 + (f − 1) · (the share of its interval during which another CF ran on its host).
import type { Profile } from './profile.js';

/**
 * Per CF, the share of its traced interval [start, finish] during which another CF ran on a lane
 * of the same host (nodes of one host: `hostOf`; without it, each node its own host).
 */
export function overlapShares(p: Pick<Profile, 'n' | 'node' | 'start' | 'finish'>, hostOf?: ArrayLike<number>): Float64Array {
  const hostOfCf = (c: number): number => (hostOf ? hostOf[p.node[c]!]! : p.node[c]!);
  const out = new Float64Array(p.n);
  // per host: the boundaries of every interval, sorted; the time with two or more CFs running
  // up to each boundary (a prefix); a CF's overlap is that prefix's growth over its interval
  const byHost = new Map<number, number[]>();
  for (let c = 0; c < p.n; c++) {
    const h = hostOfCf(c);
    let l = byHost.get(h);
    if (!l) byHost.set(h, l = []);
    l.push(c);
  }
  for (const cfs of byHost.values()) {
    const m = cfs.length, t = new Float64Array(2 * m), d = new Int8Array(2 * m);
    const ord = new Int32Array(2 * m);
    for (let i = 0; i < m; i++) { t[2 * i] = p.start[cfs[i]!]!; d[2 * i] = 1; t[2 * i + 1] = Math.max(p.start[cfs[i]!]!, p.finish[cfs[i]!]!); d[2 * i + 1] = -1; }
    for (let i = 0; i < 2 * m; i++) ord[i] = i;
    ord.sort((a, b) => t[a]! - t[b]! || d[a]! - d[b]!);
    const at = new Float64Array(2 * m), multi = new Float64Array(2 * m);
    let active = 0, acc = 0;
    for (let i = 0; i < 2 * m; i++) {
      const e = ord[i]!;
      if (i > 0 && active >= 2) acc += t[e]! - at[i - 1]!;
      at[i] = t[e]!; multi[i] = acc;
      active += d[e]!;
    }
    // the prefix at time x: the last boundary at or before x (all boundaries at x counted)
    const prefix = (x: number): number => {
      let lo = 0, hi = 2 * m - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (at[mid]! <= x) lo = mid; else hi = mid - 1; }
      return multi[lo]!;
    };
    for (const c of cfs) {
      const s = p.start[c]!, f = Math.max(s, p.finish[c]!);
      out[c] = f > s ? Math.min(1, Math.max(0, (prefix(f) - prefix(s)) / (f - s))) : 0;
    }
  }
  return out;
}

/** Per CF, the factor that takes its measurement back to its time alone: 1 / (1 + (f − 1) · overlap). */
export function aloneFactors(p: Pick<Profile, 'n' | 'node' | 'start' | 'finish'>, contention: number, hostOf?: ArrayLike<number>): Float64Array {
  const ov = overlapShares(p, hostOf);
  return Float64Array.from(ov, (x) => 1 / (1 + (contention - 1) * x));
}
