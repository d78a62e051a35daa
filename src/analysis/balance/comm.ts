// What moving a CF costs in communication: a transfer model fitted to the transfers measured in
// the same trace, and the change a move makes to the transfers of a CF's inputs and outputs
// (DFs follow their writers in a distribution, so an edge costs a transfer when its two CFs are
// on different nodes).
import type { Profile } from './profile.js';

/**
 * Without transfers in the trace (a run on one node, or everything on one): the DF crossing and
 * bandwidth measured between two local nodes here (docs/benchmarks.md, cluster suite: an 8-byte
 * crossing 110–128 µs, 1 MiB hops at ~650 MiB/s).
 */
export const DEFAULT_LATENCY_NS = 120_000;
export const DEFAULT_BYTES_PER_NS = 0.68;

export interface TransferModel {
  latencyNs: number;
  bytesPerNs: number;
  /** transfers it was fitted to (0: the defaults) */
  samples: number;
}

/** Messages from this size on measure the bandwidth. */
const LARGE_BYTES = 65536;

/**
 * time = latency + bytes / bandwidth from the measured hops, robustly: a hop's time runs from its
 * send to the moment the receiving node's system thread handled it, so on a busy machine some
 * hops wait tens of milliseconds behind other work (a least-squares line through them made a
 * 38 ms latency of a 2-node run on a loaded host). Waiting only ever adds, so the fit takes the
 * hops that waited least: the bandwidth is the median over the large messages, the latency the
 * lower quartile of every hop's time less its bytes at that bandwidth. Every hop, not only the
 * small ones: a whole class of small hops may wait systematically (a test_3 trace under load:
 * its empty DFs' hops took 40 ms at the median against 3.5 ms for its 16 KiB ones, and a latency
 * from the small ones alone — 4.6 ms — held its predicted speedup at 1.17×). What the trace
 * cannot tell is the default's.
 */
export function fitTransfers(p: Pick<Profile, 'xferBytes' | 'xferNs'>): TransferModel {
  const n = p.xferBytes.length;
  if (n === 0) return { latencyNs: DEFAULT_LATENCY_NS, bytesPerNs: DEFAULT_BYTES_PER_NS, samples: 0 };
  const latencyAt = (bw: number): number => {
    const xs: number[] = [];
    for (let k = 0; k < n; k++) xs.push(Math.max(0, p.xferNs[k]! - p.xferBytes[k]! / bw));
    return quantile(xs, 0.25);
  };
  const rates: number[] = [];
  const lat0 = latencyAt(DEFAULT_BYTES_PER_NS);
  for (let k = 0; k < n; k++) {
    const b = p.xferBytes[k]!, t = p.xferNs[k]! - lat0;
    if (b >= LARGE_BYTES && t > 0) rates.push(b / t);
  }
  const bytesPerNs = rates.length >= 3 ? quantile(rates, 0.5) : DEFAULT_BYTES_PER_NS;
  return { latencyNs: latencyAt(bytesPerNs), bytesPerNs, samples: n };
}

function quantile(xs: number[], q: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export function transferNs(m: TransferModel, bytes: number): number {
  return m.latencyNs + bytes / m.bytesPerNs;
}

/** The edges of every CF both ways: its inputs' writers and its outputs' readers, with the DF sizes. */
export interface Edges {
  /** CF i's neighbours nb[at[i] .. at[i+1]) and the bytes each edge carries */
  at: Int32Array;
  nb: Int32Array;
  bytes: Float64Array;
}

export function edgesOf(p: Profile): Edges {
  const n = p.n, m = p.depStart[n]!;
  const at = new Int32Array(n + 1);
  for (let c = 0; c < n; c++) for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) { at[c + 1]++; at[p.depFrom[k]! + 1]++; }
  for (let i = 0; i < n; i++) at[i + 1] += at[i]!;
  const fill = at.slice(0, n), nb = new Int32Array(2 * m), bytes = new Float64Array(2 * m);
  for (let c = 0; c < n; c++) {
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) {
      const w = p.depFrom[k]!, b = p.dfBytes[p.depDf[k]!]!;
      let x = fill[c]!++; nb[x] = w; bytes[x] = b;
      x = fill[w]!++; nb[x] = c; bytes[x] = b;
    }
  }
  return { at, nb, bytes };
}

/** Transfer time moving CF `c` from `from` to `to` adds (negative: it saves), the others staying where `node` says. */
export function moveCost(e: Edges, m: TransferModel, c: number, from: number, to: number, node: ArrayLike<number>): number {
  let d = 0;
  for (let x = e.at[c]!; x < e.at[c + 1]!; x++) {
    const o = node[e.nb[x]!]!;
    if (o === from) d += transferNs(m, e.bytes[x]!);
    else if (o === to) d -= transferNs(m, e.bytes[x]!);
  }
  return d;
}
