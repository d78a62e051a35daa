// C++ ucodes seen from JavaScript: each import implemented in the compiled C++ library becomes
// a function with the TypeScript ucode calling convention (DF handles, numbers, strings), so
// the runtime calls it exactly like a TypeScript ucode (same tracing, same error path).
//
// The marshalling is done here, in JIT-compiled code, rather than in the addon: reading
// `handle.value.t` costs a nanosecond here and ~100 ns through N-API. Scalars go through a
// per-thread scratch ArrayBuffer that the addon reads and writes in place; only strings and raw
// buffers cross N-API as arguments. Raw outputs are SharedArrayBuffers allocated here when the
// C++ code calls create(), so the runtime owns them from the start (Node 20's N-API cannot
// create a SharedArrayBuffer itself); copy() of an input hands back the input's own value.
import { createRequire } from 'node:module';
import { addonPath } from '../../core/addon.js';
import type { ParamType } from '../../core/imports.js';
import type { DF } from '../df.js';
import { T_INT, T_JS, T_RAW, T_REAL, T_STRING, type DfValue } from '../value.js';
import { setHardExit } from '../../core/exit.js';
import { context } from '../context.js';
import { RECYCLE_MIN, recycledGuard, takeRaw } from '../recycle.js';

/**
 * The host calls of ABI version 2 (native/luna_ucode_abi.h): the running CF's context as
 * [cf, node, lane, waits, label, gid], or a request to the node with a JSON payload, answered
 * as JSON. Errors (a refusal, an import that may not wait, the run aborted) reach the C++ side
 * as the call's failure with their message.
 */
function askContext(op: string, kind: string, payload: string): unknown {
  // a natively stepped loop's step: the context learns which step asks first
  if (thread !== undefined && thread.step !== null) thread.step();
  const c = context();
  if (op === 'context') return [c.cf, c.node, c.lane, c.waits ? 1 : 0, c.label, c.gid];
  let body: unknown;
  if (payload !== '') {
    try { body = JSON.parse(payload); } catch { throw new Error(`request '${kind}': the payload is not JSON: ${payload.slice(0, 80)}`); }
  }
  return JSON.stringify(c.request(kind, body) ?? null);
}

/** The C++ side of a program's ucodes, as handed to every thread (structured-cloneable). */
export interface NativeUcodes {
  /** the compiled shared library */
  lib: string;
  /** aliases of the imports the library implements (entry point luna_call_<alias>) */
  aliases: string[];
}

interface Addon {
  init(alloc: (bytes: number) => Uint8Array, nameOf: (param: number) => string, strings: unknown[], ask: (op: string, kind: string, payload: string) => unknown): ArrayBuffer;
  entry(lib: string, alias: string, kinds: string, ucode: string): number;
  call(entry: number, ...objects: unknown[]): void;
  exitNow(code: number): never;
  /** steps a planned loop of C++ ucodes (native/luna_ucode.cc StepOn; src/runtime/node/loop-native.ts) */
  stepOn(buffer: ArrayBuffer, from: number, t: number, last: number, budgetNs: number, onTimed: () => boolean): void;
  maxParams: number;
}

/**
 * What C++ code did to the runtime rather than an error it reported: a crash, an out-of-bounds
 * write, exit(). The message names the ucode and what happened; it is reported as it is.
 */
export class NativeFault extends Error {}

/** The addon marks the errors of NativeFault with this prefix. */
const FAULT_PREFIX = 'luna-fault:';

/** `LUNA_CPP_GUARDS=0` turns the guards off (to measure what they cost). */
const GUARDS = process.env.LUNA_CPP_GUARDS !== '0';

/**
 * Bytes of guard after a raw buffer created by C++ code: an overrun into them is found when
 * the ucode returns (native/luna_ucode.cc). 64 bytes after small buffers; 4 KiB after those of
 * 64 KiB or more, whose overruns run longer (a loop past the end of a row or a block).
 */
export function guardBytes(n: number): number {
  return !GUARDS ? 0 : n < 65536 ? 64 : 4096;
}

/** The guard after a raw DF's bytes when they were created with one (0: none). */
function guardOf(u: Uint8Array): number {
  const g = guardBytes(u.byteLength);
  if (u.byteOffset !== 0 || g === 0) return 0;
  // a buffer that can be recycled says which guard its value has (none: a TypeScript output, a
  // value received from another node), asked first: its class and trailer may add up to exactly
  // the bytes and a guard (6 112 bytes in a buffer of 6 144 + 32), with no guard written there
  if (u.byteLength >= RECYCLE_MIN) {
    const r = recycledGuard(u);
    if (r >= 0) return r === g ? g : 0;
  }
  return u.buffer.byteLength === u.byteLength + g ? g : 0;
}

