// Deep halos: the Poisson sweeps of pic3d with fewer exchanges and the same bits.
// A sweep fragment takes φ from its subdomain and all 26 neighbours, h nodes deep around its own
// n³ block, and does h Jacobi sweeps on the shrinking grown box: sweep s computes the nodes
// [−(h−s), n+(h−s)) from those one node wider, so after h sweeps the owned nodes hold what h
// exchanges of one-node faces would have given — each node by the same formula from the same
// values, so the same bits — with one exchange instead of h. The density it needs around the
// box comes once per step from the 27 deposit blocks (`densityHalo`, in the step's first sweep
// group), summed node by node in the order `density` sums it; the step's last group grows its
// box one node more and computes g = −∇φ at the owned nodes as `field` does, so neither the
// density nor the field is a fragment of its own.
// The 27 blocks around subdomain (a, b, c) are ordered by direction
// ((dx+1)·3 + dy+1)·3 + dz+1 (the bundles' order; 13 is the subdomain itself).
// Layouts (row-major): the density box (n+2r)³ for the nodes [−r, n+r)³; the φ blocks n³.
import { FOUR_PI_G, totalMass } from './model.js';

/** The halo depth a run can use: at most `depth`, the subdomain's width n less 1 and the sweeps K, at least 1 (n ≥ 2). */
export function haloDepth(depth: number, n: number, K: number): number {
  return Math.max(1, Math.min(depth, n - 1, K));
}

/** Jacobi sweep groups of a step: ⌈K / d⌉, the last one possibly shorter. */
export function sweepGroups(K: number, d: number): number {
  return Math.ceil(K / d);
}

/** Which of the 3 blocks along a dimension holds local coordinate i (0: the lower, 1: own, 2: the upper). */
const side = (i: number, n: number): number => (i < 0 ? 0 : i < n ? 1 : 2);

/**
 * φ over the nodes [lo, hi)³ (local coordinates, −n ≤ lo, hi ≤ 2n) from the 27 n³ blocks into
 * `box` ((hi−lo)³).
 */
export function gatherBox(n: number, blocks: readonly Float64Array[], lo: number, hi: number, box: Float64Array): void {
  const m = hi - lo;
  for (let i = lo; i < hi; i++) {
    const bx = side(i, n), li = i - (bx - 1) * n;
    for (let j = lo; j < hi; j++) {
      const by = side(j, n), lj = j - (by - 1) * n;
      let k = lo;
      while (k < hi) {
        const bz = side(k, n), end = Math.min(hi, bz * n), s = (li * n + lj) * n + k - (bz - 1) * n;
        // copied by a loop: a subarray and set per run of nodes were ~4 000 objects a call
        const src = blocks[(bx * 3 + by) * 3 + bz]!;
        for (let t = 0, o = ((i - lo) * m + j - lo) * m + k - lo, l = end - k; t < l; t++) box[o + t] = src[s + t]!;
        k = end;
      }
    }
  }
}

/**
 * Density at the nodes [−r, n+r)³ around the subdomain into `out` ((n+2r)³), from the 27 deposit
 * blocks ((n+1)³ with the upper ghost layer): each node is its owner's deposit plus the ghost
 * layers of the owner's 7 lower neighbours, added in `density`'s order. r ≤ n − 1 (the lower
 * neighbours of a node in the lower halo are then among the 27).
 */
export function densityHalo(N: number, F: number, r: number, blocks: readonly Float64Array[], out: Float64Array): void {
  const n = N / F, n1 = n + 1;
  let w = 0;
  for (let i = -r; i < n + r; i++) {
    const bx = side(i, n), li = i - (bx - 1) * n;
    for (let j = -r; j < n + r; j++) {
      const by = side(j, n), lj = j - (by - 1) * n;
      for (let k = -r; k < n + r; k++, w++) {
        const bz = side(k, n), lk = k - (bz - 1) * n;
        let v = blocks[(bx * 3 + by) * 3 + bz]![(li * n1 + lj) * n1 + lk]!;
        if (li === 0 || lj === 0 || lk === 0)
          for (let o = 1; o < 8; o++) {
            const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
            if ((ox && li !== 0) || (oy && lj !== 0) || (oz && lk !== 0)) continue;
            const src = blocks[((bx - ox) * 3 + by - oy) * 3 + bz - oz]!;
            v += src[((ox ? n : li) * n1 + (oy ? n : lj)) * n1 + (oz ? n : lk)]!;
          }
        out[w] = v;
      }
    }
  }
}

/**
 * The halo of the density box a step's sweep groups share at depth d: d + 1 when the subdomain
 * allows it (d ≤ n − 2), so that a last group can also compute g at the upper ghost layer (see
 * jacobiDeep); d otherwise.
 */
export function rhoRadius(d: number, n: number): number {
  return d <= n - 2 ? d + 1 : d;
}

/** Scratch for `jacobiDeep` at depth d: two boxes of (n+2d+4)³. */
export function deepScratch(n: number, d: number): [Float64Array, Float64Array] {
  const size = (n + 2 * d + 4) ** 3;
  return [new Float64Array(size), new Float64Array(size)];
}

