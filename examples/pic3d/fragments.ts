// The compute ucodes of pic3d in TypeScript: the kernels (kernels.ts) on the DFs of one
// subdomain. examples/pic3d-cpp has the same ucodes in C++.
import type { CreateOptions, DF } from '../../src/ucode/df.js';
import { guard, arriving, deposit, HEADER, leavingSize, outgoing, partOf, push, pushIn, scatter } from './kernels.js';
import { deepScratch, densityHalo, haloDepth, jacobiDeep, rhoRadius } from './halo.js';
import { REC, STAY } from './model.js';
import { records } from './records.js';
import { fail, gatherParts } from './driver.js';
import { blockFace, densitySlab, edgeBoxPlanes, fieldFromSlab, GHOST_HI, GHOST_LO, jacobiSlab, slabBoxPlanes, slabDepth, slabEdge, slabLayer, slabPlanes, slabWidth } from './slabs.js';

// Every list of arrays a kernel gets is built by push (packed elements), never by map or slice:
// an array from `map` has holey elements, so another map, and a kernel reached with both (the
// deposit from the first step's deposit_all and from later deposits) was deoptimised at the switch
// and compiled again on each thread.

/** Outputs whose every element a kernel writes: made without the zero fill (docs/language.md §7.3). */
export const UNFILLED: CreateOptions = { zero: false };

/** The arrived particles (the neighbours' parts coming this way, `bundles`) into A, in a leaving array's layout. */
function gatherArrived(bundles: Float64Array[], A: DF): void {
  arrivedInto(bundles, A.createFloat64Array(arrivedSize(bundles), UNFILLED));
}

/** The doubles of the arrivals' array of `bundles` (a leaving array's layout). */
export function arrivedSize(bundles: readonly Float64Array[]): number {
  let n = 0;
  for (let d = 0; d < 27; d++) if (d !== STAY) n += bundles[d]!.length;
  return HEADER + n;
}

/** The arrived particles of `bundles` into `out` (arrivedSize doubles), in a leaving array's layout. */
export function arrivedInto(bundles: readonly Float64Array[], out: Float64Array): void {
  const count = new Int32Array(27);
  for (let d = 0; d < 27; d++) if (d !== STAY) count[d] = bundles[d]!.length / REC;
  const to = outgoing(count, NONE, out);
  for (let d = 0; d < 27; d++) if (d !== STAY) to[d]!.set(bundles[d]!);
}

/**
 * deposit(the staying particles at position STAY, the 26 neighbours' leaving arrays at the
 * others, the subdomain's φ) -> the (n+1)³ deposit block followed by φ (stencil.fah: the step's
 * first sweep group reads both in one DF), the arrived particles (a leaving array's layout: 28
 * offsets, then the parts from the other directions in direction order)
 */
export function c_deposit(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const parts: Float64Array[] = [];
  for (let d = 0; d < 27; d++) parts.push(records(dfs[d]!));
  const bundles = arriving(parts);
  const out = depositBlock(N, F, dfs[27]!, dfs[28]!);
  guard(() => deposit(N, F, a, b, c, bundles, out));
  gatherArrived(bundles, dfs[29]!);
}

/**
 * The first step's deposit on one node, straight from the parts of the cloud (driver.ts
 * c_init_part): the subdomain's particles (c_pick_all's, part after part) copied into S (the
 * push's staying particles) and deposited — no particle has left a subdomain yet — so no pick
 * fragment and no empty leaving arrays come first -> S, L (the deposit block followed by φ), A (no
 * arrivals)
 */
export function c_deposit_all(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  // the deposit block followed by the first φ, zeros as created
  const n = N / F;
  depositCloud(N, F, a, b, c, dfs, n * n * n);
}

/** The first step's deposit from the parts of the cloud (`dfs`: the parts, then S, L, A) into S, L (the deposit block, then `tail` zeros: φ or none), A (no arrivals). */
function depositCloud(N: number, F: number, a: number, b: number, c: number, dfs: DF[], tail: number): void {
  const k = dfs.length - 3, L = dfs[k + 1]!, A = dfs[k + 2]!;
  const stay = gatherParts(dfs.slice(0, k), F * F * F, (a * F + b) * F + c, dfs[k]!);
  const n1 = N / F + 1;
  depositStaying(N, F, a, b, c, stay, L.createFloat64Array(n1 * n1 * n1 + tail).subarray(0, n1 * n1 * n1), A.createFloat64Array(leavingSize(new Int32Array(27))));
}

