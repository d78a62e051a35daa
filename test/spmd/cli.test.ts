// `luna spmd` as a user runs it: ranks over node processes spawned here and under mpirun, a hang
// across processes reported by node 0, and a traced run whose records the pattern engine reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { explain, inTempDir, luna, LUNA, type Run } from '../cli/helpers.js';
import { readTrace } from '../../src/trace/index.js';
import { SPMD_OPS } from '../../src/trace/schema.js';

const PROGRAMS = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../../test/spmd/programs');
const prog = (name: string): string => join(PROGRAMS, `${name}.ts`);
const hasMpirun = spawnSync('sh', ['-c', 'command -v mpirun'], { encoding: 'utf8' }).status === 0;

function mpirun(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('mpirun', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [], err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 90_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), args }); });
  });
}

test('luna spmd --nodes 2: ranks over two processes check their shared data and collectives', async () => {
  await inTempDir('luna-spmd-cli-', async (dir) => {
    for (const name of ['basics', 'collectives']) {
      const r = await luna(['spmd', '--nodes', '2', '--threads', '4', prog(name)], dir);
      assert.equal(r.status, 0, explain(r));
    }
  });
});

test('luna spmd --nodes 2: a lock released on another node before a barrier is free after it, through the shared segment and through the sockets', async () => {
  await inTempDir('luna-spmd-cli-', async (dir) => {
    for (const shm of ['1', '0']) {
      const r = await luna(['spmd', '--nodes', '2', '--threads', '2', prog('unlock'), '50'], dir, 60_000, { ...process.env, LUNA_SPMD_SHM: shm });
      assert.equal(r.status, 0, explain(r));
    }
  });
});

test('luna spmd --nodes 2: a barrier a rank never reaches is node 0\'s hang report, exit 1', async () => {
  await inTempDir('luna-spmd-cli-', async (dir) => {
    // through the shared segment every rank's arrival is known: node 1's ranks name the late rank too
    let r = await luna(['spmd', '--nodes', '2', '--threads', '4', prog('hang')], dir);
    assert.equal(r.status, 1, explain(r));
    assert.match(r.stderr, /^luna: error: the program hangs: .*\n(  rank 0 on node 0 waits at barrier \(phase 1\) for rank 1 \(rank 1 has returned from the program\) .*hang\.ts:6:3\)\n?)(  rank [23] on node 1 waits at barrier \(phase 1\) for rank 1 .*hang\.ts:6:3\)\n?){2}$/, explain(r));
    // through the sockets node 1's ranks see only that node 0 is incomplete
    r = await luna(['spmd', '--nodes', '2', '--threads', '4', prog('hang')], dir, 60_000, { ...process.env, LUNA_SPMD_SHM: '0' });
    assert.equal(r.status, 1, explain(r));
    assert.match(r.stderr, /^luna: error: the program hangs: .*\n(  rank 0 on node 0 waits at barrier \(phase 1\) for rank 1 .*hang\.ts:6:3\)\n?)(  rank [23] on node 1 waits at barrier \(phase 1\) for a rank of node 0 .*hang\.ts:6:3\)\n?){2}$/, explain(r));
  });
});

test('luna spmd --nodes 2: a rank that fails while the others sleep at a barrier in the shared segment ends the run with its error, on either node', async () => {
  await inTempDir('luna-spmd-cli-', async (dir) => {
    for (const rank of ['3', '0']) {
      const r = await luna(['spmd', '--nodes', '2', '--threads', '4', prog('fault'), rank], dir);
      assert.equal(r.status, 1, explain(r));
      assert.match(r.stderr, new RegExp(`luna: error: rank ${rank}: Error: rank ${rank} gives up`), explain(r));
      assert.doesNotMatch(r.stderr, /hangs/, explain(r));
    }
  });
});

test('luna spmd --nodes 2: a mismatched allAlloc across processes is an error naming both ranks and call sites, exit 1', async () => {
  await inTempDir('luna-spmd-cli-', async (dir) => {
    const r = await luna(['spmd', '--nodes', '2', '--threads', '2', prog('misuse'), 'alloc'], dir);
    assert.equal(r.status, 1, explain(r));
    assert.match(r.stderr, /mismatched allAlloc of shared array #2: this rank asked for (8|16) f64 .*rank [01] on node [01] for (16|8) .*misuse\.ts:15:\d+/, explain(r));
  });
});

test('under mpirun: the ranks of two MPI processes run the collectives', { skip: hasMpirun ? false : 'mpirun not found (Debian: apt-get install -y openmpi-bin)' }, async () => {
  await inTempDir('luna-spmd-mpi-', async (dir) => {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('LUNA_')) delete env[k];
    const r = await mpirun(['--allow-run-as-root', '--oversubscribe', '-np', '2', process.execPath, LUNA, 'spmd', '--threads', '4', prog('collectives')], dir, env);
    assert.equal(r.status, 0, explain(r));
  });
});

test('a traced run: the pattern engine charges the wait for the late rank at the barrier\'s call site to the others', async () => {
  await inTempDir('luna-spmd-trace-', async (dir) => {
    const r = await luna(['spmd', '--threads', '3', '--trace', 'tr', prog('late')], dir);
    assert.equal(r.status, 0, explain(r));
    const m = JSON.parse(readFileSync(join(dir, 'tr', 'manifest.json'), 'utf8')) as { ranks: number; status: string };
    assert.equal(m.ranks, 3);
    assert.equal(m.status, 'completed');
    // every rank's records: the operations it entered (named by SPMD_OPS), lock acquire and release
    const entered = new Map<string, number>();
    const kinds = new Map<string, number>();
    for (const e of readTrace(join(dir, 'tr')).events) {
      kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
      if (e.kind === 'spmdEnter') entered.set(SPMD_OPS[e.op]!, (entered.get(SPMD_OPS[e.op]!) ?? 0) + 1);
    }
    for (const op of ['all_alloc', 'barrier', 'region', 'lock', 'put', 'fence', 'unlock']) assert.equal(entered.get(op), op === 'barrier' ? 6 : 3, `${op}: ${JSON.stringify([...entered])}`);
    assert.equal(kinds.get('spmdCExit'), 9);
    assert.equal(kinds.get('spmdAlock'), 3);
    assert.equal(kinds.get('spmdRlock'), 3);
    assert.equal(kinds.get('spmdExit'), 5 * 3);
    const a = await luna(['analyze', 'patterns', '--json', 'tr'], dir);
    assert.equal(a.status, 0, explain(a));
    const out = JSON.parse(a.stdout) as { spmd: { collectives: number }; patterns: { id: string; sites: { site: string; locations: { loc: number; wasted: number }[] }[] }[] };
    // allAlloc, two barriers
    assert.equal(out.spmd.collectives, 3);
    const barrier = out.patterns.find((p) => p.id === 'wait_at_barrier');
    const site = barrier?.sites.find((s) => /late\.ts:12:3$/.test(s.site));
    assert.ok(site, a.stdout);
    // the ranks that waited for rank 1 are charged; rank 1, late, is not
    assert.ok(site.locations.some((l) => l.loc !== 1));
    assert.ok(!site.locations.some((l) => l.loc === 1), a.stdout);
  });
});
