// The scheduler's queues alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deque, FifoReady, PriorityReady, WaitingCfs } from '../../src/runtime/node/queue.js';
import { Cf } from '../../src/runtime/node/fragment.js';
import type { Site } from '../../src/program/compile.js';

const site = { id: 0, spawnNo: 0, stealable: false } as unknown as Site;
const cf = (id: number, priority = 0): Cf => { const c = new Cf(id, site, [], '', -1); c.priority = priority; return c; };

test('Deque: FIFO with pushFront, growing across the ring boundary, removal keeping order', () => {
  const d = new Deque<number>(4);
  for (let i = 0; i < 3; i++) d.push(i);
  assert.equal(d.shift(), 0);
  d.pushFront(-1);
  for (let i = 3; i < 10; i++) d.push(i); // grows while wrapped
  const out: number[] = [];
  while (d.length) out.push(d.shift()!);
  assert.deepEqual(out, [-1, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (let i = 0; i < 6; i++) d.push(i);
  assert.deepEqual(d.removeWhere((x) => x % 2 === 1, 2), [1, 3]);
  assert.deepEqual([d.at(0), d.at(1), d.at(2), d.at(3)], [0, 2, 4, 5]);
});

test('PriorityReady: higher priority first, ties in arrival order; the lowest go first when giving work away', () => {
  const q = new PriorityReady();
  const xs = [cf(0, 0), cf(1, 5), cf(2, 0), cf(3, 5), cf(4, -1), cf(5, 9)];
  for (const x of xs) q.push(x);
  assert.equal(q.peek()!.id, 5);
  const given = q.takeFromTail(() => true, 2).map((c) => c.id).sort();
  assert.deepEqual(given, [2, 4], 'priority -1, then the later of the two 0s');
  const order: number[] = [];
  while (q.length) order.push(q.shift()!.id);
  assert.deepEqual(order, [5, 1, 3, 0]);
});

test('FifoReady: arrival order; work given away is taken from the tail', () => {
  const q = new FifoReady();
  for (let i = 0; i < 5; i++) q.push(cf(i));
  assert.deepEqual(q.takeFromTail((c) => c.id !== 4, 2).map((c) => c.id), [2, 3]);
  const order: number[] = [];
  while (q.length) order.push(q.shift()!.id);
  assert.deepEqual(order, [0, 1, 4]);
});

test('WaitingCfs: exactly the CFs added and not deleted, in the order they were added, as a set of them', () => {
  const rnd = ((s: number) => () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)(11);
  const cfs = Array.from({ length: 40 }, (_, i) => cf(i));
  const w = new WaitingCfs();
  const oracle = new Set<Cf>();
  for (let step = 0; step < 4000; step++) {
    const c = cfs[Math.floor(rnd() * cfs.length)]!;
    if (rnd() < 0.55) { w.add(c); oracle.add(c); } else assert.equal(w.delete(c), oracle.delete(c), `step ${step}: delete ${c.id}`);
    assert.equal(w.size, oracle.size);
    assert.equal(w.has(c), oracle.has(c));
    if (step % 97 === 0) assert.deepEqual([...w].map((x) => x.id), [...oracle].map((x) => x.id), `step ${step}: order`);
  }
  for (const c of cfs) { w.delete(c); oracle.delete(c); }
  assert.equal(w.size, 0);
  assert.deepEqual([...w], []);
  // an emptied list takes CFs again from its head
  w.add(cfs[3]!); w.add(cfs[1]!); w.add(cfs[3]!);
  assert.deepEqual([...w].map((x) => x.id), [3, 1]);
});
