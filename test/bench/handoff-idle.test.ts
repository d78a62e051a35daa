// The hand-off bench's split of a lane's idle time by cause (bench/taskbench/handoff.ts laneIdle),
// on a hand-made two-lane lockstep: every step reads both lanes' previous tasks, as stencil_1d
// of width 2 does. The split adds up to the lane's idle time, and each cause lands in its term.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { laneIdle } from '../../bench/taskbench/handoff.js';

interface Ran { start: number; finish: number; cpu: number; lane: string }

/** Steps of two lanes: per step [start, finish, cpu] of lane a and of lane b (ns). */
function lockstep(steps: [number, number, number][][]): { a: Ran[]; b: Ran[]; inputsOf: (r: Ran) => Ran[] } {
  const a: Ran[] = [], b: Ran[] = [];
  for (const [x, y] of steps) {
    a.push({ start: x![0], finish: x![1], cpu: x![2], lane: 'a' });
    b.push({ start: y![0], finish: y![1], cpu: y![2], lane: 'b' });
  }
  const inputsOf = (r: Ran): Ran[] => {
    const own = r.lane === 'a' ? a : b;
    const t = own.indexOf(r);
    return t === 0 ? [] : [a[t - 1]!, b[t - 1]!];
  };
  return { a, b, inputsOf };
}

const sum = (o: Record<string, number>): number => Object.values(o).reduce((s, v) => s + v, 0);

test('a lane idle for the other lane\'s longer kernel, its preemption, its late start and the hand-off: each in its term, adding up to the idle time', () => {
  // step 0: both 0..100 µs. Step 1: b's kernel takes 20 µs more CPU; a starts 5 µs after b's
  // finish. Step 2: b is preempted 30 µs inside its task; a starts 5 µs after. Step 3: b starts
  // 10 µs late (its own hand-off); a 5 µs after b's finish.
  const { a, b, inputsOf } = lockstep([
    [[0, 100_000, 100_000], [0, 100_000, 100_000]],
    [[100_000, 200_000, 100_000], [100_000, 220_000, 120_000]],
    [[225_000, 325_000, 100_000], [220_000, 350_000, 100_000]],
    [[355_000, 455_000, 100_000], [360_000, 460_000, 100_000]],
    [[465_000, 565_000, 100_000], [460_000, 560_000, 100_000]],
  ]);
  const first = 0, last = 565_000, span = last - first;
  const idle = laneIdle(a, inputsOf, first, last);
  const busy = a.reduce((s, r) => s + r.finish - r.start, 0);
  assert.ok(Math.abs(sum({ ...idle }) - (100 * (span - busy)) / span) < 1e-9, 'the terms add up to the idle share');
  const pct = (ns: number): number => (100 * ns) / span;
  // waits for b: step 1 → 2: 20 µs (CPU); 2 → 3: 325 → 350 = 25 µs: b started 5 µs earlier than a (−5), preempted 30 µs;
  // 3 → 4: 455 → 460 = 5 µs: b started 5 µs later
  assert.ok(Math.abs(idle.otherCpuPct - pct(20_000)) < 1e-9, `other's CPU ${idle.otherCpuPct}`);
  assert.ok(Math.abs(idle.otherPreemptedPct - pct(30_000)) < 1e-9, `other's preemption ${idle.otherPreemptedPct}`);
  assert.ok(Math.abs(idle.otherLatePct - pct(-5_000 + 5_000)) < 1e-9, `other's late start ${idle.otherLatePct}`);
  // hand-offs: 0 at step 1, then 5 µs at each of steps 2, 3, 4
  assert.ok(Math.abs(idle.handoffPct - pct(15_000)) < 1e-9, `hand-off ${idle.handoffPct}`);
  assert.equal(idle.edgesPct, 0);
  // lane b finishes last at every step: it never waits for a; its late start at step 3 is its own hand-off
  const ib = laneIdle(b, inputsOf, first, last);
  const busyB = b.reduce((s, r) => s + r.finish - r.start, 0);
  assert.ok(Math.abs(sum({ ...ib }) - (100 * (span - busyB)) / span) < 1e-9, 'lane b: the terms add up too');
  assert.ok(Math.abs(ib.edgesPct - pct(5_000)) < 1e-9, 'lane b ends 5 µs before the span: its tail');
  assert.ok(Math.abs(ib.handoffPct - pct(10_000)) < 1e-9, 'lane b: 10 µs from its inputs to its start at step 3');
  assert.equal(ib.otherCpuPct + ib.otherPreemptedPct + ib.otherLatePct, 0);
});

test('a lane alone: its whole span before and after its tasks is edges, its gaps hand-offs', () => {
  const a: Ran[] = [{ start: 10, finish: 50, cpu: 40, lane: 'a' }, { start: 60, finish: 90, cpu: 30, lane: 'a' }];
  const idle = laneIdle(a, () => [], 0, 100);
  assert.equal(idle.edgesPct, 20);
  assert.equal(idle.handoffPct, 10);
  assert.equal(idle.otherLatePct + idle.otherCpuPct + idle.otherPreemptedPct, 0);
});
