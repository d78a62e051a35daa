// The ucodes of pic3d's groups (slabs.fah ROWS, F = 4): a light row's 16 subdomains, a centre row's
// light columns, each centre column. A group is deposited and pushed by one CF, and what it makes
// of a kind is one pack (packs.ts). Every subdomain is computed as the CF of one subdomain computes
// it (fragments.ts c_deposit_blk, c_push_slab, c_deposit_all_blk, driver.ts c_pick_all): the same
// bundles in the same order, so the same bits. examples/pic3d-cpp/ucodes.cpp has them in C++.
import type { DF } from '../../src/ucode/df.js';
import { arriving, deposit, guard, leavingSize, outgoing, partOf, pushIn, scatter, type Pushed } from './kernels.js';
import { REC, STAY } from './model.js';
import { fail, gatherInto, partsSize } from './driver.js';
import { blockFace } from './slabs.js';
import { arrivedInto, arrivedSize, checkSlabs, depositStaying, layerDensityEdges, slabField, slabGroup, UNFILLED } from './fragments.js';
import { groupOf, packOut, Packs, subdomainParts } from './packs.js';

/** The subdomains' numbers of group g of row a. */
function ids(F: number, a: number, subs: readonly [number, number][]): number[] {
  const out: number[] = [];
  for (const [b, c] of subs) out.push((a * F + b) * F + c);
  return out;
}

/** The same size for every one of `k` parts. */
function each(k: number, size: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < k; i++) out.push(size);
  return out;
}

/**
 * The deposits of group g of row a: the leaving packs of the 3 rows around (9, slabs.fah XNB), the
 * group's staying pack -> its deposit blocks' pack, its arrivals' pack; with `faces` also its
 * blocks' upper faces' pack
 */
function depositGroup(N: number, F: number, a: number, g: number, dfs: readonly DF[], faces: DF | null): void {
  const subs = groupOf(F, a, g), k = subs.length, n = N / F, n1 = n + 1;
  const xs = new Packs(F, dfs.slice(0, 9)), ss = new Packs(F, [dfs[9]!]);
  const bundles: Float64Array[][] = [], sizes: number[] = [];
  for (const [b, c] of subs) {
    const bs = arriving(subdomainParts(xs, ss, a, b, c));
    bundles.push(bs);
    sizes.push(arrivedSize(bs));
  }
  // the blocks zero-filled (the deposit adds into them); the arrivals written whole
  const at = ids(F, a, subs);
  const blocks = packOut(dfs[10]!, at, each(k, n1 * n1 * n1));
  const arrived = packOut(dfs[11]!, at, sizes, UNFILLED);
  const fs = faces ? packOut(faces, at, each(k, n1 * n1), UNFILLED) : null;
  for (let i = 0; i < k; i++) {
    const [b, c] = subs[i]!;
    guard(() => deposit(N, F, a, b, c, bundles[i]!, blocks[i]!));
    arrivedInto(bundles[i]!, arrived[i]!);
    if (fs) fs[i]!.set(blockFace(blocks[i]!, n));
  }
}

/** Group g of row a's deposits: 9 leaving packs, its staying pack -> its blocks, its arrivals. */
export function c_deposit_g(N: number, F: number, a: number, g: number, ...dfs: DF[]): void {
  depositGroup(N, F, a, g, dfs, null);
}

/** c_deposit_g where the layer above is on another node (slabs.fah FACE_UP): also the blocks' upper faces, what that layer's density reads of them. */
export function c_deposit_g_f(N: number, F: number, a: number, g: number, ...dfs: DF[]): void {
  depositGroup(N, F, a, g, dfs, dfs[12]!);
}

/** The first step's deposits of group g of row a on one node, from the cloud's 4 parts -> its staying pack, its blocks, its arrivals (none). */
export function c_deposit_all_g(N: number, F: number, a: number, g: number, ...dfs: DF[]): void {
  const subs = groupOf(F, a, g), k = subs.length, n1 = N / F + 1, parts = dfs.slice(0, 4), S = F * F * F;
  const sizes: number[] = [];
  for (const [b, c] of subs) sizes.push(partsSize(parts, (a * F + b) * F + c));
  const stays = packOut(dfs[4]!, ids(F, a, subs), sizes, UNFILLED);
  const blocks = packOut(dfs[5]!, ids(F, a, subs), each(k, n1 * n1 * n1));
  const arrived = packOut(dfs[6]!, ids(F, a, subs), each(k, leavingSize(new Int32Array(27))));
  for (let i = 0; i < k; i++) {
    const [b, c] = subs[i]!;
    gatherInto(parts, S, (a * F + b) * F + c, stays[i]!);
    depositStaying(N, F, a, b, c, stays[i]!, blocks[i]!, arrived[i]!);
  }
}

/** The particles of group g of row a at step 0, from the cloud's 4 parts (or a node's parts of its layers): all staying, none leaving. */
export function c_pick_g(F: number, a: number, g: number, ...dfs: DF[]): void {
  const subs = groupOf(F, a, g), k = subs.length, parts = dfs.slice(0, 4), S = F * F * F;
  const sizes: number[] = [];
  for (const [b, c] of subs) sizes.push(partsSize(parts, (a * F + b) * F + c));
  const stays = packOut(dfs[4]!, ids(F, a, subs), sizes, UNFILLED);
  for (let i = 0; i < k; i++) gatherInto(parts, S, (a * F + subs[i]![0]) * F + subs[i]![1], stays[i]!);
  packOut(dfs[5]!, ids(F, a, subs), each(k, 0));
}

