// The scheduler's queues alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Deque, FifoReady, PriorityReady } from '../../src/runtime/node/queue.js';
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
