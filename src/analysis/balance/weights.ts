// What a fragment weighs in a step: the time the next run will take to execute it.
//
// A CF's own measurement is the seed's weight. On a shared machine it also carries the moment it
// ran in: contention only ever stretches a CF (a fixed loop here measured 35–54 ms of thread CPU
// time from one repetition to the next under load), and the stretched ones are exactly the ones a
// heaviest-first balancer moves. In a test_1 trace the add-one CFs took 2.8–3.0 ms of CPU time
// mostly and ~4.9 ms in the tenth that ran under contention; the step moved those 4.9 ms CFs, and
// in the next run every add-one took the same time on both nodes: node 1 was predicted twice its
// real load (drift 0.46) and node 0 too little (1.40). The typical weight is the median of the
// CF's class — the same code on inputs and outputs of the same sizes does the same work — so a
// moment of contention does not make a CF heavy.
import type { Profile } from './profile.js';

/** A CF's own weight: its CPU time (at most its wall time), or its wall time (the seed's). */
export function weightOf(p: Profile, c: number, weights: 'wall' | 'cpu'): number {
  const wall = Math.max(0, p.finish[c]! - p.start[c]!);
  return weights === 'cpu' ? Math.min(Math.max(0, p.cpu[c]!), wall) : wall;
}

/**
 * Every CF's weight: its own, or (typical) the median of its class's own weights; `scale`: a
 * factor per CF on its own measurement first (contention.ts: its time alone).
 */
export function weightsOf(p: Profile, weights: 'wall' | 'cpu', typical: boolean, scale?: ArrayLike<number>): Float64Array {
  const own = new Float64Array(p.n);
  for (let c = 0; c < p.n; c++) own[c] = weightOf(p, c, weights) * (scale ? scale[c]! : 1);
  return typical ? typicalWeights(p, own) : own;
}

/** The median of each class (code, bytes read, bytes written) of `own`. */
export function typicalWeights(p: Profile, own: ArrayLike<number>): Float64Array {
  const written = new Float64Array(p.n);
  for (let d = 0; d < p.dfs; d++) if (p.dfWriter[d]! >= 0) written[p.dfWriter[d]!] += p.dfBytes[d]!;
  // class of each CF by nested maps (no key string per CF: 10^6 CFs)
  const byCode = new Map<number, Map<number, Map<number, number>>>();
  const cls = new Int32Array(p.n);
  let classes = 0;
  // the last CF's class: consecutive CFs are mostly of one class (a loop's body)
  let lastCode = -1, lastRead = -1, lastWritten = -1, lastClass = -1;
  for (let c = 0; c < p.n; c++) {
    let read = 0;
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) read += p.dfBytes[p.depDf[k]!]!;
    if (p.code[c] === lastCode && read === lastRead && written[c] === lastWritten) { cls[c] = lastClass; continue; }
    let byRead = byCode.get(p.code[c]!);
    if (!byRead) byCode.set(p.code[c]!, byRead = new Map());
    let byWritten = byRead.get(read);
    if (!byWritten) byRead.set(read, byWritten = new Map());
    let k = byWritten.get(written[c]!);
    if (k === undefined) byWritten.set(written[c]!, k = classes++);
    cls[c] = k;
    lastCode = p.code[c]!; lastRead = read; lastWritten = written[c]!; lastClass = k;
  }
  // members of each class in CSR order, sorted by weight: the median
  const at = new Int32Array(classes + 1);
  for (let c = 0; c < p.n; c++) at[cls[c]! + 1]++;
  for (let k = 0; k < classes; k++) at[k + 1] += at[k]!;
  const fill = at.slice(0, classes), w = new Float64Array(p.n);
  for (let c = 0; c < p.n; c++) w[fill[cls[c]!]!++] = own[c]!;
  const median = new Float64Array(classes);
  for (let k = 0; k < classes; k++) {
    // selection, not a sort: a class of a loop's body holds most of 10^6 CFs
    const xs = w.subarray(at[k]!, at[k + 1]!), h = xs.length >> 1;
    const hi = select(xs, h);
    median[k] = xs.length % 2 ? hi : (maxBelow(xs, h) + hi) / 2;
  }
  const out = new Float64Array(p.n);
  for (let c = 0; c < p.n; c++) out[c] = median[cls[c]!]!;
  return out;
}

/**
 * The k-th smallest of `xs` (0-based; reorders it: afterwards xs[0..k) ≤ xs[k] ≤ xs[k+1..)):
 * quickselect with the median of three as pivot, Hoare's partition.
 */
export function select(xs: Float64Array, k: number): number {
  let lo = 0, hi = xs.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // order lo, mid, hi; the pivot is the middle one
    if (xs[mid]! < xs[lo]!) swap(xs, mid, lo);
    if (xs[hi]! < xs[lo]!) swap(xs, hi, lo);
    if (xs[hi]! < xs[mid]!) swap(xs, hi, mid);
    const pivot = xs[mid]!;
    let i = lo, j = hi;
    while (i <= j) {
      while (xs[i]! < pivot) i++;
      while (xs[j]! > pivot) j--;
      if (i <= j) { swap(xs, i, j); i++; j--; }
    }
    if (k <= j) hi = j; else if (k >= i) lo = i; else return xs[k]!;
  }
  return xs[k]!;
}

/** The largest of xs[0..k) (after select(xs, k): the (k−1)-th smallest). */
function maxBelow(xs: Float64Array, k: number): number {
  let m = -Infinity;
  for (let i = 0; i < k; i++) if (xs[i]! > m) m = xs[i]!;
  return m;
}

function swap(xs: Float64Array, i: number, j: number): void {
  const t = xs[i]!; xs[i] = xs[j]!; xs[j] = t;
}

/** The profile with each CF's execution interval cut or stretched to its weight ([t_b, t_b + w]). */
export function withDurations(p: Profile, w: ArrayLike<number>): Profile {
  const finish = new Float64Array(p.n);
  for (let c = 0; c < p.n; c++) finish[c] = p.start[c]! + w[c]!;
  return { ...p, finish };
}