/** The addon could not be loaded: C++ ucodes cannot run in this installation. */
export class NativeUnavailableError extends Error {}

let addon: Addon | undefined;

export function loadAddon(): Addon {
  if (addon) return addon;
  const path = addonPath('luna_ucode');
  if (!path) {
    throw new NativeUnavailableError('C++ ucodes need the luna_ucode addon, which was not built when luna-ts was installed (no C++ compiler then?): install g++ and run `npm rebuild luna-ts` (in a checkout: `npm run install`)');
  }
  try {
    addon = createRequire(import.meta.url)(path) as Addon;
  } catch (e) {
    throw new NativeUnavailableError(`cannot load the luna_ucode addon ${path}: ${(e as Error).message} (rebuild it: npm rebuild luna-ts)`);
  }
  // a worker thread stuck in C++ code would keep process.exit waiting for it
  const a = addon;
  setHardExit((code) => a.exitNow(code));
  return addon;
}

const KIND: Record<ParamType, string> = { int: 'i', real: 'r', string: 's', value: 'v', name: 'n', block: 'b' };

/** The parameter kinds of an import as one letter each (i r s v n b), as the glue spells them. */
export function kindsOf(params: readonly ParamType[]): string {
  return params.map((p) => KIND[p]).join('');
}

/** Per thread: the scratch views and the call in progress (for the addon's callbacks). */
interface ThreadState {
  I: Int32Array;
  D: Float64Array;
  /** arguments of the call in progress (DF handles for value/name parameters, or DF values in a direct call) */
  args: readonly unknown[];
  /** a direct call (NativeUcode.direct): the DFs' keys and their display names */
  keys: ArrayLike<string | number> | null;
  nameOfKey: (key: string | number) => string;
  /** raw buffers the C++ code created during the call in progress */
  allocated: Uint8Array[];
  /** string outputs by parameter */
  strings: unknown[];
  /** while a planned loop is stepped natively (stepOn): makes the step running now the context's and the names' (its callbacks call it first) */
  step: (() => void) | null;
}

let thread: ThreadState | undefined;

function threadState(a: Addon): ThreadState {
  if (thread) return thread;
  const st: ThreadState = { I: new Int32Array(0), D: new Float64Array(0), args: [], keys: null, nameOfKey: String, allocated: [], strings: [], step: null };
  // the addon gets the buffer with its guard, the DF the buffer alone; not zero-filled when it
  // is a freed DF's memory (C++ create() promises no zeros, as in the original LuNA)
  const alloc = (bytes: number): Uint8Array => {
    const whole = takeRaw(bytes, guardBytes(bytes), false);
    st.allocated.push(whole.subarray(0, bytes));
    return whole;
  };
  const nameOf = (param: number): string => (st.step !== null ? (st.step(), st.nameOfKey(param)) : st.keys !== null ? st.nameOfKey(st.keys[param]!) : (st.args[param] as DF).getName());
  const scratch = a.init(alloc, nameOf, st.strings, askContext);
  st.I = new Int32Array(scratch, 0, a.maxParams * 4);
  st.D = new Float64Array(scratch, a.maxParams * 16, a.maxParams);
  thread = st;
  return st;
}

const V = 'v'.charCodeAt(0), N = 'n'.charCodeAt(0), I_ = 'i'.charCodeAt(0), R = 'r'.charCodeAt(0), S = 's'.charCodeAt(0), B = 'b'.charCodeAt(0);

/** The block a `block` parameter holds, as C++ ucodes take it (a dynamic array's, src/ucode/dda.ts). */
interface NativeBlock {
  readonly buffer: SharedArrayBuffer;
  readonly order: string;
  resized: boolean;
  /** which of its node's blocks, of how many (arrays of several blocks a node) */
  index?: number;
  blocks?: number;
  getNumel(): number;
  getElsize(): number;
  getMaxSize(): number;
  adopt(buffer: SharedArrayBuffer, numel: number, size: number): void;
  setDestinations(d: Int32Array, targets?: readonly unknown[]): void;
}
const isNativeBlock = (x: unknown): x is NativeBlock => typeof (x as NativeBlock | undefined)?.adopt === 'function' && typeof (x as NativeBlock).getElsize === 'function';
/** luna_ucode_abi.h: a block slot's order, and the tag of a block's committed state */
const BLOCK_UNORDERED = 1, BLOCK_ORDERED = 2, T_BLOCK = 6;
/** ucenv.h DdaBlock::LIST: the destinations' targets are the list one parameter holds */
const TARGET_LIST = -1;

