// The compute ucodes of pic3d in TypeScript: the kernels (kernels.ts) on the DFs of one
// subdomain. examples/pic3d-cpp has the same ucodes in C++.
import type { DF } from '../../src/ucode/df.js';
import { guard, arriving, deposit, leavingSize, outgoing, partOf, push, scatter } from './kernels.js';
import { deepScratch, densityHalo, haloDepth, jacobiDeep } from './halo.js';
import { REC, STAY } from './model.js';
import { records } from './records.js';


/**
 * deposit(the staying particles at position STAY, the 26 neighbours' leaving arrays at the
 * others) -> the (n+1)³ deposit block, the arrived particles (a leaving array's layout: 28
 * offsets, then the parts from the other directions in direction order)
 */
export function c_deposit(N: number, F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const n1 = N / F + 1;
  const bundles = arriving(dfs.slice(0, 27).map(records));
  const out = dfs[27]!.createFloat64Array(n1 * n1 * n1);
  guard(() => deposit(N, F, a, b, c, bundles, out));
  const count = new Int32Array(27);
  for (let d = 0; d < 27; d++) if (d !== STAY) count[d] = bundles[d]!.length / REC;
  const to = outgoing(count, NONE, dfs[28]!.createFloat64Array(leavingSize(count)));
  for (let d = 0; d < 27; d++) if (d !== STAY) to[d]!.set(bundles[d]!);
}

const NONE = new Float64Array(0);

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
  guard(() => {
    const stayed = records(dfs[8]!), arrived = dfs[9]!.getFloat64Array();
    const bundles: Float64Array[] = [];
    for (let d = 0; d < 27; d++) bundles.push(d === STAY ? stayed : partOf(arrived, d));
    const r = push(N, F, a, b, c, dfs.slice(0, 8).map((d) => d.getFloat64Array()), bundles);
    const stay = dfs[10]!.createFloat64Array(r.count[STAY]! * REC);
    scatter(r, outgoing(r.count, stay, dfs[11]!.createFloat64Array(leavingSize(r.count))));
  });
}

// The deep-halo sweep groups (halo.ts). The 27 blocks around a subdomain come in direction order;
// a step's first group reads the 27 deposit blocks and makes the density around the box (R, for
// the later groups), its last group makes G as well.

let boxes: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];
let rhoScratch = new Float64Array(0);

/** One sweep group: `sweeps` sweeps from the density box and the 27 φ into phi (and G). */
function group(N: number, F: number, NP: number, K: number, H: number, j: number, rho: Float64Array, phis: readonly DF[], phi: DF, G: DF | null): void {
  const n = N / F, d = haloDepth(H, n, K);
  if (boxes[0].length !== (n + 2 * d + 2) ** 3) boxes = deepScratch(n, d);
  jacobiDeep(N, F, NP, Math.min(d, K - j * d), rho, d, phis.map((x) => x.getFloat64Array()), phi.createFloat64Array(n * n * n),
    G ? G.createFloat64Array(3 * n * n * n) : null, ...boxes);
}

/** The density box of depth d from the 27 deposit blocks, into R or (when no later group reads it) scratch. */
function densityBox(N: number, F: number, K: number, H: number, Ls: readonly DF[], R: DF | null): Float64Array {
  const n = N / F, d = haloDepth(H, n, K), size = (n + 2 * d) ** 3;
  if (!R && rhoScratch.length !== size) rhoScratch = new Float64Array(size);
  const out = R ? R.createFloat64Array(size) : rhoScratch;
  densityHalo(N, F, d, Ls.map((x) => x.getFloat64Array()), out);
  return out;
}

/** the first of several groups (27 deposit blocks, 27 φ) -> φ, R */
export function c_sweep_first(N: number, F: number, NP: number, K: number, H: number, ...dfs: DF[]): void {
  group(N, F, NP, K, H, 0, densityBox(N, F, K, H, dfs.slice(0, 27), dfs[55]!), dfs.slice(27, 54), dfs[54]!, null);
}

/** the only group (27 deposit blocks, 27 φ) -> φ, G */
export function c_sweep_only(N: number, F: number, NP: number, K: number, H: number, ...dfs: DF[]): void {
  group(N, F, NP, K, H, 0, densityBox(N, F, K, H, dfs.slice(0, 27), null), dfs.slice(27, 54), dfs[54]!, dfs[55]!);
}

/** a middle group j (R, 27 φ) -> φ */
export function c_sweep(N: number, F: number, NP: number, K: number, H: number, j: number, R: DF, ...dfs: DF[]): void {
  group(N, F, NP, K, H, j, R.getFloat64Array(), dfs.slice(0, 27), dfs[27]!, null);
}

/** the last group j (R, 27 φ) -> φ, G */
export function c_sweep_last(N: number, F: number, NP: number, K: number, H: number, j: number, R: DF, ...dfs: DF[]): void {
  group(N, F, NP, K, H, j, R.getFloat64Array(), dfs.slice(0, 27), dfs[27]!, dfs[28]!);
}
