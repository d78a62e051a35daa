// Big programs (docs/reliability.md, "Front end"): names resolve by map, so many subs cost
// linear time; a program whose compiled form would not fit the heap is refused with LUNA-P020
// before compiling, and a stage that outgrows its estimate stops with P020 instead of V8
// aborting the process. Full size (1 M subs, 50 MB): node dist/bench/frontend.js --big [HEAP_MB].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { denseProgram, manySubsProgram } from '../../bench/frontend.js';
import { compileFrontEnd } from '../../src/lang/index.js';
import { originOf } from '../../src/lang/origin.js';
import { compileProgram, countStatements } from '../../src/program/compile.js';
import { inTempDir, LUNA } from '../cli/helpers.js';

const UCODES = ['init', 'add', 'inc', 'show', 'set'].map((n) => `export function c_${n}(..._: unknown[]): void {}\n`).join('');

test('20 000 subs: one code number each, every call compiled against its sub', () => {
  const n = 20_000;
  const fe = compileFrontEnd('subs.fa', { source: manySubsProgram(n) });
  assert.deepEqual(fe.diagnostics.filter((d) => d.severity === 'error'), []);
  assert.equal(countStatements(fe.program!), n + 1);
  const p = compileProgram(fe.program!, (pos) => originOf(fe.pre, pos));
  assert.equal(p.sites.length, n + 1);
  assert.equal(new Set(p.codes).size, p.codes.length, 'a name got two code numbers');
  for (const k of [0, 1, n / 2, n - 1]) {
    const t = p.subs.get(`s${k}`)!;
    assert.equal(p.codes[t.code], `s${k}`);
    const call = t.body.stmts[0]!;
    assert.ok(call.kind === 'call' && call.imp.alias === 'init' && call.code === p.codes.indexOf('init'));
  }
});

test('a program whose compiled form would not fit the heap is refused with LUNA-P020 before compiling', () => inTempDir('luna-size-', async (dir) => {
  // 30 000 call statements: the front end fits a 64 MB heap, their sites would not
  writeFileSync(join(dir, 'dense.fa'), denseProgram(1 << 20));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  const r = spawnSync(process.execPath, ['--max-old-space-size=64', LUNA, 'check', 'dense.fa'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /^dense\.fa: error\[LUNA-P020\]: program too large for the memory available: compiling its \d+ statements needs about \d+ MB, the JavaScript heap has \d+ MB left \(give node more: NODE_OPTIONS=--max-old-space-size=MB\)$/m);
  assert.doesNotMatch(r.stderr, /FATAL|heap out of memory|internal error|\n\s+at /);
}));

test('the heap guard stops a growing stage before V8 aborts, on Node\'s flags as given', () => {
  // a 48 MB old space: heap_size_limit adds the young generation (larger on Node 24), the guard must not
  const heap = JSON.stringify(new URL('../../src/lang/heap.js', import.meta.url).href);
  const code = `
    const { HeapGuard, heapLeft, oldGenerationLimit } = await import(${heap});
    const guard = new HeapGuard(64), keep = [];
    let stopped = false;
    for (let i = 0; i < 1e7 && !stopped; i++) { keep.push({ i, s: 'x' + i }); stopped = guard.exhausted(); }
    console.log(JSON.stringify({ stopped, limitMB: oldGenerationLimit() / 2 ** 20, leftMB: heapLeft() / 2 ** 20, kept: keep.length }));`;
  const c = spawnSync(process.execPath, ['--max-old-space-size=48', '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(c.status, 0, c.stderr);
  const out = JSON.parse(c.stdout) as { stopped: boolean; limitMB: number; leftMB: number; kept: number };
  assert.equal(out.limitMB, 48);
  assert.ok(out.stopped, `never stopped: ${c.stdout}`);
  assert.ok(out.leftMB > 0 && out.leftMB < 48, c.stdout);
});
