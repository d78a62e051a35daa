// Clocks of a traced run.
//
// Wall clock: CLOCK_MONOTONIC (what process.hrtime reads), shared by every thread and process
// of a host, as float64 ns since a run origin that the launcher takes once (`newRunOrigin`) and
// hands to every node process and worker (`setRunOrigin`). Across hosts, per-node offsets go in
// the manifest (TraceManifest.clock.offsets) and the reader applies them.
//
// Thread CPU clock: CLOCK_THREAD_CPUTIME_ID through the native addon (native/thread_clock.c,
// built at install). Without it we fall back to the wall clock: for a synchronous ucode a CF's
// wall time is an upper bound of its CPU time, so per-CF cpu ≤ wall still holds, but the value
// is approximate and the trace says so (`cpuClockExact === false`, manifest clock.cpuExact).

import { createRequire } from 'node:module';
import { addonPath } from '../core/addon.js';
import type { TraceSink } from './schema.js';

interface ClockAddon { threadCpuNs(): number; monoNs(): number; pinThread?(cpus: number[]): number }

let addon: ClockAddon | undefined;
let loadError = 'addon not built (build/Release/thread_clock.node missing; run `npm run install`)';
if (process.env.LUNA_TRACE_NO_ADDON !== '1') {
  const path = addonPath('thread_clock');
  if (path) {
    try {
      addon = createRequire(import.meta.url)(path) as ClockAddon;
      if (!(addon.threadCpuNs() >= 0)) throw new Error('clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed');
    } catch (e) {
      addon = undefined;
      loadError = `addon failed to load: ${(e as Error).message}`;
    }
  }
} else {
  loadError = 'disabled by LUNA_TRACE_NO_ADDON=1';
}

/** True when threadCpuNs() reads the calling thread's exact CPU clock. */
export const cpuClockExact: boolean = addon !== undefined;

let originBig = process.hrtime.bigint();
let originNum = Number(originBig);

/** A new run origin (take it once per run, in the launcher, and pass it everywhere). */
export function newRunOrigin(): bigint {
  return process.hrtime.bigint();
}

/** Set this thread's run origin (bigint from newRunOrigin, or its decimal string). */
export function setRunOrigin(origin: bigint | string): void {
  originBig = typeof origin === 'bigint' ? origin : BigInt(origin);
  originNum = Number(originBig);
}

export function runOrigin(): bigint {
  return originBig;
}

/** Wall ns since the run origin on the host-wide monotonic clock. */
export const wallNs: () => number = addon
  ? ((a: ClockAddon) => () => a.monoNs() - originNum)(addon) // no BigInt allocation per call
  : () => Number(process.hrtime.bigint() - originBig);

/** This thread's CPU time in ns (exact with the addon; the wall clock otherwise). */
export const threadCpuNs: () => number = addon ? addon.threadCpuNs : wallNs;

/**
 * Pin the calling thread to `cpus` (sched_setaffinity, in the same addon: Node has no call for
 * it); 0 or the errno. Absent without the addon (or an addon built before it had the call).
 */
export const pinThread: ((cpus: number[]) => number) | undefined = addon?.pinThread;

/** a code's executions on a thread read the CPU clock exactly until this many were measured */
export const CPU_CLOCK_LEARN_CALLS = 8;
/** codes whose mean wall time on the thread is shorter than this record wall time as CPU time */
export const CPU_CLOCK_MIN_NS = 50_000;

/**
 * How a tracing thread records its CFs' start and finish, and which it reads its CPU clock for
 * (both executors, worker and system thread, use it). The read is a system call (~1 µs here, more
 * under load), as long as a tiny CF: reading it at both ends would more than double the cost the
 * trace sets out to measure (50 000 empty CFs of a chain, traced, run by the system thread:
 * 589 → 327 ms without it).
 * A code's first CPU_CLOCK_LEARN_CALLS executions on the thread are read exactly; after them only
 * codes whose mean wall time stays at CPU_CLOCK_MIN_NS or more are, and the others record their
 * wall readings in the CPU fields, so their CPU time is their wall time (no waiting inside them is
 * seen; they are too short for it to matter). A code that grows longer is read again.
 */
export class CpuClockGate {
  private readonly meanNs: Float64Array;
  private readonly calls: Uint8Array;

  constructor(codes: number) {
    this.meanNs = new Float64Array(codes);
    this.calls = new Uint8Array(codes);
  }

  exact(code: number): boolean {
    return this.calls[code]! < CPU_CLOCK_LEARN_CALLS || this.meanNs[code]! >= CPU_CLOCK_MIN_NS;
  }

  /** Record CF `cf` of code `code` starting at `t0` on `lane`; whether its CPU clock is read. */
  start(tr: TraceSink, t0: number, code: number, cf: number, lane: number): boolean {
    const exact = this.exact(code);
    tr.cfStart(t0, exact ? threadCpuNs() : t0, cf, lane);
    return exact;
  }

  /**
   * Record its finish (the CPU clock, when read, inside the wall interval, so CPU ≤ wall) and
   * learn its duration; returns the finish time read from `now`.
   */
  finish(tr: TraceSink, t0: number, code: number, cf: number, lane: number, exact: boolean, now: () => number): number {
    const c1 = exact ? threadCpuNs() : 0;
    return this.record(tr, t0, code, cf, lane, exact, c1, now());
  }

  /**
   * `finish` with its clocks read by the caller (the CPU clock `c1`, when exact, before the wall
   * clock `t1`): a worker reads them as the ucode returns, hands its outputs to the lanes that
   * wait for them, and records after. Returns `t1`.
   */
  record(tr: TraceSink, t0: number, code: number, cf: number, lane: number, exact: boolean, c1: number, t1: number): number {
    tr.cfFinish(t1, exact ? c1 : t1, cf, lane);
    this.observe(code, t1 - t0);
    return t1;
  }

  /** Code `code` ran for `wallNs` on this thread. */
  observe(code: number, wallNs: number): void {
    const n = this.calls[code]!;
    // a quick mean over the first calls, then a slow one: a lone preemption moves it by an eighth
    this.meanNs[code] = n === 0 ? wallNs : n < CPU_CLOCK_LEARN_CALLS ? this.meanNs[code]! + (wallNs - this.meanNs[code]!) / (n + 1) : 0.875 * this.meanNs[code]! + 0.125 * wallNs;
    if (n < CPU_CLOCK_LEARN_CALLS) this.calls[code] = n + 1;
  }
}

let warned = false;
/**
 * The one warning a run prints when the exact CPU clock is missing: returns it the first time it
 * is called in this thread (undefined afterwards or when the clock is exact). Call it from the
 * launcher only, so that a run says it once.
 */
export function cpuClockWarningOnce(): string | undefined {
  if (cpuClockExact || warned) return undefined;
  warned = true;
  return `luna: warning: exact thread CPU clock unavailable (${loadError}); CF CPU times are approximated by wall time and analyses will be marked approximate`;
}
