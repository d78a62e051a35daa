// Compact encoding of worker batches and their results. Structured clone of thousands of small
// objects costs ~2 µs each; one Float64Array plus a string list and an object list (raw
// buffers and JS values only) clone in a fraction of that. Both travel as short arrays, not as
// objects with named fields: a clone writes and reads each field's name, and a receiver builds
// the object field by field (a result of 15 fields cloned in 5.2–5.6 µs, as an array in 3.2–3.5,
// hot, this host; the system thread receives one a batch, cold).
//
// Task: cf, imp, nargs, then per argument a tag and its operands:
//   OUT keyIdx | INT v keyIdx | REAL v keyIdx | STR strIdx keyIdx | OBJ(t) objIdx keyIdx |
//   NUM v | TXT strIdx | FWD task out keyIdx | XFWD lane batch task out keyIdx
import { T_INT, T_REAL, T_STRING, type DfValue } from '../../ucode/value.js';
import { adoptRaw, handedDropped, madeSince } from '../../ucode/recycle.js';
import { recycling, sharedBytesChurned } from './shm.js';
import type { BatchResult, FedWaits, Forward, LaneGaps, Task, TaskError } from './protocol.js';

const A_OUT = 0, A_INT = 1, A_REAL = 2, A_STR = 3, A_OBJ = 4, A_NUM = 6, A_TXT = 7, A_FWD = 8, A_XFWD = 9;

/**
 * A batch on the wire: `nums` (its id, its task count, then the tasks), the strings and objects
 * the tasks' arguments name by index (undefined: none), `keys`, every DF key of the batch joined
 * by \u0001 (one string to clone; split lazily), and the freed raw buffers handed to the worker's
 * pool with the batch (exec/shm.ts; undefined: none).
 */
export type WireBatch = [nums: Float64Array, strs: string[] | undefined, objs: unknown[] | undefined, keys: string, recycled: SharedArrayBuffer[] | undefined];
/** where a batch's tasks start in its `nums` (after its id and task count) */
const BATCH_HEAD = 2;

/** A wire batch's id. */
export const batchId = (b: WireBatch): number => b[0][0]!;
/** A wire batch's task count. */
export const batchSize = (b: WireBatch): number => b[0][1]!;
/** A wire batch's DF keys joined (see BatchKeys). */
export const batchKeys = (b: WireBatch): string => b[3];

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
  nums.n = BATCH_HEAD;
  nums.a[0] = id;
  nums.a[1] = tasks.length;
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
  return [nums.finish(), strs.length > 0 ? strs : undefined, objs.length > 0 ? objs : undefined, keyList.join('\u0001'), undefined];
}

/** Decoded task for the worker: args as values, DF key numbers (see BatchKeys), forwarded inputs. */
export interface DecodedTask { cf: number; imp: number; args: unknown[]; keys: number[]; fwd: Forward[] | null }

/** The batch's DF keys, split only if a ucode asks a DF for its name. */
export class BatchKeys {
  private split: string[] | null = null;
  constructor(private readonly text: string) {}
  get(i: number): string { return (this.split ??= this.text.split('\u0001'))[i] ?? '?'; }
}

function readValue(tag: number, x: number, strs: string[] | undefined, objs: unknown[] | undefined): DfValue {
  switch (tag & 15) {
    case A_INT: return { t: T_INT, v: x | 0 };
    case A_REAL: return { t: T_REAL, v: x };
    case A_STR: return { t: T_STRING, v: strs![x]! };
    default: return { t: tag >> 4, v: objs![x] } as DfValue;
  }
}

