// Multi-node runtime. In one process (files.ts, harness.ts: N node runtimes over an in-memory
// mesh, in milliseconds): every semantics fixture gives the same result on 1, 2, 3 nodes with 1
// and 2 lanes; locator_cyclic really places CFs (ucodes print their node); locator_replicating is
// readable everywhere; long loops are spread; a 64 MiB DF crosses nodes intact; an exception on
// node 1 stops the run naming it; stealable CFs move to idle nodes. End to end, with real node
// processes and real sockets, one test of each mechanism: placement and termination, spread
// loops with their trace, a large DF, a fault, stealing; a node unrolling a long loop of waiting
// CFs still answers its peers; a node killed with SIGKILL stops the run cleanly; a launch under
// mpirun gives the same output as --nodes 2.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertFails, assertOk, CASES, type Case, describeRun, hasCommand, lines, luna, program, runArgs, runRaw, sorted,
} from './helpers.js';
import { runFile, type FileRun } from './files.js';
import { readTrace } from '../../src/trace/merge.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import type { NodeRuntime } from '../../src/runtime/node/runtime.js';

const CONFIGS: [nodes: number, lanes: number][] = [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1], [3, 2]];

const mod = (a: number, n: number) => ((a % n) + n) % n;

/** What a failed in-process run says, for assertion messages. */
function describeFile(r: FileRun): string {
  return `ok ${r.ok} kind ${r.kind}\n--- message\n${r.message ?? ''}\n--- stdout\n${r.stdout.join('\n')}`;
}

/** `c`'s expected outcome on an in-process run: its output as a multiset, or its failure. */
function assertCase(c: Case, r: FileRun): void {
  if (c.out) {
    assert.equal(r.ok, true, describeFile(r));
    assert.deepEqual(sorted(r.stdout), sorted(c.out), describeFile(r));
    return;
  }
  assert.equal(r.ok, false, describeFile(r));
  assert.equal(r.kind === 'usage' ? 2 : 1, c.status ?? 1, describeFile(r));
  for (const p of c.fails ?? []) assert.match(r.message ?? '', p, describeFile(r));
  assert.doesNotMatch(r.message ?? '', /internal error/i, describeFile(r));
  for (const l of c.stdoutHas ?? []) assert.ok(r.stdout.includes(l), `stdout lacks ${JSON.stringify(l)}\n${describeFile(r)}`);
}

