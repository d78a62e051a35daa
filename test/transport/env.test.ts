import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { detectLaunch, ranksOnThisHost } from '../../src/runtime/launch/env.js';
import { defaultThreads } from '../../src/runtime/run.js';
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
