// Several lanes on one node begin in the FIFO order and leave it once workers are wanted: a
// program whose CFs all run on the system thread runs there exactly as on one lane (the same
// CFs examined, the same woken), and one whose codes turn out long spreads over the workers
// from the middle of its loops, computing what it says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOk, describeRun, luna, timingOf } from './helpers.js';
import { CHAINS } from './tiny-chains.js';

const CHAINS_UCODES = `
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_start(x: Out): void { x.setInt(0); }
export function c_step(prev: In, next: Out): void { next.setInt(prev.getInt() + 1); }
export function c_show(j: number, last: In): void { console.log('x[' + j + '] = ' + last.getInt()); }
`;

/**
 * Tiny CFs first, then a loop of ~300 µs CFs (the policy boots the workers after a few of them,
 * while the loops are still being unrolled; they take over once booted), summed in a chain.
 */
const MIXED = `import c_tiny(int \`i, name \`a) as tiny;
import c_long(value \`a, name \`b) as long;
import c_zero(name \`s) as zero;
import c_add(value \`s, value \`b, name \`next) as add;
import c_show(value \`s) as show;
sub main(int n)
{
    df a, b, s;
    for i = 0..n-1 cf t[i]: tiny(i, a[i]);
    for i = 0..n-1 cf l[i]: long(a[i], b[i]);
    cf z: zero(s[0]);
    for i = 0..n-1 cf r[i]: add(s[i], b[i], s[i + 1]);
    show(s[n]);
}
`;
const MIXED_UCODES = `
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_tiny(i: number, a: Out): void { a.setInt(i); }
export function c_long(a: In, b: Out): void {
  const until = performance.now() + 0.3;
  while (performance.now() < until) { /* work */ }
  b.setInt(2 * a.getInt() + 1);
}
export function c_zero(s: Out): void { s.setInt(0); }
export function c_add(s: In, b: In, next: Out): void { next.setInt(s.getInt() + b.getInt()); }
export function c_show(s: In): void { console.log('sum = ' + s.getInt()); }
`;

interface Timing { inline: number; sent: number; examined: number; woken: number; workers: number }

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-lanes-later-'));
  for (const [name, fa, ts] of [['chains', CHAINS, CHAINS_UCODES], ['mixed', MIXED, MIXED_UCODES]] as const) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'p.fa'), fa);
    writeFileSync(join(dir, name, 'ucodes.ts'), ts);
  }
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (name: string, threads: number, args: number[]) =>
  luna(['run', '--timing', '--threads', String(threads), join(dir, name, 'p.fa'), ...args.map(String)], { timeoutMs: 90_000 });

test('tiny chains on 2 threads run on the system thread in the FIFO order of 1 thread', async () => {
  const [one, two] = await Promise.all([run('chains', 1, [8, 500]), run('chains', 2, [8, 500])]);
  for (const r of [one, two]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), Array.from({ length: 8 }, (_, j) => `x[${j}] = 500`).sort(), describeRun(r));
  }
  const t1 = timingOf<Timing>(one), t2 = timingOf<Timing>(two);
  assert.equal(t2.sent, 0, `nothing was worth a worker\n${describeRun(two)}`);
  // A call descheduled for a millisecond twice in a row (a loaded machine) boots a worker, and
  // the several-lane order follows: then the two runs are not comparable. Without, they are the
  // same order (the several-lane one examined 16 033 CFs and woke 131 for 8 × 2 000, against
  // 16 333 and 8 on one lane).
  if (t1.workers === 0 && t2.workers === 0) assert.deepEqual([t2.examined, t2.woken], [t1.examined, t1.woken], `the same CFs examined and woken as on 1 thread\n${describeRun(one)}\n${describeRun(two)}`);
});

test('a program whose codes turn out long leaves the FIFO order mid-loop and spreads over the workers', async () => {
  // 3 000 × 300 µs: at 1 000 a worker booting under load 17 came up after the last long CF had
  // run on the system thread (sent 0, one worker up at the end)
  const n = 3000;
  const want = Array.from({ length: n }, (_, i) => 2 * i + 1).reduce((x, y) => x + y, 0);
  const r = await run('mixed', 2, [n]);
  assertOk(r);
  assert.equal(r.stdout.trim(), `sum = ${want}`, describeRun(r));
  const t = timingOf<Timing>(r);
  assert.ok(t.inline > 0, `the first CFs ran on the system thread\n${describeRun(r)}`);
  assert.ok(t.sent > 0 && t.workers > 0, `the long ones went to workers\n${describeRun(r)}`);
});
