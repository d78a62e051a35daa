// The part of a start delay during which the node's system thread was busy (its sysBusy spans):
// the span bookkeeping alone, and through the analysis of a hand-built trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BusySpans } from '../../src/analysis/slow/busy-spans.js';
import { analyzeSlow, formatSlowTable, interpretFindings } from '../../src/analysis/slow/index.js';
import type { TraceEvent } from '../../src/trace/schema.js';
import { TB, manifest } from './tb.js';

test('overlap sums the spans inside an interval, cut at its ends, per node', () => {
  const b = new BusySpans(2);
  b.add(0, 10, 20); b.add(0, 30, 40); b.add(0, 50, 60);
  b.add(1, 0, 100);
  assert.equal(b.overlap(0, 0, 100), 30);
  assert.equal(b.overlap(0, 15, 35), 10, 'half of the first span, half of the second');
  assert.equal(b.overlap(0, 20, 30), 0, 'between spans');
  assert.equal(b.overlap(0, 55, 1000), 5);
  assert.equal(b.overlap(1, 40, 60), 20, 'another node, its own spans');
  assert.equal(b.overlap(0, 40, 40), 0, 'an empty interval');
});

test('a span overlapping the one before is cut at its end, and an empty one is ignored', () => {
  const b = new BusySpans(1);
  b.add(0, 0, 50); b.add(0, 40, 70); b.add(0, 60, 65); b.add(0, 80, 80);
  assert.equal(b.overlap(0, 0, 100), 70);
});

test('pruned spans are forgotten, the later ones still answer', () => {
  const b = new BusySpans(1);
  for (let i = 0; i < 10_000; i++) b.add(0, 10 * i, 10 * i + 5);
  b.prune(50_000);
  assert.equal(b.overlap(0, 0, 50_000), 0, 'everything before 50 000 is gone');
  assert.equal(b.overlap(0, 50_000, 50_100), 50);
  assert.equal(b.overlap(0, 99_990, 100_000), 5);
});

test('a ready CF that waited while the system thread booked other work: that part of its start delay is counted', () => {
  const tb = new TB(1);
  tb.cf({ node: 0, thread: 1, cf: 1, label: 'make', start: 0, end: 100 });
  tb.computed(0, 'x[0]', 1, 100);
  tb.cf({ node: 0, thread: 1, cf: 2, label: 'use', start: 500, end: 600, inputs: ['x[0]'] });
  // the system thread busy on [150, 350) and [550, 580): only the first falls in [100, 500)
  tb.ev.push({ kind: 'sysBusy', t: 150, end: 350, node: 0, thread: 0 } as TraceEvent, { kind: 'sysBusy', t: 550, end: 580, node: 0, thread: 0 } as TraceEvent);
  const r = analyzeSlow(manifest(1, 1), tb.done(700));
  assert.equal(r.overhead.startDelay, 400, 'x computed at 100, its reader started at 500');
  assert.equal(r.overhead.startDelaySystemBusy, 200);
  assert.match(formatSlowTable(r), /ready→start 400 ns \(system thread busy 200 ns\)/);
  const o = interpretFindings(r).find((f) => f.kind === 'overhead');
  assert.ok(o);
  assert.match(o.text, /Of that delay 50% passed while the node's system thread was busy/);
});
