// When a node raises V8's tiering budget: the default policy's rule (the `heavy` hint,
// then the mean of the first measured CFs), the watcher that asks it and calls the mechanism at
// most once, and a policy that forwards to one without the rule. Pure bookkeeping, no threads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COARSE_CF_NS, COARSE_SAMPLE, DefaultPolicy } from '../../src/runtime/policy/default.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';
import { TieringWatch } from '../../src/runtime/node/tiering.js';

test('the default policy raises the budget for a heavy hint at once, else by the mean of the first measured CFs', () => {
  const p = new DefaultPolicy();
  assert.equal(p.relaxTiering(true, 0, 0), true);
  assert.equal(p.relaxTiering(false, 0, 0), undefined);
  assert.equal(p.relaxTiering(false, COARSE_SAMPLE - 1, 10 * COARSE_CF_NS), undefined, 'too few measured to decide');
  assert.equal(p.relaxTiering(false, COARSE_SAMPLE, COARSE_CF_NS), true);
  assert.equal(p.relaxTiering(false, COARSE_SAMPLE, COARSE_CF_NS - 1), false);
});

test('the watcher relaxes once the mean of its CFs says coarse, and then stops asking', () => {
  let relaxed = 0;
  const w = new TieringWatch(new DefaultPolicy(), false, () => { relaxed++; return true; }, true);
  assert.equal(w.open, true);
  // long and short CFs: the mean, not the last, decides
  for (let i = 0; i < COARSE_SAMPLE - 1; i++) { w.measured(i % 2 === 0 ? 2 * COARSE_CF_NS : COARSE_CF_NS / 2); assert.equal(w.open, true); }
  w.measured(2 * COARSE_CF_NS);
  assert.equal(w.open, false);
  assert.equal(relaxed, 1);
  assert.equal(w.relaxedAt, COARSE_SAMPLE);
});

test('fine CFs keep the lowered budget; a heavy hint relaxes before any CF; nothing to give back leaves it closed', () => {
  let relaxed = 0;
  const relax = (): boolean => { relaxed++; return true; };
  const fine = new TieringWatch(new DefaultPolicy(), false, relax, true);
  for (let i = 0; i < COARSE_SAMPLE; i++) fine.measured(20_000);
  assert.equal(fine.open, false);
  assert.equal(fine.relaxedAt, -1);
  assert.equal(relaxed, 0);
  const heavy = new TieringWatch(new DefaultPolicy(), true, relax, true);
  assert.equal(heavy.open, false);
  assert.equal(heavy.relaxedAt, 0);
  assert.equal(relaxed, 1);
  const none = new TieringWatch(new DefaultPolicy(), true, relax, false);
  assert.equal(none.open, false);
  assert.equal(none.relaxedAt, -1);
  assert.equal(relaxed, 1, 'where bin/luna lowered nothing, nothing is given back');
  // another node of the process gave it back first: this one does not say it did
  const second = new TieringWatch(new DefaultPolicy(), true, () => false, true);
  assert.equal(second.relaxedAt, -1);
  // raised as the program loaded (cli/run.ts): before the first CF, and nothing left to do
  const loaded = new TieringWatch(new DefaultPolicy(), true, relax, false, true);
  assert.equal(loaded.open, false);
  assert.equal(loaded.relaxedAt, 0);
  assert.equal(relaxed, 1);
});

test('a policy without the rule keeps the budget, and a forwarding policy forwards the rule', () => {
  let relaxed = 0;
  const relax = (): boolean => { relaxed++; return true; };
  const bare = new TieringWatch({}, true, relax, true);
  assert.equal(bare.open, false);
  assert.equal(relaxed, 0);
  const fwd = new ForwardingPolicy(new DefaultPolicy());
  assert.equal(fwd.relaxTiering(true, 0, 0), true);
  assert.equal(fwd.relaxTiering(false, COARSE_SAMPLE, 0), false);
});
