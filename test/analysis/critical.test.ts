// The critical path is kept whole, step by step, however long (up to the limit, past which the
// earliest steps are folded into its totals and the report says how many), and its totals by
// code and label stay exact either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSlow, SlowAnalyzer } from '../../src/analysis/slow/index.js';
import { pathSteps } from '../../src/analysis/slow/critical.js';
import { finishReport } from '../../src/analysis/slow/report.js';
import { TraceModel } from '../../src/trace/model/model.js';
import { TB, manifest } from './tb.js';

/** A chain of n CFs alternating two labels (codes 0 and 1) on one lane, each 10 ns of CPU, plus side work on lane 2. */
function chain(n: number): { tb: TB; end: number } {
  const tb = new TB(1);
  let t = 0;
  for (let i = 0; i < n; i++) {
    tb.cf({ node: 0, thread: 1, cf: i + 1, code: i % 2, label: i % 2 ? 'odd' : 'even', start: t, end: t + 10, inputs: i > 0 ? [`x[${i}]`] : [] });
    tb.computed(0, `x[${i + 1}]`, i + 1, t + 10);
    t += 10;
  }
  for (let i = 0; i < 50; i++) tb.cf({ node: 0, thread: 2, cf: n + 1 + i, code: 2, label: 'side', start: i * 10, end: i * 10 + 5 });
  return { tb, end: t };
}

test('a critical path of 12 000 steps is kept whole: every step, in order, and exact totals', () => {
  const n = 12_000;
  const { tb, end } = chain(n);
  const model = new TraceModel(manifest(1, 2));
  const an = new SlowAnalyzer(model);
  for (const e of tb.done(end)) model.push(e);
  const r = finishReport(an);
  const cp = r.criticalPath;
  assert.equal(cp.cfs, n);
  assert.equal(cp.steps, n, 'every step is kept');
  assert.equal(cp.length, 10 * n);
  const steps = pathSteps(an.cpEnd);
  assert.equal(steps.length, n);
  steps.forEach((s, k) => assert.equal(s.gid, `g0_${k + 1}`, `step ${k + 1} in order`));
  assert.deepEqual(cp.byLabel.map((c) => [c.key, c.ns]).sort(), [['even', 5 * n], ['odd', 5 * n]]);
  assert.deepEqual(cp.tail.map((s) => s.gid), Array.from({ length: 10 }, (_, k) => `g0_${n - k}`));
});

test('past the limit the earliest steps are folded into the totals, which stay exact, and the report says how many are kept', () => {
  const n = 5_000, whole = 1024;
  const { tb, end } = chain(n);
  const r = analyzeSlow(manifest(1, 2), tb.done(end), { wholePathSteps: whole });
  const cp = r.criticalPath;
  assert.equal(cp.cfs, n, 'the count covers the whole path');
  assert.ok(cp.steps >= whole && cp.steps <= whole + whole / 2 + 256, `kept ${cp.steps}`);
  assert.ok(cp.steps < n);
  assert.equal(cp.length, 10 * n);
  assert.deepEqual(cp.byLabel.map((c) => [c.key, c.ns]).sort(), [['even', 5 * n], ['odd', 5 * n]], 'totals of the folded steps are exact');
  assert.equal(cp.tail[0]!.gid, `g0_${n}`);
});
