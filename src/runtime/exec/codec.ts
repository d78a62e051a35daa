// Compact encoding of worker batches and their results. Structured clone of thousands of small
// objects costs ~2 µs each; one Float64Array plus a string list and an object list (raw
// buffers and JS values only) clone in a fraction of that.
//
// Task: cf, imp, nargs, then per argument a tag and its operands:
//   OUT keyIdx | INT v keyIdx | REAL v keyIdx | STR strIdx keyIdx | OBJ(t) objIdx keyIdx |
//   NUM v | TXT strIdx | FWD task out keyIdx | XFWD lane batch task out keyIdx
import { T_INT, T_REAL, T_STRING, type DfValue } from '../../ucode/value.js';
import { adoptRaw, handedDropped, madeSince } from '../../ucode/recycle.js';
import { recycling, sharedBytesChurned } from './shm.js';
import type { FedWaits, Forward, LaneGaps, Task, TaskError } from './protocol.js';

const A_OUT = 0, A_INT = 1, A_REAL = 2, A_STR = 3, A_OBJ = 4, A_NUM = 6, A_TXT = 7, A_FWD = 8, A_XFWD = 9;

/** `keys`: every DF key of the batch joined by \u0001 (one string to clone; split lazily). */
export interface WireBatch {
  id: number; n: number; nums: Float64Array; strs: string[]; objs: unknown[]; keys: string;
  /** freed raw buffers handed to the worker's pool with the batch (exec/shm.ts) */
  recycled: SharedArrayBuffer[] | undefined;
}

