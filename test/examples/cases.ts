// The shipped examples' test cases: each program with arguments and the output it must print
// (examples.test.ts runs them through the CLI, nodes.test.ts on several in-process nodes).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Case {
  file: string;
  args: string[];
  /** stdout, line by line: exact with 1 thread, as a multiset with 2. */
  out: string[];
}

export const CASES: Case[] = [
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
  {
    // 2x2x2 subdomains over x-slabs on 2 nodes; checked against the sequential reference
    file: 'examples/pic3d/pic3d.fa',
    args: ['8', '2', '600', '3', '2', '1', '2'],
    out: ['pic3d: OK (N=8, 2x2x2 subdomains, 600 particles, 3 steps, 2 sweeps; mass exact, momentum and positions match the reference)'],
  },
  {
    // the same with the C++ kernels
    file: 'examples/pic3d-cpp/pic3d.fa',
    args: ['8', '2', '600', '3', '2', '1', '2'],
    out: ['pic3d: OK (N=8, 2x2x2 subdomains, 600 particles, 3 steps, 2 sweeps; mass exact, momentum and positions match the reference)'],
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

/**
 * More arguments, smaller ones, for runs on several nodes (test/examples/nodes.test.ts), beside
 * CASES there.
 */
/**
 * Examples whose programs need the dynamic arrays' layer (the CLI gives it; the in-process
 * runner of nodes.test.ts does not): run through the CLI on 1 and 2 nodes by
 * test/dda/lang.test.ts, test/dda/collapse.test.ts and test/dda/pic3d.test.ts.
 */
export const LAYERED: readonly string[] = ['examples/particles/particles.fa', 'examples/collapse/collapse.fa', 'examples/pic3d/pic3d_dda.fa', 'examples/pic3d-cpp/pic3d_dda.fa'];

export const SMALL: Case[] = [
  { file: 'examples/matmul/matmul.fa', args: ['48', '3'], out: ['matmul: OK (n=48, 3x3 blocks)'] },
  { file: 'examples/matmul/matmul_cyclic.fa', args: ['48', '3'], out: ['matmul: OK (n=48, 3x3 blocks)'] },
  { file: 'examples/matmul-cpp/matmul.fa', args: ['48', '3'], out: ['matmul-cpp: OK (n=48, 3x3 blocks)'] },
  { file: 'examples/matmul/matmul_bench.fa', args: ['48', '3'], out: ['matmul_bench: OK (n=48, 3x3 blocks)'] },
  {
    file: 'examples/recursive/recursive.fa', args: ['12', '100'],
    out: ['fib(12) = 144', 'sum_sq(1..100) = 338350', 'recursive: OK (fib(12)=144, sum_sq(1..100)=338350)'],
  },
  { file: 'examples/seed004/seed004.fa', args: ['8', '3', '5'], out: ['seed004: OK (3x3 fragments of 8x8, repeat 5)'] },
  { file: 'examples/seed004/seed004_cyclic.fa', args: ['8', '3', '5'], out: ['seed004_cyclic: OK (3x3 fragments of 8x8, repeat 5)'] },
  {
    // 3x3x3: every neighbour distinct, x-slabs on 3 nodes
    file: 'examples/pic3d/pic3d.fa',
    args: ['9', '3', '800', '2', '2', '1', '3'],
    out: ['pic3d: OK (N=9, 3x3x3 subdomains, 800 particles, 2 steps, 2 sweeps; mass exact, momentum and positions match the reference)'],
  },
  { file: 'examples/chain/chain.fa', args: ['300', '0'], out: ['chain: OK (n=300)'] },
  { file: 'examples/independent/independent.fa', args: ['300', '0'], out: [] },
  { file: 'examples/independent/independent_checked.fa', args: ['200', '0'], out: ['independent: OK (n=200)'] },
  { file: 'examples/tutorial/pi.fa', args: ['100000', '4'], out: ['pi ≈ 3.1415926536 from 100000 points in 4 blocks', 'tutorial: OK (n=100000, 4 blocks)'] },
];

/** Every .fa file shipped under examples/. */
export function exampleFiles(): string[] {
  const files: string[] = [];
  for (const dir of readdirSync('examples', { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join('examples', dir.name))) if (f.endsWith('.fa')) files.push(join('examples', dir.name, f));
  }
  return files.sort();
}
