// The Poisson sweeps on slabs of the grid (slabs.fah; examples/pic3d-cpp/kernel.h the same in C++,
// operation for operation): SL slabs of whole subdomain layers along x, slab p the layers
// [slabLayer(p), slabLayer(p + 1)). A sweep group grows its slab only in x (y and z are whole and
// periodic); every node by the same formula from the same values as the subdomains' sweeps
// (halo.ts), so the same bits. Layouts (row-major): a slab's φ ((W + GHOST_LO + GHOST_HI)·N²: its
// W planes and the ghost planes its pushes read around them), a layer's density (n·N²), the
// deposit blocks ((n+1)³, block (A, B, C) at (A·F + B)·F + C).
import { FOUR_PI_G, totalMass } from './model.js';

/** The first subdomain layer (x index) of slab p of SL. */
export const slabLayer = (p: number, F: number, SL: number): number => Math.floor((p * F) / SL);
/** The slab of subdomain layer a: the largest p with slabLayer(p) ≤ a. */
export const slabOf = (a: number, F: number, SL: number): number => Math.floor(((a + 1) * SL - 1) / F);
/** Slab p's planes. */
export const slabWidth = (N: number, F: number, SL: number, p: number): number => (slabLayer(p + 1, F, SL) - slabLayer(p, F, SL)) * (N / F);
/** The slabs' halo depth (slabs.fah SDEPTH): at most H and K, at least 1. */
export const slabDepth = (H: number, K: number): number => Math.max(1, Math.min(H, K));

/**
 * The ghost planes a slab's φ carries below and above its own: g = −∇φ at the nodes its layers'
 * cells touch reads the planes [lo − 1, hi + 1], so a push reads its own slab alone and starts
 * once that slab is swept, while the other slabs still sweep. Its sweeps grow the box as many
 * planes more, so the ghosts are exact: the values the neighbouring slab computes there.
 */
export const GHOST_LO = 1, GHOST_HI = 2;
/** The planes of a slab's φ: its own and the ghosts. */
export const slabPlanes = (N: number, F: number, SL: number, p: number): number => slabWidth(N, F, SL, p) + GHOST_LO + GHOST_HI;

const wrapN = (x: number, N: number): number => ((x % N) + N) % N;

/**
 * The density at global node (x, y, z) from the F³ deposit blocks, in `density`'s order (halo.ts
 * densityHalo). fx: the x index where a block of the layer below holds its upper face (n: whole
 * blocks; 0: that layer's blocks are their upper faces alone, (n+1)², all of them it reads).
 */
function densityNode(N: number, F: number, blocks: readonly Float64Array[], x: number, y: number, z: number, fx: number): number {
  const n = N / F, n1 = n + 1;
  const A = Math.floor(x / n), B = Math.floor(y / n), C = Math.floor(z / n), li = x % n, lj = y % n, lk = z % n;
  let v = blocks[(A * F + B) * F + C]![(li * n1 + lj) * n1 + lk]!;
  if (li === 0 || lj === 0 || lk === 0)
    for (let o = 1; o < 8; o++) {
      const ox = (o >> 2) & 1, oy = (o >> 1) & 1, oz = o & 1;
      if ((ox && li !== 0) || (oy && lj !== 0) || (oz && lk !== 0)) continue;
      const src = blocks[(((A - ox + F) % F) * F + ((B - oy + F) % F)) * F + ((C - oz + F) % F)]!;
      v += src[((ox ? fx : li) * n1 + (oy ? n : lj)) * n1 + (oz ? n : lk)]!;
    }
  return v;
}

/**
 * The density at the planes [x0, x1) (global, wrapped) into out ((x1 − x0)·N²) from the deposit
 * blocks (those of the planes' layers and the layer below are read; with `faces`, [x0, x1) within
 * one layer and the blocks of the layer below their upper faces alone: blockFace). A row off the
 * blocks' lower x and y faces is its z blocks' runs with only their lk = 0 nodes summed; the
 * others node by node.
 */
export function densitySlab(N: number, F: number, x0: number, x1: number, blocks: readonly Float64Array[], out: Float64Array, faces = false): void {
  const n = N / F, n1 = n + 1, fx = faces ? 0 : n;
  let w = 0;
  for (let xx = x0; xx < x1; xx++) {
    const x = wrapN(xx, N), A = Math.floor(x / n), li = x % n;
    for (let y = 0; y < N; y++, w += N) {
      const B = Math.floor(y / n), lj = y % n;
      if (li === 0 || lj === 0) {
        for (let z = 0; z < N; z++) out[w + z] = densityNode(N, F, blocks, x, y, z, fx);
        continue;
      }
      for (let C = 0; C < F; C++) {
        const src = blocks[(A * F + B) * F + C]!, s = (li * n1 + lj) * n1, t = w + C * n;
        for (let k = 0; k < n; k++) out[t + k] = src[s + k]!;
        out[t] = densityNode(N, F, blocks, x, y, C * n, fx);
      }
    }
  }
}

