// The local block of a dynamic array alone (seed 002 test 1, the user interface): adding,
// queries, typed views, resize, and both defragmentations for every shape of marked set,
// checked against removing the marked elements from a plain list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DdaBlock, type DefragOrder } from '../../src/ucode/dda.js';
import { plan, shares } from '../../src/runtime/dda/plan.js';

/** A block of n 8-byte elements whose first int32 is its id. */
function filled(n: number, order: DefragOrder, cap = n): DdaBlock {
  const b = DdaBlock.create(8, cap, order);
  const v = b.addElement(n)!;
  const i32 = new Int32Array(v.buffer, v.byteOffset, n * 2);
  for (let i = 0; i < n; i++) { i32[2 * i] = i; i32[2 * i + 1] = i * 7; }
  return b;
}
const ids = (b: DdaBlock): number[] => { const a = b.i32(); return Array.from({ length: b.getNumel() }, (_, i) => a[2 * i]!); };

test('addElement(n) gives a writable view over the new elements, null when full; addElement(el) copies one; the queries follow', () => {
  const b = DdaBlock.create(12, 4);
  assert.deepEqual([b.getMaxNumel(), b.getNumel(), b.getMaxSize(), b.getElsize()], [4, 0, 48, 12]);
  const v = b.addElement(3)!;
  assert.equal(v.byteLength, 36);
  v.fill(1);
  assert.equal(b.getNumel(), 3);
  assert.equal(b.addElement(2), null, 'no room for two more');
  assert.equal(b.getNumel(), 3, 'a refused add changes nothing');
  const el = new Uint8Array(12).fill(9);
  const at = b.addElement(el)!;
  assert.deepEqual([...at], [...el]);
  assert.deepEqual([...b.element(3)], [...el]);
  assert.equal(b.addElement(el), null);
  assert.deepEqual([...b.data().subarray(0, 36)], new Array(36).fill(1));
  assert.throws(() => b.addElement(new Uint8Array(5)), /the element has 5 bytes, the array's elements 12/);
  assert.throws(() => b.addElement(-1), /non-negative integer/);
  assert.throws(() => b.f64(), /12 bytes \(not a multiple of 8\)/);
  assert.equal(b.i32().length, 12, 'a view covers the live elements only');
});

test('resize keeps the live elements, refuses to cut them, and invalidates nothing it keeps', () => {
  const b = filled(5, 'ordered');
  const old = b.buffer;
  assert.equal(b.resize(16), null, '5 elements do not fit 16 bytes');
  const nb = b.resize(80)!;
  assert.equal(nb, old, 'grown in place, within its reserve');
  assert.equal(b.resized, false);
  assert.equal(b.getMaxNumel(), 10);
  assert.deepEqual(ids(b), [0, 1, 2, 3, 4]);
  assert.ok(b.addElement(5));
  assert.equal(b.resize(80), nb, 'the same size: the same memory');
  assert.throws(() => b.resize(-1), /non-negative integer of bytes/);
});

test('remElement marks: the element stays readable and counted until defragmentation', () => {
  const b = filled(4, 'unordered');
  b.remElement(1);
  b.remElement(1);
  assert.equal(b.getNumel(), 4);
  assert.equal(b.getMarked(), 1);
  assert.deepEqual(ids(b), [0, 1, 2, 3]);
  assert.equal(b.defragment(), 1);
  assert.deepEqual(ids(b), [0, 3, 2]);
  assert.equal(b.defragment(), 0);
  assert.throws(() => b.remElement(3), /no such element \(it holds 3\)/);
});

// every subset of 0..n-1 for n ≤ 7: none, all, head, tail, runs, alternating, singles, repeats
test('both defragmentations remove exactly the marked elements for every marked subset of up to 7 elements; the ordered one keeps order, the unordered one moves only tail elements into holes', () => {
  for (let n = 0; n <= 7; n++) {
    for (let mask = 0; mask < 1 << n; mask++) {
      const marked = [...Array(n).keys()].filter((i) => mask & (1 << i));
      const kept = [...Array(n).keys()].filter((i) => !(mask & (1 << i)));
      for (const order of ['ordered', 'unordered'] as const) {
        const b = filled(n, order);
        // marked in a scrambled order, some twice
        for (const i of [...marked].reverse()) b.remElement(i);
        if (marked.length > 0) b.remElement(marked[0]!);
        assert.equal(b.defragment(), marked.length);
        const got = ids(b);
        if (order === 'ordered') assert.deepEqual(got, kept, `ordered, n=${n}, marked ${marked}`);
        else {
          assert.deepEqual([...got].sort((a, c) => a - c), kept, `unordered, n=${n}, marked ${marked}`);
          // kept elements before the first hole stay put; others come from the tail
          for (let i = 0; i < got.length; i++) if (i < (marked[0] ?? n)) assert.equal(got[i], i);
          // every element's payload travelled with it
        }
        const a = b.i32();
        for (let i = 0; i < got.length; i++) assert.equal(a[2 * i + 1], got[i]! * 7);
      }
    }
  }
});

test('the unordered defragmentation fills holes from the tail (Cabana\'s remove): 10 elements, 1 and 4 marked', () => {
  const b = filled(10, 'unordered');
  b.remElement(4);
  b.remElement(1);
  b.defragment();
  assert.deepEqual(ids(b), [0, 9, 2, 3, 8, 5, 6, 7]);
});

test('elements added after marking are kept; marked ones go', () => {
  const b = filled(3, 'ordered', 6);
  b.remElement(0);
  const v = b.addElement(1)!;
  new Int32Array(v.buffer, v.byteOffset, 2).set([42, 294]);
  b.defragment();
  assert.deepEqual(ids(b), [1, 2, 42]);
});

test('migration helpers: takeTail copies and shortens, append grows the memory', () => {
  const b = filled(5, 'unordered');
  const tail = b.takeTail(2);
  assert.deepEqual([...new Int32Array(tail.buffer)].filter((_, i) => i % 2 === 0), [3, 4]);
  assert.equal(b.getNumel(), 3);
  const c = DdaBlock.create(8, 0);
  c.append(tail);
  c.append(tail);
  assert.deepEqual(ids(c), [3, 4, 3, 4]);
  assert.throws(() => b.takeTail(4), /cannot take 4 of its 3/);
  assert.throws(() => c.append(new Uint8Array(3)), /not whole elements/);
});

test('the plan of seed 002 §2.3: equal shares with the remainder on the last node, surplus to deficit greedily by size', () => {
  assert.deepEqual(shares(10, [4, 5, 6]), [3, 3, 4]);
  // onto a disjoint set
  assert.deepEqual(plan(new Map([[0, 10]]), [1, 2]), [{ from: 0, to: 1, n: 5 }, { from: 0, to: 2, n: 5 }]);
  // overlapping: node 1 keeps its share
  assert.deepEqual(plan(new Map([[0, 6], [1, 6]]), [1, 2]), [{ from: 0, to: 2, n: 6 }]);
  // back onto one node
  assert.deepEqual(plan(new Map([[1, 3], [2, 4]]), [0]), [{ from: 2, to: 0, n: 4 }, { from: 1, to: 0, n: 3 }]);
  // balanced already: nothing moves
  assert.deepEqual(plan(new Map([[0, 5], [1, 5]]), [0, 1]), []);
  // weights: node 1 twice as fast
  assert.deepEqual(shares(9, [0, 1], [1, 2]), [3, 6]);
  // seed 002 Fig. 1.1: A,B,C → B,C,D; the seed's plan moves all of A to D, the neighbour
  // option moves between adjacent nodes only
  const cur = new Map([[0, 6], [1, 6], [2, 6]]);
  assert.deepEqual(plan(cur, [1, 2, 3]), [{ from: 0, to: 3, n: 6 }]);
  assert.deepEqual(plan(cur, [1, 2, 3], { neighbours: true }), [{ from: 0, to: 1, n: 6 }, { from: 1, to: 2, n: 6 }, { from: 2, to: 3, n: 6 }]);
  assert.deepEqual(plan(new Map([[0, 1], [3, 11]]), [0, 1, 2, 3], { neighbours: true }), [{ from: 1, to: 0, n: 2 }, { from: 2, to: 1, n: 5 }, { from: 3, to: 2, n: 8 }]);
  assert.throws(() => plan(cur, [1, 1]), /named twice/);
  assert.throws(() => shares(3, []), /no nodes/);
});

test('takeTail: a copy by default; with view, the bytes in place (what a sender hands the transport)', () => {
  const b = DdaBlock.create(8, 10, 'unordered');
  new Float64Array(b.addElement(6)!.buffer, 0, 6).set([0, 1, 2, 3, 4, 5]);
  const copy = b.takeTail(2);
  assert.notEqual(copy.buffer, b.buffer);
  assert.deepEqual([...new Float64Array(copy.buffer, copy.byteOffset, 2)], [4, 5]);
  const view = b.takeTail(2, true);
  assert.equal(view.buffer, b.buffer, 'no copy');
  assert.equal(view.byteOffset, 2 * 8);
  assert.deepEqual([...new Float64Array(view.buffer, view.byteOffset, 2)], [2, 3]);
  assert.equal(b.getNumel(), 2);
  // the block grows over a view's bytes: why the layer sends views only while the block is locked
  new Float64Array(b.addElement(1)!.buffer, 16, 1)[0] = 9;
  assert.equal(new Float64Array(view.buffer, view.byteOffset, 1)[0], 9);
  assert.throws(() => b.takeTail(4), /cannot take 4 of its 3 elements/);
});
