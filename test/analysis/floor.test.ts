// The graph's floor: the run's graph replayed with a runtime that costs nothing — each CF its CPU
// time, every CF known from the start, critical path first, remote inputs after the transfers
// they had — and the bound no schedule beats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, formatSlowTable, interpretFindings } from '../../src/analysis/slow/index.js';
import { TB, manifest } from './tb.js';

test('four independent CFs run one by one with gaps on one of two lanes: the floor is two of them side by side, on their CPU time', () => {
  const tb = new TB(1);
  // each 100 ns on its lane, 60 of them its CPU (pre-empted for the rest), 200 ns apart
  for (let i = 0; i < 4; i++) tb.cf({ node: 0, thread: 1, cf: i + 1, start: i * 300, end: i * 300 + 100, cpu: 60 });
  const r = analyzeSlow(manifest(1, 2), tb.done(1000));
  assert.ok(r.floor, 'computed');
  assert.equal(r.floor.ns, 120, 'two CFs of 60 ns of CPU on each lane');
  assert.equal(r.floor.boundNs, 120, 'Σ CPU over the lanes');
  assert.equal(r.floor.ofWall, 120 / r.tWall);
  assert.match(formatSlowTable(r), /graph floor 120 ns \(12% of T_wall\).*on 1 × 2 workers; no schedule is shorter than 120 ns/);
});

test('a chain across two nodes: the floor waits for the transfer as it was, and the bound is the chain\'s CPU', () => {
  const tb = new TB(2);
  tb.cf({ node: 0, thread: 1, cf: 1, label: 'make', start: 0, end: 100 });
  tb.computed(0, 'x[0]', 1, 100);
  tb.transfer('x[0]', 0, 1, 150, 400);
  tb.cf({ node: 1, thread: 1, cf: 2, label: 'use', start: 700, end: 800, inputs: ['x[0]'] });
  const r = analyzeSlow(manifest(2, 1), tb.done(1000));
  assert.ok(r.floor);
  assert.equal(r.floor.ns, 100 + 300 + 100, 'the producer, the 300 ns from computed to arrival, the consumer');
  assert.equal(r.floor.boundNs, 200, 'the chain of CPU time');
});

test('the overhead finding quotes the floor, and the report names it as evidence', () => {
  const tb = new TB(1);
  // 40 CFs of 1 µs, each after 4 µs of nothing: overhead between CFs on both lanes
  for (let i = 0; i < 40; i++) tb.cf({ node: 0, thread: 1 + (i % 2), cf: i + 1, start: Math.floor(i / 2) * 5000 + 4000, end: Math.floor(i / 2) * 5000 + 5000 });
  const r = analyzeSlow(manifest(1, 2), tb.done(100_000));
  assert.ok(r.floor);
  assert.equal(r.floor.ns, 20_000);
  const o = interpretFindings(r).find((f) => f.kind === 'overhead');
  assert.ok(o, 'an overhead finding');
  assert.match(o.text, /With a runtime that cost nothing, this graph would take 20\.0 µs on these workers \(20% of T_wall\)/);
  assert.ok(o.evidence.includes('floor'));
});

test('without the graph (not kept) there is no floor, and the text says nothing of it', () => {
  const tb = new TB(1);
  tb.cf({ node: 0, thread: 1, cf: 1, start: 0, end: 100 });
  const r = analyzeSlow(manifest(1, 1), tb.done(200), { predict: false });
  assert.equal(r.floor, null);
  assert.doesNotMatch(formatSlowTable(r), /graph floor/);
});
