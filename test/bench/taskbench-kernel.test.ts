// Task Bench's TypeScript kernel optimised before the span (bench/taskbench/kernel.ts warmKernel):
// the warm-up leaves the kernel's results as they were, and a generated program whose ucode
// module warms the kernel as it loads runs to its checked end, as does the bare floor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeBound, warmKernel } from '../../bench/taskbench/kernel.js';
import { generate, ucodes } from '../../bench/taskbench/generate.js';
import { graph } from '../../bench/taskbench/patterns.js';
import { BOOT_ONLY, luna } from '../runtime/helpers.js';

const KERNEL_TS = fileURLToPath(new URL('../../../bench/taskbench/kernel.ts', import.meta.url));
const LOCKSTEP = fileURLToPath(new URL('../../bench/raw-lockstep.js', import.meta.url));

test('taskbench kernel: the warm-up leaves its results as they were', () => {
  const before = [0, 1, 7, 100].map((n) => computeBound(n));
  warmKernel();
  assert.deepEqual([0, 1, 7, 100].map((n) => computeBound(n)), before);
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
  assert.match(r.stdout, /µs per step \(16 iterations, 20 steps, lockstep, TypeScript kernel\); lanes busy [\d.]+ \/ [\d.]+ %/);
});
