// The compute ucodes of pic3d in TypeScript: the kernels (kernels.ts) on the DFs of one
// subdomain. examples/pic3d-cpp has the same ucodes in C++.
import type { DF } from '../../src/ucode/df.js';
import { guard, arriving, deposit, density, field, gather, jacobi, leavingSize, outgoing, push, pushWith, scatter, type Pushed } from './kernels.js';
import { deepScratch, densityHalo, fieldForPush, haloDepth, jacobiDeep } from './halo.js';
import { REC, STAY } from './model.js';
import { records } from './records.js';


/**
 * deposit(the staying particles at position STAY, the 26 neighbours' leaving arrays at the
 * others) -> the (n+1)³ deposit block, the subdomain's particles
 */
export function c_deposit(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const n1 = N / F + 1;
  const bundles = arriving(dfs.slice(0, 27).map(records));
  const out = dfs[27]!.createFloat64Array(n1 * n1 * n1);
  guard(() => deposit(N, F, a, b, c, bundles, out));
  gather(bundles, dfs[28]!.createFloat64Array(bundles.reduce((s, x) => s + x.length, 0)));
}

/** density(own and 7 lower deposit blocks) -> D */
export function c_density(N: number, F: number, ...dfs: DF[]): void {
  const n = N / F;
  density(N, F, dfs.slice(0, 8).map((d) => d.getFloat64Array()), dfs[8]!.createFloat64Array(n * n * n));
}

/** φ = 0 at the owned nodes (the first warm start). */
export function c_zero(N: number, F: number, phi: DF): void {
  const n = N / F;
  phi.createFloat64Array(n * n * n);
}

let scratch = new Float64Array(0);
function pad(n: number): Float64Array {
  const size = (n + 2) ** 3;
  if (scratch.length !== size) scratch = new Float64Array(size);
  return scratch;
}

/** jacobi(D, φ and its 6 face neighbours) -> the next φ */
export function c_jacobi(N: number, F: number, NP: number, D: DF, ...dfs: DF[]): void {
  const n = N / F;
  jacobi(N, F, NP, D.getFloat64Array(), dfs.slice(0, 7).map((d) => d.getFloat64Array()), dfs[7]!.createFloat64Array(n * n * n), pad(n));
}

/** field(φ and its 6 face neighbours) -> G */
export function c_field(N: number, F: number, ...dfs: DF[]): void {
  const n = N / F;
  field(N, F, dfs.slice(0, 7).map((d) => d.getFloat64Array()), dfs[7]!.createFloat64Array(3 * n * n * n), pad(n));
}

/** push(G of own and 7 upper neighbours, the subdomain's particles) -> the staying particles, the leaving array */
export function c_push(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  guard(() => send(push(N, F, a, b, c, dfs.slice(0, 8).map((d) => d.getFloat64Array()), [records(dfs[8]!)]), dfs[9]!, dfs[10]!));
}

/** The pushed particles into the staying DF and the leaving array. */
function send(r: Pushed, stay: DF, leaving: DF): void {
  scatter(r, outgoing(r.count, stay.createFloat64Array(r.count[STAY]! * REC), leaving.createFloat64Array(leavingSize(r.count))));
}

// The deep-halo fragments (halo.ts): the 27 blocks around a subdomain in direction order.

/** density around the subdomain, d − 1 deep (27 deposit blocks) -> R */
export function c_density_halo(N: number, F: number, K: number, H: number, ...dfs: DF[]): void {
  const n = N / F, r = haloDepth(H, n, K) - 1;
  densityHalo(N, F, r, dfs.slice(0, 27).map((d) => d.getFloat64Array()), dfs[27]!.createFloat64Array((n + 2 * r) ** 3));
}

let boxes: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];

/** group j of a step's Jacobi sweeps on the grown box (R, 27 φ) -> the next φ */
export function c_jacobi_deep(N: number, F: number, NP: number, K: number, H: number, j: number, R: DF, ...dfs: DF[]): void {
  const n = N / F, d = haloDepth(H, n, K);
  if (boxes[0].length !== (n + 2 * d) ** 3) boxes = deepScratch(n, d);
  jacobiDeep(N, F, NP, Math.min(d, K - j * d), R.getFloat64Array(), d - 1, dfs.slice(0, 27).map((x) => x.getFloat64Array()), dfs[27]!.createFloat64Array(n * n * n), ...boxes);
}

/** push(the last φ of the 27, the subdomain's particles) -> the staying particles, the leaving array */
export function c_push_phi(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const n = N / F, n1 = n + 1;
  const g = new Float64Array(3 * n1 * n1 * n1);
  fieldForPush(N, F, dfs.slice(0, 27).map((d) => d.getFloat64Array()), g, pad3(n));
  guard(() => send(pushWith(N, F, a, b, c, g, [records(dfs[27]!)]), dfs[28]!, dfs[29]!));
}

let box3 = new Float64Array(0);
function pad3(n: number): Float64Array {
  if (box3.length !== (n + 3) ** 3) box3 = new Float64Array((n + 3) ** 3);
  return box3;
}