export function decodeBatch(b: WireBatch): DecodedTask[] {
  const [nums, strs, objs, , recycled] = b;
  if (recycled !== undefined) adoptRaw(recycled);
  const n = nums[1]!;
  const out: DecodedTask[] = new Array(n);
  let p = BATCH_HEAD;
  for (let ti = 0; ti < n; ti++) {
    const cf = nums[p++]!, imp = nums[p++]! | 0, n = nums[p++]!;
    const args = new Array<unknown>(n), keys = new Array<number>(n);
    let fwd: Forward[] | null = null;
    for (let i = 0; i < n; i++) {
      const tag = nums[p++]!;
      keys[i] = -1;
      switch (tag & 15) {
        case A_NUM: args[i] = nums[p++]; continue;
        case A_TXT: args[i] = strs![nums[p++]!]; continue;
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

/**
 * A batch's result on the wire: `nums` holds RESULT_HEAD numbers (lane, batch, the k tasks that
 * ran, the bytes of freed buffers the worker's pool dropped and the recyclable buffers it made
 * fresh since its last result, which notes follow, and the notes: idle sleeps, the lane's gaps,
 * its fed waits), then the k tasks' starts and finishes (wall ns; on the run's clock when
 * traced), then per task its outputs in order as [tag, value] with a batch's tags; the strings
 * and objects they name as in a batch (undefined: none); the error (undefined: none).
 */
export type WireResult = [nums: Float64Array, strs: string[] | undefined, objs: unknown[] | undefined, error: TaskError | undefined];

const R_LANE = 0, R_BATCH = 1, R_RAN = 2, R_DROPPED = 3, R_FRESH = 4, R_NOTES = 5, R_SLEEPS = 6, R_GAPS = 7, R_WAITS = 11;
const RESULT_HEAD = 15;
/** R_NOTES bits: which notes the result carries */
const HAS_WAITS = 1, HAS_SLEEPS = 2, HAS_GAPS = 4;

/** What a worker reports beside a batch's outputs (absent: nothing to say; `dropped` overrides its pool's count). */
export interface ResultNotes {
  error?: TaskError; fedWaits?: FedWaits; idleSleeps?: number; gaps?: LaneGaps; dropped?: number;
}

/** `start`/`fin`: the starts and finishes of the tasks that ran (`outs`), first. */
export function encodeResult(lane: number, batch: number, outs: readonly (DfValue | null)[][], start: Float64Array, fin: Float64Array, notes?: ResultNotes): WireResult {
  const nums = scratch, strs: string[] = [], objs: unknown[] = [];
  const k = outs.length;
  nums.n = 0;
  const a = nums.reserve(RESULT_HEAD + 2 * k);
  a.fill(0, 0, RESULT_HEAD);
  a[R_LANE] = lane; a[R_BATCH] = batch; a[R_RAN] = k;
  const dropped = handedDropped();
  a[R_DROPPED] = notes?.dropped ?? dropped;
  a[R_FRESH] = madeSince();
  let bits = 0;
  const sleeps = notes?.idleSleeps, g = notes?.gaps, w = notes?.fedWaits;
  if (sleeps !== undefined) { bits |= HAS_SLEEPS; a[R_SLEEPS] = sleeps; }
  if (g !== undefined) { bits |= HAS_GAPS; a[R_GAPS] = g.gapNs; a[R_GAPS + 1] = g.batchWaits; a[R_GAPS + 2] = g.batchWaitNs; a[R_GAPS + 3] = g.fedWaitNs; }
  if (w !== undefined) { bits |= HAS_WAITS; a[R_WAITS] = w.none; a[R_WAITS + 1] = w.spun; a[R_WAITS + 2] = w.slept; a[R_WAITS + 3] = w.woke; }
  a[R_NOTES] = bits;
  for (let i = 0; i < k; i++) { a[RESULT_HEAD + i] = start[i]!; a[RESULT_HEAD + k + i] = fin[i]!; }
  nums.n = RESULT_HEAD + 2 * k;
  for (const o of outs) {
    nums.push(o.length);
    for (const v of o) {
      if (v === null) nums.push(A_OUT);
      else pushValue(nums, strs, objs, v);
    }
  }
  return [nums.finish(), strs.length > 0 ? strs : undefined, objs.length > 0 ? objs : undefined, notes?.error];
}

/**
 * A worker's result as the system thread handles it: every field set, in one order, undefined
 * where the worker had nothing to say, so every result has one hidden class. Fields added only
 * when set made one class per combination, and the code optimised on the rehearsal's results
 * (node/rehearsal.ts, which makes its results here too) deoptimised in the span ('wrong map').
 */
export function decodeResult(r: WireResult): BatchResult {
  const [nums, strs, objs, error] = r;
  // this thread's pool handed those buffers over, and its old views of them keep their memory
  // until it collects them: counted here, else they waited for its rare full collections
  // (test/runtime/held-views.test.ts; docs/runtime.md "Raw DF buffers recycled")
  const dropped = nums[R_DROPPED]!;
  if (dropped > 0) sharedBytesChurned(dropped);
  recycling.fresh += nums[R_FRESH]!;
  const k = nums[R_RAN]!, bits = nums[R_NOTES]!;
  const outs: (DfValue | null)[][] = new Array(k);
  let p = RESULT_HEAD + 2 * k;
  for (let i = 0; i < k; i++) {
    const m = nums[p++]!;
    const o: (DfValue | null)[] = new Array(m);
    for (let j = 0; j < m; j++) {
      const tag = nums[p++]!;
      o[j] = (tag & 15) === A_OUT ? null : readValue(tag, nums[p++]!, strs, objs);
    }
    outs[i] = o;
  }
  return {
    lane: nums[R_LANE]!, batch: nums[R_BATCH]!, outs,
    start: nums.subarray(RESULT_HEAD, RESULT_HEAD + k), fin: nums.subarray(RESULT_HEAD + k, RESULT_HEAD + 2 * k),
    error,
    fedWaits: (bits & HAS_WAITS) !== 0 ? { none: nums[R_WAITS]!, spun: nums[R_WAITS + 1]!, slept: nums[R_WAITS + 2]!, woke: nums[R_WAITS + 3]! } : undefined,
    idleSleeps: (bits & HAS_SLEEPS) !== 0 ? nums[R_SLEEPS]! : undefined,
    gaps: (bits & HAS_GAPS) !== 0 ? { gapNs: nums[R_GAPS]!, batchWaits: nums[R_GAPS + 1]!, batchWaitNs: nums[R_GAPS + 2]!, fedWaitNs: nums[R_GAPS + 3]! } : undefined,
  };
}
