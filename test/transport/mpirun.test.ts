import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
