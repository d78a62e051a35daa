// Waits as the W of SLOW, on hand-built traces: inside a CF (W = the wait, U = its CPU less the
// CPU spent waiting, O = the rest), outside any CF (carved from the idle interval's parts and from
// the tail), and what the report blames and recommends.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSlow, interpretFindings, type SlowReport } from '../../src/analysis/slow/index.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/trace.js';
import { TB, manifest } from './tb.js';
import { WRITTEN, writeWaitingTrace } from './written.js';

const w0 = (r: SlowReport) => r.perThread[0];
const sums = (r: SlowReport): void => {
  assert.equal(r.sum, r.tTotal, 'ΣT_X = T_total');
  for (const t of r.perThread) assert.equal(t.S + t.L + t.O + t.W + t.U, r.tWall, `thread ${t.node}.${t.thread} sums to T_wall`);
};

test('a wait inside a CF is W; its measured CPU is not useful work; the rest of wall − CPU is O', () => {
  // CF [0, 50): CPU 30, of which 5 spent spinning in a wait of 20 → W 20, U 25, O 5
  const tb = new TB(1).cf({ node: 0, thread: 1, cf: 1, start: 0, end: 50, cpu: 30 }).wait({ node: 0, thread: 1, cf: 1, start: 10, end: 30, cpu: 5 });
  const r = analyzeSlow(manifest(1, 1), tb.done(50));
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 0, L: 0, O: 5, W: 20, U: 25 });
  assert.equal(r.overhead.preempt, 5);
  sums(r);
});

test('without a measured CPU the wait is taken as spinning first: U = min(CPU, wall − wait)', () => {
  // wall 50, wait 20 (CPU not measured), CPU 35: at most 30 can be useful
  let tb = new TB(1).cf({ node: 0, thread: 1, cf: 1, start: 0, end: 50, cpu: 35 }).wait({ node: 0, thread: 1, cf: 1, start: 10, end: 30 });
  assert.deepEqual(w0(analyzeSlow(manifest(1, 1), tb.done(50))), { node: 0, thread: 1, S: 0, L: 0, O: 0, W: 20, U: 30 });
  // CPU 25: all useful, the 5 left is pre-emption
  tb = new TB(1).cf({ node: 0, thread: 1, cf: 1, start: 0, end: 50, cpu: 25 }).wait({ node: 0, thread: 1, cf: 1, start: 10, end: 30 });
  assert.deepEqual(w0(analyzeSlow(manifest(1, 1), tb.done(50))), { node: 0, thread: 1, S: 0, L: 0, O: 5, W: 20, U: 25 });
});

test('several waits in one CF add up; a wait is clamped to its CF; the CF a lane runs is the one that waited', () => {
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 100, cpu: 40 })
    .wait({ node: 0, thread: 1, cf: 1, start: 10, end: 20, cpu: 0 })
    .wait({ node: 0, thread: 1, cf: 99, start: 30, end: 50, cpu: 0 }) // names a CF the trace does not know
    .wait({ node: 0, thread: 1, cf: 1, start: 90, end: 130, cpu: 0 }); // runs past the CF's finish
  const r = analyzeSlow(manifest(1, 1), tb.done(130));
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 30, L: 0, O: 20, W: 10 + 20 + 10, U: 40 });
  sums(r);
});

test('waits that overlap (a layer nesting its waits) count once in W, inside and outside CFs; each is blamed in full', () => {
  // CF [0, 100), CPU 50: a barrier [10, 40) holding a request [20, 30), then a lock [35, 45) → W = |[10, 45)| = 35
  // tail [100, 200): two ranks' barriers on one thread [120, 160) and [150, 170) → W 50, S 50
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 100, cpu: 50 })
    .wait({ node: 0, thread: 1, cf: 1, kind: 3, resource: 'b', start: 10, end: 40, cpu: 0 })
    .wait({ node: 0, thread: 1, cf: 1, kind: 0, resource: 'q', start: 20, end: 30, cpu: 0 })
    .wait({ node: 0, thread: 1, cf: 1, kind: 2, resource: 'l', start: 35, end: 45, cpu: 4 })
    .wait({ node: 0, thread: 1, rank: 0, kind: 3, resource: 'end', start: 120, end: 160 })
    .wait({ node: 0, thread: 1, rank: 0, kind: 3, resource: 'end', start: 150, end: 170 });
  const r = analyzeSlow(manifest(1, 1), tb.done(200));
  // the lock's CPU counts for the part of it not already waited (5 of 10 ns → 2 ns): U = 50 − 2
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 50, L: 0, O: 100 - 35 - 48, W: 35 + 50, U: 48 });
  assert.equal(r.blame.waiting.total, 30 + 10 + 10 + 40 + 20, 'the blame keeps every wait whole');
  assert.equal(r.blame.waiting.waits, 5);
  sums(r);
});

