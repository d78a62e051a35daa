// What moving a CF costs in communication: a transfer model fitted to the transfers measured in
// the same trace, and the change a move makes to the transfers of a CF's inputs and outputs
// (DFs follow their writers in a distribution, so an edge costs a transfer when its two CFs are
// on different nodes).
import type { HostModel } from '../sim/host.js';
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
  const xs = new Float64Array(n);
  const latencyAt = (bw: number): number => {
    for (let k = 0; k < n; k++) xs[k] = Math.max(0, p.xferNs[k]! - p.xferBytes[k]! / bw);
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

/** The q-quantile of `xs`: the element of rank ⌊q·n⌋ of a typed copy, selected (10^6 hops: no sort). */
function quantile(xs: ArrayLike<number>, q: number): number {
  const s = Float64Array.from(xs);
  return select(s, Math.min(s.length - 1, Math.floor(q * s.length)));
}

/** The k-th smallest of `a` (reordered in place): quickselect, the median of three as pivot. */
function select(a: Float64Array, k: number): number {
  let lo = 0, hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    const x = a[lo]!, y = a[mid]!, z = a[hi]!;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) { const t = a[i]!; a[i++] = a[j]!; a[j--] = t; }
    }
    if (k <= j) hi = j; else if (k >= i) lo = i; else return a[k]!;
  }
  return a[k]!;
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

/**
 * Transfer time moving CF `c` from `from` to `to` adds (negative: it saves), the others staying
 * where `node` says; `hop`: what one crossing of a DF of so many bytes costs (transferNs, or on
 * the traced machine hostHopNs).
 */
export function moveCost(e: Edges, hop: (bytes: number) => number, c: number, from: number, to: number, node: ArrayLike<number>): number {
  let d = 0;
  for (let x = e.at[c]!; x < e.at[c + 1]!; x++) {
    const o = node[e.nb[x]!]!;
    if (o === from) d += hop(e.bytes[x]!);
    else if (o === to) d -= hop(e.bytes[x]!);
  }
  return d;
}

/**
 * A crossing as the traced machine pays it (sim/host.ts): both system threads' CPU — per message
 * and per byte on each side, on the cores the workers need — and the wire between them. A 640 KB
 * block of test_3 crosses for ~3.8 ms here (350 MB/s per side) where the hops' own fit
 * (transferNs) says ~1 ms: a move that splits neighbours is priced as the run pays for it.
 */
export function hostHopNs(h: HostModel, bytes: number): number {
  return 2 * (h.msgNs + bytes * h.byteNs) + h.wireNs;
}

/**
 * Bytes per ns a system thread serializes, sends, receives or deserializes when the trace holds
 * no large hop to fit it from. Chosen on the quiet real runs of test_3 on 2 local nodes (2 cores,
 * heat3d 150³, program times 2 135 ms as placed by hand, 2 577 ms under a file that moved 250 MB
 * across the processes): replayed on the traced machine, 680 MB/s per side (the crossing
 * bandwidth of the cluster bench) predicts 1 957 / 1 986 ms (0.99×), 350 MB/s 1 960 / 2 315 ms
 * (0.85×; real 0.83×, both within 10 %), 260 MB/s 0.77×.
 */
export const DEFAULT_HOST_BYTES_PER_NS = 0.35;

/**
 * CPU time of test_1's kernel with both cores of the machine busy over its time alone:
 * `node dist/bench/balance-cores.js 300 5`, quiet (load 0.8): 11 693 µs per fragment in a pair of
 * processes against 8 886 alone (the two vCPUs slow each other: siblings of one core, or a host
 * that throttles a busy guest), so two node processes here run 1.49× one, not 2×. The quiet
 * test_1 run that applied a file measured its fragments at 1.36–1.38× their traced CPU time
 * (traced with one core busy). The host replay stretches work by it while both cores are busy
 * (sim/host.ts), after taking it out of what the trace measured with both busy (contention.ts).
 */
export const DEFAULT_CONTENTION = 1.316;

/** A message's system-thread cost when the trace measured none (the sends of a 2-node test_3 trace: median 50 µs). */
export const DEFAULT_MSG_NS = 50_000;

/**
 * The machine of the next run and what its transfers cost the system threads (sim/host.ts), from
 * the trace: which nodes shared a host and its cores (the manifest); per message, the median time
 * a sender took to hand a DF to the network; per byte, on each side (the bytes are serialized,
 * copied through the socket and deserialized by the processes themselves), the rate of the
 * fastest large hops; the wire, what is left of the fitted latency; per CF, the system threads'
 * CPU time not spent on the traced transfers and on shipping CFs — their busy time times the
 * share of a core the node's workers got — over the CFs. Undefined when the trace does not say where every node ran.
 */
export function fitHost(p: Profile, m: TransferModel, contention = DEFAULT_CONTENTION): HostModel | undefined {
  if (!p.hostOf || !p.hostCores || !p.sysWallNs || !p.workerShare) return undefined;
  if (p.hostOf.length !== p.nodes || p.hostOf.some((h) => h < 0)) return undefined;
  const sends = p.sendNs && p.sendNs.length > 0 ? quantile(p.sendNs, 0.5) : DEFAULT_MSG_NS;
  // the per-byte cost: the large hops that waited least (the fastest tenth: a loaded 2-node test_3
  // run's 1 MB hops took 3–260 ms, and their median rate, 42 MB/s, made every byte cost its
  // system threads 8× what they pay); without large hops, the default
  const rates: number[] = [];
  for (let k = 0; k < p.xferBytes.length; k++) if (p.xferBytes[k]! >= LARGE_BYTES && p.xferNs[k]! > 0) rates.push(p.xferBytes[k]! / p.xferNs[k]!);
  const byteNs = 1 / (rates.length >= 3 ? quantile(rates, 0.9) : DEFAULT_HOST_BYTES_PER_NS);
  let sysCpu = 0, bytes = 0;
  for (let n = 0; n < p.nodes; n++) sysCpu += p.sysWallNs[n]! * p.workerShare[n]!;
  for (let k = 0; k < p.xferBytes.length; k++) bytes += p.xferBytes[k]!;
  // CFs that ran away from their spawning node were shipped: a message each, on both sides
  let shipped = 0;
  if (p.spawn) for (let c = 0; c < p.n; c++) if (p.spawn[c] !== p.node[c]) shipped++;
  const xfer = 2 * ((p.xferBytes.length + shipped) * sends + bytes * byteNs);
  return {
    hostOf: p.hostOf, cores: p.hostCores, msgNs: sends, byteNs,
    wireNs: Math.max(0, m.latencyNs - 2 * sends),
    cfNs: p.n > 0 ? Math.max(0, sysCpu - xfer) / p.n : 0,
    contention,
  };
}