/**
 * The pushes of group g of row a: its slab's φ after the step's sweeps, its staying pack, its
 * arrivals' pack -> its staying pack, its leaving pack (each subdomain pushed as c_push_slab
 * pushes it, in the deposit's order)
 */
export function c_push_g(N: number, F: number, SL: number, a: number, g: number, ...dfs: DF[]): void {
  checkSlabs(F, SL, 0);
  const subs = groupOf(F, a, g), k = subs.length;
  const phi = dfs[0]!.getFloat64Array(), ss = new Packs(F, [dfs[1]!]), arr = new Packs(F, [dfs[2]!]);
  const pushed: Pushed[] = [];
  guard(() => {
    for (let i = 0; i < k; i++) {
      const [b, c] = subs[i]!;
      const slabG = slabField(N, F, SL, a, b, c, phi);
      const arrived = arr.at(a, b, c), bundles: Float64Array[] = [];
      for (let d = 0; d < 27; d++) bundles.push(d === STAY ? ss.at(a, b, c) : partOf(arrived, d));
      // each subdomain's result in a scratch slot of its own until the packs are made
      pushed.push(pushIn(N, F, a, b, c, slabG, bundles, i));
    }
  });
  const staySizes: number[] = [], leavingSizes: number[] = [];
  for (const r of pushed) { staySizes.push(r.count[STAY]! * REC); leavingSizes.push(leavingSize(r.count)); }
  // (every record and header is written: no zero fill)
  const stays = packOut(dfs[3]!, ids(F, a, subs), staySizes, UNFILLED), leaving = packOut(dfs[4]!, ids(F, a, subs), leavingSizes, UNFILLED);
  for (let i = 0; i < k; i++) scatter(pushed[i]!, outgoing(pushed[i]!.count, stays[i]!, leaving[i]!));
}

/** Every layer's deposit blocks from the rows' deposit packs (12, slabs.fah LALL): layer A's (B, C) at A·16 + B·4 + C. */
function allBlocks(F: number, dfs: readonly DF[]): Float64Array[] {
  if (F !== 4) fail(`the groups take F = 4 subdomains a side, not F=${F}`);
  const packs = new Packs(F, dfs.slice(0, 12)), out: Float64Array[] = [];
  for (let A = 0; A < 4; A++) for (let B = 0; B < 4; B++) for (let C = 0; C < 4; C++) out.push(packs.at(A, B, C));
  return out;
}

/** sweep group j of slab p from every row's deposit packs (12) and every slab's φ (4) -> φ (as c_slab_group_d) */
export function c_slab_group_dg(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, j: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, j, { edges: false, blocks: allBlocks(F, dfs), phi: dfs.slice(12, 16) }, dfs[16]!);
}

/** the first step's group of slab p from every row's deposit packs (12), φ from zeros -> φ (as c_slab_group0_d) */
export function c_slab_group0_dg(N: number, F: number, NP: number, K: number, H: number, SL: number, p: number, ...dfs: DF[]): void {
  slabGroup(N, F, NP, K, H, SL, p, 0, { edges: false, blocks: allBlocks(F, dfs), phi: null }, dfs[12]!);
}

/** Layer A's 16 parts ((B, C) at B·4 + C) from packs. */
function layerParts(packs: Packs, A: number): Float64Array[] {
  const out: Float64Array[] = [];
  for (let B = 0; B < 4; B++) for (let C = 0; C < 4; C++) out.push(packs.at(A, B, C));
  return out;
}

/**
 * Layer A's density from its deposit packs (3) and those of the layer below (3), and its first and
 * last E planes (empty when lo, hi 0) -> n·N², E·N², E·N² doubles (as c_layer_density_e)
 */
export function c_layer_density_g(N: number, F: number, A: number, E: number, lo: number, hi: number, ...dfs: DF[]): void {
  layerDensityGroups(N, F, A, E, lo, hi, dfs, false);
}

/** c_layer_density_g with the layer below on another node (slabs.fah FACE_UP): of its blocks only their upper faces' packs (3) -> the same bits. */
export function c_layer_density_gf(N: number, F: number, A: number, E: number, lo: number, hi: number, ...dfs: DF[]): void {
  layerDensityGroups(N, F, A, E, lo, hi, dfs, true);
}

/** Layer A's density from its deposit packs (dfs 0–2) and the layer below's deposit packs or (`faces`) faces' packs (3–5), and its edges -> dfs 6–8. */
function layerDensityGroups(N: number, F: number, A: number, E: number, lo: number, hi: number, dfs: readonly DF[], faces: boolean): void {
  if (F !== 4) fail(`the groups take F = 4 subdomains a side, not F=${F}`);
  layerDensityEdges(N, F, A, E, lo, hi, layerParts(new Packs(F, dfs.slice(0, 3)), A), layerParts(new Packs(F, dfs.slice(3, 6)), A + F - 1), faces, dfs[6]!, dfs[7]!, dfs[8]!);
}