test('a wait outside any CF is carved from the idle interval, part by part (S, then O)', () => {
  // lane 1: CF1 [0, 10), idle, CF3 [100, 110) reads x made by CF2 on lane 2 at 80 → S [10, 80), O [80, 100);
  // its rank waits at a barrier [70, 90): W 20 = 10 from S + 10 from O
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 0, thread: 2, cf: 2, start: 0, end: 80 }).computed(0, 'x', 2, 80)
    .wait({ node: 0, thread: 1, rank: 0, kind: 3, resource: 'b', start: 70, end: 90 })
    .cf({ node: 0, thread: 1, cf: 3, start: 100, end: 110, inputs: ['x'] });
  const r = analyzeSlow(manifest(1, 2), tb.done(110));
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 60, L: 0, O: 10, W: 20, U: 20 });
  assert.equal(r.blame.starvation.total, 60, 'only the S left is blamed on the producer');
  assert.equal(r.overhead.startDelay, 10);
  sums(r);
});

test('a wait after a thread\'s last CF is carved from the tail; a thread that ran no CF can wait too', () => {
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 100 })
    .wait({ node: 0, thread: 1, rank: 0, kind: 3, resource: 'final', start: 120, end: 130 })
    .wait({ node: 0, thread: 2, rank: 1, kind: 3, resource: 'final', start: 0, end: 150 });
  const r = analyzeSlow(manifest(1, 2), tb.done(150));
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 40, L: 0, O: 0, W: 10, U: 100 });
  assert.deepEqual(r.perThread[1], { node: 0, thread: 2, S: 0, L: 0, O: 0, W: 150, U: 0 });
  assert.equal(r.starvationTail, 40);
  sums(r);
});

test('waits are blamed by resource, kind and waiter, per code, in the series, and recommended on when they dominate', () => {
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, code: 2, label: 'push', start: 0, end: 100, cpu: 10 })
    .wait({ node: 0, thread: 1, cf: 1, kind: 1, resource: 'particles[3]', start: 5, end: 95, cpu: 0 });
  const r = analyzeSlow(manifest(1, 1), tb.done(100), { windowNs: 10 });
  assert.equal(r.t.W, 90);
  assert.deepEqual(r.blame.waiting.byResource.map((c) => [c.key, c.ns]), [['descriptor particles[3]', 90]]);
  assert.deepEqual(r.blame.waiting.byKind.map((c) => c.key), ['descriptor']);
  assert.deepEqual(r.blame.waiting.byWaiter.map((c) => [c.key, c.label]), [['g0_1', 'push']]);
  assert.equal(r.perCode.find((c) => c.name === 'c2')!.W, 90);
  assert.equal(r.series.points.reduce((a, p) => a + p.W, 0), 90);
  assert.equal(r.series.points[0]!.W, 5, 'the first window holds [5, 10) of the wait');
  const f = interpretFindings(r);
  assert.match(f[0]!.text, /dominant loss is waiting for shared resources/);
  const w = f.find((x) => x.kind === 'waiting');
  assert.ok(w && w.factor === 'W' && /descriptor particles\[3\]/.test(w.text) && /push/.test(w.text), w?.text);
});

test('a wait ending before it begins is damage, not time', () => {
  const tb = new TB(1).cf({ node: 0, thread: 1, cf: 1, start: 0, end: 50 }).wait({ node: 0, thread: 1, cf: 1, start: 30, end: 10 });
  const r = analyzeSlow(manifest(1, 1), tb.done(50));
  assert.equal(r.t.W, 0);
  assert.equal(r.damage.counts['time-order'], 1);
});

test('a trace written by the writer, two nodes on different clocks: waits inside and outside CFs split as the rules say', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-waits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeWaitingTrace(dir);
  const r = analyzeSlowTrace(dir);
  assert.deepEqual(r.warnings, []);
  assert.equal(r.tWall, WRITTEN.tWall, 'node 1\'s records (and both ends of its wait) moved onto node 0\'s clock');
  assert.deepEqual(r.perThread.map(({ node: _n, thread: _t, ...f }) => f), WRITTEN.perThread);
  assert.equal(r.t.W, WRITTEN.W);
  assert.deepEqual(r.blame.waiting.byKind.map((k) => [k.key, k.ns]), [['barrier', 60], ['request', 30]]);
  assert.deepEqual(r.blame.waiting.byWaiter.map((k) => k.key), ['rank 1', 'g1']);
  sums(r);
});
