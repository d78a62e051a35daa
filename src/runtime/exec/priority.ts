// The priority of V8's background threads while worker lanes run fragments. Node's platform pool
// (4 threads, shared by every isolate of the process: the system thread's and each worker's)
// runs the optimising compiler's jobs and the garbage collector's helpers. Over the first few
// hundred milliseconds of a run, ~120 functions of the system thread and the workers are
// optimised, several at once, and those threads take as much CPU as a lane's kernels, on the
// lane's core too (docs/runtime.md, "Tiering"). Once the lanes have run fragments for a while
// (the pool says when) they get a higher nice value: they then take the CPU the program's threads
// leave. A one-node run that begins its program with no worker started lowers them at its first
// fragment (lowerBackgroundNow): there they competed with the system thread for its own CPU.
// Linux only: a nice value belongs to one thread there (elsewhere nothing changes).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';

const TASKS = '/proc/self/task';

/** The process's threads but the main one (Linux; empty elsewhere). */
export function otherThreads(): number[] {
  if (!existsSync(TASKS)) return [];
  try {
    return readdirSync(TASKS).map(Number).filter((t) => Number.isInteger(t) && t !== process.pid);
  } catch {
    return [];
  }
}

/** Add `by` to the nice value of each of `tids` (at most 19); returns how many changed. */
export function lowerPriority(tids: readonly number[], by: number): number {
  let n = 0;
  for (const tid of tids) {
    try {
      const now = getPriority(tid);
      const to = Math.min(19, now + by);
      if (to !== now) { setPriority(tid, to); n++; }
    } catch { /* the thread ended, or is not ours to change */ }
  }
  return n;
}

/** The background threads noted at start-up, lowered by `by` once the lanes run fragments. */
let pending: { tids: number[]; by: number } | undefined;

/**
 * Note the threads Node started before luna's own (V8's platform pool and its delayed-task
 * thread; libuv's pool if the module loader started it): call before any worker thread starts,
 * whose threads must keep the process's priority. Once the lanes have run fragments for a while
 * (lowerBackgroundNow), they are lowered by `by` (0: never).
 */
export function lowerBackgroundOnLanes(by: number): void {
  pending = by > 0 ? { tids: otherThreads(), by } : undefined;
}

/**
 * Lower the noted background threads now (once): when the lanes have run fragments for a while
 * (exec/pool.ts), or at the first fragment of a program that begins on the system thread with no
 * worker started, where its own optimising jobs were what kept the thread off its CPU
 * (docs/benchmarks.md, "V8's helper threads lowered for a program run on the system thread").
 * Returns how many threads were lowered.
 */
export function lowerBackgroundNow(): number {
  const p = pending;
  if (p === undefined) return 0;
  pending = undefined;
  // only threads still ours: a thread id that ended could be another process's by now
  const live = new Set(otherThreads());
  return lowerPriority(p.tids.filter((t) => live.has(t)), p.by);
}

// The system thread's priority while every worker lane has a batch in flight (exec/pool.ts
// allRunning): its work is then ahead of the lanes — booking a fed batch's result, building the
// next — and its bursts (one per fed batch, milliseconds long) can take the CPU the lanes leave
// rather than a lane's core mid-step, where in a stencil both lanes wait for the lane that lost
// it. It gets its priority back as soon as a lane has no batch, i.e. may wait for it. Linux lets
// an unprivileged thread lower its nice value again only within RLIMIT_NICE (`ulimit -e`, 0 by
// default) or with CAP_SYS_NICE; where it may not, the thread is never lowered, since it would
// stay so and a lane waiting for its next batch would wait behind the other lane's kernel.
// Opt-in (`LUNA_SYSTEM_NICE`): measured only under load so far (docs/benchmarks.md, "Where a
// lane's time goes at METG sizes").

/** The system thread (the process's main thread: its thread id is the pid) and its nice values. */
let ahead: { tid: number; base: number; low: number; lowered: boolean } | undefined;

/** Whether this process may lower a nice value from `to` back to `base` (Linux). */
function mayRaise(base: number): boolean {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const eff = /^CapEff:\s*([0-9a-f]+)/m.exec(status)?.[1];
    if (eff !== undefined && (BigInt('0x' + eff) & (1n << 23n)) !== 0n) return true; // CAP_SYS_NICE
    const lim = /^Max nice priority\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return lim !== undefined && Number(lim) >= 20 - base; // RLIMIT_NICE: nice down to 20 − limit
  } catch {
    return false;
  }
}

/**
 * Lower the system thread by `by` while every worker lane has a batch in flight (0: never). Call on the main thread
 * before any worker thread starts (they would inherit a lowered nice value). Returns whether it
 * is armed: Linux, `by` > 0, and the thread may get its priority back.
 */
export function niceWhileAhead(by: number): boolean {
  ahead = undefined;
  if (by <= 0 || !isMainThread || !existsSync(TASKS)) return false;
  try {
    const base = getPriority(process.pid);
    if (!mayRaise(base)) return false;
    ahead = { tid: process.pid, base, low: Math.min(19, base + by), lowered: false };
    return ahead.low !== base;
  } catch {
    return false;
  }
}

/** Every worker lane has a batch in flight (true), or some lane may wait for the system thread (false). */
export function buildingAhead(on: boolean): void {
  const a = ahead;
  if (a === undefined || a.lowered === on) return;
  try {
    setPriority(a.tid, on ? a.low : a.base);
    a.lowered = on;
  } catch {
    // refused (the limit changed meanwhile): back at its priority if it can be, else never again
    ahead = undefined;
  }
}
