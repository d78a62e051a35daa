import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import * as path from 'node:path';
import type { MeshReport } from './fixture.js';
import { cleanEnv, PEER, run } from './helpers.js';

function mpirunPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v mpirun'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const mpirun = mpirunPath();

test('mpirun -np 2 forms a mesh via the file rendezvous', { skip: mpirun ? false : 'mpirun not found (apt-get install openmpi-bin)' }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'luna-mpi-'));
  const args = ['--allow-run-as-root', '--oversubscribe', '-np', '2', '-x', 'LUNA_RENDEZVOUS_DIR', process.execPath, PEER, 'mesh', '200'];
  const r = await run(mpirun!, args, cleanEnv({ LUNA_RENDEZVOUS_DIR: dir }), 60_000);
  assert.equal(r.code, 0, `mpirun failed:\n${r.stdout}\n${r.stderr}`);
  const m = /MESH-OK (.*)/.exec(r.stdout);
  assert.ok(m, r.stdout + r.stderr);
  const reports = JSON.parse(m[1]!) as MeshReport[];
  assert.equal(reports.length, 2);
  for (const rep of reports) {
    assert.deepEqual(rep.errors, []);
    assert.deepEqual(rep.received, [200, 200]);
  }
  await rm(dir, { recursive: true, force: true });
});

/** `luna run` of the cyclic matmul under mpirun -np 2, traced; `extra` mpirun options (none: its default binding). */
async function tracedUnderMpirun(extra: string[]): Promise<{ ran: Awaited<ReturnType<typeof run>>; trace: string; dir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'luna-mpi-bind-'));
  const trace = path.join(dir, 'T');
  const root = path.resolve(path.dirname(PEER), '../../..');
  const args = ['--allow-run-as-root', '-np', '2', ...extra, '-x', 'LUNA_RENDEZVOUS_DIR', process.execPath, path.join(root, 'bin/luna'),
    'run', '--threads', '1', '--trace', trace, path.join(root, 'examples/matmul/matmul_cyclic.fa'), '64', '4'];
  const ran = await run(mpirun!, args, cleanEnv({ LUNA_RENDEZVOUS_DIR: dir }), 120_000);
  return { ran, trace, dir };
}

function analyse(trace: string): { launcher: string; machines: { cores: number; cpus: number; nodeCpus: number[]; oversubscription: number }[]; findings: { kind: string; text: string }[] } {
  const root = path.resolve(path.dirname(PEER), '../../..');
  const out = execFileSync(process.execPath, [path.join(root, 'bin/luna'), 'analyze', 'slow', '--json', trace], { encoding: 'utf8' });
  return JSON.parse(out);
}

const twoCpus = cpus().length >= 2;

test('mpirun with its default binding (a core per rank when np ≤ 2): the run says what it found and what to pass; the analysis counts both ranks\' CPUs and gives mpirun\'s options', {
  skip: !mpirun ? 'mpirun not found (apt-get install openmpi-bin)' : !twoCpus ? 'needs 2 CPUs: mpirun binds np 2 to a core each only when it has them' : false,
}, async () => {
  const { ran, trace, dir } = await tracedUnderMpirun([]);
  try {
    assert.equal(ran.code, 0, `mpirun failed:\n${ran.stdout}\n${ran.stderr}`);
    // only rank 0 speaks: one note naming its CPU and the launcher's options
    const notes = ran.stderr.match(/^luna: warning: mpirun bound this rank to CPU \d+ of the machine's \d+: its 1 worker thread and its system thread take turns on one CPU.*$/gm) ?? [];
    assert.equal(notes.length, 1, ran.stderr);
    assert.match(notes[0]!, /pass `mpirun --bind-to none` \(or `mpirun --map-by slot:PE=2` to give each rank 2 CPUs\)/);
    const a = analyse(trace);
    assert.equal(a.launcher, 'mpirun');
    assert.equal(a.machines.length, 1);
    const m = a.machines[0]!;
    assert.deepEqual(m.nodeCpus, [1, 1], 'each rank was bound to one CPU');
    assert.equal(m.cores, 2, 'the machine\'s CPUs are counted from both ranks, not taken from one');
    assert.ok(m.oversubscription <= 1, 'two workers on two CPUs: not oversubscribed');
    const kinds = a.findings.map((f) => f.kind);
    assert.ok(kinds.includes('bound'), kinds.join());
    assert.ok(!kinds.includes('oversubscribed'), kinds.join());
    const text = a.findings.find((f) => f.kind === 'bound')!.text;
    assert.match(text, /^Nodes 0 and 1 were each bound by mpirun to one CPU/);
    assert.match(text, /`mpirun --bind-to none`/);
    for (const f of a.findings) assert.doesNotMatch(f.text, /--nodes/, `no luna --nodes under mpirun: ${f.text}`);
  } finally { await rm(dir, { recursive: true, force: true }); }
});

test('mpirun --bind-to none: no note, and the analysis finds no binding', { skip: mpirun ? false : 'mpirun not found (apt-get install openmpi-bin)' }, async () => {
  const { ran, trace, dir } = await tracedUnderMpirun(['--bind-to', 'none', '--oversubscribe']);
  try {
    assert.equal(ran.code, 0, `mpirun failed:\n${ran.stdout}\n${ran.stderr}`);
    assert.doesNotMatch(ran.stderr, /bound this rank/);
    const a = analyse(trace);
    assert.equal(a.machines[0]!.nodeCpus.every((c) => c === a.machines[0]!.cpus), true, JSON.stringify(a.machines));
    assert.ok(!a.findings.some((f) => f.kind === 'bound'));
  } finally { await rm(dir, { recursive: true, force: true }); }
});
