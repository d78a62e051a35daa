// A spinner's CPU share (exec/protocol.ts CpuShare): a worker spinning for a running producer
// stops once it gets less than 80 % of the wall time as thread CPU. The wall times are given to
// `ok`, so the windows here are made up, and the thread CPU is spent (or not) for real: the
// outcome does not depend on the machine's load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuShare } from '../../src/runtime/exec/protocol.js';
import { cpuClockExact, threadCpuNs } from '../../src/trace/clock.js';

/** Spend `ms` of this thread's CPU. */
function burn(ms: number): void {
  const until = threadCpuNs() + ms * 1e6;
  while (threadCpuNs() < until) { /* work */ }
}

test('a spinner that got its window as CPU goes on; one that got almost none of it stops', () => {
  const t0 = performance.now();
  const got = new CpuShare();
  assert.equal(got.ok(t0), true); // opens the window
  burn(2);
  assert.equal(got.ok(t0 + 1), true, '2 ms of CPU over a window of 1 ms');
  // the window moved on: 2 more ms of CPU over the next 1.5 ms
  burn(2);
  assert.equal(got.ok(t0 + 2.5), true);

  const denied = new CpuShare();
  assert.equal(denied.ok(t0), true);
  // ~nothing of CPU over 50 ms of wall time: other threads had the core
  assert.equal(denied.ok(t0 + 50), cpuClockExact ? false : true, 'a window of 50 ms with no CPU');
});

test('inside its first window a spinner goes on, and a reset forgets a window that a sleep would spoil', () => {
  const t0 = performance.now();
  const s = new CpuShare();
  assert.equal(s.ok(t0), true);
  assert.equal(s.ok(t0 + 0.05), true, 'within the window: not measured yet');
  s.reset(); // (a sleep, which would read as CPU denied)
  assert.equal(s.ok(t0 + 50), true, 'a new window opens after the reset');
  burn(1);
  assert.equal(s.ok(t0 + 50.5), true);
});
