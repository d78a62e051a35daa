import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { detectLaunch, ranksOnThisHost } from '../../src/runtime/launch/env.js';
import { defaultThreads, machinesOf } from '../../src/runtime/run.js';
import { cpuSet, formatCpuList, hostCpus, parseCpuList } from '../../src/core/cpus.js';
import { bindingNote, nodeCpus } from '../../src/runtime/launch/binding.js';
import { availableParallelism } from 'node:os';
import { resolveBind } from '../../src/runtime/launch/cluster.js';
import { fileRendezvous, jobIdFromEnv, parseHostPort } from '../../src/runtime/transport/rendezvous.js';

test('detectLaunch: each launcher environment', () => {
  assert.deepEqual(detectLaunch({}), { rank: 0, size: 1, launcher: 'local' });
  assert.deepEqual(detectLaunch({ LUNA_RANK: '2', LUNA_SIZE: '3' }), { rank: 2, size: 3, launcher: 'luna' });
  assert.deepEqual(detectLaunch({ OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_SIZE: '4', PMIX_RANK: '1' }), { rank: 1, size: 4, launcher: 'mpirun' });
  assert.deepEqual(detectLaunch({ PMIX_RANK: '3', PMI_SIZE: '5' }), { rank: 3, size: 5, launcher: 'pmi' });
  assert.deepEqual(detectLaunch({ PMI_RANK: '0', PMI_SIZE: '2' }), { rank: 0, size: 2, launcher: 'pmi' });
  assert.deepEqual(detectLaunch({ SLURM_PROCID: '5', SLURM_NTASKS: '8' }), { rank: 5, size: 8, launcher: 'srun' });
  // srun step size wins over the allocation's; mpirun inside an allocation is still mpirun.
  assert.deepEqual(detectLaunch({ SLURM_PROCID: '1', SLURM_NTASKS: '8', SLURM_STEP_NUM_TASKS: '2' }), { rank: 1, size: 2, launcher: 'srun' });
  assert.deepEqual(
    detectLaunch({ SLURM_PROCID: '0', SLURM_NTASKS: '8', OMPI_COMM_WORLD_RANK: '3', OMPI_COMM_WORLD_SIZE: '4' }),
    { rank: 3, size: 4, launcher: 'mpirun' },
  );
});

test('nodes on one host share its cores by default', () => {
  assert.equal(ranksOnThisHost(detectLaunch({}), 3), 3, 'local: the nodes luna-ts starts');
  assert.equal(ranksOnThisHost(detectLaunch({ LUNA_RANK: '1', LUNA_SIZE: '4' }), 1), 4);
  const mpi = { OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '8' };
  assert.equal(ranksOnThisHost(detectLaunch({ ...mpi, OMPI_COMM_WORLD_LOCAL_SIZE: '2' }), 1, { ...mpi, OMPI_COMM_WORLD_LOCAL_SIZE: '2' }), 2);
  assert.equal(ranksOnThisHost(detectLaunch(mpi), 1, mpi), 1, 'unknown: one per host');
  const cores = availableParallelism();
  assert.equal(defaultThreads(1), cores);
  assert.equal(defaultThreads(cores * 4), 1, 'never below one thread');
  assert.equal(defaultThreads(2), Math.max(1, Math.floor(cores / 2)));
});

test('detectLaunch: clear errors for inconsistent environments', () => {
  assert.throws(() => detectLaunch({ LUNA_RANK: '1' }), /LUNA_SIZE is not/);
  assert.throws(() => detectLaunch({ PMI_RANK: '2', PMI_SIZE: '2' }), /out of range/);
  assert.throws(() => detectLaunch({ OMPI_COMM_WORLD_RANK: 'x', OMPI_COMM_WORLD_SIZE: '2' }), /not a non-negative integer/);
});

test('job ids and addresses', () => {
  assert.equal(jobIdFromEnv({ SLURM_JOB_ID: '77', SLURM_STEP_ID: '3' }), 'slurm-77.3');
  assert.equal(jobIdFromEnv({ PMIX_NAMESPACE: 'prterun-h-123@1', SLURM_JOB_ID: '1' }), 'prterun-h-123@1');
  assert.equal(jobIdFromEnv({ LUNA_JOB_ID: 'mine', PMIX_NAMESPACE: 'x' }), 'mine');
  assert.equal(jobIdFromEnv({}), undefined);
  assert.deepEqual(parseHostPort('10.0.0.5:4000'), { host: '10.0.0.5', port: 4000 });
  assert.deepEqual(parseHostPort('[::1]:99'), { host: '::1', port: 99 });
  assert.throws(() => parseHostPort('nohost'), /host:port/);
});