/** Subdomain (a, b, c)'s first deposit, its staying particles alone (nothing arrived yet), into `block` (zeros); its arrivals' array (none) into `arrived`. */
export function depositStaying(N: number, F: number, a: number, b: number, c: number, stay: Float64Array, block: Float64Array, arrived: Float64Array): void {
  const bundles: Float64Array[] = [];
  for (let d = 0; d < 27; d++) bundles.push(d === STAY ? stay : NONE);
  guard(() => deposit(N, F, a, b, c, bundles, block));
  outgoing(new Int32Array(27), NONE, arrived);
}

/** The deposit block L of (n+1)³ doubles followed by φ's n³ (copied in): its deposit part, zeroed. */
export function depositBlock(N: number, F: number, phi: DF, L: DF): Float64Array {
  const n = N / F, n1 = n + 1;
  const out = L.createFloat64Array(n1 * n1 * n1 + n * n * n);
  out.set(phi.getFloat64Array(), n1 * n1 * n1);
  return out.subarray(0, n1 * n1 * n1);
}

/** The deposit part and the φ part of the 27 deposit blocks L around a subdomain. */
function split(N: number, F: number, Ls: readonly DF[]): [Float64Array[], Float64Array[]] {
  const n1 = N / F + 1, cut = n1 * n1 * n1;
  const blocks: Float64Array[] = [], phis: Float64Array[] = [];
  for (let d = 0; d < 27; d++) {
    const x = Ls[d]!.getFloat64Array();
    blocks.push(x.subarray(0, cut));
    phis.push(x.subarray(cut));
  }
  return [blocks, phis];
}

export const NONE = new Float64Array(0);

/** φ = 0 at the owned nodes (the first warm start). */
export function c_zero(N: number, F: number, phi: DF): void {
  const n = N / F;
  phi.createFloat64Array(n * n * n);
}

/**
 * push(G of own and 7 upper neighbours, the staying particles, the arrived ones) -> the staying
 * particles, the leaving array; the particles in the deposit's order (arrived from directions
 * before STAY, staying, arrived from the others)
 */
export function c_push(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  guard(() => pushOut(N, F, a, b, c, arrays(dfs, 8), null, dfs[8]!, dfs[9]!, dfs[10]!, dfs[11]!));
}

/**
 * The push of the staying particles S and the arrived ones A in the deposit's order, with g from
 * the own and 7 upper neighbours' G (gs) or already at the (n+1)³ nodes (g) -> the staying
 * particles, the leaving array
 */
function pushOut(N: number, F: number, a: number, b: number, c: number, gs: Float64Array[] | null, g: Float64Array | null, S: DF, A: DF, stay: DF, leaving: DF): void {
  const stayed = records(S), arrived = A.getFloat64Array();
  const bundles: Float64Array[] = [];
  for (let d = 0; d < 27; d++) bundles.push(d === STAY ? stayed : partOf(arrived, d));
  const r = gs ? push(N, F, a, b, c, gs, bundles) : pushIn(N, F, a, b, c, g!, bundles);
  // (every record and the header are written: no zero fill, docs/language.md §7.3)
  scatter(r, outgoing(r.count, stay.createFloat64Array(r.count[STAY]! * REC, UNFILLED), leaving.createFloat64Array(leavingSize(r.count), UNFILLED)));
}

// The deep-halo sweep groups (halo.ts). The 27 blocks around a subdomain come in direction order;
// a step's first group reads the 27 deposit blocks and makes the density around the box (R, for
// the later groups), its last group makes G as well.

let boxes: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];
let rhoScratch = new Float64Array(0);
let gScratch = new Float64Array(0);

/**
 * One sweep group: `sweeps` sweeps from the density box and the 27 φ into phi; with G, g at the
 * owned nodes into it; with `ghost`, g at the owned nodes and the upper ghost layer, returned
 * (scratch, for the push in the same fragment).
 */
