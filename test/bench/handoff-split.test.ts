// The hand-off bench's split of last input → start by whose input finished last
// (bench/taskbench/handoff.ts handoffSplit), on hand-made rows of fragments.csv for stencil_1d of
// width 2: lane a runs column 0, lane b column 1, and every task reads both columns of the step before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { graphHandoffs, tasksOf } from '../../bench/taskbench/handoff.js';
import { graph } from '../../bench/taskbench/patterns.js';

/** A row of fragments.csv (times in µs here, ns in the row). */
const row = (label: string, indices: number[], lane: string, start: number, finish: number): Record<string, string> =>
  ({ label, indices: JSON.stringify(indices), lane, start: String(start * 1000), finish: String(finish * 1000), cpu_ns: String((finish - start) * 1000) });

const rows = [
  row('main', [], 'system', 0, 400), // not a task of the graph
  row('init', [0], 'a', 0, 100), row('init', [1], 'b', 0, 110),
  // step 1: a waited for b's init (5 µs after it); b's own init ended last (20 µs)
  row('task', [1, 0], 'a', 115, 215), row('task', [1, 1], 'b', 130, 230),
  // step 2: a waited for b again (10 µs); b's own task ended last (25 µs)
  row('task', [2, 0], 'a', 240, 340), row('task', [2, 1], 'b', 255, 340),
  // step 3: both inputs end together, a tie: each lane's own (30 and 10 µs)
  row('task', [3, 0], 'a', 370, 400), row('task', [3, 1], 'b', 350, 400),
];

test('last input → start split by whose input finished last: the lane\'s own task or the partner\'s, a tie counted as its own', () => {
  const g = graph('stencil_1d', 2, 3);
  const s = graphHandoffs(g, tasksOf(rows));
  assert.deepEqual(s.all, [5, 10, 10, 20, 25, 30]);
  assert.deepEqual(s.own, { n: 4, medianUs: 22.5, p90Us: 30 });
  assert.deepEqual(s.partner, { n: 2, medianUs: 7.5, p90Us: 10 });
});

test('a task whose input the trace lacks has no last input and is left out of both classes', () => {
  const g = graph('stencil_1d', 2, 3);
  // without b's init, neither task of step 1 can be read
  const s = graphHandoffs(g, tasksOf(rows.filter((r) => !(r.label === 'init' && r.lane === 'b'))));
  assert.deepEqual(s.all, [10, 10, 25, 30]);
  assert.equal(s.own.n + s.partner.n, 4);
  assert.deepEqual(s.partner, { n: 1, medianUs: 10, p90Us: 10 });
});

test('with no task of a class, its figures are NaN, not zero', () => {
  const g = graph('stencil_1d', 2, 1);
  const s = graphHandoffs(g, tasksOf(rows.slice(0, 5)));
  assert.deepEqual(s.all, [5, 20]);
  assert.equal(s.own.n, 1);
  assert.equal(s.partner.n, 1);
  const solo = graphHandoffs(graph('stencil_1d', 2, 1), tasksOf([row('init', [0], 'a', 0, 100), row('init', [1], 'a', 100, 200), row('task', [1, 0], 'a', 205, 300), row('task', [1, 1], 'a', 300, 400)]));
  assert.deepEqual(solo.own, { n: 2, medianUs: 52.5, p90Us: 100 });
  assert.equal(solo.partner.n, 0);
  assert.ok(Number.isNaN(solo.partner.medianUs) && Number.isNaN(solo.partner.p90Us));
});