/**
 * `sweeps` Jacobi sweeps of ∇²φ = 4πG(ρ − ρ̄) on the subdomain from the 27 φ blocks into `out`
 * (n³); `rho` is the density box of halo r ≥ sweeps − 1 + x, x the extra growth below. With `g`
 * (3·n³) the box grows x = 1 node more and g = −∇φ at the owned nodes is computed from the result,
 * as `field` does; with `ghost` g is 3·(n+1)³ and also covers the upper ghost layer (the nodes the
 * neighbours above own, the same bits as theirs: every φ node of the box by the same formula from
 * the same values), the box growing x = 2 nodes more on its upper sides — what the push reads, so
 * that it needs no G from the 7 upper neighbours. `a`, `b`: scratch of `deepScratch`. sweeps + x ≤ n.
 */
export function jacobiDeep(N: number, F: number, NP: number, sweeps: number, rho: Float64Array, r: number, phis: readonly Float64Array[],
  out: Float64Array, g: Float64Array | null, a: Float64Array, b: Float64Array, ghost = false): void {
  // the box: [−h, n+u)³, one node more below with g, one (two with ghost) more above
  // every operation here runs on each call, whichever the group (see below)
  const n = N / F, x = g ? 1 : 0, xu = g ? (ghost ? 2 : 1) : 0, h = sweeps + x, u = sweeps + xu, m = n + h + u;
  const gn = n + (ghost ? 1 : 0), half = 0.5 * N;
  gatherBox(n, phis, -h, n + u, a);
  const src = sweepBox(n, m, h, u, r, sweeps, rho, FOUR_PI_G / (N * N), totalMass(NP), a, b);
  copyOwned(n, m, h, src, out);
  if (g) gradientBox(m, h, gn, half, src, g);
}

// The sweeps, the copy of the owned nodes and the gradient are functions of their own, and
// jacobiDeep has no loop and no arithmetic that only some groups reach. In one function the
// gradient's code, run only by a step's last group, had no type feedback when the optimiser
// compiled the sweeps for the first group, and every switch between the two deoptimised it (4–5
// times a worker a run); and a loop from −e with e = 0 starts at −0, another deoptimisation.
// Alternating the first and the last group at the seed's size, 100 calls cost 187–221 ms of CPU
// before, ~100 after. With the copy's loop still in jacobiDeep, V8 compiled it on stack (OSR)
// during a first group and entered that code again on every later call: each last group's
// `0.5 * N`, never reached before, deoptimised it (~15 times a worker a run).

/** The owned n³ nodes of the box of side m (origin h nodes below the subdomain's) into out */
function copyOwned(n: number, m: number, h: number, src: Float64Array, out: Float64Array): void {
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++)
      for (let k = 0, q = ((i + h) * m + j + h) * m + h, o = (i * n + j) * n; k < n; k++) out[o + k] = src[q + k]!;
}

/** `sweeps` sweeps on the box of side m (origin h nodes below the subdomain's) between a and b; the last result */
function sweepBox(n: number, m: number, h: number, u: number, r: number, sweeps: number, rho: Float64Array, h2c: number, rhobar: number,
  a: Float64Array, b: Float64Array): Float64Array {
  let src = a, dst = b;
  // one sweep a call: V8 compiles the node loops on stack (OSR) during a thread's first sweep,
  // before the loop over sweeps has stepped once with type feedback, and with that loop here the
  // optimised code was thrown away at its first step (`s++`) and compiled again
  for (let s = 1; s <= sweeps; s++) {
    sweep(n, m, h, h - s, u - s, r, rho, h2c, rhobar, src, dst);
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** One sweep from src into dst at the nodes [−e, n+f)³ of the box of side m (origin h nodes below the subdomain's) */
function sweep(n: number, m: number, h: number, e: number, f: number, r: number, rho: Float64Array, h2c: number, rhobar: number,
  src: Float64Array, dst: Float64Array): void {
  const mm = m * m, mr = n + 2 * r;
  for (let i = 0 - e; i < n + f; i++)
    for (let j = 0 - e; j < n + f; j++) {
      let q = ((i + h) * m + j + h) * m + h - e, c = ((i + r) * mr + j + r) * mr + r - e;
      for (let k = 0 - e; k < n + f; k++, q++, c++)
        dst[q] = (src[q - mm]! + src[q + mm]! + src[q - m]! + src[q + m]! + src[q - 1]! + src[q + 1]! - h2c * (rho[c]! - rhobar)) / 6;
    }
}

/** g = −∇φ at the gn³ nodes from the subdomain's origin (n, or n + 1 with the upper ghost layer) into g (3·gn³) */
function gradientBox(m: number, h: number, gn: number, half: number, src: Float64Array, g: Float64Array): void {
  const mm = m * m;
  for (let i = 0; i < gn; i++)
    for (let j = 0; j < gn; j++) {
      let q = ((i + h) * m + j + h) * m + h, c = 3 * (i * gn + j) * gn;
      for (let k = 0; k < gn; k++, q++, c += 3) {
        g[c] = (src[q - mm]! - src[q + mm]!) * half;
        g[c + 1] = (src[q - m]! - src[q + m]!) * half;
        g[c + 2] = (src[q - 1]! - src[q + 1]!) * half;
      }
    }
}
