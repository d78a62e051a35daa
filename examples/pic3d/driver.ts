// The TypeScript ucodes of pic3d around the kernels: the initial cloud cut into subdomains, the
// sequential reference run beside the program, the per-subdomain summaries and the final check.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DF } from '../../src/ucode/df.js';
import { Packs, subdomainParts } from './packs.js';
import { badParams, cellOf, cloudPart, cloudRange, initialCloud, REC, STAY, subdomainsOf, totalMass, type Params } from './model.js';
import { simulate } from './reference.js';
import { arriving } from './kernels.js';
import { records } from './records.js';

/** The example's FAILED line, then an error that stops the run. */
export function fail(msg: string): never {
  console.log(`pic3d: FAILED (${msg})`);
  throw new Error(`pic3d: ${msg}`);
}

function params(N: number, F: number, NP: number, NT: number, K: number): Params {
  const p = { N, F, NP, NT, K };
  const why = badParams(p);
  if (why) fail(why);
  return p;
}

/** Subdomain number of a particle record at offset o (x-major). */
function subdomainOf(parts: Float64Array, o: number, N: number, F: number): number {
  const n = N / F;
  const sx = Math.floor(cellOf(parts[o + 2]!, N) / n), sy = Math.floor(cellOf(parts[o + 3]!, N) / n), sz = Math.floor(cellOf(parts[o + 4]!, N) / n);
  return (sx * F + sy) * F + sz;
}

/**
 * Part q of B of the initial cloud (the ids of model.ts cloudRange; none when q >= B) sorted by subdomain: F³ + 1
 * offsets (in particles) as doubles, then the records. Each particle's subdomain is found once
 * (model.ts subdomainsOf) and its record copied by a loop (a subarray per particle was 10⁶
 * objects). The parts are made in parallel before the first step; a subdomain's particles are
 * its records of part 0, then of part 1, …: id order, as from one sorted cloud.
 */
export function c_init_part(N: number, F: number, NP: number, NT: number, K: number, q: number, B: number, part: DF): void {
  initPart(N, F, NP, NT, K, q, B, 0, F, part);
}

/**
 * c_init_part keeping only the particles of subdomain layers [x0, x1) (the same layout, the other
 * subdomains empty): on several nodes each node makes every part of the cloud for its own layers,
 * so no particle crosses a node border before the first step. Every node draws the whole cloud
 * and drops what the others keep: at the seed's size on 2 × 1 (C++) 220 ms of CPU a node for the
 * 4 parts, where drawing 2 parts took 230 ms and cutting them 70–130 ms more, and 32 MB crossed.
 */
export function c_init_part_x(N: number, F: number, NP: number, NT: number, K: number, q: number, B: number, x0: number, x1: number, part: DF): void {
  if (!(Number.isInteger(x0) && Number.isInteger(x1) && 0 <= x0 && x0 <= x1 && x1 <= F)) fail(`cloud layers [${x0}, ${x1}) of F=${F}`);
  // a node without layers (more nodes than F) keeps none, and draws none
  if (x0 === x1) { params(N, F, NP, NT, K); part.createFloat64Array(F * F * F + 1); return; }
  initPart(N, F, NP, NT, K, q, B, x0, x1, part);
}

function initPart(N: number, F: number, NP: number, NT: number, K: number, q: number, B: number, x0: number, x1: number, part: DF): void {
  params(N, F, NP, NT, K);
  if (!(Number.isInteger(q) && Number.isInteger(B) && B >= 1 && q >= 0)) fail(`cloud part ${q} of ${B}`);
  // a DF beyond the B parts holds no particle
  const [lo, hi] = q < B ? cloudRange(NP, q, B) : [0, 0];
  const parts = cloudPart(NP, lo, hi);
  const S = F * F * F, F2 = F * F, n = hi - lo, s0 = x0 * F2, s1 = x1 * F2;
  const count = new Int32Array(S);
  const sub = subdomainsOf(parts, N, F, count);
  const start = new Float64Array(S + 1);
  for (let s = s0; s < s1; s++) start[s + 1] = count[s]!;
  for (let s = 0; s < S; s++) start[s + 1] += start[s]!;
  const out = part.createFloat64Array(S + 1 + start[S]! * REC);
  out.set(start);
  const fill = start.slice(0, S);
  for (let p = 0, o = 0; p < n; p++, o += REC) {
    const s = sub[p]!;
    if (s < s0 || s >= s1) continue;
    for (let k = 0, w = S + 1 + fill[s]! * REC; k < REC; k++) out[w + k] = parts[o + k]!;
    fill[s]!++;
  }
}

/**
 * The x-slab a of a part of the cloud: F² + 1 offsets, then the records of subdomains (a, 0, 0)
 * … (a, F−1, F−1). Cut on the part's node, the slab travels once to the node of its subdomains.
 */
export function c_cut(F: number, a: number, part: DF, slab: DF): void {
  const S = F * F * F, F2 = F * F;
  const src = part.getFloat64Array();
  const first = src[a * F2]!, last = src[(a + 1) * F2]!;
  const out = slab.createFloat64Array(F2 + 1 + (last - first) * REC);
  for (let k = 0; k <= F2; k++) out[k] = src[a * F2 + k]! - first;
  out.set(src.subarray(S + 1 + first * REC, S + 1 + last * REC), F2 + 1);
}

