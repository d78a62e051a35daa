// Task Bench's TypeScript kernel optimised before the span (bench/taskbench/kernel.ts warmKernel):
// the warm-up leaves the kernel's results as they were, and a generated program whose ucode
// module warms the kernel as it loads runs to its checked end, as does the bare floor; the kernel's
// thread CPU time is sampled and reported per thread (kernel.ts sampledKernel), read back as the
// side-by-side's C++ kernels' is (bench/original/spans.ts parseKernelUs), and a sweep's METGs
// are taken as their median (sweep.ts medianMetg).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as kernel from '../../bench/taskbench/kernel.js';
import { compileKernel, computeBound, fastestOf, sampledKernel, warmKernel } from '../../bench/taskbench/kernel.js';
import { generate, ucodes } from '../../bench/taskbench/generate.js';
import { graph } from '../../bench/taskbench/patterns.js';
import { medianMetg } from '../../bench/taskbench/sweep.js';
import { parseKernelUs } from '../../bench/original/spans.js';
import { addonPath } from '../../src/core/addon.js';
import { BOOT_ONLY, luna } from '../runtime/helpers.js';

const KERNEL_TS = fileURLToPath(new URL('../../../bench/taskbench/kernel.ts', import.meta.url));
const LOCKSTEP = fileURLToPath(new URL('../../bench/raw-lockstep.js', import.meta.url));
const COMPILES = fileURLToPath(new URL('../../bench/raw-kernel-compiles.js', import.meta.url));

test('taskbench kernel: the warm-up keeps the fastest of several compiles of the kernel, with the same results', () => {
  const before = [0, 1, 7, 100].map((n) => kernel.computeBound(n));
  // ties go to the first; each candidate is timed once, in order
  const order: string[] = [];
  assert.equal(fastestOf(['a', 'b', 'c', 'd'], (f) => { order.push(f); return { a: 5, b: 2, c: 3, d: 2 }[f]!; }), 'b');
  assert.deepEqual(order, ['a', 'b', 'c', 'd']);
  // every compile warmed and timed by the given timer, each later one faster: the last is kept,
  // a function of its own, and importers see it through the live binding
  const timed: ((iters: number) => number)[] = [];
  warmKernel((f) => { timed.push(f); return 100 - timed.length; });
  assert.ok(timed.length >= 4, `compiles timed: ${timed.length}`);
  assert.equal(new Set(timed).size, timed.length);
  // each compile of its own text: V8 caches a `new Function` by its source, and compiles of one
  // source share their feedback (the code then is no longer specialised to the array: 72 ns an
  // iteration against 18–28)
  assert.equal(new Set(timed.map((f) => String(f))).size, timed.length);
  assert.notEqual(String(compileKernel()), String(compileKernel()));
  // and of its own code: the compiles a warm-up times carry their loops at different offsets of
  // their code (guards that never fire ahead of them), since V8 placed every compile of one
  // machine code slow in some workers; the guards change no result (below)
  const loopsAt = (f: (iters: number) => number): number => String(f).indexOf('for (');
  assert.ok(new Set(timed.map(loopsAt)).size >= 4, `offsets of the loops in the compiles' texts: ${timed.map(loopsAt).join(', ')}`);
  for (const f of timed) assert.deepEqual([0, 1, 7, 100].map((n) => f(n)), before);
  assert.equal(kernel.computeBound, timed.at(-1));
  assert.deepEqual([0, 1, 7, 100].map((n) => kernel.computeBound(n)), before);
  warmKernel();
  assert.deepEqual([0, 1, 7, 100].map((n) => kernel.computeBound(n)), before);
  // 0 rounds: the sum of the initial array
  assert.ok(Math.abs(before[0]! - Array.from({ length: 64 }, (_, j) => 1 + j * 1e-3).reduce((a, b) => a + b, 0)) < 1e-9);
});