function group(N: number, F: number, NP: number, K: number, H: number, j: number, rho: Float64Array, phis: Float64Array[], phi: DF, G: DF | null, ghost = false): Float64Array | null {
  const n = N / F, d = haloDepth(H, n, K);
  if (boxes[0].length !== (n + 2 * d + 4) ** 3) boxes = deepScratch(n, d);
  if (ghost && gScratch.length !== 3 * (n + 1) ** 3) gScratch = new Float64Array(3 * (n + 1) ** 3);
  const g = ghost ? gScratch : G ? G.createFloat64Array(3 * n * n * n) : null;
  jacobiDeep(N, F, NP, Math.min(d, K - j * d), rho, rhoRadius(d, n), phis, phi.createFloat64Array(n * n * n), g, ...boxes, ghost);
  return ghost ? gScratch : null;
}

/** The density box of the step's groups (halo rhoRadius) from the 27 deposit blocks, into R or (when no later group reads it) scratch. */
function densityBox(N: number, F: number, K: number, H: number, Ls: Float64Array[], R: DF | null): Float64Array {
  const n = N / F, r = rhoRadius(haloDepth(H, n, K), n), size = (n + 2 * r) ** 3;
  if (!R && rhoScratch.length !== size) rhoScratch = new Float64Array(size);
  const out = R ? R.createFloat64Array(size) : rhoScratch;
  densityHalo(N, F, r, Ls, out);
  return out;
}

/** The first `n` DFs' doubles. */
function arrays(dfs: readonly DF[], n: number): Float64Array[] {
  const out: Float64Array[] = [];
  for (let d = 0; d < n; d++) out.push(dfs[d]!.getFloat64Array());
  return out;
}

/** the first of several groups (27 deposit blocks, each with its φ) -> φ, R */
export function c_sweep_first(N: number, F: number, NP: number, K: number, H: number, ...dfs: DF[]): void {
  const [Ls, phis] = split(N, F, dfs);
  group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, dfs[28]!), phis, dfs[27]!, null);
}

/** the only group (27 deposit blocks, each with its φ) -> φ, G */
export function c_sweep_only(N: number, F: number, NP: number, K: number, H: number, ...dfs: DF[]): void {
  const [Ls, phis] = split(N, F, dfs);
  group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, null), phis, dfs[27]!, dfs[28]!);
}

/** a middle group j (R, 27 φ) -> φ */
export function c_sweep(N: number, F: number, NP: number, K: number, H: number, j: number, R: DF, ...dfs: DF[]): void {
  group(N, F, NP, K, H, j, R.getFloat64Array(), arrays(dfs, 27), dfs[27]!, null);
}

/** the last group j (R, 27 φ) -> φ, G */
export function c_sweep_last(N: number, F: number, NP: number, K: number, H: number, j: number, R: DF, ...dfs: DF[]): void {
  group(N, F, NP, K, H, j, R.getFloat64Array(), arrays(dfs, 27), dfs[27]!, dfs[28]!);
}

// The step's last group and the push in one fragment (when the depth d ≤ n − 2): the group computes
// g at the upper ghost layer too, so the push reads no G of the 7 upper neighbours and no G is made.

/** the only group and the push (27 deposit blocks, S, A) -> φ, the staying particles, the leaving array */
export function c_sweep_push_only(N: number, F: number, NP: number, K: number, H: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  guard(() => {
    const [Ls, phis] = split(N, F, dfs);
    const g = group(N, F, NP, K, H, 0, densityBox(N, F, K, H, Ls, null), phis, dfs[29]!, null, true)!;
    pushOut(N, F, a, b, c, null, g, dfs[27]!, dfs[28]!, dfs[30]!, dfs[31]!);
  });
}

/** the last group j and the push (R, 27 φ, S, A) -> φ, the staying particles, the leaving array */
export function c_sweep_push_last(N: number, F: number, NP: number, K: number, H: number, j: number, a: number, b: number, c: number, R: DF, ...dfs: DF[]): void {
  guard(() => {
    const g = group(N, F, NP, K, H, j, R.getFloat64Array(), arrays(dfs, 27), dfs[29]!, null, true)!;
    pushOut(N, F, a, b, c, null, g, dfs[27]!, dfs[28]!, dfs[30]!, dfs[31]!);
  });
}

// The Poisson sweeps on slabs of the grid (slabs.fah, slabs.ts): the density summed once per
// subdomain layer, a slab's sweep groups reading every layer's density and every slab's φ (4 DFs
// of each, F and SL distinct: slabs.fah pads with repeats), each push computing g at its nodes
// from its own slab's φ after the step's sweeps (the slab's ghost planes hold the rest).

