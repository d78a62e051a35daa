// Multi-node runtime, with real node processes and real sockets:
// every semantics fixture and every shipped example gives the same result on 1, 2, 3 nodes
// with 1 and 2 threads; locator_cyclic really places CFs (ucodes print their node);
// locator_replicating is readable everywhere; a 64 MiB DF crosses nodes intact; an exception
// on node 1 and a node killed with SIGKILL stop the run cleanly; a node unrolling a long loop
// of waiting CFs still answers its peers; stealable CFs move to idle nodes;
// a launch under mpirun gives the same output as --nodes 2.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertFails, assertOk, CASES, type Case, describeRun, hasCommand, lines, luna, program, runArgs, runRaw, sorted,
} from './helpers.js';
import { readTrace } from '../../src/trace/merge.js';

const CONFIGS: [nodes: number, threads: number][] = [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1], [3, 2]];

/** The shipped examples (small arguments; see examples/ * /README.md) and their output. */
const EXAMPLES: Case[] = [
  { name: 'hello', file: 'examples/hello/hello.fa', out: ['Hello from LuNA-ts!', 'Hello, world!', '2 + 40 = 42', 'squares: 1 4 9', 'hello: OK'] },
  { name: 'matmul', file: 'examples/matmul/matmul.fa', args: ['48', '3'], out: ['matmul: OK (n=48, 3x3 blocks)'] },
  { name: 'matmul_cyclic', file: 'examples/matmul/matmul_cyclic.fa', args: ['48', '3'], out: ['matmul: OK (n=48, 3x3 blocks)'] },
  { name: 'matmul-cpp', file: 'examples/matmul-cpp/matmul.fa', args: ['48', '3'], out: ['matmul-cpp: OK (n=48, 3x3 blocks)'] },
  { name: 'matmul_bench', file: 'examples/matmul/matmul_bench.fa', args: ['48', '3'], out: ['matmul_bench: OK (n=48, 3x3 blocks)'] },
  {
    name: 'recursive', file: 'examples/recursive/recursive.fa', args: ['12', '100'],
    out: ['fib(12) = 144', 'sum_sq(1..100) = 338350', 'recursive: OK (fib(12)=144, sum_sq(1..100)=338350)'],
  },
  {
    name: 'heat1d', file: 'examples/heat1d/heat1d.fa', args: ['16', '3', '0.0001', '50'],
    out: ['heat1d: OK (n=16, 3 blocks, 50 iterations, delta=1.969e-3 >= eps=0.0001)'],
  },
  { name: 'seed004', file: 'examples/seed004/seed004.fa', args: ['8', '3', '5'], out: ['seed004: OK (3x3 fragments of 8x8, repeat 5)'] },
  { name: 'seed004_cyclic', file: 'examples/seed004/seed004_cyclic.fa', args: ['8', '3', '5'], out: ['seed004_cyclic: OK (3x3 fragments of 8x8, repeat 5)'] },
  { name: 'seed004_stealable', file: 'examples/seed004/seed004_stealable.fa', args: ['8', '3', '5'], out: ['seed004_stealable: OK (3x3 fragments of 8x8, repeat 5)'] },
  { name: 'chain', file: 'examples/chain/chain.fa', args: ['300', '0'], out: ['chain: OK (n=300)'] },
  { name: 'independent', file: 'examples/independent/independent.fa', args: ['300', '0'], out: [] },
  { name: 'independent_checked', file: 'examples/independent/independent_checked.fa', args: ['200', '0'], out: ['independent: OK (n=200)'] },
  { name: 'tutorial', file: 'examples/tutorial/pi.fa', args: ['100000', '4'], out: ['pi ≈ 3.1415926536 from 100000 points in 4 blocks', 'tutorial: OK (n=100000, 4 blocks)'] },
];

