// The waiting list of a node: what a Set of CFs answered (order of parking, size, membership),
// through wake-ups in any order and the compactions they cause.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cf } from '../../src/runtime/node/fragment.js';
import { WaitList } from '../../src/runtime/node/waitlist.js';
import type { Site } from '../../src/program/compile.js';

const site = { id: 0, spawnNo: 0 } as unknown as Site;
const cfs = (n: number): Cf[] => Array.from({ length: n }, (_, i) => new Cf(i, site, [], '', -1));
const ids = (w: WaitList): number[] => [...w].map((cf) => cf.id);

test('a waiting list keeps the order, size and membership a Set keeps, through compactions', () => {
  const all = cfs(1000);
  const w = new WaitList(), s = new Set<Cf>();
  // a fixed pseudo-random walk of parks and wake-ups, re-parking woken CFs too
  let r = 12345;
  for (let step = 0; step < 20000; step++) {
    r = (r * 1103515245 + 12345) % 2147483648;
    const cf = all[r % all.length]!;
    if ((r >> 10) % 3 === 0) { w.add(cf); s.add(cf); }
    else assert.equal(w.delete(cf), s.delete(cf), 'delete says whether the CF was parked');
    assert.equal(w.size, s.size);
    if (step % 997 === 0) assert.deepEqual(ids(w), [...s].map((c) => c.id));
  }
  assert.deepEqual(ids(w), [...s].map((c) => c.id), 'in the order they parked');
  for (const cf of all) assert.equal(w.has(cf), s.has(cf));
});

test('a CF parked twice keeps its place; one woken and parked again goes last; flags stay', () => {
  const [a, b, c] = cfs(3) as [Cf, Cf, Cf];
  a.placed = true; b.chained = true;
  const w = new WaitList();
  w.add(a); w.add(b); w.add(c); w.add(a);
  assert.deepEqual(ids(w), [0, 1, 2]);
  assert.equal(w.delete(a), true);
  assert.equal(w.delete(a), false);
  w.add(a);
  assert.deepEqual(ids(w), [1, 2, 0]);
  assert.ok(a.placed && !a.chained && b.chained && !b.placed, 'the slot shares its integer with the flags');
  a.placed = false;
  assert.ok(w.has(a), 'a flag set leaves the slot as it was');
  for (const cf of [a, b, c]) w.delete(cf);
  assert.equal(w.size, 0);
  assert.deepEqual(ids(w), []);
  w.add(c);
  assert.deepEqual(ids(w), [2], 'an emptied list starts again');
});

test('mass wake-ups from the front compact the list and keep the rest in order', () => {
  const all = cfs(5000);
  const w = new WaitList();
  for (const cf of all) w.add(cf);
  for (let i = 0; i < 4990; i++) w.delete(all[i]!);
  assert.equal(w.size, 10);
  assert.deepEqual(ids(w), Array.from({ length: 10 }, (_, i) => 4990 + i));
  for (const cf of all.slice(4990)) assert.ok(w.has(cf) && cf.waitSlot < 5000);
  w.add(all[0]!);
  assert.deepEqual(ids(w).slice(-2), [4999, 0]);
});