/** A run with fewer than one slab stops, named (pic3d.fa calls it only then). */
export function c_slabs_check(SL: number): void {
  if (SL < 1) fail(`POISSON_SLABS=${SL}: the Poisson sweeps need at least one slab`);
}

export function checkSlabs(F: number, SL: number, p: number): void {
  if (!(F >= 1 && F <= 4 && SL >= 1 && SL <= F && p >= 0 && p < SL))
    fail(`slab ${p} of ${SL} on F=${F} subdomains a side: the slabs need 1 <= SL <= F <= 4 (pic3d.fa sweeps on the subdomains beyond)`);
}

/** deposit(the staying particles, the 26 neighbours' leaving arrays) -> the (n+1)³ deposit block alone (the slabs hold φ), the arrived particles */
export function c_deposit_blk(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const parts: Float64Array[] = [];
  for (let d = 0; d < 27; d++) parts.push(records(dfs[d]!));
  depositSubdomain(N, F, a, b, c, parts, dfs[27]!, dfs[28]!);
}

/**
 * c_deposit_blk where the layer above is on another node (slabs.fah FACE_UP): also the block's
 * upper face alone, what that layer's density reads of it -> L, A, the face ((n+1)² doubles)
 */
export function c_deposit_blk_f(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const parts: Float64Array[] = [];
  for (let d = 0; d < 27; d++) parts.push(records(dfs[d]!));
  const block = depositSubdomain(N, F, a, b, c, parts, dfs[27]!, dfs[28]!), face = blockFace(block, N / F);
  dfs[29]!.createFloat64Array(face.length).set(face);
}

/** Subdomain (a, b, c)'s deposit from its 27 parts (STAY: its staying particles) -> L (the deposit block alone), A (the arrived particles); returns the block. */
function depositSubdomain(N: number, F: number, a: number, b: number, c: number, parts: Float64Array[], L: DF, A: DF): Float64Array {
  const bundles = arriving(parts);
  const n1 = N / F + 1;
  const out = L.createFloat64Array(n1 * n1 * n1);
  guard(() => deposit(N, F, a, b, c, bundles, out));
  gatherArrived(bundles, A);
  return out;
}

/**
 * The deposits of the 4 subdomains of column (a, b) in one CF (slabs.fah, F = 4: 16 CFs of 48 DF
 * references a step in place of 64 of 29), each exactly as c_deposit_blk makes it (the same
 * bundles in the same order, so the same bits): the leaving arrays of the 9 columns around
 * (a, b) (IN's order of (dx, dy), c at 4·column + c), the column's staying particles (4)
 * -> the 4 deposit blocks, the 4 arrived particles' arrays.
 */
export function c_deposit_col(N: number, F: number, a: number, b: number, ...dfs: DF[]): void {
  depositColumn(N, F, a, b, dfs, null);
}

/**
 * c_deposit_col where the layer above is on another node (slabs.fah FACE_UP): also the 4 blocks'
 * upper faces, what that layer's density reads of them -> the 4 blocks, the 4 arrived particles'
 * arrays, the faces (4·(n+1)² doubles, c's at c·(n+1)²)
 */
export function c_deposit_col_f(N: number, F: number, a: number, b: number, ...dfs: DF[]): void {
  const n1 = N / F + 1;
  depositColumn(N, F, a, b, dfs, dfs[48]!.createFloat64Array(4 * n1 * n1));
}

function depositColumn(N: number, F: number, a: number, b: number, dfs: readonly DF[], faces: Float64Array | null): void {
  if (F !== 4) fail(`the deposits by column take F = 4 subdomains a side, not F=${F}`);
  const n = N / F;
  for (let c = 0; c < 4; c++) {
    const parts: Float64Array[] = [];
    // direction d = (column, dz), dz = 0, 1, 2 coming from c + 1, c, c − 1
    for (let d = 0; d < 27; d++) parts.push(records(d === STAY ? dfs[36 + c]! : dfs[Math.floor(d / 3) * 4 + ((c + 1 - (d % 3) + 4) % 4)]!));
    const block = depositSubdomain(N, F, a, b, c, parts, dfs[40 + c]!, dfs[44 + c]!);
    if (faces) faces.set(blockFace(block, n), c * (n + 1) * (n + 1));
  }
}

/** The first step's deposit on one node from the parts of the cloud (c_deposit_all) -> S, the deposit block alone, A */
export function c_deposit_all_blk(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  depositCloud(N, F, a, b, c, dfs, 0);
}

