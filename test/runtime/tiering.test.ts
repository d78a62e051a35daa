// When a node raises V8's tiering budget: the default policy's rule (the `heavy` hint,
// then the mean of the first measured CFs), the watcher that asks it and calls the mechanism at
// most once, and a policy that forwards to one without the rule. Pure bookkeeping, no threads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COARSE_CF_NS, COARSE_SAMPLE, DefaultPolicy, LANE_NICE } from '../../src/runtime/policy/default.js';
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
  const w = new TieringWatch(new DefaultPolicy(), false, { relax: () => { relaxed++; return true; }, can: true });
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
  const fine = new TieringWatch(new DefaultPolicy(), false, { relax, can: true });
  for (let i = 0; i < COARSE_SAMPLE; i++) fine.measured(20_000);
  assert.equal(fine.open, false);
  assert.equal(fine.relaxedAt, -1);
  assert.equal(relaxed, 0);
  const heavy = new TieringWatch(new DefaultPolicy(), true, { relax, can: true });
  assert.equal(heavy.open, false);
  assert.equal(heavy.relaxedAt, 0);
  assert.equal(relaxed, 1);
  const none = new TieringWatch(new DefaultPolicy(), true, { relax, can: false });
  assert.equal(none.open, false);
  assert.equal(none.relaxedAt, -1);
  assert.equal(relaxed, 1, 'where bin/luna lowered nothing, nothing is given back');
  // another node of the process gave it back first: this one does not say it did
  const second = new TieringWatch(new DefaultPolicy(), true, { relax: () => false, can: true });
  assert.equal(second.relaxedAt, -1);
  // raised as the program loaded (cli/run.ts): before the first CF, and nothing left to do
  const loaded = new TieringWatch(new DefaultPolicy(), true, { relax, can: false, already: true });
  assert.equal(loaded.open, false);
  assert.equal(loaded.relaxedAt, 0);
  assert.equal(relaxed, 1);
});

test('a policy without the rule keeps the budget, and a forwarding policy forwards the rule', () => {
  let relaxed = 0;
  const relax = (): boolean => { relaxed++; return true; };
  const bare = new TieringWatch({}, true, { relax, can: true });
  assert.equal(bare.open, false);
  assert.equal(relaxed, 0);
  const fwd = new ForwardingPolicy(new DefaultPolicy());
  assert.equal(fwd.relaxTiering(true, 0, 0), true);
  assert.equal(fwd.relaxTiering(false, COARSE_SAMPLE, 0), false);
});

test('a coarse node says so once (its lanes lowered), whether or not there was a budget to raise; a fine one never', () => {
  let coarse = 0;
  const said = (): void => { coarse++; };
  // the heavy hint: at once, with the budget raised already as the program loaded
  const heavy = new TieringWatch(new DefaultPolicy(), true, { relax: () => false, can: false, already: true, onCoarse: said });
  assert.equal(heavy.open, false);
  assert.equal(coarse, 1);
  // by the mean of the first measured CFs, with no budget to raise (LUNA_V8_BUDGET set): asked until it knows
  const measured = new TieringWatch(new DefaultPolicy(), false, { relax: () => { throw new Error('nothing to raise'); }, can: false, already: false, onCoarse: said });
  assert.equal(measured.open, true, 'open for the lanes alone');
  for (let i = 0; i < COARSE_SAMPLE; i++) measured.measured(2 * COARSE_CF_NS);
  assert.equal(measured.open, false);
  assert.equal(measured.relaxedAt, -1, 'no budget raised');
  assert.equal(coarse, 2);
  for (let i = 0; i < 10; i++) measured.measured(2 * COARSE_CF_NS);
  assert.equal(coarse, 2, 'once');
  const fine = new TieringWatch(new DefaultPolicy(), false, { relax: () => true, can: true, already: false, onCoarse: said });
  for (let i = 0; i < COARSE_SAMPLE; i++) fine.measured(COARSE_CF_NS / 10);
  assert.equal(fine.open, false);
  assert.equal(coarse, 2);
  // nothing to raise and nothing to tell: never open
  assert.equal(new TieringWatch(new DefaultPolicy(), false, { relax: () => true, can: false, already: false }).open, false);
});

test('the default policy lowers a coarse node\'s lanes by LANE_NICE, and a forwarding policy forwards it', () => {
  assert.equal(new DefaultPolicy().laneNice(), LANE_NICE);
  assert.ok(LANE_NICE > 0 && LANE_NICE < 10, 'below the system thread, above V8\'s background threads');
  assert.equal(new ForwardingPolicy(new DefaultPolicy()).laneNice(), LANE_NICE);
  assert.equal(new ForwardingPolicy({} as never).laneNice(), 0);
});
