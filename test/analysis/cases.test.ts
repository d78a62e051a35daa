// Hand-built traces for each situation of seed 003 Fig. 1 and the degenerate orders of the split.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, splitIdle, type SlowReport } from '../../src/analysis/slow/index.js';
import { TB, manifest, siteOf } from './tb.js';

/** node 0, thread 1 of a report */
const w0 = (r: SlowReport) => r.perThread[0];

test('Fig. 1 (A<B<C<G<D): [A,B) S, [B,C) O, [C,G) L, [G,D) O; U and pre-emption of CF4', () => {
  // three processes with one worker each; CF4 on process 0 reads DF1 (by CF3, node 1) and DF2 (by CF2, node 2)
  const tb = new TB(3)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 1, thread: 1, cf: 3, label: 'CF3', start: 0, end: 20 }).computed(1, 'DF1', 3, 20).transfer('DF1', 1, 0, 21, 28)
    .cf({ node: 2, thread: 1, cf: 2, label: 'CF2', code: 2, start: 0, end: 30 }).computed(2, 'DF2', 2, 30).transfer('DF2', 2, 0, 34, 45)
    .cf({ node: 0, thread: 1, cf: 4, start: 50, end: 60, cpu: 7, inputs: ['DF1', 'DF2'] });
  const r = analyzeSlow(manifest(3, 1), tb.done(60));
  // A = 10, B = 30, C = 34, G = 45, D = 50, E = 60
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 20, L: 11, O: 4 + 5 + 3, W: 0, U: 10 + 7 });
  assert.equal(r.tTotal, 180);
  assert.equal(r.sum, 180);
  assert.equal(r.coverage, 1);
  assert.equal(r.overhead.sendDelay, 4);
  assert.equal(r.overhead.startDelay, 5);
  assert.equal(r.overhead.preempt, 3);
  // blame: the S ended with CF2's finish, the L with DF2's transfer 2 → 0
  assert.deepEqual(r.blame.starvation.byLabel.map((c) => [c.key, c.ns]), [['CF2', 20]]);
  assert.equal(r.blame.starvation.byCode[0].key, 'c2');
  assert.equal(r.blame.starvation.byCf[0].key, 'g2_2');
  assert.deepEqual(r.blame.latency.byDf.map((c) => [c.key, c.ns]), [['DF2', 11]]);
  assert.deepEqual(r.blame.latency.byNodePair.map((c) => [c.from, c.to, c.ns]), [[2, 0, 11]]);
  // critical path: CF2 (30) → CF4 (7)
  assert.equal(r.criticalPath.length, 37);
  assert.equal(r.criticalPath.cfs, 2);
  assert.deepEqual(r.criticalPath.tail.map((s) => s.label), ['cf4', 'CF2']);
});

test('B ≤ A: inputs existed before the worker went idle → no starvation', () => {
  const tb = new TB(2)
    .cf({ node: 1, thread: 1, cf: 3, start: 0, end: 5 }).computed(1, 'x', 3, 5).transfer('x', 1, 0, 12, 30)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 0, thread: 1, cf: 4, start: 40, end: 50, inputs: ['x'] });
  const r = analyzeSlow(manifest(2, 1), tb.done(50));
  // A = 10: [10,12) O (send delay), [12,30) L, [30,40) O
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 0, L: 18, O: 2 + 10, W: 0, U: 20 });
  // and when even the arrival precedes A, everything is overhead
  assert.deepEqual(splitIdle(10, 40, 5, 6, 8), { s: 0, oSend: 0, l: 0, oStart: 30, b: 10, c: 10, g: 10 });
});

test('C < B: the last arrival was sent before the last (local) producer finished → L starts at B', () => {
  const tb = new TB(2)
    .cf({ node: 1, thread: 1, cf: 3, start: 0, end: 15 }).computed(1, 'far', 3, 15).transfer('far', 1, 0, 16, 45)
    .cf({ node: 0, thread: 2, cf: 2, start: 0, end: 30 }).computed(0, 'near', 2, 30)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 0, thread: 1, cf: 4, start: 50, end: 60, inputs: ['far', 'near'] });
  const r = analyzeSlow(manifest(2, 2), tb.done(60));
  // A = 10, B = 30 (near), C = 16 < B, G = 45: S [10,30), L [30,45), O [45,50)
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 20, L: 15, O: 5, W: 0, U: 20 });
});

test('local inputs: G = computed time, computed−finish delay is O, no latency within a process', () => {
  const tb = new TB(1)
    .cf({ node: 0, thread: 2, cf: 2, start: 0, end: 30 }).computed(0, 'y', 2, 33)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 0, thread: 1, cf: 4, start: 40, end: 50, inputs: ['y'] });
  const r = analyzeSlow(manifest(1, 2), tb.done(50));
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 20, L: 0, O: 3 + 7, W: 0, U: 20 });
  // thread 2 ran cf2 and then idled to the end: tail → S
  assert.deepEqual(r.perThread[1], { node: 0, thread: 2, S: 20, L: 0, O: 0, W: 0, U: 30 });
  assert.equal(r.starvationTail, 20);
});

test('no inputs and idle workers: start delay is O, tail and never-used workers are S', () => {
  const tb = new TB(1, 100).cf({ node: 0, thread: 1, cf: 1, start: 110, end: 130 });
  const r = analyzeSlow(manifest(1, 2), tb.done(150));
  assert.equal(r.tWall, 50);
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 20, L: 0, O: 10, W: 0, U: 20 });
  assert.deepEqual(r.perThread[1], { node: 0, thread: 2, S: 50, L: 0, O: 0, W: 0, U: 0 });
  assert.equal(r.sum, r.tTotal);
});