class NumBuf {
  a = new Float64Array(256);
  n = 0;
  push(x: number): void {
    if (this.n === this.a.length) { const b = new Float64Array(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = x;
  }
  /** Room for `k` more numbers (written directly, without a call per number, by encodeBatch). */
  reserve(k: number): Float64Array {
    if (this.n + k > this.a.length) { let m = this.a.length * 2; while (this.n + k > m) m *= 2; const b = new Float64Array(m); b.set(this.a); this.a = b; }
    return this.a;
  }
  finish(): Float64Array { return this.a.slice(0, this.n); }
}

/** the encoders' scratch, kept between batches: a batch of hundreds of tasks otherwise regrew it from 256 every time */
const scratch = new NumBuf();

/** The forwarded input `fwd` gives argument `arg`, if any (no closure per argument). */
function forwardOf(fwd: readonly Forward[], arg: number): Forward | undefined {
  for (let j = 0; j < fwd.length; j++) if (fwd[j]!.arg === arg) return fwd[j];
  return undefined;
}

function pushValue(nums: NumBuf, strs: string[], objs: unknown[], v: DfValue): void {
  if (v.t === T_INT) { nums.push(A_INT); nums.push(v.v); }
  else if (v.t === T_REAL) { nums.push(A_REAL); nums.push(v.v); }
  else if (v.t === T_STRING) { nums.push(A_STR); nums.push(strs.push(v.v) - 1); }
  else { nums.push(A_OBJ + 16 * v.t); nums.push(objs.push(v.v) - 1); }
}

export function encodeBatch(id: number, tasks: readonly Task[]): WireBatch {
  const nums = scratch, strs: string[] = [], objs: unknown[] = [];
  nums.n = 0;
  // joined once at the end: a `+=` per key made two cons strings of 32 bytes each, flattened
  // again when the batch was cloned
  const keyList: string[] = [];
  const addKey = (k: string): number => keyList.push(k) - 1;
  for (const t of tasks) {
    const args = t.args, keys = t.keys, n = args.length;
    // written directly, room made once a task (at most 6 numbers an argument): a call per
    // number was ~40 instructions, ~20 numbers a fed stencil CF (callgrind, the system thread)
    let a8 = nums.reserve(3 + 6 * n);
    let p = nums.n;
    a8[p++] = t.cf; a8[p++] = t.imp; a8[p++] = n;
    const fwd = t.fwd;
    for (let i = 0; i < n; i++) {
      const key = keys[i]!;
      const f = fwd ? forwardOf(fwd, i) : undefined;
      if (f) {
        if (f.lane !== undefined) { a8[p++] = A_XFWD; a8[p++] = f.lane; a8[p++] = f.batch!; } else a8[p++] = A_FWD;
        a8[p++] = f.task; a8[p++] = f.out; a8[p++] = addKey(key);
        continue;
      }
      const a = args[i];
      if (key === '') {
        if (typeof a === 'number') { a8[p++] = A_NUM; a8[p++] = a; }
        else { a8[p++] = A_TXT; a8[p++] = strs.push(a as string) - 1; }
        continue;
      }
      if (a === null) a8[p++] = A_OUT;
      else { nums.n = p; pushValue(nums, strs, objs, a as DfValue); p = nums.n; a8 = nums.a; }
      a8[p++] = addKey(key);
    }
    nums.n = p;
  }
  return { id, n: tasks.length, nums: nums.finish(), strs, objs, keys: keyList.join('\u0001'), recycled: undefined };
}

/** Decoded task for the worker: args as values, DF key numbers (see BatchKeys), forwarded inputs. */
export interface DecodedTask { cf: number; imp: number; args: unknown[]; keys: number[]; fwd: Forward[] | null }

/** The batch's DF keys, split only if a ucode asks a DF for its name. */
export class BatchKeys {
  private split: string[] | null = null;
  constructor(private readonly text: string) {}
  get(i: number): string { return (this.split ??= this.text.split('\u0001'))[i] ?? '?'; }
}

function readValue(tag: number, x: number, strs: string[], objs: unknown[]): DfValue {
  switch (tag & 15) {
    case A_INT: return { t: T_INT, v: x | 0 };
    case A_REAL: return { t: T_REAL, v: x };
    case A_STR: return { t: T_STRING, v: strs[x]! };
    default: return { t: tag >> 4, v: objs[x] } as DfValue;
  }
}

export function decodeBatch(b: WireBatch): DecodedTask[] {
  if (b.recycled !== undefined) adoptRaw(b.recycled);
  const { nums, strs, objs } = b;
  const out: DecodedTask[] = new Array(b.n);
  let p = 0;
  for (let ti = 0; ti < b.n; ti++) {
    const cf = nums[p++]!, imp = nums[p++]! | 0, n = nums[p++]!;
    const args = new Array<unknown>(n), keys = new Array<number>(n);
    let fwd: Forward[] | null = null;
    for (let i = 0; i < n; i++) {
      const tag = nums[p++]!;
      keys[i] = -1;
      switch (tag & 15) {
        case A_NUM: args[i] = nums[p++]; continue;
        case A_TXT: args[i] = strs[nums[p++]!]; continue;
        case A_OUT: args[i] = null; break;
        case A_FWD: (fwd ??= []).push({ arg: i, task: nums[p++]!, out: nums[p++]! }); args[i] = null; break;
        case A_XFWD: (fwd ??= []).push({ arg: i, lane: nums[p++]!, batch: nums[p++]!, task: nums[p++]!, out: nums[p++]! }); args[i] = null; break;
        default: args[i] = readValue(tag, nums[p++]!, strs, objs);
      }
      keys[i] = nums[p++]!;
    }
    out[ti] = { cf, imp, args, keys, fwd };
  }
  return out;
}

/** Results: per task its outputs in order, as [tag, value] with the same tags. */
export interface WireResult {
  lane: number; batch: number; n: number; nums: Float64Array; strs: string[]; objs: unknown[];
  error?: TaskError;
  /** wall ns of each task that ran (durations; on the run's clock when traced) */
  start: Float64Array;
  fin: Float64Array;
  fedWaits?: FedWaits;
  idleSleeps?: number;
  gaps?: LaneGaps;
  /** bytes of the freed buffers handed to the worker that its pool dropped since its last result */
  dropped: number;
  /** recyclable buffers the worker made fresh (none in its pool) since its last result (--timing) */
  fresh: number;
}

export function encodeResult(lane: number, batch: number, outs: (DfValue | null)[][], start: Float64Array, fin: Float64Array): WireResult {
  const nums = scratch, strs: string[] = [], objs: unknown[] = [];
  nums.n = 0;
  for (const o of outs) {
    nums.push(o.length);
    for (const v of o) {
      if (v === null) nums.push(A_OUT);
      else pushValue(nums, strs, objs, v);
    }
  }
  // every field from the start, in one order, the optional ones undefined until the worker sets
  // them: a result then keeps one hidden class, on the worker and, cloned, on the system thread
  // (its rehearsal's results included), where fields added only when set made one class per
  // combination and deoptimised the code that had seen fewer ('wrong map')
  return { lane, batch, n: outs.length, nums: nums.finish(), strs, objs, start, fin, error: undefined, fedWaits: undefined, idleSleeps: undefined, gaps: undefined, dropped: handedDropped(), fresh: madeSince() };
}

export function decodeResult(r: WireResult): (DfValue | null)[][] {
  // this thread's pool handed those buffers over, and its old views of them keep their memory
  // until it collects them: counted here, else they waited for its rare full collections
  // (test/runtime/held-views.test.ts; docs/runtime.md "Raw DF buffers recycled")
  if (r.dropped > 0) sharedBytesChurned(r.dropped);
  recycling.fresh += r.fresh;
  const { nums, strs, objs } = r;
  const outs: (DfValue | null)[][] = new Array(r.n);
  let p = 0;
  for (let i = 0; i < r.n; i++) {
    const k = nums[p++]!;
    const o: (DfValue | null)[] = new Array(k);
    for (let j = 0; j < k; j++) {
      const tag = nums[p++]!;
      o[j] = (tag & 15) === A_OUT ? null : readValue(tag, nums[p++]!, strs, objs);
    }
    outs[i] = o;
  }
  return outs;
}