/**
 * A C++ ucode with the TypeScript calling convention (DF handles), and `direct`: the same call
 * with the DF values themselves, as the runtime holds them (value parameters: the DfValue; name
 * parameters: anything), the outputs written to `outs` in order (null where the ucode set
 * nothing) — no DF handle per parameter, no argument array per call. `direct` is absent when
 * the import takes a block (a dynamic array's block is a handle of its own).
 */
export interface NativeUcode {
  (...args: unknown[]): void;
  direct?: DirectForm;
}

/**
 * The direct form (NativeUcode.direct), with what a natively stepped loop needs of it: its
 * entry number in this thread's addon, and `takeOuts`, the direct form's second half — the
 * outputs of the call that just returned, from the scratch, into `outs` (a step whose output
 * is neither int nor real hands back to JavaScript with them there).
 */
export interface DirectForm {
  (args: readonly unknown[], keys: ArrayLike<string | number>, nameOfKey: (key: string | number) => string, outs: (DfValue | null)[]): void;
  entry: number;
  kinds: string;
  takeOuts(args: readonly unknown[], outs: (DfValue | null)[]): void;
}

/** The function that runs import `imp` in the C++ library (throws NativeUnavailableError). */
export function bindNative(native: NativeUcodes, imp: { symbol: string; alias: string; params: readonly ParamType[] }): NativeUcode {
  const a = loadAddon();
  const st = threadState(a);
  const kinds = kindsOf(imp.params);
  const entry = a.entry(native.lib, imp.alias, kinds, imp.symbol);
  const n = kinds.length;
  const codes = Array.from(kinds, (c) => c.charCodeAt(0));
  const outputs = codes.flatMap((c, i) => (c === N ? [i] : []));
  const blocks = codes.flatMap((c, i) => (c === B ? [i] : []));
  const objects: unknown[] = new Array(n + 1).fill(undefined);
  objects[0] = entry;
  const call = a.call;
  const { I, D } = st;
  /**
   * One call: `args` are DF handles (`outs` null: the outputs are set on them) or, direct, the
   * values, with their keys and how to name them (for the ucode's messages). The direct form
   * itself, no layer around it: the inline path calls it for every tiny fragment.
   */
  const run = (args: readonly unknown[], keys: ArrayLike<string | number> | null, nameOfKey: (key: string | number) => string, outs: (DfValue | null)[] | null): void => {
    for (let i = 0; i < n; i++) {
      const k = codes[i]!;
      const x = args[i];
      let o: unknown;
      if (k === V) {
        const dv = outs === null ? (x as DF).value : (x as DfValue | undefined);
        const t = dv === undefined || dv === null ? 0 : dv.t;
        I[4 * i] = t;
        if (t === T_INT) I[4 * i + 1] = dv!.v as number;
        else if (t === T_REAL) D[i] = dv!.v as number;
        else if (t === T_STRING) o = dv!.v;
        else if (t === T_RAW) { o = dv!.v; I[4 * i + 3] = guardOf(o as Uint8Array); }
      } else if (k === B) {
        if (!isNativeBlock(x)) throw new NativeFault(`parameter ${i + 1} of C++ ucode ${imp.symbol} holds a block C++ ucodes cannot take (only a dynamic array's)`);
        // the order, and (luna_ucode_abi.h) the block's index in bits 8-19 and its node's blocks - 1 in bits 20-30: 0 for one block a node
        I[4 * i] = (x.order === 'ordered' ? BLOCK_ORDERED : BLOCK_UNORDERED) | ((x.index ?? 0) << 8) | (((x.blocks ?? 1) - 1) << 20);
        I[4 * i + 1] = x.getNumel();
        I[4 * i + 2] = x.getElsize();
        D[i] = x.getMaxSize();
        o = new Uint8Array(x.buffer);
      } else if (k === I_) I[4 * i + 1] = x as number;
      else if (k === R) D[i] = x as number;
      else if (k === S) o = x;
      objects[i + 1] = o;
    }
    st.args = args;
    st.keys = keys;
    st.nameOfKey = nameOfKey;
    // an array's length set is a call into the runtime (9 % of an empty C++ call): only when needed
    if (st.allocated.length !== 0) st.allocated.length = 0;
    try {
      call.apply(undefined, objects as [number, ...unknown[]]);
    } catch (e) {
      const m = (e as Error).message;
      if (typeof m === 'string' && m.startsWith(FAULT_PREFIX)) throw new NativeFault(m.slice(FAULT_PREFIX.length));
      throw e;
    } finally {
      for (let i = 1; i <= n; i++) objects[i] = undefined; // do not keep inputs alive
      st.keys = null;
      st.args = NO_ARGS;
    }
    // the blocks as the ucode left them (defragmented by the glue); new memory if it outgrew its own
    // (indexed: unoptimised code pays an iterator per for-of, and most ucodes take no block)
    for (let j = 0; j < blocks.length; j++) {
      const i = blocks[j]!;
      if (I[4 * i] !== T_BLOCK) continue;
      const b = args[i] as NativeBlock;
      const ref = I[4 * i + 2]!;
      const grown = ref >= n ? st.allocated[ref - n]! : undefined;
      if (grown) b.resized = true;
      // the destinations the ucode set (ucenv.h dests_for): an entry per element then, the
      // parameters naming the target arrays, their count; or the parameter holding their list, -1
      const dref = I[4 * i + 3]!;
      const dests = dref >= n ? st.allocated[dref - n] : undefined;
      b.adopt(grown ? (grown.buffer as SharedArrayBuffer) : b.buffer, I[4 * i + 1]!, D[i]!);
      if (dests) {
        const all = new Int32Array(dests.buffer, dests.byteOffset, dests.byteLength >> 2);
        const k = all[all.length - 1]!;
        if (k === TARGET_LIST) {
          const list = (args[all[all.length - 2]!] as DF).getValue();
          if (!Array.isArray(list)) throw new NativeFault(`parameter ${all[all.length - 2]! + 1} of C++ ucode ${imp.symbol}, given to destinations() as the target list, holds no list of arrays`);
          b.setDestinations(all.subarray(0, all.length - 2), list);
        } else {
          const m = all.length - 1 - k;
          b.setDestinations(all.subarray(0, m), k === 0 ? undefined : Array.from(all.subarray(m, m + k), (p) => args[p]));
        }
      }
    }
    for (let j = 0; j < outputs.length; j++) {
      const i = outputs[j]!;
      const t = I[4 * i]!;
      let v: DfValue | null = null;
      if (t === T_INT) v = { t: T_INT, v: I[4 * i + 1]! };
      else if (t === T_REAL) v = { t: T_REAL, v: D[i]! };
      else if (t === T_STRING) { v = { t: T_STRING, v: st.strings[i] as string }; st.strings[i] = undefined; }
      else if (t !== 0) {
        const ref = I[4 * i + 2]!;
        // copy() of an input: the very same value
        if (ref < n) v = outs === null ? (args[ref] as DF).value! : (args[ref] as DfValue);
        else v = { t: T_RAW, v: st.allocated[ref - n]! };
        if (t === T_JS && v.t !== T_JS) v = null;
      }
      if (outs !== null) outs[j] = v;
      else if (v !== null) (args[i] as DF).value = v;
    }
    if (st.allocated.length !== 0) st.allocated.length = 0;
  };
  const cppUcode: NativeUcode = (...args: unknown[]): void => run(args, null, String, null);
  if (blocks.length === 0) cppUcode.direct = directOnFirstCall(kinds, st, call, entry);
  return cppUcode;
}