test('taskbench kernel: a generated program whose ucode module warms the kernel runs to its checked end on 1×2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-tb-warm-'));
  try {
    const { program, arities } = generate(graph('stencil_1d', 2, 8));
    const src = ucodes(arities, KERNEL_TS, { warm: true });
    assert.match(src, /^warmKernel\(\);$/m);
    writeFileSync(join(dir, 'p.fa'), program);
    writeFileSync(join(dir, 'ucodes.ts'), src);
    const r = await luna(['run', '--threads', '2', '--warm-start', join(dir, 'p.fa'), '8', '16'], { env: { ...process.env, ...BOOT_ONLY } });
    assert.equal(r.status, 0, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('taskbench kernel: the bare floor warms the kernel and runs its lockstep', () => {
  const r = spawnSync(process.execPath, [LOCKSTEP, '16', '20', 'lockstep'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /µs per step \(16 iterations, 20 steps, lockstep, TypeScript kernel\); lanes busy [\d.]+ \/ [\d.]+ % of the span; the kernel's thread CPU [\d.]+ µs per task/);
});

test('taskbench kernel: the compiles probe times each compile of the kernel, and refuses a bad count', () => {
  const r = spawnSync(process.execPath, [COMPILES, '3', '64'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^[\d.]+ slowest ÷ fastest compile; ns an iteration \(64 iterations, thread CPU\): [\d.]+ [\d.]+ [\d.]+$/m);
  const bad = spawnSync(process.execPath, [COMPILES, '0'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^usage: node dist\/bench\/raw-kernel-compiles\.js/);
});

test('taskbench kernel: one call in 4 is timed on the thread clock, and the totals are printed every 16 timed calls', () => {
  // a clock that advances 500 ns between two reads: every timed call measures 500 ns
  let clock = 0;
  const lines: string[] = [];
  const k = sampledKernel(() => (clock += 500), 7, (l) => lines.push(l));
  for (let i = 0; i < 128; i++) assert.equal(k(i % 5), computeBound(i % 5));
  // 128 calls: 32 timed (one clock pair each), two reports
  assert.equal(clock, 32 * 2 * 500);
  assert.deepEqual(lines, ['luna-kernel 7 8000 16\n', 'luna-kernel 7 16000 32\n']);
  // the harness reads the last line of each key: 0.5 µs a call
  assert.equal(parseKernelUs(lines.join('')), 0.5);
  assert.equal(parseKernelUs(lines.join('') + 'luna-kernel 8 3000 16\n'), (16000 + 3000) / 48 / 1000);
});

test('taskbench kernel: a generated program on 1×2 reports its kernel\'s thread CPU from each worker', async () => {
  const clock = addonPath('thread_clock');
  assert.ok(clock, 'the thread clock addon is built at install (build/Release/thread_clock.node)');
  const dir = mkdtempSync(join(tmpdir(), 'luna-tb-cpu-'));
  try {
    // 200 steps × 2 tasks: 100 timed calls, reported in sixteens by each worker
    const { program, arities } = generate(graph('stencil_1d', 2, 200));
    writeFileSync(join(dir, 'p.fa'), program);
    writeFileSync(join(dir, 'ucodes.ts'), ucodes(arities, KERNEL_TS, { warm: true, cpuClock: clock }));
    const r = await luna(['run', '--threads', '2', '--warm-start', join(dir, 'p.fa'), '200', '64'], { env: { ...process.env, ...BOOT_ONLY } });
    assert.equal(r.status, 0, r.stderr);
    const last = new Map<string, number>();
    for (const m of r.stderr.matchAll(/^luna-kernel (\d+) (\d+) (\d+)$/gm)) last.set(m[1]!, Number(m[3]));
    // one key per worker thread of this process (the system thread runs no task here)
    assert.ok(last.size >= 1 && last.size <= 2, r.stderr);
    const timed = [...last.values()].reduce((a, b) => a + b, 0);
    assert.ok(timed >= 100 - 2 * 15 && timed <= 100, `timed calls reported: ${timed}`);
    const us = parseKernelUs(r.stderr);
    assert.ok(us !== undefined && us > 0, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('taskbench sweep: the METG of several sweeps is their median, a sweep below the level from its first point counting above the rest', () => {
  assert.equal(medianMetg([191, 74.3, 119]), 119);
  assert.equal(medianMetg([NaN, 80, 90]), 90);
  assert.ok(Number.isNaN(medianMetg([NaN, NaN, 90])));
});
