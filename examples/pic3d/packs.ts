// Packs: the parts of several subdomains of one kind (staying particles, leaving arrays, deposit
// blocks, arrivals, faces) in one DF, so that a CF that makes or reads many subdomains' parts names
// one DF where it named one a subdomain (pic3d.fa's groups, slabs.fah ROWS). A pack's doubles:
// k, then for each part its subdomain's number ((a·F + b)·F + c), its offset and its length (in
// doubles, from the pack's start), then the parts one after another. examples/pic3d-cpp/ucodes.cpp
// reads and writes the same layout (packOut, Packs).
import type { CreateOptions, DF } from '../../src/ucode/df.js';
import { fail } from './driver.js';

/** Makes `out` a pack of parts of `sizes` doubles for subdomains `ids`: the parts' views, in order (zero-filled unless `opts` says not). */
export function packOut(out: DF, ids: readonly number[], sizes: readonly number[], opts?: CreateOptions): Float64Array[] {
  const k = ids.length;
  let total = 1 + 3 * k;
  for (let i = 0; i < k; i++) total += sizes[i]!;
  const all = out.createFloat64Array(total, opts);
  all[0] = k;
  const parts: Float64Array[] = [];
  for (let i = 0, off = 1 + 3 * k; i < k; off += sizes[i]!, i++) {
    all[1 + 3 * i] = ids[i]!;
    all[2 + 3 * i] = off;
    all[3 + 3 * i] = sizes[i]!;
    parts.push(all.subarray(off, off + sizes[i]!));
  }
  return parts;
}

/** The parts of some packs by subdomain number (a pack named more than once is read once). */
export class Packs {
  private readonly parts: (Float64Array | undefined)[] = [];

  constructor(readonly F: number, packs: readonly DF[]) {
    for (let s = 0; s < F * F * F; s++) this.parts.push(undefined);
    for (let i = 0; i < packs.length; i++) this.add(packs[i]!);
  }

  private add(df: DF): void {
    const all = df.getFloat64Array();
    const k = all[0]!;
    if (!(Number.isInteger(k) && k >= 0 && 1 + 3 * k <= all.length)) fail(`a pack of ${all.length} doubles names ${k} parts`);
    for (let i = 0; i < k; i++) {
      const id = all[1 + 3 * i]!, off = all[2 + 3 * i]!, len = all[3 + 3 * i]!;
      if (!(Number.isInteger(id) && id >= 0 && id < this.parts.length && off >= 1 + 3 * k && off + len <= all.length)) fail(`a pack's part ${i} (subdomain ${id}, ${len} doubles at ${off}) lies outside its ${all.length} doubles or the ${this.parts.length} subdomains`);
      if (this.parts[id] === undefined) this.parts[id] = all.subarray(off, off + len);
    }
  }

  /** The part of subdomain (a, b, c), indices wrapped below F. */
  at(a: number, b: number, c: number): Float64Array {
    const F = this.F, id = ((((a % F) + F) % F) * F + (((b % F) + F) % F)) * F + (((c % F) + F) % F);
    const p = this.parts[id];
    if (p === undefined) fail(`subdomain ${id} is in none of the packs given`);
    return p;
  }
}

/** Whether index i of F passes through the centre (the cloud's collapse): F / 2 − 1 and F / 2 (slabs.fah CENTRE). */
export function centre(F: number, i: number): boolean {
  return i === F / 2 - 1 || i === F / 2;
}

/**
 * Group g of row a (slabs.fah ROWS, F = 4), its subdomains (b, c) in order: a light row's 16 (g =
 * 0), a centre row's light columns 0 and 3 (g = 0), or its centre column g (g = 1, 2).
 */
export function groupOf(F: number, a: number, g: number): [number, number][] {
  if (F !== 4) fail(`the groups take F = 4 subdomains a side, not F=${F}`);
  const cols = !centre(F, a) ? (g === 0 ? [0, 1, 2, 3] : []) : g === 0 ? [0, 3] : g === 1 || g === 2 ? [g] : [];
  if (cols.length === 0) fail(`row ${a} has no group ${g}`);
  const subs: [number, number][] = [];
  for (const b of cols) for (let c = 0; c < F; c++) subs.push([b, c]);
  return subs;
}

/**
 * The 27 parts arriving at subdomain (a, b, c), in direction order ((i·3 + j)·3 + k): its staying
 * particles from `stays` (STAY), the leaving arrays of the neighbours (a + 1 − i, b + 1 − j,
 * c + 1 − k) from `leaving` (whole: arriving() takes each one's part for its direction)
 */
export function subdomainParts(leaving: Packs, stays: Packs, a: number, b: number, c: number): Float64Array[] {
  const parts: Float64Array[] = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) for (let k = 0; k < 3; k++)
    parts.push(i === 1 && j === 1 && k === 1 ? stays.at(a, b, c) : leaving.at(a + 1 - i, b + 1 - j, c + 1 - k));
  return parts;
}
