// The ready board (exec/board.ts): its rules as bookkeeping, in milliseconds, and a run whose
// lanes take priority-ordered fragments from it without a round trip through the system thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BOARD_SLOTS, ReadyBoard } from '../../src/runtime/exec/board.js';
import { describeRun, lines, luna, program, timingOf } from './helpers.js';

test('ready board: an entry is taken by one lane only, counted in its batches in flight', () => {
  const sys = new ReadyBoard(2);
  const lane0 = new ReadyBoard(2, sys.buffer), lane1 = new ReadyBoard(2, sys.buffer);
  const a = sys.post(), b = sys.post();
  assert.equal(sys.open(), 2);
  assert.equal(lane1.claim(a, 1), true);
  assert.equal(lane0.claim(a, 0), false, 'taken by lane 1 already');
  assert.deepEqual([...sys.inflight], [0, 1], 'a failed claim leaves no count behind');
  assert.equal(sys.open(), 1);
  assert.equal(lane0.claim(b, 0), true);
  assert.equal(lane1.claim(b, 1), false);
  assert.deepEqual([...sys.inflight], [1, 1]);
  assert.equal(sys.open(), 0);
  assert.equal(sys.taken, 2);
  // the system thread books the results as any batch's
  Atomics.sub(sys.inflight, 0, 1);
  Atomics.sub(sys.inflight, 1, 1);
  assert.deepEqual([...sys.inflight], [0, 0]);
});

test('ready board: a slot reused by a later entry is not taken for an earlier one read late', () => {
  const sys = new ReadyBoard(2);
  const lane = new ReadyBoard(2, sys.buffer);
  const first = sys.post();
  assert.equal(lane.claim(first, 0), true);
  // entries until one lands in the first one's slot again, each taken in turn
  let last = first;
  for (let k = 1; k <= BOARD_SLOTS; k++) { last = sys.post(); if (k < BOARD_SLOTS) assert.equal(lane.claim(last, 0), true); }
  assert.equal(last % BOARD_SLOTS, first % BOARD_SLOTS);
  // a lane that reads the first entry's message only now finds the slot open for another
  assert.equal(lane.claim(first, 1), false);
  assert.equal(sys.open(), 1, 'the open entry stays open');
  assert.equal(lane.claim(last, 1), true);
  assert.equal(sys.open(), 0);
  assert.equal(sys.taken, BOARD_SLOTS + 1);
});

test('priorities on two lanes: the lanes take the next fragments from the ready board in priority order, each once', async () => {
  // --warm-start: both workers are up before the first fragment (a worker that booted ~0.9 s late
  // under the suite's load once left one lane running all 24 in turn, and nothing on the board)
  const r = await luna(['run', '--timing', '--warm-start', '--threads', '2', program('board')], { timeoutMs: 120_000 });
  assert.equal(r.status, 0, describeRun(r));
  const starts = lines(r.stdout).map((l) => l.split(' ').map(Number) as [number, number]);
  const order = starts.map(([i]) => i);
  assert.deepEqual([...order].sort((x, y) => x - y), Array.from({ length: 24 }, (_, i) => i), describeRun(r));
  // in priority order, lane by lane: each lane takes the highest open fragment each time, so what
  // one lane starts falls strictly. (Across the lanes the order is only nearly so: a lane whose
  // thread the machine held back after its take starts that fragment after the other lane's next
  // ones, by as many as the host's load allows; under load 9 fragments once.)
  const lanes = new Map<number, number[]>();
  for (const [i, thread] of starts) (lanes.get(thread) ?? lanes.set(thread, []).get(thread)!).push(i);
  assert.equal(lanes.size, 2, `both lanes ran fragments: ${starts.map((s) => s.join('@')).join(' ')}`);
  for (const [thread, seq] of lanes) {
    assert.ok(seq.every((p, k) => k === 0 || p < seq[k - 1]!), `thread ${thread} started its fragments out of priority order: ${seq.join(' ')} (all: ${order.join(' ')})`);
  }
  const t = timingOf<{ batches: number; boardPosted: number; boardTaken: number; inline: number }>(r);
  assert.equal(t.inline, 0, describeRun(r));
  // every posted fragment taken, once; and many taken at the end of the lane's previous one
  // instead of being sent by the system thread after that one's result came (24 batches, 2 of
  // them the lanes' first: with a round trip a fragment, none come from the board)
  assert.equal(t.boardTaken, t.boardPosted, describeRun(r));
  assert.ok(t.boardTaken >= 4, `taken from the board: ${t.boardTaken} of ${t.batches} batches\n${describeRun(r)}`);
});
