// The compute ucodes of pic3d in TypeScript: the kernels (kernels.ts) on the DFs of one
// subdomain. examples/pic3d-cpp has the same ucodes in C++.
import type { DF } from '../../src/ucode/df.js';
import { guard, arriving, deposit, density, field, gather, jacobi, leavingSize, outgoing, push, scatter } from './kernels.js';
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
  guard(() => {
    const r = push(N, F, a, b, c, dfs.slice(0, 8).map((d) => d.getFloat64Array()), [records(dfs[8]!)]);
    const stay = dfs[9]!.createFloat64Array(r.count[STAY]! * REC);
    scatter(r, outgoing(r.count, stay, dfs[10]!.createFloat64Array(leavingSize(r.count))));
  });
}