/**
 * The first step's deposits of the 4 subdomains of column (a, b) on one node in one CF (slabs.fah
 * SLABCOLS, F = 4: 16 CFs in place of 64 while the lanes wait for their first values), each exactly
 * as c_deposit_all_blk makes it: the parts of the cloud (4) -> the 4 S, the 4 deposit blocks, the 4 A
 */
export function c_deposit_all_col(N: number, F: number, a: number, b: number, ...dfs: DF[]): void {
  if (F !== 4) fail(`the deposits by column take F = 4 subdomains a side, not F=${F}`);
  for (let c = 0; c < 4; c++) depositCloud(N, F, a, b, c, [...dfs.slice(0, 4), dfs[4 + c]!, dfs[8 + c]!, dfs[12 + c]!], 0);
}

/** The density at the n planes of subdomain layer A from the deposit blocks of layers A and A − 1 (4² each, (B, C) at B·4 + C) -> n·N² doubles */
export function c_layer_density(N: number, F: number, A: number, ...dfs: DF[]): void {
  layerDensity(N, F, A, arrays(dfs, 16), arrays(dfs.slice(16), 16), dfs[32]!, false);
}

/**
 * The layer's density from its 16 blocks and 16 of the layer below ((B, C) at B·4 + C): whole
 * blocks, or (`faces`) the blocks' upper faces alone -> rho
 */
export function layerDensity(N: number, F: number, A: number, own: readonly Float64Array[], below: readonly Float64Array[], rho: DF, faces: boolean): Float64Array {
  if (!(F >= 1 && F <= 4)) fail(`the layers' density takes F <= 4 subdomains a side, not F=${F}`);
  const n = N / F, Am = (A + F - 1) % F;
  const blocks: Float64Array[] = [];
  for (let s = 0; s < F * F * F; s++) blocks.push(NONE);
  for (let B = 0; B < F; B++) for (let C = 0; C < F; C++) {
    blocks[(Am * F + B) * F + C] = below[B * 4 + C]!;
    blocks[(A * F + B) * F + C] = own[B * 4 + C]!;
  }
  const out = rho.createFloat64Array(n * N * N);
  densitySlab(N, F, A * n, A * n + n, blocks, out, faces);
  return out;
}

/** The layer's density (layerDensity) and its first and last E planes (empty when no slab across a node border reads them: lo, hi 0) -> rho, first, last. */
export function layerDensityEdges(N: number, F: number, A: number, E: number, lo: number, hi: number, own: readonly Float64Array[], below: readonly Float64Array[], faces: boolean, rho: DF, first: DF, last: DF): void {
  const r = layerDensity(N, F, A, own, below, rho, faces), n = N / F, NN = N * N;
  if (lo || hi) if (!(E >= 1 && E <= n)) fail(`slab edges of ${E} planes need layers of at least as many, not N/F=${n}`);
  first.createFloat64Array(lo ? E * NN : 0).set(lo ? r.subarray(0, E * NN) : []);
  last.createFloat64Array(hi ? E * NN : 0).set(hi ? r.subarray((n - E) * NN, n * NN) : []);
}

/**
 * The layer's density as c_layer_density makes it, and its first and last E planes (empty when
 * no slab across a node border reads them: lo, hi 0) -> n·N², E·N², E·N² doubles
 */
export function c_layer_density_e(N: number, F: number, A: number, E: number, lo: number, hi: number, ...dfs: DF[]): void {
  layerDensityEdges(N, F, A, E, lo, hi, arrays(dfs, 16), arrays(dfs.slice(16), 16), false, dfs[32]!, dfs[33]!, dfs[34]!);
}

/**
 * c_layer_density_e with the layer below on another node (slabs.fah FACE_UP): of its blocks only
 * their upper faces, a subdomain's a DF (cols 0: c_deposit_blk_f) or a column's 4 a DF, each named
 * at its 4 (B, C) (cols 1: c_deposit_col_f) -> the same bits as the whole blocks
 */
export function c_layer_density_f(N: number, F: number, A: number, E: number, lo: number, hi: number, cols: number, ...dfs: DF[]): void {
  if (cols && F !== 4) fail(`the faces by column take F = 4 subdomains a side, not F=${F}`);
  const f2 = (N / F + 1) * (N / F + 1), faces: Float64Array[] = [];
  for (let B = 0; B < 4; B++) for (let C = 0; C < 4; C++) {
    const x = dfs[16 + B * 4 + C]!.getFloat64Array();
    faces.push(cols ? x.subarray(C * f2, (C + 1) * f2) : x);
  }
  layerDensityEdges(N, F, A, E, lo, hi, arrays(dfs, 16), faces, true, dfs[32]!, dfs[33]!, dfs[34]!);
}

