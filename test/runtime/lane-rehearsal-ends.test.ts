// The workers' rehearsal together (--warm-start) ends whatever the program's imports look like,
// and the run goes on: by its count where the lanes can make progress, by its time where a
// partner never answers. Which of a rehearsal's tasks wait for another lane depends on which
// imports take values and which make them, so programs whose imports come in every order (a
// value-taking import first among them) rehearse with lanes that do not keep in step; a program
// with a dynamic array (layers that load code into the workers) rehearses too; and a worker
// that stalls while loading its ucodes leaves the other's rehearsal to end by its time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { assertOk, describeRun, luna, timingOf } from './helpers.js';
import { PROGRAM as STENCIL, expected } from './stencil2.js';
import { fixture, runWithResource } from '../ucode/fixtures.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';

interface Timing { laneRehearsedCfs?: number; lanesRehearsedTogether?: number; laneRehearsalsCut?: number }

// (the system thread's rehearsal off: it would find these programs small and end the workers')
const NO_SYSTEM_REHEARSAL = { LUNA_REHEARSE_CFS: '0' };

const IMPORTS = {
  busy: 'import busy(int `ms, value `prev, name `next) as busy;',
  start: 'import start(name `x) as start;',
  show: 'import show(value `x, value `y) as show;',
};

/** A chain of 16 links from `start`, its end shown, with the imports in `order`. */
const chain = (order: (keyof typeof IMPORTS)[]): string => `${order.map((k) => IMPORTS[k]).join('\n')}
sub main()
{
    df x;
    start(x[0]);
    for i = 0..15
        busy(0, x[i], x[i + 1]);
    show(x[16], x[8]);
}
`;

const CHAIN_UCODES = `
export function start(x: { setInt(v: number): void }): void { x.setInt(0); }
export function busy(ms: number, prev: { getInt(): number }, next: { setInt(v: number): void }): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
  next.setInt(prev.getInt() + 1);
}
export function show(x: { getInt(): number }, y: { getInt(): number }): void { console.log('x[16] = ' + x.getInt() + ', x[8] = ' + y.getInt()); }
`;

const ORDERS: (keyof typeof IMPORTS)[][] = [['busy', 'start', 'show'], ['show', 'busy', 'start'], ['start', 'busy', 'show'], ['show', 'start', 'busy']];

for (const threads of [2, 3]) {
  test(`${threads} workers rehearse together whatever order the imports come in (a value-taking one first), the rehearsal ends and the chain runs`, async (t) => {
    const files: Record<string, string> = { 'ucodes.ts': CHAIN_UCODES };
    ORDERS.forEach((o, i) => { files[`c${i}.fa`] = chain(o); });
    const dir = fixture(t, files);
    for (let i = 0; i < ORDERS.length; i++) {
      const r = await luna(['run', '--warm-start', '--timing', '--threads', String(threads), join(dir, `c${i}.fa`)], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, LUNA_SYSTEM_LANE: '0', LUNA_LANE_REHEARSE_CFS: '3000' }, timeoutMs: 120_000 });
      assertOk(r);
      assert.equal(r.stdout, 'x[16] = 16, x[8] = 8\n', `imports ${ORDERS[i]!.join(', ')}\n${describeRun(r)}`);
      const timing = timingOf<Timing>(r);
      assert.equal(timing.lanesRehearsedTogether, threads, `imports ${ORDERS[i]!.join(', ')}\n${describeRun(r)}`);
      assert.ok((timing.laneRehearsedCfs ?? 0) >= threads * 100, describeRun(r));
    }
  });
}

// a dynamic array's program: the array's layer loads code into the workers, and the imports a
// rehearsal takes (not those with blocks) begin with one that takes values
const DDA_PROGRAM = `
import c_add(value \`a, value \`b, name \`sum) as add;
import c_fill(block \`P, int \`n, name \`made) as fill;
import c_total(block \`P, value \`made, name \`s) as total;
import c_zero(name \`z) as zero;
import c_check(value \`sum, int \`n) as check;

sub main(int n)
{
    df made, s, acc;
    dynamic P(16) @ { blocks: 2; };
    cf f: fill(P[0], n, made);
    total(P[0], made, s);
    zero(acc[0]);
    for i = 0..7
        add(acc[i], s, acc[i + 1]);
    check(acc[8], n);
}
`;

const DDA_UCODES = `
export function c_fill(P, n, made) {
  P.resize(n * 16);
  const f = new Float64Array(P.addElement(n).buffer, 0, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = i; f[2 * i + 1] = 1; }
  made.setInt(n);
}
export function c_total(P, made, s) {
  const f = P.f64();
  let sum = 0;
  for (let i = 0; i < f.length; i += 2) sum += f[i];
  if (f.length !== 2 * made.getInt()) throw new Error(f.length / 2 + ' elements, ' + made.getInt() + ' made');
  s.setReal(sum);
}
export function c_add(a, b, sum) { sum.setReal(a.getReal() + b.getReal()); }
export function c_zero(z) { z.setReal(0); }
export function c_check(sum, n) { if (sum.getReal() !== 8 * n * (n - 1) / 2) throw new Error('sum ' + sum.getReal()); }
`;

test('a dynamic array\'s program under --warm-start: its two workers rehearse together, and it runs', async (t) => {
  process.env.LUNA_LANE_REHEARSE_CFS = '3000';
  process.env.LUNA_SYSTEM_LANE = '0';
  t.after(() => { delete process.env.LUNA_LANE_REHEARSE_CFS; delete process.env.LUNA_SYSTEM_LANE; });
  const dir = fixture(t, { 'prog.fa': DDA_PROGRAM, 'ucodes.ts': DDA_UCODES });
  const ran = await runWithResource(dir, { threads: 2, args: ['200'], layers: [dynamicArrays()], rehearse: true });
  const r = ran.results[0]!;
  assert.equal(r.ok, true, r.message);
  const stats = r.stats as Timing;
  assert.equal(stats.lanesRehearsedTogether, 2, JSON.stringify(stats));
  assert.ok((stats.laneRehearsedCfs ?? 0) >= 200, JSON.stringify(stats));
});

// The first worker thread to load this module stalls there for 5 s, before its rehearsal: the
// other, rehearsing with it, waits for values it never sends until its time is out.
const STALLING = `
import { isMainThread } from 'node:worker_threads';
import { openSync } from 'node:fs';
function claim(): boolean { try { openSync(process.env.STALL_CLAIM!, 'wx'); return true; } catch { return false; } }
if (!isMainThread && claim()) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5000);
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(_kind: string, t: number, x: number, a: In, b: In, v: Out): void { v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003); }
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

test('a rehearsal whose partner never answers ends by its time, the late partner rehearses nothing, and the run completes', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': STALLING, 'p.fa': STENCIL });
  const steps = 40;
  // a count no rehearsal reaches: only its time (LUNA_LANE_REHEARSE_MS) can end it
  const r = await luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, STALL_CLAIM: join(dir, 'claim'), LUNA_SYSTEM_LANE: '0', LUNA_LANE_REHEARSE_CFS: '100000000', LUNA_LANE_REHEARSE_MS: '300' }, timeoutMs: 120_000 });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  const timing = timingOf<Timing>(r);
  // both cut: the one that waited gave up, the stalled one found the rehearsal over
  assert.equal(timing.laneRehearsalsCut, 2, describeRun(r));
  assert.equal(timing.lanesRehearsedTogether, 1, `only the worker that did not stall rehearsed\n${describeRun(r)}`);
});
