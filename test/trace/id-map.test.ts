// The model's map of record numbers answers as a Map does under the model's churn (set on
// creation, delete on finish, lookups between), at every table size it grows through, with keys
// that collide and runs that wrap around the end of the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdMap } from '../../src/trace/model/id-map.js';

/** A small deterministic generator (tests repeat). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296; };
}

function check(keysOf: (r: () => number) => number, ops: number, seed: number): void {
  const r = rng(seed), m = new Map<number, number>(), x = new IdMap<number>(4);
  for (let n = 0; n < ops; n++) {
    const k = keysOf(r), op = r();
    if (op < 0.45) { m.set(k, n); x.set(k, n); }
    else if (op < 0.8) assert.equal(x.delete(k), m.delete(k), `delete ${k} at op ${n}`);
    else { assert.equal(x.get(k), m.get(k), `get ${k} at op ${n}`); assert.equal(x.has(k), m.has(k)); }
    assert.equal(x.size, m.size, `size at op ${n}`);
  }
  for (const [k, v] of m) assert.equal(x.get(k), v, `key ${k} at the end`);
}

test('an IdMap answers as a Map under random churn: dense numbers, sparse 32-bit numbers, numbers up to 2^53', () => {
  check((r) => Math.floor(r() * 300), 60_000, 1);
  check((r) => Math.floor(r() * 4294967296), 20_000, 2);
  check((r) => Math.floor(r() * 2 ** 53), 20_000, 3);
});

test('an IdMap: keys that share their home slot and runs that wrap the table end, deleted from the middle', () => {
  // multiples of 2^32 share their low half; small tables wrap early
  check((r) => Math.floor(r() * 40) * 4294967296 + (r() < 0.5 ? 0 : 15), 30_000, 4);
  check((r) => Math.floor(r() * 24), 30_000, 5);
});

test('an IdMap keys NaN, -0 and negative numbers as a Map does', () => {
  const x = new IdMap<string>();
  x.set(NaN, 'nan'); x.set(-0, 'zero'); x.set(-1, 'minus one'); x.set(0.5, 'half');
  assert.equal(x.get(NaN), 'nan');
  assert.equal(x.get(0), 'zero');
  assert.equal(x.get(-1), 'minus one');
  assert.equal(x.get(0.5), 'half');
  assert.equal(x.get(4294967295), undefined);
  assert.equal(x.size, 4);
  assert.equal(x.delete(NaN), true);
  assert.equal(x.delete(NaN), false);
  assert.equal(x.has(NaN), false);
  assert.equal(x.size, 3);
});
