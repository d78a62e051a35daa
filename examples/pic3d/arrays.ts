// The ucodes of pic3d_dda.fa: the same kernels with each subdomain's particles kept in a dynamic
// array (docs/language.md §9.11) instead of a new DF per step. The block holds the particles
// that stayed; the deposit appends those arriving from the neighbours' leaving arrays (in the
// order the DF version gathers them: the same sums, the same bits), the push keeps the staying
// ones in place and drops the rest, which travel in the leaving array as before.
import type { DF } from '../../src/ucode/df.js';
import type { DdaBlock } from '../../src/ucode/dda.js';
import { guard, arriving, deposit, gather, leavingSize, outgoing, push, scatter } from './kernels.js';
import { REC, STAY } from './model.js';
import { records } from './records.js';
import { summarize } from './driver.js';

/** The block's particles, copied (the block is rewritten from them). */
const held = (P: DdaBlock): Float64Array => P.f64().slice();

/** The parts arriving at a subdomain: its block's particles at STAY, the neighbours' leaving arrays elsewhere. */
function parts(P: DdaBlock, dfs: readonly DF[]): Float64Array[] {
  return dfs.slice(0, 27).map((d, k) => (k === STAY ? held(P) : records(d)));
}

/** Step 0: the subdomain's particles from its slab into its block; an empty leaving array; the count. */
export function c_pick_dda(F: number, b: number, c: number, slab: DF, P: DdaBlock, ready: DF, leaving: DF): void {
  const F2 = F * F, s = b * F + c;
  const src = slab.getFloat64Array();
  const lo = F2 + 1 + src[s]! * REC, hi = F2 + 1 + src[s + 1]! * REC;
  const k = (hi - lo) / REC;
  if (P.getMaxNumel() < P.getNumel() + k) P.resize((P.getNumel() + k) * P.getElsize());
  const v = P.addElement(k)!;
  new Float64Array(v.buffer, v.byteOffset, hi - lo).set(src.subarray(lo, hi));
  leaving.createFloat64Array(0);
  ready.setInt(P.getNumel());
}

/** deposit(the block, the 26 neighbours' leaving arrays; the ready count at STAY) -> the deposit block; the block holds every particle of the subdomain */
export function c_deposit_dda(N: number, F: number, a: number, b: number, c: number, P: DdaBlock, ...dfs: DF[]): void {
  const n1 = N / F + 1;
  const bundles = arriving(parts(P, dfs));
  const out = dfs[27]!.createFloat64Array(n1 * n1 * n1);
  guard(() => deposit(N, F, a, b, c, bundles, out));
  const total = bundles.reduce((s, x) => s + x.length, 0) / REC;
  if (P.getMaxNumel() < total) P.resize(Math.max(total, 2 * P.getMaxNumel()) * P.getElsize());
  P.addElement(total - P.getNumel());
  gather(bundles, P.f64());
}

/** push(G of own and 7 upper neighbours, the block) -> the staying particles kept in the block, the leaving array, their count */
export function c_push_dda(N: number, F: number, a: number, b: number, c: number,
  g0: DF, g1: DF, g2: DF, g3: DF, g4: DF, g5: DF, g6: DF, g7: DF, P: DdaBlock, ready: DF, leaving: DF): void {
  guard(() => {
    const r = push(N, F, a, b, c, [g0, g1, g2, g3, g4, g5, g6, g7].map((d) => d.getFloat64Array()), [P.f64()]);
    const stay = r.count[STAY]!;
    scatter(r, outgoing(r.count, P.f64().subarray(0, stay * REC), leaving.createFloat64Array(leavingSize(r.count))));
    // the rest leave the block when the push ends (the array is ordered: the staying stay first)
    for (let i = stay; i < P.getNumel(); i++) P.remElement(i);
    ready.setInt(stay);
  });
}

/** The summary of subdomain (a, b, c) after the last step, from its block and its neighbours' last leaving arrays. */
export function c_final_dda(N: number, F: number, NP: number, a: number, b: number, c: number, ref: DF, P: DdaBlock, ...dfs: DF[]): void {
  summarize(N, F, NP, a, b, c, ref, parts(P, dfs), dfs[27]!);
}