let slabBoxes = new Float64Array(0);
let sweepPlanes = new Float64Array(0);

/**
 * The density at the planes [lo − r, lo + W + r) (wrapped) from every layer's deposit blocks (64
 * blocks, layer A's (B, C) at A·16 + B·4 + C, F distinct), into a scratch of this thread: the planes
 * a sweep group reads, each the bits c_layer_density makes for it
 */
function sweepDensity(N: number, F: number, lo: number, W: number, r: number, all: readonly Float64Array[]): Float64Array {
  if (!(F >= 1 && F <= 4)) fail(`the layers' density takes F <= 4 subdomains a side, not F=${F}`);
  const blocks: Float64Array[] = [];
  for (let A = 0; A < F; A++) for (let B = 0; B < F; B++) for (let C = 0; C < F; C++) blocks.push(all[A * 16 + B * 4 + C]!);
  const size = (W + 2 * r) * N * N;
  if (sweepPlanes.length < size) sweepPlanes = new Float64Array(size);
  const out = sweepPlanes.subarray(0, size);
  densitySlab(N, F, lo - r, lo + W + r, blocks, out);
  return out;
}

/** The planes of slab p's density and φ a sweep group reads: from every slab and layer, or from its own and its neighbours' edges. */
type GroupIn =
  | { edges: false; rho: readonly DF[]; phi: readonly DF[] | null }
  | { edges: false; blocks: readonly Float64Array[]; phi: readonly DF[] | null }
  | { edges: true; rho: readonly DF[]; rhoBelow: DF; rhoAbove: DF; phi: { own: DF; below: DF; above: DF } | null };

/** Sweep group j of slab p from its density and φ planes (φ null: zeros) into phi (and, with edges, its own lowest and highest planes into lower and upper). */
export function slabGroup(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, j: number, g: GroupIn, phi: DF, lower?: DF, upper?: DF): void {
  checkSlabs(F, SL, p);
  const n = N / F, NN = N * N, W = slabWidth(N, F, SL, p), lo = slabLayer(p, F, SL) * n;
  const d = slabDepth(H, K), sweeps = Math.min(d, K - j * d), r = sweeps + GHOST_HI, E = slabEdge(d);
  if (g.edges && n < E) fail(`slab edges of ${E} planes need layers of at least as many, not N/F=${n}`);
  const rhos: Float64Array[] = [], at: number[] = [];
  const dens = 'blocks' in g ? sweepDensity(N, F, lo, W, r, g.blocks) : null;
  for (let i = -r; i < W + r; i++) {
    if (dens) { rhos.push(dens); at.push((i + r) * NN); continue; }
    if (g.edges && i < 0) { rhos.push(g.rhoBelow.getFloat64Array()); at.push((i + E) * NN); continue; }
    if (g.edges && i >= W) { rhos.push(g.rhoAbove.getFloat64Array()); at.push((i - W) * NN); continue; }
    // own layers (edges: the slab's, in order) or every layer
    const x = (((lo + i) % N) + N) % N;
    rhos.push((g as { rho: readonly DF[] }).rho[g.edges ? Math.floor(i / n) : Math.floor(x / n)]!.getFloat64Array());
    at.push((x % n) * NN);
  }
  const planes = g.edges
    ? (g.phi ? edgeBoxPlanes(N, W, sweeps, E, g.phi.own.getFloat64Array(), g.phi.below.getFloat64Array(), g.phi.above.getFloat64Array()) : { pl: null, at: [] })
    : slabBoxPlanes(N, F, SL, p, sweeps, g.phi ? g.phi.map((q) => q.getFloat64Array()) : null);
  // (jacobiSlab writes every plane of out: no zero fill)
  const box = (W + 2 * sweeps + GHOST_LO + GHOST_HI) * NN, out = phi.createFloat64Array(slabPlanes(N, F, SL, p) * NN, UNFILLED);
  if (slabBoxes.length < 2 * box) slabBoxes = new Float64Array(2 * box);
  jacobiSlab(N, F, NP, SL, p, sweeps, rhos, at, r, planes.pl, planes.at, out, slabBoxes.subarray(0, box), slabBoxes.subarray(box, 2 * box));
  if (lower) lower.createFloat64Array(E * NN).set(out.subarray(GHOST_LO * NN, (GHOST_LO + E) * NN));
  if (upper) upper.createFloat64Array(E * NN).set(out.subarray((GHOST_LO + W - E) * NN, (GHOST_LO + W) * NN));
}

