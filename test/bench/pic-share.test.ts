// The exchange share read from a trace's ddaOp records (bench/pic-share.ts): the union of each
// step's operations over the step's wall time, and what an operation's span is made of — the
// part before the other node had its LOCK (its own `count (node)` span starts there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exchangeShare } from '../../bench/pic-share.js';
import type { TraceEvent } from '../../src/trace/schema.js';

const op = (node: number, kind: number, array: string, t: number, end: number): TraceEvent =>
  ({ kind: 'ddaOp', node, thread: 0, t, end, op: kind, exchanged: 64, rearranged: 0, array });

/**
 * Arrays A (GD on node 0) and B (GD on node 1) each run 3 counts, 100 ns apart: A's span 10 ns,
 * of which 4 before node 1 got the LOCK; B's 10 ns from 20 ns on, 6 before node 0 got it.
 */
function twoNodes(): TraceEvent[] {
  const out: TraceEvent[] = [];
  for (let i = 0; i < 3; i++) {
    const a = 100 * i, b = a + 20;
    out.push(op(0, 0, 'A', a, a + 10), op(0, 2, 'A', a + 0.5, a + 10.5), op(1, 2, 'A', a + 4, a + 12));
    out.push(op(1, 0, 'B', b, b + 10), op(1, 2, 'B', b + 0.5, b + 10.5), op(0, 2, 'B', b + 6, b + 12));
  }
  return out;
}

test('the share is the union of a step\'s operations over the step, the last operations closing the last step', () => {
  const x = exchangeShare(twoNodes());
  assert.equal(x.steps, 2);
  assert.equal(x.share, 20);
  assert.equal(x.maxStep, 20);
  assert.equal(x.exchangedBytes, 4 * 64);
});

test('an operation\'s span: its median and p90, and the part until the other node had the LOCK', () => {
  const x = exchangeShare(twoNodes());
  assert.equal(x.opMedianMs, 10 / 1e6);
  assert.equal(x.opP90Ms, 10 / 1e6);
  // A: 4 of 10 ns, B: 6 of 10 ns (the GD node's own part, which starts at once, does not count)
  assert.equal(x.outboundPct, 50);
});

test('a count answered at the descriptor, with no part on the other node, leaves the outbound figure and the pairing of the others intact', () => {
  // A's second count is answered at its GD: node 1 has no part of it
  const ev = twoNodes().filter((e) => !(e.kind === 'ddaOp' && e.node === 1 && e.array === 'A' && e.t === 104));
  const x = exchangeShare(ev);
  // A: 2 counts of 4 ns outbound, B: 3 of 6, over 5 spans of 10 ns
  assert.equal(x.outboundPct, (100 * (2 * 4 + 3 * 6)) / 50);
  assert.equal(x.steps, 2);
});

test('on one node no other node gets a LOCK: the outbound part is not a number', () => {
  const one = twoNodes().filter((e) => e.node === 0 && e.kind === 'ddaOp' && e.array === 'A');
  const x = exchangeShare(one);
  assert.equal(x.steps, 2);
  assert.equal(x.share, 10);
  assert.ok(Number.isNaN(x.outboundPct));
});

test('a trace without global operations is refused with a clear message', () => {
  assert.throws(() => exchangeShare([]), /no ddaOp records/);
});
