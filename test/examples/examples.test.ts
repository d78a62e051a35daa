// Runs every shipped example (examples/*/*.fa) through the CLI, with 1 and 2 worker
// threads, and checks its exit code and output; every example must also pass `luna check`.
// Compiled to dist/test/examples/; run from the repository root (npm test).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const LUNA = 'bin/luna';
const TIMEOUT_MS = 120_000;

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function luna(args: string[], timeout = TIMEOUT_MS): Run {
  const r = spawnSync(process.execPath, [LUNA, ...args], { encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  if (r.error && (r.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function lines(s: string): string[] {
  const l = s.split('\n');
  if (l[l.length - 1] === '') l.pop();
  return l;
}

function describeRun(args: string[], r: Run): string {
  return `luna ${args.join(' ')} -> status ${r.status}${r.signal ? ` (signal ${r.signal})` : ''}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;
}

interface Case {
  file: string;
  args: string[];
  /** stdout, line by line: exact with 1 thread, as a multiset with 2. */
  out: string[];
}

const CASES: Case[] = [
  {
    file: 'examples/hello/hello.fa',
    args: [],
    out: ['Hello from LuNA-ts!', 'Hello, world!', '2 + 40 = 42', 'squares: 1 4 9', 'hello: OK'],
  },
  { file: 'examples/matmul/matmul.fa', args: ['64', '4'], out: ['matmul: OK (n=64, 4x4 blocks)'] },
  { file: 'examples/matmul/matmul.fa', args: ['30', '1'], out: ['matmul: OK (n=30, 1x1 blocks)'] },
  { file: 'examples/matmul/matmul.fa', args: ['60', '5'], out: ['matmul: OK (n=60, 5x5 blocks)'] },
  { file: 'examples/matmul/matmul_bench.fa', args: ['64', '4'], out: ['matmul_bench: OK (n=64, 4x4 blocks)'] },
  { file: 'examples/matmul/matmul_cyclic.fa', args: ['64', '4'], out: ['matmul: OK (n=64, 4x4 blocks)'] },
  // C++ kernels beside TypeScript ucodes (needs the system C++ compiler, like the native addons)
  { file: 'examples/matmul-cpp/matmul.fa', args: ['64', '4'], out: ['matmul-cpp: OK (n=64, 4x4 blocks)'] },
  {
    file: 'examples/recursive/recursive.fa',
    args: ['16', '500'],
    out: ['fib(16) = 987', 'sum_sq(1..500) = 41791750', 'recursive: OK (fib(16)=987, sum_sq(1..500)=41791750)'],
  },
  {
    file: 'examples/recursive/recursive.fa',
    args: ['0', '1'],
    out: ['fib(0) = 0', 'sum_sq(1..1) = 1', 'recursive: OK (fib(0)=0, sum_sq(1..1)=1)'],
  },
  // seed 004's test_3: the conveyor sweep, checked against the sequential solver (verify = 1)
  { file: 'examples/heat3d/heat3d.fa', args: ['12', '3', '3', '3', '2', '0.001', '2', '1'], out: ['heat3d: OK (12^3 points, 3x3x3 blocks, 2 steps)'] },
  { file: 'examples/heat3d/heat3d.fa', args: ['10', '2', '3', '1', '1', '0.01', '1', '1'], out: ['heat3d: OK (10^3 points, 2x3x1 blocks, 1 steps)'] },
  { file: 'examples/heat3d-cpp/heat3d.fa', args: ['12', '3', '3', '3', '2', '0.001', '2', '1'], out: ['heat3d-cpp: OK (12^3 points, 3x3x3 blocks, 2 steps)'] },
  {
    file: 'examples/heat1d/heat1d.fa',
    args: ['32', '4', '0.0001', '10000'],
    out: ['heat1d: OK (n=32, 4 blocks, 371 iterations, delta=9.973e-5 < eps=0.0001)'],
  },
  {
    // stopped by the iteration limit
    file: 'examples/heat1d/heat1d.fa',
    args: ['16', '3', '0.0001', '50'],
    out: ['heat1d: OK (n=16, 3 blocks, 50 iterations, delta=1.969e-3 >= eps=0.0001)'],
  },
  {
    file: 'examples/heat1d/heat1d.fa',
    args: ['10', '1', '0.001', '1000'],
    out: ['heat1d: OK (n=10, 1 block, 42 iterations, delta=9.877e-4 < eps=0.001)'],
  },
  {
    // one point per block: every value crosses a block boundary
    file: 'examples/heat1d/heat1d.fa',
    args: ['20', '20', '0.001', '1000'],
    out: ['heat1d: OK (n=20, 20 blocks, 90 iterations, delta=9.838e-4 < eps=0.001)'],
  },
  {
    // the while loop body never runs
    file: 'examples/heat1d/heat1d.fa',
    args: ['32', '4', '2', '10'],
    out: ['heat1d: OK (n=32, 4 blocks, 0 iterations, delta=1.000e+0 < eps=2)'],
  },
  {
    file: 'examples/seed004/seed004.fa',
    args: ['16', '4', '10'],
    out: ['seed004: OK (4x4 fragments of 16x16, repeat 10)'],
  },
  {
    file: 'examples/seed004/seed004_cyclic.fa',
    args: ['16', '4', '10'],
    out: ['seed004_cyclic: OK (4x4 fragments of 16x16, repeat 10)'],
  },
  {
    file: 'examples/seed004/seed004_stealable.fa',
    args: ['8', '3', '5'],
    out: ['seed004_stealable: OK (3x3 fragments of 8x8, repeat 5)'],
  },
  { file: 'examples/chain/chain.fa', args: ['2000', '0'], out: ['chain: OK (n=2000)'] },
  { file: 'examples/chain/chain.fa', args: ['20', '100'], out: ['chain: OK (n=20)'] },
  { file: 'examples/chain/chain.fa', args: ['0', '0'], out: ['chain: OK (n=0)'] },
  { file: 'examples/independent/independent.fa', args: ['2000', '0'], out: [] },
  { file: 'examples/independent/independent.fa', args: ['20', '100'], out: [] },
  { file: 'examples/independent/independent_checked.fa', args: ['1000', '0'], out: ['independent: OK (n=1000)'] },
  { file: 'examples/independent/independent_checked.fa', args: ['1', '0'], out: ['independent: OK (n=1)'] },
  {
    // pi to ten decimals is 3.1415926536; the midpoint rule's error at n = 1e6 is below 1e-12
    file: 'examples/tutorial/pi.fa',
    args: ['1000000', '8'],
    out: ['pi ≈ 3.1415926536 from 1000000 points in 8 blocks', 'tutorial: OK (n=1000000, 8 blocks)'],
  },
  {
    // one block: no parallelism, the same result
    file: 'examples/tutorial/pi.fa',
    args: ['2000000', '1'],
    out: ['pi ≈ 3.1415926536 from 2000000 points in 1 block', 'tutorial: OK (n=2000000, 1 block)'],
  },
];

/** Every .fa file shipped under examples/. */
function exampleFiles(): string[] {
  const files: string[] = [];
  for (const dir of readdirSync('examples', { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join('examples', dir.name))) if (f.endsWith('.fa')) files.push(join('examples', dir.name, f));
  }
  return files.sort();
}

describe('examples: every .fa is run by a test case', () => {
  test('coverage', () => {
    const run = new Set(CASES.map((c) => c.file));
    assert.deepEqual(exampleFiles().filter((f) => !run.has(f)), []);
  });
});

describe('examples: luna check', () => {
  for (const file of exampleFiles()) {
    test(`luna check ${file}`, () => {
      const r = luna(['check', file]);
      assert.equal(r.status, 0, describeRun(['check', file], r));
      assert.doesNotMatch(r.stdout + r.stderr, /\berror\b/i, describeRun(['check', file], r));
    });
  }
});

for (const threads of [1, 2]) {
  describe(`examples: luna run --threads ${threads}`, () => {
    for (const c of CASES) {
      const args = ['run', '--threads', String(threads), c.file, ...c.args];
      test(`${c.file} ${c.args.join(' ')}`, () => {
        const r = luna(args);
        assert.equal(r.status, 0, describeRun(args, r));
        if (threads === 1) assert.deepEqual(lines(r.stdout), c.out, describeRun(args, r));
        else assert.deepEqual(lines(r.stdout).sort(), [...c.out].sort(), describeRun(args, r));
      });
    }
  });
}

// Several node processes: the same results with N = 2 and 3 nodes. The first
// case of every .fa file runs on 2 nodes x 1 thread and 3 nodes x 2 threads (a node
// process costs ~0.3 s to start); a few on the other combinations.
const FIRST_PER_FILE = CASES.filter((c, i) => CASES.findIndex((d) => d.file === c.file) === i);
const SOME = FIRST_PER_FILE.filter((c) => /hello|heat1d|heat3d\/|seed004_cyclic|matmul_cyclic|chain|tutorial/.test(c.file));
const NODE_RUNS: Array<{ nodes: number; threads: number; cases: Case[] }> = [
  { nodes: 2, threads: 1, cases: FIRST_PER_FILE },
  { nodes: 3, threads: 2, cases: FIRST_PER_FILE },
  { nodes: 2, threads: 2, cases: SOME },
  { nodes: 3, threads: 1, cases: SOME },
];

for (const { nodes, threads, cases } of NODE_RUNS) {
  describe(`examples: luna run --nodes ${nodes} --threads ${threads}`, () => {
    for (const c of cases) {
      const args = ['run', '--nodes', String(nodes), '--threads', String(threads), c.file, ...c.args];
      test(`${c.file} ${c.args.join(' ')}`, () => {
        const r = luna(args);
        assert.equal(r.status, 0, describeRun(args, r));
        assert.deepEqual(lines(r.stdout).sort(), [...c.out].sort(), describeRun(args, r));
      });
    }
  });
}

describe('examples: failures are reported', () => {
  test('matmul with n not a multiple of nb prints FAILED and exits 1', () => {
    const args = ['run', '--threads', '1', 'examples/matmul/matmul.fa', '10', '3'];
    const r = luna(args);
    assert.equal(r.status, 1, describeRun(args, r));
    assert.match(r.stdout, /^matmul: FAILED \(n=10 must be a positive multiple of nb=3\)$/m, describeRun(args, r));
  });

  test('the tutorial with more blocks than points prints FAILED and exits 1', () => {
    const args = ['run', '--threads', '1', 'examples/tutorial/pi.fa', '10', '20'];
    const r = luna(args);
    assert.equal(r.status, 1, describeRun(args, r));
    assert.match(r.stdout, /^tutorial: FAILED \(1 <= blocks <= n is needed, got n=10, blocks=20\)$/m, describeRun(args, r));
  });

  test('a missing command-line argument is a usage error (exit 2) naming main\'s parameters; nothing runs', () => {
    const args = ['run', '--threads', '1', 'examples/matmul/matmul.fa', '64'];
    const r = luna(args);
    assert.equal(r.status, 2, describeRun(args, r));
    assert.match(r.stderr, /too few program arguments: main\(int n, int nb\) needs 2, 1 given/, describeRun(args, r));
    assert.equal(r.stdout, '', describeRun(args, r));
  });
});

describe('examples: original driver form', () => {
  test('luna --worker-threads-count=1 hello.fa', () => {
    const args = ['--worker-threads-count=1', 'examples/hello/hello.fa'];
    const r = luna(args);
    assert.equal(r.status, 0, describeRun(args, r));
    assert.deepEqual(lines(r.stdout), CASES[0].out, describeRun(args, r));
  });

  test('luna -q --worker-threads-count=2 seed004.fa 8 2 3', () => {
    const args = ['-q', '--worker-threads-count=2', 'examples/seed004/seed004.fa', '8', '2', '3'];
    const r = luna(args);
    assert.equal(r.status, 0, describeRun(args, r));
    assert.deepEqual(lines(r.stdout), ['seed004: OK (2x2 fragments of 8x8, repeat 3)'], describeRun(args, r));
  });
});

describe('examples: ucodes type-check', () => {
  test('tsc --noEmit --strict examples/*/ucodes.ts', () => {
    const ucodes = readdirSync('examples', { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => readdirSync(join('examples', d.name)).filter((f) => f.endsWith('.ts')).map((f) => join('examples', d.name, f)));
    assert.ok(ucodes.length > 0);
    const r = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
        '--target', 'es2022', '--skipLibCheck', '--types', 'node', ...ucodes],
      { encoding: 'utf8', timeout: TIMEOUT_MS },
    );
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });
});
