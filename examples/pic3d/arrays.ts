// The ucodes of pic3d_dda.fa: the same kernels with each subdomain's particles kept in a dynamic
// array (docs/language.md §9.11), moved between subdomains by the array's per-element destination
// form (docs/dda.md): the push writes each particle back in place and names, per particle, the
// neighbour's array it goes to; at release the leaving ones are packed per neighbour, and the
// neighbour's global count before its next deposit delivers them into its block.
import type { DF } from '../../src/ucode/df.js';
import type { DdaBlock, DdaTarget } from '../../src/ucode/dda.js';
import { guard, deposit, push, pushIn, type Pushed } from './kernels.js';
import { REC, STAY } from './model.js';
import { summarize } from './driver.js';
import { checkSlabs, depositBlock, slabField } from './fragments.js';
import { blockFace } from './slabs.js';

/** Step 0: the subdomain's particles from the x-slab of each of the cloud's 4 parts (pic3d_dda.fa CLOUD) into its block; their count. */
export function c_pick_dda(F: number, b: number, c: number, s0: DF, s1: DF, s2: DF, s3: DF, P: DdaBlock, ready: DF): void {
  fill([s0, s1, s2, s3], F * F, b * F + c, P, ready);
}

/** Step 0 on one node: the subdomain's particles from the parts of the cloud themselves (no slab cut). */
export function c_pick_dda_all(F: number, a: number, b: number, c: number, p0: DF, p1: DF, p2: DF, p3: DF, P: DdaBlock, ready: DF): void {
  fill([p0, p1, p2, p3], F * F * F, (a * F + b) * F + c, P, ready);
}

/** Records of subdomain `s` of each part (`offsets` + 1 offsets, then the records), part after part, into block P; ready := its count. */
function fill(parts: readonly DF[], offsets: number, s: number, P: DdaBlock, ready: DF): void {
  let total = 0;
  for (const part of parts) { const src = part.getFloat64Array(); total += src[s + 1]! - src[s]!; }
  if (P.getMaxNumel() < P.getNumel() + total) P.resize((P.getNumel() + total) * P.getElsize());
  for (const part of parts) {
    const src = part.getFloat64Array();
    const lo = offsets + 1 + src[s]! * REC, hi = offsets + 1 + src[s + 1]! * REC;
    const k = (hi - lo) / REC;
    if (k === 0) continue;
    const v = P.addElement(k)!;
    new Float64Array(v.buffer, v.byteOffset, hi - lo).set(src.subarray(lo, hi));
  }
  ready.setInt(P.getNumel());
}

/** The array's handle, for the neighbours' pushes (they send particles to it). */
export function c_handle_dda(P: DF, H: DF): void { H.setValue(P.getValue()); }

/** deposit(the block: the particles that stayed and, after them, those delivered from the neighbours, the subdomain's φ) -> the deposit block followed by φ (fragments.ts c_deposit) */
export function c_deposit_dda(N: number, F: number, a: number, b: number, c: number, P: DdaBlock, _count: DF, phi: DF, L: DF): void {
  const out = depositBlock(N, F, phi, L);
  guard(() => deposit(N, F, a, b, c, [P.f64()], out));
}

/** The 26 neighbours' array handles, in direction order, as one list: the push's targets (read once a step, not 26 DFs). */
export function c_targets_dda(...hs: DF[]): void {
  hs[26]!.setValue(hs.slice(0, 26).map((h) => h.getValue()));
}

/**
 * push(G of own and 7 upper neighbours, the block, the list of the 26 neighbours' arrays by
 * direction) -> the count that stays. The particles are pushed in place; one leaving for
 * direction d goes to the neighbour's array of that direction (targets in direction order, STAY
 * left out).
 */
export function c_push_dda(N: number, F: number, a: number, b: number, c: number,
  g0: DF, g1: DF, g2: DF, g3: DF, g4: DF, g5: DF, g6: DF, g7: DF, P: DdaBlock, T: DF, ready: DF): void {
  guard(() => {
    const f = P.f64();
    moveInBlock(P, f, push(N, F, a, b, c, [g0, g1, g2, g3, g4, g5, g6, g7].map((d) => d.getFloat64Array()), [f]), T, ready);
  });
}

/**
 * The push's particles written back into the block in place, each one leaving for direction d
 * given the neighbour's array of that direction (T: the 26 in direction order, STAY left out);
 * ready := the count that stays.
 */
function moveInBlock(P: DdaBlock, f: Float64Array, r: Pushed, T: DF, ready: DF): void {
  f.set(r.moved);
  const to = P.destinations(T.getValue() as DdaTarget[]);
  const dir = r.dir;
  for (let q = 0; q < dir.length; q++) { const d = dir[q]!; if (d !== STAY) to[q] = d < STAY ? d : d - 1; }
  ready.setInt(r.count[STAY]!);
}

// With the Poisson sweeps on slabs of the grid (pic3d_dda.fa with slabs.fah, as pic3d.fa): the
// deposit makes the block alone, and the push takes g from its slab's φ (fragments.ts
// c_deposit_blk, c_push_slab, with the particles in the block).

/** deposit(the block's particles) -> the (n+1)³ deposit block alone (the slabs hold φ) */
export function c_deposit_dda_blk(N: number, F: number, a: number, b: number, c: number, P: DdaBlock, _count: DF, L: DF): void {
  depositOnly(N, F, a, b, c, P, L);
}

/** c_deposit_dda_blk where the layer above is on another node (slabs.fah FACE_UP): also the block's upper face -> L, the face ((n+1)² doubles) */
export function c_deposit_dda_blk_f(N: number, F: number, a: number, b: number, c: number, P: DdaBlock, _count: DF, L: DF, face: DF): void {
  const f = blockFace(depositOnly(N, F, a, b, c, P, L), N / F);
  face.createFloat64Array(f.length).set(f);
}

function depositOnly(N: number, F: number, a: number, b: number, c: number, P: DdaBlock, L: DF): Float64Array {
  const n1 = N / F + 1;
  const out = L.createFloat64Array(n1 * n1 * n1);
  guard(() => deposit(N, F, a, b, c, [P.f64()], out));
  return out;
}

/** push(its slab's φ after the step's sweeps, the block, the 26 neighbours' arrays by direction) -> the count that stays; g from that φ first */
export function c_push_dda_slab(N: number, F: number, SL: number, a: number, b: number, c: number, phi: DF, P: DdaBlock, T: DF, ready: DF): void {
  checkSlabs(F, SL, 0);
  guard(() => {
    const g = slabField(N, F, SL, a, b, c, phi.getFloat64Array()), f = P.f64();
    moveInBlock(P, f, pushIn(N, F, a, b, c, g, [f]), T, ready);
  });
}

/** The summary of subdomain (a, b, c) after the last step: its block holds every particle it ends with. */
export function c_final_dda(N: number, F: number, NP: number, a: number, b: number, c: number, ref: DF, P: DdaBlock, _count: DF, S: DF): void {
  summarize(N, F, NP, a, b, c, ref, Array.from({ length: 27 }, (_, d) => (d === STAY ? P.f64() : new Float64Array(0))), S);
}