/**
 * Subdomain s's records from each sorted part (`offsets` + 1 offsets, then records: a part of
 * the cloud, or a slab of one), one part after another, into a new array of `stay`.
 */
export function gatherParts(parts: readonly DF[], offsets: number, s: number, stay: DF): Float64Array {
  const out = stay.createFloat64Array(partsSize(parts, s));
  gatherInto(parts, offsets, s, out);
  return out;
}

/** The doubles of subdomain s's records in the sorted parts. */
export function partsSize(parts: readonly DF[], s: number): number {
  let size = 0;
  for (const d of parts) { const x = d.getFloat64Array(); size += (x[s + 1]! - x[s]!) * REC; }
  return size;
}

/** Subdomain s's records of the sorted parts (`offsets` + 1 offsets, then records), part after part, into `out` (partsSize doubles). */
export function gatherInto(parts: readonly DF[], offsets: number, s: number, out: Float64Array): void {
  let o = 0;
  for (const d of parts) {
    const x = d.getFloat64Array(), lo = offsets + 1 + x[s]! * REC, hi = offsets + 1 + x[s + 1]! * REC;
    out.set(x.subarray(lo, hi), o);
    o += hi - lo;
  }
}

/** The particles of subdomain (a, b, c) at step 0 from the x-slab a of each part of the cloud: all staying, none leaving. */
export function c_pick(F: number, b: number, c: number, ...dfs: DF[]): void {
  const k = dfs.length - 2;
  gatherParts(dfs.slice(0, k), F * F, b * F + c, dfs[k]!);
  dfs[k + 1]!.createFloat64Array(0);
}

/**
 * The particles of subdomain (a, b, c) at step 0 straight from the parts of the cloud (one node:
 * no slab to cut, so the cloud is not copied once more before it is picked).
 */
export function c_pick_all(F: number, a: number, b: number, c: number, ...dfs: DF[]): void {
  const k = dfs.length - 2;
  gatherParts(dfs.slice(0, k), F * F * F, (a * F + b) * F + c, dfs[k]!);
  dfs[k + 1]!.createFloat64Array(0);
}

/** The sequential reference's final particles in id order (check = 1), or an empty DF. */
export function c_reference(N: number, F: number, NP: number, NT: number, K: number, check: number, ref: DF): void {
  if (!check) { ref.createFloat64Array(0); return; }
  const { parts } = simulate(params(N, F, NP, NT, K), initialCloud(NP));
  ref.createFloat64Array(parts.length).set(parts);
}

/** Summary fields: sums over particles (exact where the inputs allow), then maxima. */
const COUNT = 0, MASS = 1, IDS = 2, P = 3, PREF = 6, DX = 9, DV = 10;
/** The numbers of a summary. */
export const SUMMARY = 11;

/** The summary of subdomain (a, b, c) after the last step, checked against the reference when given. */
export function c_final(N: number, F: number, NP: number, a: number, b: number, c: number, ref: DF, ...dfs: DF[]): void {
  summarize(N, F, NP, a, b, c, ref, dfs.slice(0, 27).map(records), dfs[27]!);
}

/**
 * Row a's 16 summaries in one CF (slabs.fah ROWS, F = 4), added as c_combine4 adds them by column
 * and then the columns' by row: the reference, the leaving packs of rows a + 1, a and a − 1 (9,
 * slabs.fah XNB), the row's staying packs (3) -> the row's summary
 */
export function c_final_g(N: number, F: number, NP: number, a: number, ref: DF, ...dfs: DF[]): void {
  if (F !== 4) fail(`the summaries by row take F = 4 subdomains a side, not F=${F}`);
  const xs = new Packs(F, dfs.slice(0, 9)), ss = new Packs(F, dfs.slice(9, 12));
  const z = dfs[12]!.createFloat64Array(SUMMARY), yc = new Float64Array(SUMMARY), y = new Float64Array(SUMMARY);
  for (let b = 0; b < 4; b++) {
    yc.fill(0);
    for (let c = 0; c < 4; c++) {
      y.fill(0);
      summarizeInto(N, F, NP, a, b, c, ref, subdomainParts(xs, ss, a, b, c), y);
      addSummary(yc, y);
    }
    addSummary(z, yc);
  }
}

/** The summary of subdomain (a, b, c) from its 27 parts (the staying particles at STAY, the neighbours' leaving arrays). */
export function summarize(N: number, F: number, NP: number, a: number, b: number, c: number, ref: DF, parts: Float64Array[], out: DF): void {
  summarizeInto(N, F, NP, a, b, c, ref, parts, out.createFloat64Array(SUMMARY));
}

