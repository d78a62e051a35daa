// Worker lanes pinned one to a CPU. With two workers on two CPUs the kernel may wake a lane onto
// the CPU its partner holds while the other CPU runs another process or one of V8's helpers: the
// woken lane then waits for its partner's kernel to end, and a step of a pair of lanes that feed
// each other takes two tasks' time (docs/benchmarks.md, "Where a lane's time goes at METG sizes").
// Pinned, each lane has a CPU of its own to be woken on. A lane pins itself at its first wait for
// a value another lane feeds it (worker.ts `fed`): lanes that never wait for each other (a block
// matmul's) keep the freedom to move off a CPU another process holds, which under load was worth
// more to them than the pinning. Only where the node may use at least as many CPUs as it has
// worker lanes: a launcher's binding (mpirun binds each rank to a core for np ≤ 2), taskset or a
// cgroup narrow the set (core/cpus.ts), and lanes pinned onto fewer CPUs than lanes would be
// packed for good. The system thread is left free: it is woken by either lane.
import { readFileSync } from 'node:fs';
import { cpuSet, parseCpuList, type CpuSet } from '../../core/cpus.js';
import { pinThread } from '../../trace/clock.js';

/** Whether this process can pin a thread (Linux, with the native addon). */
export const canPin = pinThread !== undefined;

/**
 * The CPU each of `lanes` worker lanes is pinned to: the set's CPUs in order, or undefined where
 * the set is unknown or smaller than the lanes, or one lane would have nothing to gain, or the
 * node has only `nodeCpus` of the set's CPUs (other ranks on this host share the set unbound:
 * each would pin its lanes to the same first CPUs).
 */
export function laneCpus(lanes: number, set: CpuSet = cpuSet(), nodeCpus = Infinity): number[] | undefined {
  if (lanes < 2 || set.ids === null || set.ids.length < lanes || nodeCpus < set.ids.length) return undefined;
  return set.ids.slice(0, lanes);
}

/** Pin the calling thread to `cpu`; false where it cannot (no addon, not Linux, the CPU not allowed). */
export function pinSelf(cpu: number): boolean {
  return pinCpus([cpu]);
}

/** Let the calling thread run on `cpus` (a rehearsal's pinning undone); false where it cannot. */
export function pinCpus(cpus: readonly number[]): boolean {
  return pinThread !== undefined && cpus.length > 0 && pinThread([...cpus]) === 0;
}

/** The CPUs the calling thread may run on (Linux; null elsewhere): /proc/thread-self/status. */
export function threadCpus(): number[] | null {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(readFileSync('/proc/thread-self/status', 'utf8'));
    return m ? parseCpuList(m[1]!) : null;
  } catch {
    return null;
  }
}
