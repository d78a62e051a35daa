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
  const out = new Float64Array(p.n);
  const hostOfCf = new Int32Array(p.n);
  let hosts = 0;
  for (let c = 0; c < p.n; c++) { const h = hostOf ? hostOf[p.node[c]!]! : p.node[c]!; hostOfCf[c] = h; if (h + 1 > hosts) hosts = h + 1; }
  for (let h = 0; h < hosts; h++) {
    // the host's starts and ends, each sorted (typed arrays: native sorts, 10^6 CFs); merged,
    // ends first at a tie (back to back is no overlap), they give the time with two or more
    // CFs running up to each boundary (a prefix), and a CF's overlap is its growth over the CF
    let m = 0;
    for (let c = 0; c < p.n; c++) if (hostOfCf[c] === h) m++;
    if (m === 0) continue;
    const st = new Float64Array(m), en = new Float64Array(m);
    for (let c = 0, i = 0; c < p.n; c++) if (hostOfCf[c] === h) { st[i] = p.start[c]!; en[i++] = Math.max(p.start[c]!, p.finish[c]!); }
    st.sort(); en.sort();
    const at = new Float64Array(2 * m), multi = new Float64Array(2 * m);
    let i = 0, j = 0, active = 0, acc = 0;
    for (let x = 0; x < 2 * m; x++) {
      const isEnd = j < m && (i >= m || en[j]! <= st[i]!);
      const t = isEnd ? en[j++]! : st[i++]!;
      if (x > 0 && active >= 2) acc += t - at[x - 1]!;
      at[x] = t; multi[x] = acc;
      active += isEnd ? -1 : 1;
    }
    // the prefix at a boundary x: the last boundary at or before it
    const prefix = (t: number): number => {
      let lo = 0, hi = 2 * m - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (at[mid]! <= t) lo = mid; else hi = mid - 1; }
      return multi[lo]!;
    };
    for (let c = 0; c < p.n; c++) {
      if (hostOfCf[c] !== h) continue;
      const s = p.start[c]!, f = Math.max(s, p.finish[c]!);
      out[c] = f > s ? Math.min(1, Math.max(0, (prefix(f) - prefix(s)) / (f - s))) : 0;
    }
  }
  return out;
}

/** Per CF, the factor that takes its measurement back to its time alone: 1 / (1 + (f − 1) · overlap). */
export function aloneFactors(p: Pick<Profile, 'n' | 'node' | 'start' | 'finish'>, contention: number, hostOf?: ArrayLike<number>): Float64Array {
  const ov = overlapShares(p, hostOf);
  for (let c = 0; c < ov.length; c++) ov[c] = 1 / (1 + (contention - 1) * ov[c]!);
  return ov;
}
