// The calling convention of ucodes, shared by worker threads and the system thread's inline
// executor: DF handles for value and name parameters, the layer's view of each block held,
// plain numbers and strings for the rest, the outputs collected after the call; the thread's
// ucode context marks the CF that runs. A ucode is synchronous (docs/language.md): a returned
// Promise is an error, so is asynchronous work it leaves behind (see the worker).
import type { ParamType } from '../../core/imports.js';
import { displayDf } from '../../core/dfkey.js';
import { DF } from '../../ucode/df.js';
import { T_INT, T_RAW, type DfValue } from '../../ucode/value.js';
import { sharedBytesChurned } from './shm.js';
import { bindNative, nativeHas, NativeFault, type NativeUcode, type NativeUcodes } from '../../ucode/cpp/native.js';
import { ContractError } from './contract.js';
import { detachedContext, type ThreadContext } from './context.js';
import { holdBlock } from './blocks.js';
import { BUILTIN_UCODES } from '../../ucode/builtins.js';

export type Ucode = (...args: unknown[]) => unknown;

/** A ucode that takes the DF values themselves (C++ ucodes, see NativeUcode.direct): no DF handles. */
type DirectUcode = Ucode & { direct?: NonNullable<NativeUcode['direct']> };

export interface UcodeDef {
  symbol: string;
  params: readonly ParamType[];
  /** the import may wait for its node (see core/imports.ts) */
  waits: boolean;
}


/**
 * The functions of the ucode module for each import (a stand-in that throws when one is
 * missing); imports implemented by the compiled C++ library (`native`) call into it.
 */
export function bindUcodes(mod: Record<string, unknown> | undefined, imports: readonly (UcodeDef & { alias: string })[], native?: NativeUcodes): Ucode[] {
  return imports.map((imp) => {
    if (nativeHas(native, imp.alias)) {
      const f = bindNative(native!, imp);
      // a crash, an overrun or exit() in C++ code is reported as the addon words it
      const cpp: Ucode = function cpp(...args: unknown[]): unknown {
        try { return f(...args); } catch (e) { throw e instanceof NativeFault ? new ContractError(e.message) : e; }
      };
      // the direct form as it is: callDirect words its faults (one layer less per tiny fragment)
      if (f.direct !== undefined) (cpp as DirectUcode).direct = f.direct;
      return cpp;
    }
    const f = BUILTIN_UCODES.get(imp.symbol) ?? mod?.[imp.symbol];
    if (typeof f === 'function') return f as Ucode;
    return () => { throw new ContractError(`the ucode module exports no function ${imp.symbol}`); };
  });
}

/** Display names of DFs named by their keys (the system thread's tasks carry keys). */
export const nameOfKey = (k: string | number): string => displayDf(String(k));

/** Argument arrays reused by arity: the ucode receives its arguments spread, never the array. */
const scratch: unknown[][] = [];
/** The output handles of the call in progress (emptied once it returns: they may hold large buffers). */
const outScratch: (DF | undefined)[] = [];
/** The context of callers that give none (executors with no node behind them). */
let detached: ThreadContext | undefined;

/**
 * Call ucode `fn` with `args` (aligned with its params: DfValue for value and block, null for
 * name, number or string otherwise) as CF `cf` on the thread of context `ctx`. `keys[i]`
 * identifies the DF of parameter i to `nameOf`. Returns the values of the name parameters in
 * order (null where the ucode set nothing).
 */