/** sweep group j of slab p (every layer's density, every slab's φ) -> φ */
export function c_slab_group(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, j: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, j, { edges: false, rho: dfs.slice(0, 4), phi: dfs.slice(4, 8) }, dfs[8]!);
}

/** the first step's first group of slab p (φ from zeros) -> φ */
export function c_slab_group0(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, 0, { edges: false, rho: dfs.slice(0, 4), phi: null }, dfs[4]!);
}

/**
 * sweep group j of slab p from every layer's deposit blocks (64: the planes it reads summed in the
 * group, slabs.fah SWEEP_DENSITY) and every slab's φ -> φ
 */
export function c_slab_group_d(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, j: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, j, { edges: false, blocks: arrays(dfs, 64), phi: dfs.slice(64, 68) }, dfs[68]!);
}

/** the first step's group of slab p from every layer's deposit blocks (64), φ from zeros -> φ */
export function c_slab_group0_d(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, 0, { edges: false, blocks: arrays(dfs, 64), phi: null }, dfs[64]!);
}

/**
 * sweep group j of slab p across nodes (slabs.fah SLAB_EDGES): its own layers' density (4, padded
 * with its last), the last planes of the layer below and the first of the layer above, its own φ,
 * the highest planes of the slab below and the lowest of the slab above -> φ, its lowest planes,
 * its highest planes
 */
export function c_slab_group_e(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, j: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, j, { edges: true, rho: dfs.slice(0, 4), rhoBelow: dfs[4]!, rhoAbove: dfs[5]!, phi: { own: dfs[6]!, below: dfs[7]!, above: dfs[8]! } }, dfs[9]!, dfs[10]!, dfs[11]!);
}

/** the first step's first group of slab p across nodes (φ from zeros) -> φ, its lowest planes, its highest planes */
export function c_slab_group0_e(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, 0, { edges: true, rho: dfs.slice(0, 4), rhoBelow: dfs[4]!, rhoAbove: dfs[5]!, phi: null }, dfs[6]!, dfs[7]!, dfs[8]!);
}

let slabG = new Float64Array(0);

/**
 * g at the (n+1)³ nodes the cells of subdomain (a, b, c) touch, from its slab's φ (fieldFromSlab),
 * in this thread's scratch: valid until the next call (every slab push takes it from here).
 */
export function slabField(N: number, F: number, SL: number, a: number, b: number, c: number, phi: Float64Array): Float64Array {
  const n1 = N / F + 1;
  if (slabG.length !== 3 * n1 * n1 * n1) slabG = new Float64Array(3 * n1 * n1 * n1);
  fieldFromSlab(N, F, SL, a, b, c, phi, slabG);
  return slabG;
}

/** push(its slab's φ after the step's sweeps, the staying particles, the arrived ones) -> the staying particles, the leaving array */
export function c_push_slab(N: number, F: number, SL: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  checkSlabs(F, SL, 0);
  guard(() => pushOut(N, F, a, b, c, null, slabField(N, F, SL, a, b, c, dfs[0]!.getFloat64Array()), dfs[1]!, dfs[2]!, dfs[3]!, dfs[4]!));
}

/**
 * The pushes of the 4 subdomains of column (a, b) in one CF (pic3d.fa's light columns: 4 short
 * CFs a step become one), each exactly as c_push_slab makes it: its slab's φ, the 4 staying
 * particles' arrays, the 4 arrived -> the 4 staying, the 4 leaving arrays (c at c)
 */
export function c_push_col(N: number, F: number, SL: number, a: number, b: number, ...dfs: DF[]): void {
  if (F !== 4) fail(`the pushes by column take F = 4 subdomains a side, not F=${F}`);
  for (let c = 0; c < 4; c++) c_push_slab(N, F, SL, a, b, c, dfs[0]!, dfs[1 + c]!, dfs[5 + c]!, dfs[9 + c]!, dfs[13 + c]!);
}
