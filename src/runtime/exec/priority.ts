// The priority of V8's background threads while worker lanes run fragments. Node's platform pool
// (4 threads, shared by every isolate of the process: the system thread's and each worker's)
// runs the optimising compiler's jobs and the garbage collector's helpers. Over the first few
// hundred milliseconds of a run, ~120 functions of the system thread and the workers are
// optimised, several at once, and those threads take as much CPU as a lane's kernels, on the
// lane's core too (docs/runtime.md, "Tiering"). Once the lanes have run fragments for a while
// (the pool says when) they get a higher nice value: they then take the CPU the program's threads
// leave. A run whose fragments run on the system thread keeps them as they were: there they are
// what makes its code fast.
// Linux only: a nice value belongs to one thread there (elsewhere nothing changes).
import { existsSync, readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

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
 * (lanesRun), they are lowered by `by` (0: never).
 */
export function lowerBackgroundOnLanes(by: number): void {
  pending = by > 0 ? { tids: otherThreads(), by } : undefined;
}

/** The lanes run fragments: lower the noted background threads (once). */
export function lanesRun(): void {
  const p = pending;
  if (p === undefined) return;
  pending = undefined;
  // only threads still ours: a thread id that ended could be another process's by now
  const live = new Set(otherThreads());
  lowerPriority(p.tids.filter((t) => live.has(t)), p.by);
}