function exampleFiles(): string[] {
  if (!existsSync('examples')) return [];
  const files: string[] = [];
  for (const d of readdirSync('examples', { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    for (const f of readdirSync(join('examples', d.name))) if (f.endsWith('.fa')) files.push(join('examples', d.name, f));
  }
  return files.sort();
}

/** Run `c` in every configuration; one failure message listing every configuration that differs. */
async function sameEverywhere(c: Case, configs: [number, number][]): Promise<void> {
  const runs = await Promise.all(configs.map(([n, t]) => luna(runArgs(n, t, c), { timeoutMs: 90_000 })));
  const bad: string[] = [];
  runs.forEach((r, i) => {
    const [n, t] = configs[i]!;
    try {
      if (c.out) {
        assert.equal(r.status, 0);
        assert.deepEqual(sorted(lines(r.stdout)), sorted(c.out));
      } else {
        assertFails(r, c.fails ?? [], c.status);
        for (const l of c.stdoutHas ?? []) assert.ok(lines(r.stdout).includes(l), `stdout lacks ${JSON.stringify(l)}`);
      }
    } catch (e) {
      bad.push(`[nodes ${n}, threads ${t}] ${(e as Error).message.split('\n')[0]}\n${describeRun(r)}`);
    }
  });
  if (bad.length > 0) assert.fail(`${bad.length} of ${configs.length} configurations differ:\n${bad.join('\n')}`);
}

// One concurrent suite: runs overlap (bounded by the limiter in helpers.ts).
describe('multi-node runtime', { concurrency: true }, () => {
  describe('same result on 1, 2, 3 nodes with 1 and 2 threads: semantics fixtures', { concurrency: true }, () => {
    // nodes 1 / threads 1 is semantics.test.ts
    for (const c of CASES) if (c.matrix !== false) test(c.name, () => sameEverywhere(c, CONFIGS.slice(1)));
  });

  describe('same result on 2 and 3 nodes with 1 and 2 threads: examples', { concurrency: true }, () => {
    // one node is test/examples
    test('every example program is in the table', () => {
      const have = new Set(EXAMPLES.map((c) => c.file));
      assert.deepEqual(exampleFiles().filter((f) => !have.has(f)), []);
    });
    for (const c of EXAMPLES) {
      test(`${c.file} ${(c.args ?? []).join(' ')}`, { skip: existsSync(c.file) ? false : `${c.file} not present` }, () => sameEverywhere(c, CONFIGS.filter(([n]) => n > 1)));
    }
  });

  const mod = (a: number, n: number) => ((a % n) + n) % n;

  describe('placement', { concurrency: true }, () => {
    // cyclic.fa, n = 5: e[i] on i, ng[i] on -i-1, m[i] on i+1 (map rule of the for block),
    // mo[i] on -i (map rule of main's block), DF x[i] owned by node i, made on 2i, read on i+2;
    // in sub inner: mo[i] on node 0 (main's rules are not visible there), nf[i] on nfparam k = 2i.
    const n = 5;
    const want = (N: number) => [
      ...Array.from({ length: n }, (_, i) => `expr ${i} @${mod(i, N)}`),
      ...Array.from({ length: n }, (_, i) => `neg ${i} @${mod(-i - 1, N)}`),
      ...Array.from({ length: n }, (_, i) => `map ${i} @${mod(i + 1, N)}`),
      ...Array.from({ length: n }, (_, i) => `outer ${i} @${mod(-i, N)}`),
      ...Array.from({ length: n }, (_, i) => `x ${i} = ${i * i} @${mod(i + 2, N)}`),
      ...Array.from({ length: n }, (_, i) => `insub ${i} @0`),
      ...Array.from({ length: n }, (_, i) => `nfparam ${i} @${mod(2 * i, N)}`),
    ];
    for (const [N, T] of CONFIGS) {
      test(`locator_cyclic (expression, negative, map forms) places CFs: --nodes ${N} --threads ${T}`, async () => {
        const r = await luna(runArgs(N, T, { file: program('cyclic'), args: [String(n)] }));
        assertOk(r);
        assert.deepEqual(sorted(lines(r.stdout)), sorted(want(N)), describeRun(r));
      });
    }
    for (const [N, T] of CONFIGS) {
      test(`locator_replicating (=> all, => 2) is readable from every node: --nodes ${N} --threads ${T}`, async () => {
        const r = await luna(runArgs(N, T, { file: program('replicate'), args: ['6'] }), { timeoutMs: 30_000 });
        assertOk(r);
        const w = [
          ...Array.from({ length: 6 }, (_, i) => `t ${i} = 42 @${mod(i, N)}`),
          ...Array.from({ length: 6 }, (_, i) => `u ${i} = 43 @${mod(i + 1, N)}`),
        ];
        assert.deepEqual(sorted(lines(r.stdout)), sorted(w), describeRun(r));
      });
    }
    // spread.fa, n = 40 (long enough to spread on 2 and 3 nodes): each node spawns its own CFs
    // of a loop; what a locator cannot place without a DF is spawned where the loop began.
    const spreadN = 40;
    const spreadWant = (N: number) => [
      ...Array.from({ length: spreadN }, (_, i) => `block ${i} = ${3 * i} @${mod(i + 1, N)}`),
      ...Array.from({ length: spreadN }, (_, i) => `dfloc ${i} @${mod(1 + i, N)}`),
      ...Array.from({ length: spreadN }, (_, i) => `iter ${i} @0`),
      ...Array.from({ length: spreadN }, (_, i) => `plain ${i} @0`),
    ];
    /** Output of spread.fa and the labels of the CFs that migrated (from the trace's tables). */
    async function spreadRun(N: number, T: number, spread: boolean): Promise<{ out: string[]; migrated: Map<string, number> }> {
      const dir = mkdtempSync(join(tmpdir(), 'luna-spread-'));
      try {
        const env = { ...process.env, LUNA_SPREAD_LOOPS: spread ? '1' : '0' };
        const r = await luna(['run', '--trace', join(dir, 't'), ...runArgs(N, T, { file: program('spread'), args: [String(spreadN)] }).slice(1)], { env, timeoutMs: 60_000 });
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
    for (const [N, T] of [[2, 1], [3, 1], [2, 2]] as const) {
      test(`a long loop is spread: each node spawns its CFs, none migrates but what needs a DF to be placed (--nodes ${N} --threads ${T})`, async () => {
        const [on, off] = await Promise.all([spreadRun(N, T, true), spreadRun(N, T, false)]);
        assert.deepEqual(sorted(on.out), sorted(spreadWant(N)));
        assert.deepEqual(sorted(off.out), sorted(spreadWant(N)));
        const other = (i: (k: number) => number) => Array.from({ length: spreadN }, (_, k) => k).filter((k) => mod(i(k), N) !== 0).length;
        // spread: the block DF's writer and reader, the iteration CFs and plain CFs are spawned
        // where they run; d[i] (its locator reads k) and the children of iterations on other
        // nodes (no locator: node 0) migrate
        const want = new Map([['a', other((k) => 2 * k)], ['d', other((k) => 1 + k)]].filter(([, c]) => c !== 0) as [string, number][]);
        assert.deepEqual(new Map([...on.migrated].sort()), want);
        // unspread, node 0 spawns every CF and migrates those placed elsewhere
        assert.equal(off.migrated.get('w'), other((k) => k));
        assert.equal(off.migrated.get('r'), other((k) => k + 1));
      });
    }
  });

  describe('large DFs, faults, stealing', { concurrency: true }, () => {
    for (const N of [2, 3]) {
      test(`a 64 MiB DF crosses nodes intact (--nodes ${N})`, async () => {
        const r = await luna(runArgs(N, 2, { file: program('bigdf'), args: ['64'] }), { timeoutMs: 90_000 });
        assertOk(r);
        const out = sorted(lines(r.stdout));
        assert.equal(out.length, 2, describeRun(r));
        assert.match(out[0]!, /^x intact 67108864 bytes checksum \d+$/, describeRun(r));
        assert.match(out[1]!, /^y intact 67108864 bytes checksum \d+$/, describeRun(r));
      });
    }

    for (const N of [2, 3]) {
      test(`an exception on node 1 stops the run with exit 1 naming the node (--nodes ${N})`, async () => {
        const r = await luna(runArgs(N, 1, { file: program('nodefail') }), { timeoutMs: 30_000 });
        assertFails(r, [/node 1\b/, /exploded 7 on rank 1/, /CF boom \(ucode c_explode, id [\d_]+\)[^\n]* at [^\n]*nodefail\.fa:8:5/]);
      });
    }

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

    for (const T of [1, 2]) {
      test(`stealing: stealable CFs all placed on node 0 also run on node 1 (--nodes 2 --threads ${T})`, async () => {
        const n = 200;
        const r = await luna(runArgs(2, T, { file: program('steal'), args: [String(n), '5'] }), { timeoutMs: 60_000 });
        assertOk(r);
        const out = lines(r.stdout);
        const ids = out.map((l) => Number(/^s (\d+) @\d+$/.exec(l)?.[1] ?? -1));
        assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i), `every CF once\n${describeRun(r)}`);
        const onNode1 = out.filter((l) => l.endsWith(' @1')).length;
        assert.ok(onNode1 > 0, `no stealable CF ran on node 1 (all ${n} on node 0)\n${describeRun(r)}`);
      });
    }
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
        const [viaMpi, local] = await Promise.all([
          runRaw(['run', c.file, ...(c.args ?? [])], {
            command: ['mpirun', '--allow-run-as-root', '--oversubscribe', '-np', '2', process.execPath, 'bin/luna'],
            env, timeoutMs: 60_000,
          }),
          luna(runArgs(2, 2, c)),
        ]);
        assertOk(local);
        assert.equal(viaMpi.status, 0, describeRun(viaMpi));
        assert.deepEqual(sorted(lines(viaMpi.stdout)), sorted(lines(local.stdout)), `${describeRun(viaMpi)}\n${describeRun(local)}`);
      });
    }
  });
});
