// The share of a particle-in-cell step spent exchanging particles, read from a trace's `ddaOp`
// spans (docs/pic.md): pic3d_dda asks each subdomain's array for one global operation per step
// (cnt[t], which delivers what the neighbours' pushes sent), so the k-th operation of every array
// belongs to step k. Step t runs from the first start of a step-t operation to the first start of
// a step-(t+1) one; its exchange time is the union of its operations' spans (they overlap each
// other and the other subdomains' computation: the union is the wall time during which some
// exchange of the step was in flight, an upper bound of what it costs the step).
// What an operation's span is made of, on several nodes: until the last other node got its LOCK
// (the GD's own turn, then the message's way there: `outbound`), then that node's REPORT's way
// back and the GD's end of it. On 2 × 1 with C++ kernels most of the union is the round trip
// (small size, load 2–6: a burst of 16–32 counts starts within 1–2 ms and ends 0.4–50 ms later).
import type { TraceEvent } from '../src/trace/schema.js';

type DdaOp = Extract<TraceEvent, { kind: 'ddaOp' }>;

export interface ExchangeShare {
  /** steps measured (the operations after the last step's are its end) */
  steps: number;
  /** Σ exchange time ÷ Σ step time, % */
  share: number;
  /** the largest step's share, % */
  maxStep: number;
  /** bytes delivered by destination over the measured steps */
  exchangedBytes: number;
  /** the operations' spans (LOCK to UNLOCK at the GD), median and 90th percentile, ms */
  opMedianMs: number;
  opP90Ms: number;
  /**
   * % of the operations' spans before the last other node had the LOCK (NaN on one node): the
   * rest is that node's REPORT on its way back and the GD's end of the operation
   */
  outboundPct: number;
}

/** Union length of intervals [t, end). */
function union(spans: readonly [number, number][]): number {
  const s = [...spans].sort((a, b) => a[0] - b[0]);
  let total = 0, lo = -Infinity, hi = -Infinity;
  for (const [a, b] of s) {
    if (a > hi) { total += hi - lo > 0 ? hi - lo : 0; lo = a; hi = b; } else if (b > hi) hi = b;
  }
  return total + (hi - lo > 0 ? hi - lo : 0);
}

/**
 * The exchange share of `events` (a merged trace) whose arrays each ran one global operation per
 * step and one after the last: steps 0..k-2 of the k operations every array ran.
 */
export function exchangeShare(events: Iterable<TraceEvent>): ExchangeShare {
  const byArray = new Map<string, DdaOp[]>();
  // each node's part of the operations (op 2, 3: from its LOCK to its UNLOCK), by array and node
  const parts = new Map<string, DdaOp[]>();
  for (const e of events) {
    if (e.kind !== 'ddaOp' || e.op > 3) continue;
    // the operations at their global descriptors (op 0, 1), and the nodes' parts of them
    const m = e.op >= 2 ? parts : byArray, key = e.op >= 2 ? `${e.node} ${e.array}` : e.array;
    const q = m.get(key);
    if (q) q.push(e); else m.set(key, [e]);
  }
  if (byArray.size === 0) throw new Error('the trace has no ddaOp records: no global operation of a dynamic array ran');
  const k = Math.min(...[...byArray.values()].map((q) => q.length));
  const steps: DdaOp[][] = Array.from({ length: k }, () => []);
  for (const q of byArray.values()) { q.sort((a, b) => a.t - b.t); for (let i = 0; i < k; i++) steps[i]!.push(q[i]!); }
  let ex = 0, wall = 0, maxStep = 0, bytes = 0;
  for (let i = 0; i + 1 < k; i++) {
    const from = Math.min(...steps[i]!.map((e) => e.t)), to = Math.min(...steps[i + 1]!.map((e) => e.t));
    const u = union(steps[i]!.map((e) => [Math.max(e.t, from), Math.min(e.end, to)]));
    ex += u;
    wall += to - from;
    if (to > from) maxStep = Math.max(maxStep, (100 * u) / (to - from));
    for (const e of steps[i]!) bytes += e.exchanged;
  }
  // a node's part of an operation is the one that starts within the operation's span (the GD runs
  // one at a time). Not by index: a count answered at the GD with no message (the other node sent
  // its changes ahead) has no part on the other node, and is left out of the outbound figure.
  for (const q of parts.values()) q.sort((a, b) => a.t - b.t);
  const partOf = (q: DdaOp[] | undefined, e: DdaOp): DdaOp | undefined => {
    if (q === undefined) return undefined;
    let lo = 0, hi = q.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (q[mid]!.t < e.t) lo = mid + 1; else hi = mid; }
    const p = q[lo];
    return p !== undefined && p.t <= e.end ? p : undefined;
  };
  const nodes = new Set<number>();
  for (const key of parts.keys()) nodes.add(Number(key.slice(0, key.indexOf(' '))));
  const spans: number[] = [];
  let out = 0, all = 0;
  for (const [array, q] of byArray) {
    for (const e of q) {
      spans.push(e.end - e.t);
      let last = -Infinity;
      for (const n of nodes) if (n !== e.node) { const p = partOf(parts.get(`${n} ${array}`), e); if (p !== undefined) last = Math.max(last, p.t); }
      if (last === -Infinity) continue;
      out += Math.min(Math.max(last - e.t, 0), e.end - e.t);
      all += e.end - e.t;
    }
  }
  spans.sort((a, b) => a - b);
  const at = (p: number): number => spans.length > 0 ? spans[Math.min(spans.length - 1, Math.floor(p * spans.length))]! / 1e6 : NaN;
  return {
    steps: Math.max(0, k - 1), share: wall > 0 ? (100 * ex) / wall : NaN, maxStep, exchangedBytes: bytes,
    opMedianMs: at(0.5), opP90Ms: at(0.9), outboundPct: all > 0 ? (100 * out) / all : NaN,
  };
}