/** summarize into `s` (SUMMARY numbers, zero). */
function summarizeInto(N: number, F: number, NP: number, a: number, b: number, c: number, ref: DF, parts: Float64Array[], s: Float64Array): void {
  const r = ref.getSize() === 0 ? null : ref.getFloat64Array();
  // PIC3D_DUMP=dir: the subdomain's final particles into dir/a_b_c.f64 (tests compare versions)
  const dump = process.env.PIC3D_DUMP;
  if (dump) {
    const all = arriving(parts);
    const out = new Float64Array(all.reduce((k, p) => k + p.length, 0));
    let o = 0;
    for (const p of all) { out.set(p, o); o += p.length; }
    writeFileSync(join(dump, `${a}_${b}_${c}.f64`), out);
  }
  summarizeBundles(N, F, NP, a, b, c, r, arriving(parts), s);
}

/**
 * The summary sums of subdomain (a, b, c) over the particles arriving at it (27 bundles), checked
 * against the reference `r` when given, into `s` (SUMMARY numbers, zero): the sequential baselines
 * time the same pass (bench/programs/pic3d-seq.ts).
 */
export function summarizeBundles(N: number, F: number, NP: number, a: number, b: number, c: number, r: Float64Array | null, bundles: readonly Float64Array[], s: Float64Array): void {
  const own = (a * F + b) * F + c;
  for (const p of bundles) {
    for (let o = 0; o < p.length; o += REC) {
      const id = p[o]!;
      if (subdomainOf(p, o, N, F) !== own) fail(`particle ${id} ended in subdomain (${a}, ${b}, ${c}), not its own`);
      s[COUNT]++; s[MASS] += p[o + 1]!; s[IDS] += id;
      for (let k = 0; k < 3; k++) s[P + k] += p[o + 1]! * p[o + 5 + k]!;
      if (!r) continue;
      if (!(Number.isInteger(id) && id >= 0 && id < NP)) fail(`particle id ${id} out of range`);
      const q = id * REC;
      if (r[q + 1] !== p[o + 1]) fail(`particle ${id} has mass ${p[o + 1]}, the reference ${r[q + 1]}`);
      for (let k = 0; k < 3; k++) {
        s[PREF + k] += r[q + 1]! * r[q + 5 + k]!;
        let dx = Math.abs(p[o + 2 + k]! - r[q + 2 + k]!);
        if (dx > 0.5) dx = 1 - dx; // across the periodic boundary
        s[DX] = Math.max(s[DX]!, dx);
        s[DV] = Math.max(s[DV]!, Math.abs(p[o + 5 + k]! - r[q + 5 + k]!));
      }
    }
  }
}

/** An empty summary, the start of the chain. */
export function c_summary0(out: DF): void {
  out.createFloat64Array(SUMMARY);
}

/** y added into z: sums added, maxima kept. */
function addSummary(z: Float64Array, y: Float64Array): void {
  for (let k = 0; k < DX; k++) z[k] += y[k]!;
  for (let k = DX; k < SUMMARY; k++) z[k] = Math.max(z[k]!, y[k]!);
}

/** acc + s. */
export function c_combine(acc: DF, s: DF, out: DF): void {
  const z = out.createFloat64Array(SUMMARY);
  z.set(acc.getFloat64Array());
  addSummary(z, s.getFloat64Array());
}

/**
 * The first k of four summaries added to an empty one, as c_combine adds them one at a time (k ≤
 * 4; the rest of the import's four repeat one of them and are not read).
 */
export function c_combine4(k: number, ...dfs: DF[]): void {
  const z = dfs[4]!.createFloat64Array(SUMMARY);
  for (let i = 0; i < k; i++) addSummary(z, dfs[i]!.getFloat64Array());
}

/** Tolerances of the comparison with the reference: the deposit sums in another order. */
const TOL_X = 1e-9, TOL_V = 1e-9, TOL_P = 1e-9;

export function c_report(N: number, F: number, NP: number, NT: number, K: number, check: number, sum: DF): void {
  const s = sum.getFloat64Array();
  if (s[COUNT] !== NP) fail(`${s[COUNT]} particles at the end, ${NP} at the start`);
  if (s[IDS] !== (NP * (NP - 1)) / 2) fail(`particle ids sum to ${s[IDS]}, expected ${(NP * (NP - 1)) / 2}: a particle was lost or duplicated`);
  if (s[MASS] !== totalMass(NP)) fail(`total mass ${s[MASS]}, expected exactly ${totalMass(NP)}`);
  let what = 'no particle lost';
  if (check) {
    if (!(s[DX]! <= TOL_X)) fail(`a position differs from the reference by ${s[DX]} (tolerance ${TOL_X})`);
    if (!(s[DV]! <= TOL_V)) fail(`a velocity differs from the reference by ${s[DV]} (tolerance ${TOL_V})`);
    for (let k = 0; k < 3; k++)
      if (!(Math.abs(s[P + k]! - s[PREF + k]!) <= TOL_P)) fail(`momentum ${'xyz'[k]} is ${s[P + k]}, the reference ${s[PREF + k]}`);
    what = 'momentum and positions match the reference';
  }
  console.log(`pic3d: OK (N=${N}, ${F}x${F}x${F} subdomains, ${NP} particles, ${NT} steps, ${K} sweeps; mass exact, ${what})`);
}