test('G < B: an output posted before its producer returned is ready when computed', () => {
  const tb = new TB(2)
    .cf({ node: 1, thread: 1, cf: 3, start: 10, end: 40 }).computed(1, 'z', 3, 25).transfer('z', 1, 0, 26, 32)
    .cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 })
    .cf({ node: 0, thread: 1, cf: 4, start: 35, end: 45, inputs: ['z'] });
  const r = analyzeSlow(manifest(2, 1), tb.done(45));
  // B = min(finish 40, computed 25) = 25: S [10,25), O [25,26), L [26,32), O [32,35)
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 15, L: 6, O: 4, W: 0, U: 20 });
});

test('clock skew (send after arrival, arrival before producer finish) is clamped, never negative', () => {
  assert.deepEqual(splitIdle(0, 100, 50, 80, 70), { s: 50, oSend: 20, l: 0, oStart: 30, b: 50, c: 70, g: 70 });
  assert.deepEqual(splitIdle(0, 100, 50, 20, 40), { s: 50, oSend: 0, l: 0, oStart: 50, b: 50, c: 50, g: 50 });
  assert.deepEqual(splitIdle(10, 20, 30, 40, 50), { s: 10, oSend: 0, l: 0, oStart: 0, b: 20, c: 20, g: 20 });
  assert.deepEqual(splitIdle(10, 20, -Infinity, -Infinity, -Infinity), { s: 0, oSend: 0, l: 0, oStart: 10, b: 10, c: 10, g: 10 });
});

test('migrated CFs, multi-hop transfers and DF deletion are followed by name', () => {
  const tb = new TB(3);
  tb.cf({ node: 1, thread: 1, cf: 3, start: 0, end: 10 }).computed(1, 'v', 3, 10);
  tb.transfer('v', 1, 2, 12, 20);         // to the DF's home node 2
  tb.ev.push({ kind: 'dfDeleted', t: 13, node: 1, thread: 0, df: tb.df(1, 'v', 13) });
  tb.transfer('v', 2, 0, 25, 31);         // then to the consumer's node
  // the consumer was created on node 1 (as 7) and migrated to node 0 (as 9)
  const cons = siteOf(1, 'cons');
  tb.ev.push({ kind: 'cfCreated', t: 0, node: 1, thread: 0, cf: 7, parentCf: 0, site: cons, gid: 'cons', labelIdx: [] });
  tb.ev.push({ kind: 'cfMigrate', t: 1, node: 1, thread: 0, cf: 7, toNode: 0 });
  tb.ev.push({ kind: 'cfReceive', t: 2, node: 0, thread: 0, cf: 9, fromNode: 1, remoteCf: 7, site: cons, gid: 'cons', labelIdx: [] });
  tb.ev.push({ kind: 'cfInput', t: 35, node: 0, thread: 1, cf: 9, df: tb.df(0, 'v', 31) });
  tb.ev.push({ kind: 'cfStart', t: 35, node: 0, thread: 1, cpu: 0, cf: 9, lane: 1 });
  tb.ev.push({ kind: 'cfFinish', t: 40, node: 0, thread: 1, cpu: 5, cf: 9, lane: 1 });
  const r = analyzeSlow(manifest(3, 1), tb.done(40));
  assert.deepEqual(r.warnings, []);
  // A = 0, B = 10, C = first hop 12, G = 31: S 10, O 2, L 19, O 4
  assert.deepEqual(w0(r), { node: 0, thread: 1, S: 10, L: 19, O: 6, W: 0, U: 5 });
  assert.deepEqual(r.blame.latency.byNodePair.map((c) => [c.from, c.to]), [[2, 0]]);
  assert.equal(r.perLabel.find((l) => l.label === 'cons')?.cfs, 1);
});

test('litvinov2017: pre-emption and start overhead that delayed the producer move from S to O', () => {
  // thread 1: producer P waits 5 (O), runs [5,100) with 55 CPU (40 pre-empted); thread 2 starts M at 110
  const tb = new TB(1)
    .cf({ node: 0, thread: 1, cf: 1, label: 'P', start: 5, end: 100, cpu: 55 }).computed(0, 'x', 1, 100)
    .cf({ node: 0, thread: 2, cf: 2, label: 'M', start: 110, end: 120, inputs: ['x'] });
  const ev = tb.done(120);
  const k = analyzeSlow(manifest(1, 2), ev, { compare: true });
  assert.equal(k.model, 'kireev2024');
  assert.deepEqual(k.perThread[1], { node: 0, thread: 2, S: 100, L: 0, O: 10, W: 0, U: 10 });
  const l = analyzeSlow(manifest(1, 2), ev, { model: 'litvinov2017' });
  // oUniCf = 40 × |[0,100) ∩ [5,100)| / 95 = 40; oIsect = [0,100) ∩ OvhSI[P] = [0,5) → 45 moved
  assert.deepEqual(l.perThread[1], { node: 0, thread: 2, S: 55, L: 0, O: 55, W: 0, U: 10 });
  assert.equal(l.models.kireev2024!.S - l.models.litvinov2017!.S, 45);
  assert.deepEqual(l.models.kireev2024, k.models.kireev2024);
  assert.equal(l.sum, l.tTotal);
});

test('extra system cores count fully as O and enlarge T_total', () => {
  const tb = new TB(1).cf({ node: 0, thread: 1, cf: 1, start: 0, end: 10 });
  const r = analyzeSlow(manifest(1, 1), tb.done(10), { systemCores: 1 });
  assert.equal(r.cores, 2);
  assert.equal(r.tTotal, 20);
  assert.equal(r.t.O, 10);
  assert.equal(r.coverage, 1);
});
