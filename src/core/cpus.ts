// The CPUs this process may run on. A launcher may bind each rank to a few CPUs of the machine
// (Open MPI binds every rank to one core when np ≤ 2, Slurm to its --cpus-per-task), and taskset
// or a cgroup may narrow them too: a node's worker threads and its system thread then share those
// CPUs, however many the machine has. The runtime sizes its worker threads by them and decides
// whether its threads may spin rather than sleep while waiting (a spinning thread takes a CPU
// another one of the node may need); a trace records them so the analysis counts a machine's CPUs
// from all its ranks.
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';

export interface CpuSet {
  /** ids of the CPUs this process may run on, ascending; null where the system does not list them */
  ids: number[] | null;
  /** how many: ids.length, or os.availableParallelism() (which honours the same mask) */
  count: number;
  /** CPUs the machine has online */
  machine: number;
  /** fewer than the machine's: a launcher, taskset or a cgroup bound this process */
  bound: boolean;
}

/** `0-3,8,10-11` (Linux's cpu list format) → [0, 1, 2, 3, 8, 10, 11]; null when it is not one. */
export function parseCpuList(s: string): number[] | null {
  const out: number[] = [];
  for (const part of s.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 1 << 16) return null;
    for (let i = a; i <= b; i++) out.push(i);
  }
  return [...new Set(out)].sort((x, y) => x - y);
}

/** [0, 1, 2, 3, 8] → `0-3,8`. */
export function formatCpuList(ids: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length;) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(j === i ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The `Cpus_allowed_list` line of /proc/self/status (Linux), or null elsewhere. */
function allowedIds(status?: string): number[] | null {
  try {
    const text = status ?? readFileSync('/proc/self/status', 'utf8');
    const m = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(text);
    return m ? parseCpuList(m[1]!) : null;
  } catch {
    return null;
  }
}

let cached: CpuSet | undefined;

/**
 * The CPUs of this process (read once: a binding is set before the process starts). `status`
 * (the text of /proc/self/status) and `machine` are for tests.
 */
export function cpuSet(status?: string, machine?: number): CpuSet {
  if (status === undefined && machine === undefined && cached) return cached;
  const ids = allowedIds(status);
  const count = Math.max(1, ids ? ids.length : availableParallelism());
  const online = Math.max(count, machine ?? cpus().length);
  const set = { ids, count, machine: online, bound: count < online };
  if (status === undefined && machine === undefined) cached = set;
  return set;
}

/** A node's host and CPUs, as node 0 collects them for the trace's `machines`. */
export interface HostCpus {
  host: string;
  /** the node's CPU set as a list (`0-3`), empty when unknown */
  list: string;
  /** CPUs the node could use */
  count: number;
  /** CPUs its machine has online */
  machine: number;
}

export function hostCpus(host: string, set: CpuSet = cpuSet()): HostCpus {
  return { host, list: set.ids ? formatCpuList(set.ids) : '', count: set.count, machine: set.machine };
}
