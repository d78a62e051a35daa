// The benchmark harness's interleaving: every configuration takes every place in a round equally
// often, so none always runs right after the same other one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interleaved, roundOrder } from '../../bench/common.js';

test('roundOrder rotates the configurations one place per round', () => {
  assert.deepEqual([0, 1, 2, 3].map((r) => roundOrder(['a', 'b', 'c'], r).join('')), ['abc', 'bca', 'cab', 'abc']);
  assert.deepEqual([0, 1].map((r) => roundOrder(['plain', 'traced'], r)), [['plain', 'traced'], ['traced', 'plain']]);
  assert.deepEqual(roundOrder([], 3), []);
});

test('interleaved runs each configuration once per round in the rotated order, and returns medians', async () => {
  const calls: string[] = [];
  const value = { a: [5, 1, 3], b: [10, 30, 20] };
  const seen = { a: 0, b: 0 };
  const run = (k: 'a' | 'b') => async (): Promise<number> => { calls.push(k); return value[k][seen[k]++]!; };
  const m = await interleaved(3, { a: run('a'), b: run('b') });
  assert.deepEqual(calls, ['a', 'b', 'b', 'a', 'a', 'b']);
  assert.deepEqual(m, { a: 3, b: 20 });
});