/** A fault the addon raised (its message prefixed) as a NativeFault; any other error as it is. */
function faultOf(e: unknown): unknown {
  const m = (e as Error | undefined)?.message;
  return typeof m === 'string' && m.startsWith(FAULT_PREFIX) ? new NativeFault(m.slice(FAULT_PREFIX.length)) : e;
}

let formsWritten = 0;

/** Direct forms written out on this thread so far (one per import called, however often). */
export function directFormsWritten(): number {
  return formsWritten;
}

/**
 * The direct form, written out (directCall) at its first call, not when the library is bound. A
 * program imports many more C++ ucodes than one run calls, and every thread that binds them
 * (each worker and the system thread) compiled two generated functions for each, long ones for
 * ucodes of many parameters: the PIC's 32 imports took 27–38 ms a worker at the start of a run,
 * while both cores were busy, and its lanes' first CFs waited for it (a worker's message that
 * it is up came 63–84 ms after it got its work, 21–26 ms without the direct forms). Until then
 * a call goes through this one; after, through the written-out form by one more call.
 */
function directOnFirstCall(kinds: string, st: ThreadState, call: Addon['call'], entry: number): DirectForm {
  let made: DirectForm | undefined;
  const written = (): DirectForm => {
    if (made === undefined) { made = directCall(kinds, st, call, entry); formsWritten++; }
    return made;
  };
  const form = function cppDirect(a: readonly unknown[], keys: ArrayLike<string | number>, nameOfKey: (key: string | number) => string, outs: (DfValue | null)[]): void {
    (made ?? written())(a, keys, nameOfKey, outs);
  } as DirectForm;
  form.takeOuts = (a, outs) => (made ?? written()).takeOuts(a, outs);
  form.entry = entry;
  form.kinds = kinds;
  return form;
}

