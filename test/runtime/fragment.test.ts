// A CF's bookkeeping of received values and pending keys: the same answers with few inputs
// (scanned) and with many (looked up by hash), keys built afresh as the interpreter builds them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cf, MANY } from '../../src/runtime/node/fragment.js';
import type { Site } from '../../src/program/compile.js';
import { T_INT, type DfValue } from '../../src/ucode/value.js';

const site = { id: 0, spawnNo: 0 } as unknown as Site;
const int = (v: number): DfValue => ({ t: T_INT, v });
/** a key as a fresh string (not the literal's object), as ref.key() makes it */
const key = (i: number): string => ['x#', '3', '.', String(i)].join('');

for (const n of [1, 2, MANY - 1, MANY, MANY + 1, 27]) {
  test(`${n} inputs: values found by key, the first value of a key wins, clearGot forgets them`, () => {
    const cf = new Cf(0, site, [], '', -1);
    for (let i = 0; i < n; i++) cf.addGot(key(i), int(i));
    cf.addGot(key(0), int(-1)); // a second value of the same key: the first one stays
    for (let i = 0; i < n; i++) assert.deepEqual(cf.gotValue(key(i)), int(i));
    assert.equal(cf.gotValue(key(n)), undefined);
    assert.equal(cf.got!.length, 2 * (n + 1), 'the flat list keeps every pair (traces, migration)');
    assert.deepEqual(cf.got!.slice(0, 4), n === 1 ? [key(0), int(0), key(0), int(-1)] : [key(0), int(0), key(1), int(1)], 'in the order received, the first pair first');
    assert.deepEqual(Array.from({ length: cf.gotCount }, (_, i) => cf.gotKeyAt(i)), cf.got!.filter((_, i) => i % 2 === 0), 'the keys read one by one are the flat list\'s');
    cf.addGot(key(n), int(n));
    assert.deepEqual(cf.gotValue(key(n)), int(n), 'a key added after the index was built');
    cf.clearGot();
    assert.equal(cf.got, null);
    assert.equal(cf.gotValue(key(1)), undefined);
    cf.addGot(key(1), int(5));
    assert.deepEqual(cf.gotValue(key(1)), int(5), 'a fresh start after clearGot');
  });

  test(`${n} pending keys: membership, arrival in any order, count and keys`, () => {
    const cf = new Cf(0, site, [], '', -1);
    for (let i = 0; i < n; i++) cf.addPending(key(i));
    assert.equal(cf.pendingCount, n);
    for (let i = 0; i < n; i++) assert.ok(cf.isPending(key(i)));
    assert.ok(!cf.isPending(key(n)));
    assert.deepEqual(cf.pendingKeys().sort(), Array.from({ length: n }, (_, i) => key(i)).sort());
    assert.ok(cf.everyPending((k) => k.startsWith('x#3.')));
    assert.ok(!cf.everyPending((k) => k !== key(n - 1)));
    assert.equal(cf.arrived(key(n + 5)), false, 'a key not pending changes nothing');
    const order = Array.from({ length: n }, (_, i) => (i * 7) % n === i ? i : (i * 7) % n);
    const seen = new Set<number>();
    const arrivals = [...order.filter((i) => !seen.has(i) && seen.add(i)), ...Array.from({ length: n }, (_, i) => i).filter((i) => !seen.has(i))];
    arrivals.forEach((i, k) => {
      assert.equal(cf.arrived(key(i)), k === n - 1, `done only after the last of ${n}`);
      assert.ok(!cf.isPending(key(i)));
      assert.equal(cf.pendingCount, n - k - 1);
    });
    cf.addPending(key(0));
    assert.equal(cf.pendingCount, 1, 'pending again after all arrived');
    cf.clearPending();
    assert.equal(cf.pendingCount, 0);
    assert.deepEqual(cf.pendingKeys(), []);
  });
}

test('many pending keys: listed in request order, a repeated request counted once, one pending again goes last', () => {
  const cf = new Cf(0, site, [], '', -1);
  const n = MANY + 4;
  for (let i = 0; i < n; i++) cf.addPending(key(i));
  cf.addPending(key(3));
  assert.equal(cf.pendingCount, n, 'a key requested twice is pending once');
  cf.arrived(key(3));
  cf.arrived(key(5));
  assert.deepEqual(cf.pendingKeys(), Array.from({ length: n }, (_, i) => i).filter((i) => i !== 3 && i !== 5).map(key));
  cf.addPending(key(3));
  assert.deepEqual(cf.pendingKeys().slice(-2), [key(n - 1), key(3)]);
  assert.ok(cf.isPending(key(3)) && !cf.isPending(key(5)));
  assert.ok(cf.everyPending((k) => k !== key(5)), 'an arrived key is not tested');
  assert.equal(cf.arrived(key(5)), false, 'a key arrived twice counts once');
  assert.equal(cf.pendingCount, n - 1);
});

test('the fields few CFs use read their defaults until set, and keep what is set', () => {
  const cf = new Cf(0, site, [], '', -1);
  assert.deepEqual([cf.counter, cf.counterEnd, cf.replicas, cf.after, cf.from], [0, 0, null, null, -1]);
  cf.after = null;
  cf.from = -1;
  cf.counter = 3;
  cf.counterEnd = 9;
  cf.from = 2;
  (cf.replicas ??= [])[1] = [0, 1];
  cf.after = [{ op: 'set', key: 'f#', owner: 0 }];
  assert.deepEqual([cf.counter, cf.counterEnd, cf.replicas![1], cf.after, cf.from], [3, 9, [0, 1], [{ op: 'set', key: 'f#', owner: 0 }], 2]);
  cf.after = null;
  assert.equal(cf.after, null);
  const slot = { id: 1 } as never;
  assert.equal(cf.memo(slot, () => 'a'), 'a');
  assert.equal(cf.memo(slot, () => 'b'), 'a', 'a memo is made once');
});