/** Labels of the CFs that migrated to some node (their indices dropped), counted. */
function migrations(): { observe: (rt: NodeRuntime) => void; migrated: Map<string, number> } {
  const migrated = new Map<string, number>();
  return {
    migrated,
    observe: (rt) => {
      const receive = rt.receiveCf.bind(rt);
      rt.receiveCf = (cf, from, id) => {
        const label = rt.labelOf(cf).replace(/\[.*$/, '');
        migrated.set(label, (migrated.get(label) ?? 0) + 1);
        receive(cf, from, id);
      };
    },
  };
}

describe('multi-node runtime in one process', () => {
  describe('same result on 1, 2, 3 nodes with 1 and 2 lanes: semantics fixtures', () => {
    for (const c of CASES) {
      test(c.name, async () => {
        for (const [nodes, lanes] of CONFIGS) {
          const r = await runFile(c.file, { nodes, lanes, args: c.args, defines: c.defines });
          try { assertCase(c, r); } catch (e) { assert.fail(`[nodes ${nodes}, lanes ${lanes}] ${(e as Error).message}`); }
        }
      });
    }
  });

  describe('placement', () => {
    for (const [N, T] of CONFIGS) {
      test(`locator_cyclic (expression, negative, map forms) places CFs: ${N} node(s), ${T} lane(s)`, async () => {
        const r = await runFile(program('cyclic'), { nodes: N, lanes: T, args: [String(CYCLIC_N)] });
        assert.equal(r.ok, true, describeFile(r));
        assert.deepEqual(sorted(r.stdout), cyclicWant(N));
      });
    }
    for (const [N, T] of CONFIGS) {
      test(`locator_replicating (=> all, => 2) is readable from every node: ${N} node(s), ${T} lane(s)`, async () => {
        const r = await runFile(program('replicate'), { nodes: N, lanes: T, args: ['6'] });
        assert.equal(r.ok, true, describeFile(r));
        const w = [
          ...Array.from({ length: 6 }, (_, i) => `t ${i} = 42 @${mod(i, N)}`),
          ...Array.from({ length: 6 }, (_, i) => `u ${i} = 43 @${mod(i + 1, N)}`),
        ];
        assert.deepEqual(sorted(r.stdout), sorted(w));
      });
    }
  });

  describe('spread loops', () => {
    // spread.fa, n = 40 (long enough to spread on 2 and 3 nodes): each node spawns its own CFs
    // of a loop; what a locator cannot place without a DF is spawned where the loop began.
    for (const [N, T] of [[2, 1], [3, 1], [2, 2], [3, 2]] as const) {
      test(`a long loop is spread: each node spawns its CFs, none migrates but what needs a DF to be placed (${N} nodes, ${T} lane(s))`, async () => {
        const on = migrations(), off = migrations();
        const r = await runFile(program('spread'), { nodes: N, lanes: T, args: [String(SPREAD_N)], observe: on.observe });
        const u = await runFile(program('spread'), { nodes: N, lanes: T, args: [String(SPREAD_N)], observe: off.observe, policy: () => new DefaultPolicy({ spreadLoops: false }) });
        assertSpread(N, { out: r.stdout, migrated: on.migrated }, { out: u.stdout, migrated: off.migrated });
      });
    }
  });

  describe('large DFs, faults, stealing', () => {
    for (const N of [2, 3]) {
      test(`a 64 MiB DF crosses nodes intact (${N} nodes)`, async () => {
        const r = await runFile(program('bigdf'), { nodes: N, lanes: 2, args: ['64'] });
        assert.equal(r.ok, true, describeFile(r));
        assertBigDf(r.stdout);
      });
    }

    for (const N of [2, 3]) {
      for (const T of [1, 2]) {
        test(`an exception on node 1 stops the run naming the node (${N} nodes, ${T} lane(s))`, async () => {
          const r = await runFile(program('nodefail'), { nodes: N, lanes: T });
          assert.equal(r.kind, 'fault', describeFile(r));
          for (const p of NODEFAIL) assert.match(r.message ?? '', p);
          // every node stopped
          assert.deepEqual(r.nodes.map((x) => x.result?.ok), r.nodes.map(() => false));
        });
      }
    }

    for (const T of [1, 2]) {
      test(`stealing: stealable CFs all placed on node 0 also run on node 1 (2 nodes, ${T} lane(s))`, async () => {
        const r = await runFile(program('steal'), { nodes: 2, lanes: T, args: [String(STEAL_N), '1'] });
        assert.equal(r.ok, true, describeFile(r));
        assertStolen(r.stdout, describeFile(r));
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// What the in-process and the end-to-end tests of one mechanism both check.

// cyclic.fa, n = 5: e[i] on i, ng[i] on -i-1, m[i] on i+1 (map rule of the for block),
// mo[i] on -i (map rule of main's block), DF x[i] owned by node i, made on 2i, read on i+2;
// in sub inner: mo[i] on node 0 (main's rules are not visible there), nf[i] on nfparam k = 2i.
const CYCLIC_N = 5;

function cyclicWant(N: number): string[] {
  const n = CYCLIC_N;
  return sorted([
    ...Array.from({ length: n }, (_, i) => `expr ${i} @${mod(i, N)}`),
    ...Array.from({ length: n }, (_, i) => `neg ${i} @${mod(-i - 1, N)}`),
    ...Array.from({ length: n }, (_, i) => `map ${i} @${mod(i + 1, N)}`),
    ...Array.from({ length: n }, (_, i) => `outer ${i} @${mod(-i, N)}`),
    ...Array.from({ length: n }, (_, i) => `x ${i} = ${i * i} @${mod(i + 2, N)}`),
    ...Array.from({ length: n }, (_, i) => `insub ${i} @0`),
    ...Array.from({ length: n }, (_, i) => `nfparam ${i} @${mod(2 * i, N)}`),
  ]);
}

const SPREAD_N = 40;

function assertSpread(N: number, on: { out: string[]; migrated: Map<string, number> }, off: { out: string[]; migrated: Map<string, number> }): void {
  const want = [
    ...Array.from({ length: SPREAD_N }, (_, i) => `block ${i} = ${3 * i} @${mod(i + 1, N)}`),
    ...Array.from({ length: SPREAD_N }, (_, i) => `dfloc ${i} @${mod(1 + i, N)}`),
    ...Array.from({ length: SPREAD_N }, (_, i) => `iter ${i} @0`),
    ...Array.from({ length: SPREAD_N }, (_, i) => `plain ${i} @0`),
  ];
  assert.deepEqual(sorted(on.out), sorted(want));
  assert.deepEqual(sorted(off.out), sorted(want));
  const other = (i: (k: number) => number) => Array.from({ length: SPREAD_N }, (_, k) => k).filter((k) => mod(i(k), N) !== 0).length;
  // spread: the block DF's writer and reader, the iteration CFs and plain CFs are spawned
  // where they run; d[i] (its locator reads k) and the children of iterations on other
  // nodes (no locator: node 0) migrate
  const want2 = new Map([['a', other((k) => 2 * k)], ['d', other((k) => 1 + k)]].filter(([, c]) => c !== 0) as [string, number][]);
  assert.deepEqual(new Map([...on.migrated].sort()), want2);
  // unspread, node 0 spawns every CF and migrates those placed elsewhere
  assert.equal(off.migrated.get('w'), other((k) => k));
  assert.equal(off.migrated.get('r'), other((k) => k + 1));
}

function assertBigDf(out: string[]): void {
  const o = sorted(out);
  assert.equal(o.length, 2, o.join('\n'));
  assert.match(o[0]!, /^x intact 67108864 bytes checksum \d+$/);
  assert.match(o[1]!, /^y intact 67108864 bytes checksum \d+$/);
}

const NODEFAIL = [/node 1\b/, /exploded 7 on rank 1/, /CF boom \(ucode c_explode, id [\d_]+\)[^\n]* at [^\n]*nodefail\.fa:8:5/];

const STEAL_N = 200;

function assertStolen(out: string[], why: string): void {
  const ids = out.map((l) => Number(/^s (\d+) @\d+$/.exec(l)?.[1] ?? -1));
  assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: STEAL_N }, (_, i) => i), `every CF once\n${why}`);
  const onNode1 = out.filter((l) => l.endsWith(' @1')).length;
  assert.ok(onNode1 > 0, `no stealable CF ran on node 1 (all ${STEAL_N} on node 0)\n${why}`);
}

// ---------------------------------------------------------------------------------------------

// One concurrent suite: runs overlap (bounded by the limiter in helpers.ts).
describe('multi-node runtime end to end: node processes over sockets', { concurrency: true }, () => {
  test('placement, migration and termination: locator_cyclic places CFs (--nodes 3 --threads 2)', async () => {
    const r = await luna(runArgs(3, 2, { file: program('cyclic'), args: [String(CYCLIC_N)] }));
    assertOk(r);
    assert.deepEqual(sorted(lines(r.stdout)), cyclicWant(3), describeRun(r));
  });

  test("the DF protocol's errors over sockets: too many requests, naming the CF (--nodes 2 --threads 2)", async () => {
    const c = CASES.find((x) => x.file === program('toomany'))!;
    const r = await luna(runArgs(2, 2, c));
    assertFails(r, c.fails ?? []);
  });

  /** Output of spread.fa and the labels of the CFs that migrated (from the trace's tables). */
  async function spreadRun(N: number, T: number, spread: boolean): Promise<{ out: string[]; migrated: Map<string, number> }> {
    const dir = mkdtempSync(join(tmpdir(), 'luna-spread-'));
    try {
      const env = { ...process.env, LUNA_SPREAD_LOOPS: spread ? '1' : '0' };
      const r = await luna(['run', '--trace', join(dir, 't'), ...runArgs(N, T, { file: program('spread'), args: [String(SPREAD_N)] }).slice(1)], { env, timeoutMs: 60_000 });
      assertOk(r);
      const x = await luna(['export', 'tables', join(dir, 't'), '-o', join(dir, 'tables')]);
      assertOk(x);
      const migrated = new Map<string, number>();
      for (const row of readFileSync(join(dir, 'tables', 'migrations.csv'), 'utf8').trim().split('\n').slice(1)) {
        const label = row.split(',').at(-1)!.replace(/\[.*$/, '');
        migrated.set(label, (migrated.get(label) ?? 0) + 1);
      }
      return { out: lines(r.stdout), migrated };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  test('a long loop is spread, as its trace shows: none migrates but what needs a DF to be placed (--nodes 3 --threads 1; LUNA_SPREAD_LOOPS=0)', async () => {
    const [on, off] = await Promise.all([spreadRun(3, 1, true), spreadRun(3, 1, false)]);
    assertSpread(3, on, off);
  });

  test('a 64 MiB DF crosses nodes intact (--nodes 2)', async () => {
    const r = await luna(runArgs(2, 2, { file: program('bigdf'), args: ['64'] }), { timeoutMs: 90_000 });
    assertOk(r);
    assertBigDf(lines(r.stdout));
  });

  test('an exception on node 1 stops the run with exit 1 naming the node (--nodes 3)', async () => {
    const r = await luna(runArgs(3, 1, { file: program('nodefail') }), { timeoutMs: 30_000 });
    assertFails(r, NODEFAIL);
  });

  test('a node unrolling a loop of 50 000 CFs that wait for another node returns to its event loop throughout (1 thread)', async () => {
    // Before, the FIFO pump unrolled such a loop in one turn of the event loop: the node
    // answered nothing meanwhile, and a loop long enough outlasted the heartbeat timeout
    // (its peers declared it lost). Judged from the trace's busy intervals of node 0's system
    // thread, relative to the unrolling, so that a loaded machine stretches both alike.
    const dir = mkdtempSync(join(tmpdir(), 'luna-farwait-'));
    try {
      const r = await luna(['run', '--trace', dir, ...runArgs(2, 1, { file: program('farwait'), args: ['50000'] }).slice(1)], { timeoutMs: 90_000 });
      assertOk(r);
      let longest = 0, first = Infinity, last = -Infinity;
      for (const e of readTrace(dir).events) {
        if (e.node !== 0 || e.thread !== 0) continue;
        if (e.kind === 'sysBusy') longest = Math.max(longest, e.end - e.t);
        else if (e.kind === 'cfCreated') { first = Math.min(first, e.t); last = Math.max(last, e.t); }
      }
      const unroll = last - first;
      assert.ok(unroll > 0, describeRun(r));
      assert.ok(longest < 0.5 * unroll, `node 0's longest turn ${(longest / 1e6).toFixed(1)} ms of an unrolling of ${(unroll / 1e6).toFixed(1)} ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a node killed with SIGKILL mid-run: exit 1, the message names it, no orphan processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'luna-kill-'));
    const pidfile = join(dir, 'node.pid');
    try {
      let killedAt = 0;
      let pollErr: Error | null = null;
      let spawnedAt = 0;
      const run = luna(runArgs(3, 1, { file: program('killnode'), args: [pidfile] }), {
        timeoutMs: 60_000, onSpawn: () => { spawnedAt = Date.now(); },
      });
      let ended = false;
      run.then(() => { ended = true; }, () => { ended = true; });
      // wait for the ucode on node 1 to write its pid, then kill that process
      while (!existsSync(pidfile)) {
        if (ended) { pollErr = new Error('the run ended before node 1 wrote its pid file'); break; }
        if (spawnedAt !== 0 && Date.now() - spawnedAt > 30_000) { pollErr = new Error('node 1 never wrote its pid file'); break; }
        await new Promise((r) => setTimeout(r, 50));
      }
      let victim = 0;
      if (!pollErr) {
        const [pid, rank] = readFileSync(pidfile, 'utf8').trim().split(' ').map(Number);
        assert.equal(rank, 1, 'the holding CF should run on node 1');
        victim = pid!;
        process.kill(victim, 'SIGKILL');
        killedAt = performance.now();
      }
      const r = await run;
      if (pollErr) assert.fail(`${pollErr.message}\n${describeRun(r)}`);
      assert.equal(r.status, 1, describeRun(r));
      assert.ok(r.exitAt > killedAt, describeRun(r));
      assert.match(r.stderr, /node 1\b/, describeRun(r));
      // no process of this run survives (every node has the unique pid file path in its argv)
      let left: string[] = [];
      for (let k = 0; k < 20; k++) {
        const ps = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
        left = ps.stdout.split('\n').filter((l) => l.includes(pidfile));
        if (left.length === 0) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      assert.deepEqual(left, [], `orphan node processes 1 s after the run ended\n${describeRun(r)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('stealing: stealable CFs all placed on node 0 also run on node 1 (--nodes 2 --threads 1)', async () => {
    const r = await luna(runArgs(2, 1, { file: program('steal'), args: [String(STEAL_N), '5'] }), { timeoutMs: 60_000 });
    assertOk(r);
    assertStolen(lines(r.stdout), describeRun(r));
  });

  describe('launch under mpirun', { concurrency: true }, () => {
    const mpirun = hasCommand('mpirun');
    const skip = mpirun ? false : 'mpirun not found (Debian: apt-get install -y openmpi-bin)';
    const cases: Case[] = [
      { name: 'cyclic', file: program('cyclic'), args: ['5'] },
      { name: 'hello', file: 'examples/hello/hello.fa' },
      { name: 'seed004_cyclic', file: 'examples/seed004/seed004_cyclic.fa', args: ['8', '3', '5'] },
    ];
    for (const c of cases) {
      test(`mpirun --allow-run-as-root --oversubscribe -np 2 node bin/luna run ${c.file} = --nodes 2`, { skip }, async () => {
        const env = { ...process.env };
        for (const k of Object.keys(env)) if (k.startsWith('LUNA_')) delete env[k];
        const rendezvous = mkdtempSync(join(tmpdir(), 'luna-mpirun-')); // not the source tree
        env.LUNA_RENDEZVOUS_DIR = rendezvous;
        const [viaMpi, local] = await Promise.all([
          runRaw(['run', c.file, ...(c.args ?? [])], {
            command: ['mpirun', '--allow-run-as-root', '--oversubscribe', '-np', '2', process.execPath, 'bin/luna'],
            env, timeoutMs: 60_000,
          }),
          luna(runArgs(2, 2, c)),
        ]);
        rmSync(rendezvous, { recursive: true, force: true });
        assertOk(local);
        assert.equal(viaMpi.status, 0, describeRun(viaMpi));
        assert.deepEqual(sorted(lines(viaMpi.stdout)), sorted(lines(local.stdout)), `${describeRun(viaMpi)}\n${describeRun(local)}`);
      });
    }
  });
});