/**
 * The direct form of an import of parameter kinds `kinds` (no block): `run`'s work for the
 * direct case written out for these kinds, one statement per parameter, the call with its
 * arguments as locals. It is the function every tiny fragment of the inline path calls: the
 * general `run` (a loop over the parameters, a branch per kind, handles or values, blocks, the
 * argument array and `apply`) was the largest function TurboFan compiled in a short run
 * (~28 M instructions of ~320 M on the empty-kernel stencil) and ran as baseline code until
 * then. Generated from the kind letters alone (`i r s v n`), never from program text.
 */
function directCall(kinds: string, st: ThreadState, call: Addon['call'], entry: number): DirectForm {
  const n = kinds.length;
  const compact = n > COMPACT_FROM;
  const body: string[] = ['"use strict";', 'const I = st.I, D = st.D;', 'return function cppDirect(a, keys, nameOfKey, outs) {'];
  const callArgs: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = kinds[i]!;
    if (k === 'i') { body.push(`I[${4 * i + 1}] = a[${i}];`); callArgs.push('undefined'); }
    else if (k === 'r') { body.push(`D[${i}] = a[${i}];`); callArgs.push('undefined'); }
    else if (k === 's') { body.push(`const o${i} = a[${i}];`); callArgs.push(`o${i}`); }
    else if (k === 'n') callArgs.push('undefined');
    else if (k === 'v' && compact) {
      body.push(`const o${i} = valueArg(I, D, ${i}, a[${i}]);`);
      callArgs.push(`o${i}`);
    } else if (k === 'v') {
      body.push(
        `const x${i} = a[${i}], t${i} = x${i} === undefined || x${i} === null ? 0 : x${i}.t;`,
        `let o${i};`,
        `I[${4 * i}] = t${i};`,
        `if (t${i} === ${T_INT}) I[${4 * i + 1}] = x${i}.v;`,
        `else if (t${i} === ${T_REAL}) D[${i}] = x${i}.v;`,
        `else if (t${i} === ${T_STRING}) o${i} = x${i}.v;`,
        `else if (t${i} === ${T_RAW}) { o${i} = x${i}.v; I[${4 * i + 3}] = guardOf(o${i}); }`,
      );
      callArgs.push(`o${i}`);
    } else throw new Error(`internal: no direct form for a parameter of kind '${k}'`);
  }
  body.push(
    'st.args = a;', 'st.keys = keys;', 'st.nameOfKey = nameOfKey;',
    'if (st.allocated.length !== 0) st.allocated.length = 0;',
    `try { call(entry${callArgs.map((x) => `, ${x}`).join('')}); } catch (e) { throw faultOf(e); } finally { st.keys = null; st.args = NO_ARGS; }`,
  );
  const outsPart: string[] = [];
  let j = 0;
  for (let i = 0; i < n; i++) {
    if (kinds[i] !== 'n') continue;
    if (compact) { outsPart.push(`outs[${j++}] = outValue(st, I, D, ${i}, ${n}, a);`); continue; }
    outsPart.push(
      `{ const t = I[${4 * i}]; let v = null;`,
      `if (t === ${T_INT}) v = { t: ${T_INT}, v: I[${4 * i + 1}] };`,
      `else if (t === ${T_REAL}) v = { t: ${T_REAL}, v: D[${i}] };`,
      `else if (t === ${T_STRING}) { v = { t: ${T_STRING}, v: st.strings[${i}] }; st.strings[${i}] = undefined; }`,
      // copy() of an input: the very same value
      `else if (t !== 0) { const ref = I[${4 * i + 2}]; v = ref < ${n} ? a[ref] : { t: ${T_RAW}, v: st.allocated[ref - ${n}] }; if (t === ${T_JS} && v.t !== ${T_JS}) v = null; }`,
      `outs[${j++}] = v; }`,
    );
  }
  outsPart.push('if (st.allocated.length !== 0) st.allocated.length = 0;');
  body.push(...outsPart, '};');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from kind letters only (above)
  const make = new Function('st', 'call', 'entry', 'guardOf', 'faultOf', 'NO_ARGS', 'valueArg', 'outValue', body.join('\n')) as (...x: unknown[]) => DirectForm;
  const direct = make(st, call, entry, guardOf, faultOf, NO_ARGS, valueArg, outValue);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the same text's second half
  direct.takeOuts = new Function('st', 'outValue', `"use strict"; const I = st.I, D = st.D; return function takeOuts(a, outs) {\n${outsPart.join('\n')}\n};`)(st, outValue) as DirectForm['takeOuts'];
  direct.entry = entry;
  direct.kinds = kinds;
  return direct;
}

