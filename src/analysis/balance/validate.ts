// The validity check Charm++'s +LBSim offers: a step's predicted per-node load against the load
// the next run measured. The difference has two causes, kept apart because only one of them is
// the balancer's:
//   - placement: CFs that ran elsewhere than the step placed them, CFs the profile did not hold
//     (another program or size) and CFs the next run did not run. Exact: the traced weight of
//     the CFs each node ran must equal the prediction to the last nanosecond when every CF ran
//     where it was placed;
//   - duration drift: the same CFs took another time in the next run than the step weighed them
//     (a shared machine's CPU time stretches with what else runs; weights.ts).
import { nameAt } from './names.js';
import type { Profile } from './profile.js';
import { weightOf } from './weights.js';

export interface LoadCheck {
  nodes: number;
  /** CFs per node: as placed, and as the next run ran them */
  predictedCfs: number[];
  measuredCfs: number[];
  /** CFs of both runs that ran on another node than placed */
  misplaced: number;
  /** CFs of the next run the profile did not hold, and CFs of the profile the next run did not run */
  unmatched: number;
  missing: number;
  /** per node, ns: the traced weights of the CFs placed there (the prediction's busy time) */
  predictedNs: number[];
  /** per node, ns: the traced weights of the CFs that ran there (differs from predictedNs only by placement) */
  placedNs: number[];
  /** per node, ns: the next run's weights of the CFs that ran there */
  measuredNs: number[];
  /** per node: measured / traced weight of the CFs of both runs that ran there (1: no drift) */
  drift: number[];
  /** per node: |predicted − measured| / measured, and its parts */
  error: number[];
  placementError: number[];
  driftError: number[];
  /** per node: the error of its share of the total load (what a uniform drift — the whole machine slower — leaves) */
  shareError: number[];
}

/**
 * Compare the placement `next` of the CFs of `before` (node per CF), each weighing `weight` (the
 * step's: BalanceResult.weight), with the run `after` that applied it, whose CFs weigh their own
 * measurement, node by node (nodes beyond `nodes` fold onto k mod nodes, as the step does).
 */
export function checkLoads(before: Profile, weight: ArrayLike<number>, next: ArrayLike<number>, after: Profile, nodes: number, weights: 'wall' | 'cpu'): LoadCheck {
  const zero = (): number[] => new Array<number>(nodes).fill(0);
  const predictedCfs = zero(), measuredCfs = zero(), predictedNs = zero(), placedNs = zero(), measuredNs = zero();
  const traced = zero(), same = zero();
  for (let c = 0; c < before.n; c++) { predictedCfs[next[c]!]++; predictedNs[next[c]!] += weight[c]!; }
  const row = new Map<string, number>();
  for (let c = 0; c < before.n; c++) row.set(nameAt(before.gid, c), c);
  const ran = new Uint8Array(before.n);
  let misplaced = 0, unmatched = 0;
  for (let i = 0; i < after.n; i++) {
    const m = after.node[i]! % nodes, w = weightOf(after, i, weights);
    measuredCfs[m]++; measuredNs[m] += w;
    const c = row.get(nameAt(after.gid, i));
    if (c === undefined || ran[c]) { unmatched++; continue; }
    ran[c] = 1;
    if (next[c] !== m) misplaced++;
    const t = weight[c]!;
    placedNs[m] += t; traced[m] += t; same[m] += w;
  }
  let missing = 0;
  for (let c = 0; c < before.n; c++) if (!ran[c]) missing++;
  const rel = (a: number, b: number): number => (b > 0 ? Math.abs(a - b) / b : a > 0 ? 1 : 0);
  return {
    nodes, predictedCfs, measuredCfs, misplaced, unmatched, missing, predictedNs, placedNs, measuredNs,
    drift: traced.map((t, m) => (t > 0 ? same[m]! / t : 1)),
    error: predictedNs.map((x, m) => rel(x, measuredNs[m]!)),
    placementError: predictedNs.map((x, m) => rel(x, placedNs[m]!)),
    driftError: placedNs.map((x, m) => rel(x, measuredNs[m]!)),
    shareError: predictedNs.map((x, m) => rel(x / sum(predictedNs), measuredNs[m]! / sum(measuredNs))),
  };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) || 1;
}

/** The placement a distribution file gives the CFs of a profile: the file's entries, the rest where they ran. */
export function placementOf(p: Profile, cfs: Record<string, number>, nodes: number): Int32Array {
  return Int32Array.from(p.node, (m, c) => { const g = nameAt(p.gid, c); return Object.hasOwn(cfs, g) ? cfs[g]! : m % nodes; });
}