/**
 * A deposit block's upper x face ((n+1)² doubles: its plane li = n, the x ghost layer, the only
 * part of it the layer above's density reads): what crosses a node border in its place
 * (slabs.fah FACE_UP). Contiguous in the block's row-major layout: its last (n+1)².
 */
export const blockFace = (block: Float64Array, n: number): Float64Array => block.subarray(n * (n + 1) * (n + 1));

/**
 * The planes a slab group's neighbours send it across a node border (slabs.fah SLAB_EDGES): a
 * slab's lowest and highest E = d + GHOST_HI own planes of φ, and a layer's first and last E
 * planes of density, d the sweeps of a group. They hold every plane of the box below and above the
 * slab's own planes that jacobiSlab reads (φ: d + GHOST_LO below, d + GHOST_HI above; the
 * density: d below, d + 1 above), when a layer has at least E planes.
 */
export const slabEdge = (d: number): number => d + GHOST_HI;

/**
 * Where jacobiSlab reads each plane of slab p's box grown h deep, from every slab's φ (phis[q]:
 * slab q's planes with its ghosts; null: zeros): box plane i at i + h + GHOST_LO, each from the
 * slab that owns it (an array and its offset).
 */
export function slabBoxPlanes(N: number, F: number, SL: number, p: number, h: number, phis: readonly Float64Array[] | null): { pl: Float64Array[] | null; at: number[] } {
  if (!phis) return { pl: null, at: [] };
  const n = N / F, lo = slabLayer(p, F, SL) * n, W = slabWidth(N, F, SL, p), NN = N * N;
  const pl: Float64Array[] = [], at: number[] = [];
  for (let i = -h - GHOST_LO; i < W + h + GHOST_HI; i++) {
    const x = wrapN(lo + i, N), q = slabOf(Math.floor(x / n), F, SL);
    pl.push(phis[q]!);
    at.push((x - slabLayer(q, F, SL) * n + GHOST_LO) * NN);
  }
  return { pl, at };
}

/**
 * The same planes from the slab's own φ (its W planes: the ghosts are read from the neighbours,
 * as slabBoxPlanes reads them) and its neighbours' edges of E planes (E ≥ slabEdge(h)): below,
 * the highest E own planes of the slab below; above, the lowest E of the slab above.
 */
export function edgeBoxPlanes(N: number, W: number, h: number, E: number, own: Float64Array, below: Float64Array, above: Float64Array): { pl: Float64Array[]; at: number[] } {
  const NN = N * N, pl: Float64Array[] = [], at: number[] = [];
  for (let i = -h - GHOST_LO; i < W + h + GHOST_HI; i++) {
    if (i < 0) { pl.push(below); at.push((i + E) * NN); }
    else if (i >= W) { pl.push(above); at.push((i - W) * NN); }
    else { pl.push(own); at.push((i + GHOST_LO) * NN); }
  }
  return { pl, at };
}

/**
 * `sweeps` Jacobi sweeps on slab p (planes [lo, hi)) from the planes of its box (phiPl[k] at
 * phiAt[k]: box plane k − sweeps − GHOST_LO, as slabBoxPlanes or edgeBoxPlanes place them; null:
 * zeros) into out (its planes with the ghosts, slabPlanes·N²); rhos[i + r]: the density plane
 * lo + i (an array and its offset), i in [−r, W + r), r ≥ sweeps − 1 + GHOST_HI.
 * a, b: scratch of (W + 2·sweeps + GHOST_LO + GHOST_HI)·N² each.
 */
