// The share of a particle-in-cell step spent exchanging particles, read from a trace's `ddaOp`
// spans (docs/pic.md): pic3d_dda asks each subdomain's array for one global operation per step
// (cnt[t], which delivers what the neighbours' pushes sent), so the k-th operation of every array
// belongs to step k. Step t runs from the first start of a step-t operation to the first start of
// a step-(t+1) one; its exchange time is the union of its operations' spans (they overlap each
// other and the other subdomains' computation: the union is the wall time during which some
// exchange of the step was in flight, an upper bound of what it costs the step).
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
  for (const e of events) {
    // the operations at their global descriptors (op 0, 1), not the nodes' parts of them
    if (e.kind !== 'ddaOp' || e.op >= 2) continue;
    const q = byArray.get(e.array);
    if (q) q.push(e); else byArray.set(e.array, [e]);
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
  return { steps: Math.max(0, k - 1), share: wall > 0 ? (100 * ex) / wall : NaN, maxStep, exchangedBytes: bytes };
}
