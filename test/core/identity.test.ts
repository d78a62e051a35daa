// The identity of DFs and CFs, and the one duration parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dfFamily, displayDf, familyKey, indexKey, isDfKey, parseDfKey, pushKey, pushedDf } from '../../src/core/dfkey.js';
import { blockPrefix, childGid, displayCf, isGid, MAX_PREFIX, parseGid } from '../../src/core/cfid.js';
import { DurationError, formatDuration, parseDuration } from '../../src/core/duration.js';

test('DF keys: made of the declaring block\'s global id, indexed, shown as the program names them, grouped by family, parsed back', () => {
  const base = familyKey('A', blockPrefix('3', 12));
  const k = indexKey(indexKey(base, 1), 3);
  assert.equal(k, 'A#3_12.1.3');
  assert.equal(displayDf(k), 'A[1][3]');
  assert.equal(displayDf(base), 'A');
  assert.equal(dfFamily(k), 'A');
  assert.deepEqual(parseDfKey(k), { name: 'A', block: '3_12', indices: [1, 3] });
  const main = indexKey(familyKey('b', ''), -4);
  assert.equal(main, 'b#.-4', "main's block has the empty id");
  assert.equal(displayDf(main), 'b[-4]');
  assert.deepEqual(parseDfKey(main), { name: 'b', block: '', indices: [-4] });
  assert.equal(parseDfKey('not a key'), null);
  assert.equal(isDfKey('A#3_12.1.3'), true);
  assert.equal(isDfKey('A#3__1'), false);
  assert.equal(isDfKey('A[1]'), false);
  // display names aggregate by family too (simulated traces, user input)
  assert.equal(dfFamily('x[3][4]'), 'x');
  const pk = pushKey('L[2]', k);
  assert.equal(pushedDf(pk), k);
});

test('CF global ids: parent, loop iteration, spawn number; main is empty', () => {
  assert.equal(childGid('', -1, 3), '3');
  assert.equal(childGid('3', 5, 0), '3_5_0');
  assert.equal(childGid('3_5_0', -1, 2), '3_5_0_2');
  assert.equal(blockPrefix('3', 5), '3_5');
  assert.equal(blockPrefix('', 7), '7');
  assert.deepEqual(parseGid('3_5_0'), [3, 5, 0]);
  assert.deepEqual(parseGid(''), []);
  assert.equal(parseGid('x_1'), null);
  assert.equal(displayCf('addOne', [2, 3]), 'addOne[2][3]');
  assert.equal(displayCf('main', null), 'main');
});

test('CF global ids of a deep recursion stay short, distinct and stable: long block prefixes are folded', () => {
  // `sub loop(k) { step(k); if … loop(k + 1); }`: each level is statement 1 of the block of the
  // CF spawned as statement 1 of the level above (its own block, not a loop)
  const ids: string[] = [], prefixes: string[] = [];
  let gid = childGid('', -1, 0);
  for (let level = 0; level < 20_000; level++) {
    ids.push(gid);
    const prefix = blockPrefix(gid, -1);
    prefixes.push(prefix);
    gid = childGid(gid, -1, 1);
  }
  assert.equal(ids[3], '0_1_1_1', 'shallow ids are as before');
  assert.equal(new Set(ids).size, ids.length, 'no two levels share an id');
  assert.ok(ids.every((g) => g.length <= MAX_PREFIX + 12), `longest id ${Math.max(...ids.map((g) => g.length))} characters`);
  assert.match(ids[19_999]!, /^~[0-9a-f]{32}(?:_1)+$/);
  // a pure function of the path: computed again, the same ids
  let again = '0';
  for (let level = 1; level < 20_000; level++) again = childGid(again, -1, 1);
  assert.equal(again, ids[19_999]);
  // a CF's id is its block prefix and its spawn number (the dynamic array names itself so)
  for (const l of [10, 19, 20, 19_999]) assert.equal(ids[l]!.slice(0, ids[l]!.lastIndexOf('_')), prefixes[l - 1]);
  // loop bodies fold alike; folded ids are ids and make DF keys
  const deepLoop = blockPrefix(prefixes[19_999]!, 7);
  assert.ok(deepLoop.length <= MAX_PREFIX + 1);
  assert.notEqual(deepLoop, blockPrefix(prefixes[19_999]!, 8));
  for (const g of [ids[19_999]!, deepLoop, '', '3_5_0']) assert.equal(isGid(g), true, g);
  assert.equal(isGid('~x y'), false);
  assert.equal(parseGid(ids[19_999]!), null, 'a folded id has no number path');
  const key = indexKey(familyKey('ok', deepLoop), 2);
  assert.deepEqual(parseDfKey(key), { name: 'ok', block: deepLoop, indices: [2] });
  assert.equal(displayDf(key), 'ok[2]');
});

test('durations need a unit; the message says how to write one', () => {
  assert.equal(parseDuration('10ms'), 10_000_000);
  assert.equal(parseDuration('250us'), 250_000);
  assert.equal(parseDuration('250µs'), 250_000);
  assert.equal(parseDuration('1.5s'), 1_500_000_000);
  assert.equal(parseDuration(' 2000ns '), 2000);
  assert.throws(() => parseDuration('5000'), (e: Error) => e instanceof DurationError && /needs a unit/.test(e.message) && /5000us/.test(e.message));
  assert.throws(() => parseDuration('ten'), DurationError);
  assert.throws(() => parseDuration('5 min'), /unknown unit/);
  assert.throws(() => parseDuration('0ms'), /positive/);
  assert.equal(formatDuration(1_234_567), '1.23 ms');
  assert.equal(formatDuration(999), '999 ns');
});

test('a block prefix is its own prefix: children spawned under the prefix a parent computed once get the ids childGid gives them', () => {
  // the spawner folds a block's prefix once and hands it to every child (runtime/node/examine.ts spawnBlock)
  let gid = '';
  for (let depth = 0; depth < 200; depth++) {
    for (const iter of [-1, 0, 7, 123456]) {
      const block = blockPrefix(gid, iter);
      assert.equal(blockPrefix(block, -1), block, `prefix of ${gid} at ${iter}`);
      for (const n of [0, 3]) assert.equal(childGid(block, -1, n), childGid(gid, iter, n));
    }
    gid = childGid(gid, depth % 3 === 0 ? depth : -1, depth % 4);
  }
});