export function callUcode(fn: Ucode, def: UcodeDef, args: readonly unknown[], keys: ArrayLike<string | number>, nameOf: (k: string | number) => string, ctx: ThreadContext = (detached ??= detachedContext()), cf = -1): (DfValue | null)[] {
  const direct = (fn as DirectUcode).direct;
  if (direct !== undefined) return callDirect(direct, def, outputCount(def), args, keys, nameOf, ctx, cf);
  const params = def.params;
  const n = params.length;
  const call = (scratch[n] ??= new Array<unknown>(n));
  const outs = outScratch;
  let nOut = 0;
  ctx.enter(cf, def);
  let r: unknown;
  try {
    for (let i = 0; i < n; i++) {
      const p = params[i]!;
      switch (p) {
        case 'value': call[i] = new DF(keys[i]!, args[i] as DfValue, false, nameOf); break;
        case 'name': { const d = new DF(keys[i]!, undefined, true, nameOf); outs[nOut++] = d; call[i] = d; break; }
        case 'block': { const k = keys[i]!; call[i] = holdBlock(args[i] as DfValue, () => nameOf(k), ctx, ctx.held); break; }
        case 'int': call[i] = (args[i] as number) | 0; break; // small integers keep integer code integer
        case 'real': case 'string': call[i] = args[i]; break;
      }
    }
    r = fn.apply(undefined, call);
  } catch (e) {
    try { ctx.leave(); } catch { /* the ucode's own error is the one to report */ }
    outs.fill(undefined, 0, nOut);
    throw e;
  }
  try { ctx.leave(); } catch (e) { outs.fill(undefined, 0, nOut); throw e; }
  if (r instanceof Promise || (r !== null && typeof r === 'object' && typeof (r as { then?: unknown }).then === 'function')) {
    // do not leave a rejected promise behind unhandled
    Promise.resolve(r).catch(() => {});
    throw new ContractError(`ucode ${def.symbol} returned a Promise: ucodes are synchronous (an async function cannot be a ucode)`);
  }
  if (nOut === 0) return NO_OUTPUTS;
  // sized at once: a pushed-to empty array reserves 16 slots, per call
  const vals = new Array<DfValue | null>(nOut);
  for (let i = 0; i < nOut; i++) {
    const v = outs[i]!.value ?? null;
    outs[i] = undefined;
    if (v !== null && v.t === T_RAW) sharedBytesChurned(v.v.byteLength);
    vals[i] = v;
  }
  return vals;
}

const NO_OUTPUTS: (DfValue | null)[] = [];

/** The `direct` form of ucode `fn` (values in, outputs in one array), if it has one (C++ ucodes). */
export function directOf(fn: Ucode): DirectCall | undefined {
  return (fn as DirectUcode).direct;
}

export type DirectCall = NonNullable<NativeUcode['direct']>;

/** How many outputs (name parameters) import `def` has. */
export function outputCount(def: UcodeDef): number {
  const params = def.params;
  let n = 0;
  for (let i = 0; i < params.length; i++) if (params[i] === 'name') n++;
  return n;
}

/**
 * callUcode for a ucode that takes the values themselves (`directOf`), with `nOut` its
 * outputCount: the outputs come back in one array.
 */
export function callDirect(direct: DirectCall, def: UcodeDef, nOut: number, args: readonly unknown[], keys: ArrayLike<string | number>, nameOf: (k: string | number) => string, ctx: ThreadContext, cf: number): (DfValue | null)[] {
  // sized at once: a pushed-to empty array reserves 16 slots, per call
  const vals = nOut === 0 ? NO_OUTPUTS : new Array<DfValue | null>(nOut);
  ctx.enter(cf, def);
  try {
    direct(args, keys, nameOf, vals);
  } catch (e) {
    try { ctx.leave(); } catch { /* the ucode's own error is the one to report */ }
    // a crash, an overrun or exit() in C++ code is reported as the addon words it
    throw e instanceof NativeFault ? new ContractError(e.message) : e;
  }
  ctx.leave();
  for (let i = 0; i < nOut; i++) { const v = vals[i]!; if (v !== null && v.t === T_RAW) sharedBytesChurned(v.v.byteLength); }
  return vals;
}

/** An int DF value as a small integer (values read from a Float64Array are doubles). */
export function intValue(v: number): DfValue {
  return { t: T_INT, v: v | 0 };
}