test('file rendezvous: 0600 file, atomic publish, lookup, cleanup, timeout message', async () => {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'luna-rv-')), 'rv');
  const rv = fileRendezvous({ dir, jobId: 'job/1', timeoutMs: 300, pollMs: 10 });
  const looking = rv.lookup();
  await new Promise((r) => setTimeout(r, 50));
  await rv.publish({ host: '127.0.0.1', port: 1234 }, 's3cret');
  assert.deepEqual(await looking, { host: '127.0.0.1', port: 1234, secret: 's3cret' });
  assert.equal((await stat(rv.file)).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(dir), ['job_1.json']);
  await rv.cleanup!();
  await assert.rejects(fileRendezvous({ dir, jobId: 'other', timeoutMs: 100, pollMs: 10 }).lookup(), /no rendezvous file .*LUNA_RENDEZVOUS_DIR/);
  assert.throws(() => fileRendezvous({ env: {} }), /needs a job id/);
  await rm(path.dirname(dir), { recursive: true, force: true });
});

test('--bind accepts an interface name as well as an address', () => {
  assert.equal(resolveBind('lo'), '127.0.0.1');
  assert.equal(resolveBind('10.1.2.3'), '10.1.2.3');
  assert.equal(resolveBind('0.0.0.0'), '0.0.0.0');
});

test('the CPUs a process may use: the kernel\'s list, and whether a launcher narrowed it', () => {
  assert.deepEqual(parseCpuList('0-3,8,10-11'), [0, 1, 2, 3, 8, 10, 11]);
  assert.deepEqual(parseCpuList('5'), [5]);
  assert.equal(parseCpuList('0-x'), null);
  assert.equal(formatCpuList([0, 1, 2, 3, 8, 10, 11]), '0-3,8,10-11');
  const status = (list: string): string => `Name:\tnode\nCpus_allowed:\tff\nCpus_allowed_list:\t${list}\nMems_allowed:\t1\n`;
  assert.deepEqual(cpuSet(status('1'), 2), { ids: [1], count: 1, machine: 2, bound: true });
  assert.deepEqual(cpuSet(status('0-7'), 8), { ids: [0, 1, 2, 3, 4, 5, 6, 7], count: 8, machine: 8, bound: false });
  // this process: a list on Linux, never more CPUs than the machine
  const here = cpuSet();
  assert.ok(here.count >= 1 && here.count <= here.machine);
  assert.equal(defaultThreads(1), here.count);
});

test('a rank bound by its launcher runs on its own CPUs, and is told at start-up what to pass when they are too few', () => {
  const mpi = detectLaunch({ OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '2' });
  const bound1 = { ids: [0], count: 1, machine: 2, bound: true };
  const bound4 = { ids: [0, 1, 2, 3], count: 4, machine: 16, bound: true };
  const free = { ids: [0, 1, 2, 3], count: 4, machine: 4, bound: false };
  assert.equal(nodeCpus(mpi, 2, bound4), 4, 'bound: its own CPUs, not shared with the other rank');
  assert.equal(nodeCpus(mpi, 2, free), 2, 'unbound: the host\'s CPUs shared by its ranks');
  assert.equal(nodeCpus(detectLaunch({}), 2, bound4), 2, 'luna run --nodes 2 under taskset: shared');
  assert.equal(bindingNote(mpi, bound1, 1), "luna: warning: mpirun bound this rank to CPU 0 of the machine's 2: its 1 worker thread and its system thread take turns on one CPU, which makes a run several times slower; pass `mpirun --bind-to none` (or `mpirun --map-by slot:PE=2` to give each rank 2 CPUs).");
  assert.equal(bindingNote(mpi, bound4, 4), undefined, 'workers fit, the system thread shares as on any machine');
  assert.match(bindingNote(mpi, bound4, 6)!, /its 6 worker threads and its system thread take turns on 4 CPUs.*`mpirun --map-by slot:PE=7`/);
  assert.equal(bindingNote(mpi, free, 4), undefined, 'not bound: nothing to say');
  const slurm = detectLaunch({ SLURM_PROCID: '0', SLURM_NTASKS: '2' });
  assert.match(bindingNote(slurm, bound1, 1)!, /^luna: warning: srun bound this task to CPU 0 .*pass `srun --cpus-per-task=2`/);
  assert.match(bindingNote(detectLaunch({}), bound1, 1)!, /this process may run only on CPU 0 .*taskset/);
});

test('the machines of a run: nodes grouped by host, CPUs counted from the union of their sets', () => {
  const h = (host: string, list: string, machine: number) => ({ host, list, count: parseCpuList(list)!.length, machine });
  assert.deepEqual(machinesOf([h('a', '0', 2), h('a', '1', 2), h('b', '0-3', 4)]), [
    { host: 'a', cores: 2, nodes: [0, 1], cpus: 2, nodeCpus: [1, 1] },
    { host: 'b', cores: 4, nodes: [2], cpus: 4, nodeCpus: [4] },
  ]);
  // two ranks sharing one CPU: one CPU for both
  assert.equal(machinesOf([h('a', '0', 2), h('a', '0', 2)])[0]!.cores, 1);
  // a node that could not list its CPUs: its count is all that is known
  assert.equal(machinesOf([{ host: 'a', list: '', count: 3, machine: 4 }, h('a', '0', 4)])[0]!.cores, 3);
  assert.equal(hostCpus('x').count, cpuSet().count);
});