export function jacobiSlab(N: number, F: number, NP: number, SL: number, p: number, sweeps: number, rhos: readonly Float64Array[], rhoAt: readonly number[], r: number,
  phiPl: readonly Float64Array[] | null, phiAt: readonly number[], out: Float64Array, a: Float64Array, b: Float64Array): void {
  const W = slabWidth(N, F, SL, p), h = sweeps, NN = N * N, L = h + GHOST_LO;
  // the box: planes [lo − h − GHOST_LO, hi + h + GHOST_HI), box plane i at (i + L)·N². The first
  // sweep reads the input planes themselves (or zeros), not a copy of them, and the last writes
  // the slab's planes with their ghosts straight into out (box plane h on): the same values in
  // the same order as through the box, without copying ~10 MB a slab a step over shared memory.
  if (sweeps < 1) { // no sweep: the planes as they are
    for (let k = 0; k < W + GHOST_LO + GHOST_HI; k++) {
      if (phiPl) out.set(phiPl[k + h]!.subarray(phiAt[k + h]!, phiAt[k + h]! + NN), k * NN);
      else out.fill(0, k * NN, (k + 1) * NN);
    }
    return;
  }
  if (!phiPl) a.fill(0, 0, NN);
  const h2c = FOUR_PI_G / (N * N), rhobar = totalMass(NP);
  let src = a, dst = b;
  for (let s = 1; s <= sweeps; s++) {
    const e = h - s, last = s === sweeps;
    for (let i = -e - GHOST_LO; i < W + e + GHOST_HI; i++) {
      const d = last ? out : dst, at = last ? (i + GHOST_LO) * NN : (i + L) * NN, k = i + L;
      if (s > 1) slabPlane(N, src, (k - 1) * NN, src, k * NN, src, (k + 1) * NN, rhos[i + r]!, rhoAt[i + r]!, h2c, rhobar, d, at);
      else if (phiPl) slabPlane(N, phiPl[k - 1]!, phiAt[k - 1]!, phiPl[k]!, phiAt[k]!, phiPl[k + 1]!, phiAt[k + 1]!, rhos[i + r]!, rhoAt[i + r]!, h2c, rhobar, d, at);
      else slabPlane(N, a, 0, a, 0, a, 0, rhos[i + r]!, rhoAt[i + r]!, h2c, rhobar, d, at);
    }
    const t = src;
    src = dst;
    dst = t;
  }
}

/**
 * One sweep of one plane from its planes below (pm at om), itself (p0 at o0) and above (pp at
 * op) into dst at `at`; z and y wrap.
 */
function slabPlane(N: number, pm: Float64Array, om: number, p0: Float64Array, o0: number, pp: Float64Array, op: number, rho: Float64Array, ra: number, h2c: number, rhobar: number, dst: Float64Array, at: number): void {
  for (let j = 0; j < N; j++) {
    const jn = j * N, jo = o0 + jn, ym = o0 + (j === 0 ? N - 1 : j - 1) * N, yp = o0 + (j === N - 1 ? 0 : j + 1) * N, xm = om + jn, xp = op + jn, rr = ra + jn, t = at + jn;
    dst[t] = (pm[xm]! + pp[xp]! + p0[ym]! + p0[yp]! + p0[jo + N - 1]! + p0[jo + 1]! - h2c * (rho[rr]! - rhobar)) / 6;
    for (let k = 1; k < N - 1; k++)
      dst[t + k] = (pm[xm + k]! + pp[xp + k]! + p0[ym + k]! + p0[yp + k]! + p0[jo + k - 1]! + p0[jo + k + 1]! - h2c * (rho[rr + k]! - rhobar)) / 6;
    dst[t + N - 1] = (pm[xm + N - 1]! + pp[xp + N - 1]! + p0[ym + N - 1]! + p0[yp + N - 1]! + p0[jo + N - 2]! + p0[jo]! - h2c * (rho[rr + N - 1]! - rhobar)) / 6;
  }
}

/**
 * g = −∇φ at the (n+1)³ nodes the cells of subdomain (a, b, c) touch from its slab's φ (with the
 * ghosts: no other slab is read), as `field` computes it, into g (3·(n+1)³, pushIn's layout).
 */
export function fieldFromSlab(N: number, F: number, SL: number, a: number, b: number, c: number, phi: Float64Array, g: Float64Array): void {
  const n = N / F, n1 = n + 1, half = 0.5 * N, NN = N * N;
  // plane x of the slab's φ (unwrapped: the ghosts hold the planes across the periodic border)
  const base = (GHOST_LO - slabLayer(slabOf(a, F, SL), F, SL) * n) * NN;
  const z0: number[] = [], zm: number[] = [], zp: number[] = [];
  for (let k = 0; k < n1; k++) {
    z0.push(wrapN(c * n + k, N));
    zm.push(wrapN(c * n + k - 1, N));
    zp.push(wrapN(c * n + k + 1, N));
  }
  let w = 0;
  for (let i = 0; i < n1; i++) {
    const x = a * n + i, om = base + (x - 1) * NN, o0 = base + x * NN, op = base + (x + 1) * NN;
    for (let j = 0; j < n1; j++) {
      const y = wrapN(b * n + j, N), jo = y * N, jm = wrapN(y - 1, N) * N, jp = wrapN(y + 1, N) * N;
      for (let k = 0; k < n1; k++, w += 3) {
        const z = z0[k]!;
        g[w] = (phi[om + jo + z]! - phi[op + jo + z]!) * half;
        g[w + 1] = (phi[o0 + jm + z]! - phi[o0 + jp + z]!) * half;
        g[w + 2] = (phi[o0 + jo + zm[k]!]! - phi[o0 + jo + zp[k]!]!) * half;
      }
    }
  }
}
