// A rank's CPUs as its launcher left them: how many worker threads it runs by default, and the
// note at start-up when its binding makes the node's threads take turns on too few CPUs (Open
// MPI binds every rank to one core when np ≤ 2: a worker and the system thread on one core were
// 3–9× slower under `mpirun -np 2` than with `--bind-to none`).
import { formatCpuList, type CpuSet } from '../../core/cpus.js';
import { isClusterLauncher, widenBinding } from '../../core/launchers.js';
import type { LaunchInfo } from './env.js';

/**
 * CPUs a node of this host runs on by default: its own set when a cluster launcher bound it (each
 * rank has its own, they are not shared), else this process's CPUs shared by the ranks here.
 */
export function nodeCpus(launch: LaunchInfo, ranksHere: number, set: CpuSet): number {
  if (set.bound && isClusterLauncher(launch.launcher)) return set.count;
  return Math.max(1, Math.floor(set.count / Math.max(1, ranksHere)));
}

/**
 * What a bound process should be told at start-up: its CPUs, its threads, and what to pass the
 * launcher. Nothing when it is not bound, or when its workers fit its CPUs with a CPU to share
 * (the same as an unbound run on all of a machine's cores).
 */
export function bindingNote(launch: LaunchInfo, set: CpuSet, threads: number): string | undefined {
  if (!set.bound || (set.count > 1 && threads <= set.count)) return undefined;
  const where = set.ids ? `CPU${set.ids.length > 1 ? 's' : ''} ${formatCpuList(set.ids)}` : `${set.count} CPU${set.count > 1 ? 's' : ''}`;
  const who = launch.launcher === 'mpirun' ? 'mpirun bound this rank to' : launch.launcher === 'srun' ? 'srun bound this task to'
    : launch.launcher === 'pmi' ? 'the launcher bound this rank to' : 'this process may run only on';
  const fix = widenBinding(launch.launcher, threads + 1)
    ?? (isClusterLauncher(launch.launcher) ? 'give each rank more CPUs through the launcher' : `run it on more CPUs (taskset, its cgroup), or with ${'`--threads`'} below ${set.count}`);
  return `luna: warning: ${who} ${where} of the machine's ${set.machine}: its ${threads} worker thread${threads > 1 ? 's' : ''} and its system thread ` +
    `take turns on ${set.count === 1 ? 'one CPU' : `${set.count} CPUs`}, which makes a run several times slower; ${fix}.`;
}