const NO_ARGS: unknown[] = [];

/**
 * Above this many parameters the direct form calls valueArg and outValue for each value and
 * output instead of spelling their branches out: the generated text, and what each thread pays
 * to compile it at the import's first call, grows with the parameters. The PIC's ucodes of 70–99
 * parameters spelled out took the two lanes ~17–20 ms of CPU to compile at the start of a run
 * (`perf` at the seed's parameters, 1 × 2: the lanes' samples in the parse and compile of the
 * generated functions), for CFs of milliseconds; the small ucodes of fine-grained programs, where
 * a call costs microseconds, keep the spelled-out form.
 */
const COMPACT_FROM = 16;

/** Value parameter `i` of a compact direct form: its scratch slots set, the object the addon takes returned. */
function valueArg(I: Int32Array, D: Float64Array, i: number, x: DfValue | null | undefined): unknown {
  const t = x === undefined || x === null ? 0 : x.t;
  I[4 * i] = t;
  if (t === T_INT) I[4 * i + 1] = x!.v as number;
  else if (t === T_REAL) D[i] = x!.v as number;
  else if (t === T_STRING) return x!.v;
  else if (t === T_RAW) { I[4 * i + 3] = guardOf(x!.v as Uint8Array); return x!.v; }
  return undefined;
}

/** Output `i` of a compact direct form after the call, as the spelled-out branches take it: its value, or null when unset. */
function outValue(st: ThreadState, I: Int32Array, D: Float64Array, i: number, n: number, a: readonly unknown[]): DfValue | null {
  const t = I[4 * i]!;
  if (t === T_INT) return { t: T_INT, v: I[4 * i + 1]! };
  if (t === T_REAL) return { t: T_REAL, v: D[i]! };
  if (t === T_STRING) { const v = { t: T_STRING, v: st.strings[i] as string } as DfValue; st.strings[i] = undefined; return v; }
  if (t === 0) return null;
  // copy() of an input: the very same value
  const ref = I[4 * i + 2]!;
  const v = (ref < n ? a[ref] : { t: T_RAW, v: st.allocated[ref - n]! }) as DfValue;
  return t === T_JS && v.t !== T_JS ? null : v;
}

/** Whether `alias` is implemented by the native library. */
export function nativeHas(native: NativeUcodes | undefined, alias: string): boolean {
  return native !== undefined && native.aliases.includes(alias);
}

/** Parameter numbers, as the keys of a natively stepped step (its names are asked by parameter). */
const PARAMS: number[] = Array.from({ length: 256 }, (_, i) => i);

/**
 * Step a planned loop natively on this thread (native/luna_ucode.cc StepOn, the buffer's layout
 * in src/runtime/node/loop-native.ts): `step` makes the step running now the context's before
 * the ucode's context or names are asked; `nameOf` names the DF of the running step's
 * parameter; `onTimed` takes the timed calls of an iteration, and says whether to go on. A crash, an overrun, exit() come back as a NativeFault, as from the direct form.
 */
export function stepOn(buffer: ArrayBuffer, from: number, t: number, last: number, budgetNs: number, step: () => void, nameOf: (param: string | number) => string, onTimed: () => boolean): void {
  const a = loadAddon(), st = threadState(a);
  if (st.allocated.length !== 0) st.allocated.length = 0;
  st.step = step;
  st.keys = PARAMS;
  st.nameOfKey = nameOf;
  try { a.stepOn(buffer, from, t, last, budgetNs, onTimed); } catch (e) { throw faultOf(e); } finally { st.step = null; st.keys = null; }
}
