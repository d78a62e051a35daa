// A lane's worker building a planned loop's steps from the plan and a window (exec/plan-steps.ts),
// alone: which arguments, which forwarded inputs (same batch, another lane's batch, an earlier
// window), which outputs it promises to other batches, the CF numbers and the DF names. The
// runs on real workers are loop-plans.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LanePlan } from '../../src/runtime/exec/plan-steps.js';
import { ARG_IN, ARG_INT, ARG_OUT, ARG_VAL, type WirePlan, type WireWindow } from '../../src/runtime/exec/protocol.js';
import { T_INT } from '../../src/ucode/value.js';

// A two-column stencil, for t = 1..10: site x (on lane x) runs step(kind, t, x, v[t-1][0], v[t-1][1], v[t][x]).
// Its step 1 reads v[0][*] from before the loop.
function stencilPlan(): WirePlan {
  const site = (x: number): WirePlan['sites'][number] => ({
    imp: 5,
    lane: x,
    kinds: [ARG_VAL, ARG_INT, ARG_INT, ARG_IN, ARG_IN, ARG_OUT],
    a: [0, 1, 0, 0, 0, 0],
    b: [0, 0, x, 0, 0, 0],
    vals: ['ok', undefined, undefined, undefined, undefined, undefined],
    // v[t-1][0] from site 0's output at distance 1, v[t-1][1] from site 1's
    inputs: [0, 0, 1, 1, 0, 1],
    // its output, read by both sites one step later
    readers: [[0, 1, 1, 1]],
    names: [null, null, null, { base: 'v#', a: [1, 0], b: [-1, 0] }, { base: 'v#', a: [1, 0], b: [-1, 1] }, { base: 'v#', a: [1, 0], b: [0, x] }],
  });
  return { plan: 3, first: 1, last: 10, depth: 1, firstCf: 100, sites: [site(0), site(1)] };
}

const window = (first: number, last: number, ids: number[], lane: number, outside?: boolean): WireWindow => ({
  window: 3, id: ids[lane]!, first, last, ids,
  outside: outside ? [1, lane, 3, 1, lane, 4] : undefined,
  outsideVals: outside ? [{ t: T_INT, v: 1 }, { t: T_INT, v: 2 }] : undefined,
  recycled: undefined,
});

test('a lane builds its steps of a window from the plan: arguments, forwarded inputs, promises, CF numbers', () => {
  const lp = new LanePlan(stencilPlan(), 0);
  const promised: number[][] = [];
  const w1 = window(1, 4, [20, 21], 0, true);
  const t1 = lp.build(w1, (task, out, lane) => promised.push([task, out, lane]));
  assert.equal(t1.length, 4);
  // step 1: its inputs from before the loop, no forward
  assert.deepEqual(t1[0], { cf: 100, imp: 5, args: ['ok', 1, 0, { t: T_INT, v: 1 }, { t: T_INT, v: 2 }, null], keys: [-1, -1, -1, 3, 4, 5], fwd: null });
  // step 2: v[1][0] from this batch (task 0), v[1][1] fed by lane 1's batch of the window (its task 0)
  assert.deepEqual(t1[1]!.args, ['ok', 2, 0, null, null, null]);
  assert.equal(t1[1]!.cf, 102);
  assert.deepEqual(t1[1]!.fwd, [{ arg: 3, task: 0, out: 0 }, { arg: 4, lane: 1, batch: 21, task: 0, out: 0 }]);
  // every output goes to lane 1; the last step's also to this lane's next batch
  assert.deepEqual(promised, [[0, 0, 1], [1, 0, 1], [2, 0, 1], [3, 0, 0], [3, 0, 1]]);
  promised.length = 0;
  const t2 = lp.build(window(5, 10, [22, 23], 0), (task, out, lane) => promised.push([task, out, lane]));
  // step 5 reads step 4 of the window before, on both lanes (task 3 of batches 20 and 21)
  assert.deepEqual(t2[0]!.fwd, [{ arg: 3, lane: 0, batch: 20, task: 3, out: 0 }, { arg: 4, lane: 1, batch: 21, task: 3, out: 0 }]);
  assert.equal(t2[5]!.cf, 100 + 9 * 2);
  // step 10 is the last: nothing reads its output inside the loop
  assert.deepEqual(promised, [[0, 0, 1], [1, 0, 1], [2, 0, 1], [3, 0, 1], [4, 0, 1]]);
  assert.ok(lp.isLast(window(5, 10, [22, 23], 0)));
  assert.ok(!lp.isLast(w1));
});

test('the other lane numbers its tasks and its CFs by its own sites, and reads this lane\'s batches', () => {
  const lp = new LanePlan(stencilPlan(), 1);
  const t = lp.build(window(1, 3, [20, 21], 1, true), () => {});
  assert.deepEqual(t.map((x) => x.cf), [101, 103, 105]);
  assert.deepEqual(t[2]!.fwd, [{ arg: 3, lane: 0, batch: 20, task: 1, out: 0 }, { arg: 4, task: 1, out: 0 }]);
});

test('a lane spells its steps\' DF keys from the plan only when asked (getName, messages)', () => {
  const lp = new LanePlan(stencilPlan(), 1);
  const w = window(5, 7, [22, 23], 1);
  const t = lp.build(w, () => {});
  // step 6 (task 1) of column 1: v[5][0], v[5][1] in, v[6][1] out
  assert.deepEqual(t[1]!.keys.slice(3).map((k) => lp.key(w, k)), ['v#.5.0', 'v#.5.1', 'v#.6.1']);
  assert.equal(lp.key(w, -1), '?');
});
