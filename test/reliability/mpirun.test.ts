// Runs under mpirun end with a luna message and leave nothing behind: a rank frozen with SIGSTOP
// is named by rank 0 (the other ranks wait for its verdict rather than exit first and be
// blamed by mpirun); a SIGKILLed mpirun does not leave the ranks running (they see their parent
// go, flush their traces and finish the manifest); an interrupt while the nodes connect removes
// rank 0's rendezvous file, which holds the run's secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LUNA } from '../cli/helpers.js';
import { cleanEnv, fixtureDir, groupGone, mpirunPath, pidWithEnv, processesWith, start, startLuna } from './procs.js';

const PROGRAM = `import c_work(int \`i, int \`ms, name \`x) as work;
sub main(int n, int ms, string tag)
{
    df x;
    for i = 0..n-1 cf w[i]: work(i, ms, x[i]) @ { locator_cyclic: i; };
}
`;
const UCODES = `
let said = false;
export function c_work(i: number, ms: number, x: { setInt(v: number): void }): void {
  if (!said && i === 0) { said = true; console.log('running'); }
  const t = Date.now(); while (Date.now() - t < ms) { /* work */ }
  x.setInt(i);
}
`;

const mpirun = mpirunPath();
const skip = mpirun ? false : 'mpirun not found (apt-get install openmpi-bin)';
const fixture = fixtureDir('luna-mpirun-rel-', { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });

/** mpirun -np 3 of a never-ending traced run, marked by `tag`, once it computes. */
async function mpirunRanks(tag: string, env: NodeJS.ProcessEnv = {}) {
  const rv = join(fixture(), `rv-${tag}`);
  mkdirSync(rv);
  const trace = join(fixture(), `T-${tag}`);
  const args = ['--allow-run-as-root', '--oversubscribe', '-np', '3', '-x', 'LUNA_RENDEZVOUS_DIR', ...Object.keys(env).flatMap((k) => ['-x', k]),
    process.execPath, LUNA, 'run', '--threads', '1', '--trace', trace, 'prog.fa', '100000', '20', tag];
  const p = start(mpirun!, args, fixture(), cleanEnv({ LUNA_RENDEZVOUS_DIR: rv, ...env }));
  await p.waitFor(/^running$/m);
  return { p, rv, trace };
}

test('mpirun -np 3 with rank 1 stopped: rank 0 names it, every rank ends, no rendezvous file', { skip }, async () => {
  const tag = `stopped-rank-${process.pid}`;
  const { p, rv } = await mpirunRanks(tag, { LUNA_HEARTBEAT_MS: '1000' });
  const rank1 = pidWithEnv(tag, 'OMPI_COMM_WORLD_RANK', '1');
  assert.ok(rank1, 'rank 1 runs');
  process.kill(rank1, 'SIGSTOP');
  try {
    const r = await p.exited;
    const ctx = `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout\n${p.out()}--- stderr\n${p.err()}`;
    assert.notEqual(r.code, 0, ctx);
    assert.match(p.err(), /^luna: error: node 1 was lost \(rank 1 sent nothing for \d+\.\d s \(frozen or unreachable; heartbeat timeout 1\.0 s\)\); stopping the run$/m, ctx);
    assert.doesNotMatch(p.err(), /internal error|^\s+at /m, ctx);
    assert.ok(await groupGone(p.pid), 'mpirun and its ranks ended');
    assert.deepEqual(processesWith(tag), [], 'no rank is left, the stopped one included');
    assert.deepEqual(readdirSync(rv), []);
  } finally {
    try { process.kill(rank1, 'SIGCONT'); process.kill(rank1, 'SIGKILL'); } catch { /* ended */ }
  }
});

test('a SIGKILLed mpirun leaves no rank running; they flush and mark the trace interrupted', { skip }, async () => {
  const tag = `killed-mpirun-${process.pid}`;
  const { p, rv, trace } = await mpirunRanks(tag);
  // let fragments complete on every rank (a spill period too)
  await new Promise((r) => setTimeout(r, 1500));
  process.kill(p.pid, 'SIGKILL');
  await p.exited;
  const until = Date.now() + 15_000;
  while (processesWith(tag).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesWith(tag), [], 'the ranks saw their launcher go and ended');
  const m = JSON.parse(readFileSync(join(trace, 'manifest.json'), 'utf8')) as { status: string; message?: string };
  assert.equal(m.status, 'interrupted');
  assert.match(m.message ?? '', /interrupted: its launcher \(mpirun, pid \d+\) is gone/);
  assert.deepEqual(readdirSync(rv), []);
  await groupGone(p.pid);
});

test('rank 0 interrupted while the nodes connect removes its rendezvous file and dies of the signal', async () => {
  const rv = join(fixture(), 'rv-forming');
  const trace = join(fixture(), 'T-forming');
  // rank 0 of 2 as mpirun would start it; rank 1 never comes
  const env = cleanEnv({ OMPI_COMM_WORLD_RANK: '0', OMPI_COMM_WORLD_SIZE: '2', LUNA_JOB_ID: `forming-${process.pid}`, LUNA_RENDEZVOUS_DIR: rv });
  const p = startLuna(['run', '--trace', trace, 'prog.fa', '10', '1', 'forming'], fixture(), env);
  const until = Date.now() + 30_000;
  while (!(existsSync(rv) && readdirSync(rv).some((f) => f.endsWith('.json'))) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.ok(existsSync(rv) && readdirSync(rv).length > 0, `rank 0 published its address\n${p.err()}`);
  process.kill(p.pid, 'SIGTERM');
  const r = await p.exited;
  assert.equal(r.signal, 'SIGTERM', p.err());
  assert.match(p.err(), /^luna: interrupted by SIGTERM while the nodes were connecting$/m);
  assert.deepEqual(readdirSync(rv), [], 'the file with the secret is gone');
  const m = JSON.parse(readFileSync(join(trace, 'manifest.json'), 'utf8')) as { status: string; signal?: string };
  assert.equal(m.status, 'interrupted');
  assert.equal(m.signal, 'SIGTERM');
});
