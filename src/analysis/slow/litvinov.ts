// Seed 000 §3.2 (Litvinov 2017) refinement of the starvation part. The S part s1 = [A, B) of an
// idle interval ends when the last producer n finished; if n's own worker thread was pre-empted by
// system work while it (or the CFs before it on that thread) ran inside s1, that delay is
// overhead, not starvation. For every CF d that started on n's thread inside s1:
//   oUniCf[m,d]    = (wall − CPU of d) × |s1 ∩ exec(d)| / |exec(d)|   (pre-emption spread uniformly)
//   oUniStarv[m,d] = oUniStarv[d] × |s1 ∩ s1[d]| / |s1[d]|           (recursively inherited)
//   oIsect[m,d]    = s1 ∩ OvhSI[d]                                    (d's measured overhead intervals)
// and S[m] = |s1| − Σ(oUniCf + oUniStarv) − |∪ oIsect|, the difference going to O.
// Memory: each worker keeps the executions that a still-open idle interval may look at (start ≥
// the earliest pending idle start of any worker), capped at MAX_HISTORY records per thread.

const MAX_HISTORY = 4096;

export interface Exec {
  start: number; end: number; preempt: number;
  s1a: number; s1b: number; oUniStarv: number;
  /** flat [x0, y0, x1, y1, …] overhead intervals of the idle interval before this CF */
  ovh: number[];
}

export class History {
  private readonly recs: Exec[][];
  private readonly heads: number[];
  truncated = 0;
  constructor(slots: number) {
    this.recs = Array.from({ length: slots }, () => []);
    this.heads = new Array<number>(slots).fill(0);
  }
  push(slot: number, e: Exec): void {
    const r = this.recs[slot];
    r.push(e);
    if (r.length - this.heads[slot] > MAX_HISTORY) { this.heads[slot]++; this.truncated++; }
    if (this.heads[slot] > 1024) { r.splice(0, this.heads[slot]); this.heads[slot] = 0; }
  }
  /** Forget executions that started before `t` (no pending idle interval can reach them). */
  prune(t: number): void {
    for (let s = 0; s < this.recs.length; s++) {
      const r = this.recs[s];
      let h = this.heads[s];
      while (h < r.length && r[h].start < t) h++;
      this.heads[s] = h;
    }
  }
  /** The refinement for an S part [a, b) ending at a producer that ran on `slot`. */
  refine(slot: number, a: number, b: number): { moved: number; oUniStarv: number; isect: number[] } {
    if (!(b > a) || slot < 0) return { moved: 0, oUniStarv: 0, isect: [] };
    const r = this.recs[slot];
    let lo = this.heads[slot], hi = r.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (r[mid].start < a) lo = mid + 1; else hi = mid; }
    let uni = 0;
    const parts: number[] = [];
    for (let i = lo; i < r.length && r[i].start < b; i++) {
      const d = r[i];
      const p2 = d.end - d.start;
      if (p2 > 0 && d.preempt > 0) uni += d.preempt * overlap(a, b, d.start, d.end) / p2;
      const s1 = d.s1b - d.s1a;
      if (s1 > 0 && d.oUniStarv > 0) uni += d.oUniStarv * overlap(a, b, d.s1a, d.s1b) / s1;
      for (let k = 0; k < d.ovh.length; k += 2) {
        const x = Math.max(a, d.ovh[k]), y = Math.min(b, d.ovh[k + 1]);
        if (y > x) parts.push(x, y);
      }
    }
    const isect = union(parts);
    let len = 0;
    for (let k = 0; k < isect.length; k += 2) len += isect[k + 1] - isect[k];
    const moved = Math.min(b - a, uni + len);
    return { moved, oUniStarv: Math.min(uni, b - a), isect };
  }
}

function overlap(a: number, b: number, x: number, y: number): number {
  const lo = a > x ? a : x, hi = b < y ? b : y;
  return hi > lo ? hi - lo : 0;
}

/** Union of flat intervals, sorted and merged. */
export function union(flat: number[]): number[] {
  if (flat.length <= 2) return flat;
  const iv: [number, number][] = [];
  for (let k = 0; k < flat.length; k += 2) iv.push([flat[k], flat[k + 1]]);
  iv.sort((p, q) => p[0] - q[0]);
  const out: number[] = [iv[0][0], iv[0][1]];
  for (let i = 1; i < iv.length; i++) {
    const last = out.length - 1;
    if (iv[i][0] <= out[last]) { if (iv[i][1] > out[last]) out[last] = iv[i][1]; }
    else out.push(iv[i][0], iv[i][1]);
  }
  return out;
}
