// A planned loop of C++ ucodes stepped natively (native/luna_ucode.cc StepOn): the loop's
// description and its ring of int and real values in one buffer the addon reads and writes, so
// that one N-API call runs many steps. Here: the buffer's layout (the same numbers as the
// addon's kLp* and kArg* constants), made once a loop, and the ring's values in and out.
import { T_INT, T_REAL, type DfValue } from '../../ucode/value.js';

/** Header words (int32) of the buffer: native/luna_ucode.cc kLp*. */
export const LP_TICK = 8, LP_STATUS = 9, LP_T = 10, LP_S = 11, LP_CALLS = 12, LP_TIMED = 13, LP_TIMES = 16;
/** Why stepping stopped: native/luna_ucode.cc kStop*. */
export const STOP_END = 0, STOP_TIME = 1, STOP_TIMED = 2, STOP_OTHER = 3;
const ARG_INT = 0, ARG_REAL = 1, ARG_INPUT = 2, ARG_OUTPUT = 3;
/** The most sites of a loop the addon steps (its kMaxSites). */
const MAX_SITES = 64;
/**
 * Iterations the addon's ring keeps for a loop whose outputs leave it from every iteration (a
 * count beyond its readers inside, or none): a run of steps is at most this long, so that each
 * stepped output is still in the ring when JavaScript posts it. A run's cost outside its steps
 * is one N-API call and a few reads (~1 µs), a thousandth of 1 024 empty steps; the ring is
 * 16 bytes a slot.
 */
export const ESCAPING_RING = 1024;

/** What a site of the plan is, as far as stepping needs (loop-inline.ts's Prepared). */
export interface StepSite {
  /** per argument: 0 a value, 1 an input, 2 an output */
  readonly kinds: Int8Array;
  readonly vals: readonly unknown[];
  readonly ints: readonly (readonly [number, number] | null)[];
  readonly from: readonly ({ site: number; out: number; d: number } | null)[];
  readonly outArgs: readonly number[];
}

/** A loop's buffer and views over it. */
export class NativeLoop {
  readonly H: Int32Array;
  private readonly types: Int32Array;
  private readonly ints: Int32Array;
  private readonly reals: Float64Array;
  constructor(readonly buf: ArrayBuffer, private readonly n: number, readonly ring: number, private readonly outs: number, typesAt: number, intsAt: number, realsAt: number) {
    this.H = new Int32Array(buf);
    this.types = new Int32Array(buf, typesAt * 4, ring * n * outs);
    this.ints = new Int32Array(buf, intsAt * 4, ring * n * outs);
    this.reals = new Float64Array(buf, realsAt * 8, ring * n * outs);
  }

  /**
   * Iteration `u`'s outputs (`vals`: JavaScript's ring of `jsRing` iterations from `from`) into
   * the native ring; false if one is neither an int nor a real (then the loop is not stepped here
   * from there).
   */
  put(u: number, from: number, vals: readonly ((DfValue | null)[] | null)[], jsRing: number): boolean {
    const n = this.n, slot = ((u - from) % jsRing) * n, at0 = ((u - from) % this.ring) * n;
    for (let s = 0; s < n; s++) {
      const out = vals[slot + s];
      if (out === null || out === undefined) return false;
      for (let k = 0; k < out.length; k++) {
        const v = out[k], at = (at0 + s) * this.outs + k;
        if (v === null || v === undefined || (v.t !== T_INT && v.t !== T_REAL)) return false;
        this.types[at] = v.t;
        if (v.t === T_INT) this.ints[at] = v.v; else this.reals[at] = v.v;
      }
    }
    return true;
  }

  /** Output `k` of step (u, s) from the native ring, as a DF value. */
  value(u: number, s: number, k: number, from: number): DfValue {
    const at = ((((u - from) % this.ring) * this.n) + s) * this.outs + k;
    return this.types[at] === T_INT ? { t: T_INT, v: this.ints[at]! } : { t: T_REAL, v: this.reals[at]! };
  }
}

/**
 * The buffer of a loop of `sites` (ring of `ring` iterations) whose C++ entries are `entries`
 * (per site, with its kind letters), or null when a site cannot be stepped natively: a code with
 * no direct C++ form, a value that is neither an int nor a real, an argument whose parameter
 * kind the direct form would convert (an int value given to a real parameter, …), more than
 * MAX_SITES sites.
 */
export function nativeLoop(sites: readonly StepSite[], ring: number, entries: readonly ({ entry: number; kinds: string } | undefined)[]): NativeLoop | null {
  const n = sites.length;
  if (n === 0 || n > MAX_SITES) return null;
  let outs = 1, descWords = 0;
  for (let s = 0; s < n; s++) {
    const e = entries[s], ps = sites[s]!;
    if (e === undefined || e.kinds.length !== ps.kinds.length) return null;
    outs = Math.max(outs, ps.outArgs.length);
    descWords += 2 + 4 * ps.kinds.length;
  }
  // header, descriptions, ring tags and ints, then (8-aligned) the reals' constants and the ring's reals
  const reals: number[] = [];
  const desc = new Int32Array(descWords);
  let at = 0;
  for (let s = 0; s < n; s++) {
    const e = entries[s]!, ps = sites[s]!, m = ps.kinds.length;
    desc[at++] = e.entry;
    desc[at++] = m;
    let o = 0;
    for (let i = 0; i < m; i++, at += 4) {
      const kind = ps.kinds[i]!, letter = e.kinds[i]!;
      if (kind === 2) { if (letter !== 'n') return null; desc[at] = ARG_OUTPUT; desc[at + 1] = o++; continue; }
      if (kind === 1) {
        const x = ps.from[i];
        if (x === null || x === undefined || letter !== 'v') return null;
        desc[at] = ARG_INPUT; desc[at + 1] = x.site; desc[at + 2] = x.out; desc[at + 3] = x.d;
        continue;
      }
      const ab = ps.ints[i];
      if (ab !== null && ab !== undefined) {
        if (letter !== 'i' || !Number.isInteger(ab[0]) || !Number.isInteger(ab[1]) || (ab[0] | 0) !== ab[0] || (ab[1] | 0) !== ab[1]) return null;
        desc[at] = ARG_INT; desc[at + 1] = ab[0]; desc[at + 2] = ab[1];
        continue;
      }
      const v = ps.vals[i];
      if (typeof v !== 'number' || letter !== 'r') return null;
      desc[at] = ARG_REAL; desc[at + 1] = reals.length;
      reals.push(v);
    }
  }
  const slots = ring * n * outs;
  const header = LP_TIMES + 2 * n;
  const descAt = header, typesAt = descAt + descWords, intsAt = typesAt + slots;
  const realsAt = Math.ceil((intsAt + slots) / 2), ringRealsAt = realsAt + reals.length;
  const buf = new ArrayBuffer((ringRealsAt + slots) * 8);
  const H = new Int32Array(buf);
  H[0] = n; H[1] = ring; H[2] = outs; H[3] = descAt; H[4] = realsAt; H[5] = typesAt; H[6] = intsAt; H[7] = ringRealsAt;
  H.set(desc, descAt);
  new Float64Array(buf).set(reals, realsAt);
  return new NativeLoop(buf, n, ring, outs, typesAt, intsAt, ringRealsAt);
}
