// The table of DF keys a DF name's references share: pure bookkeeping, every rule in milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KEY_TABLE_LIMIT, KeyTable, spellKey } from '../../src/program/keys.js';
import * as keys from '../../src/program/keys.js';

test('pack: index values as one small int, distinct for distinct values; negative, too large or NaN do not fit', () => {
  const t4 = new KeyTable(4);
  const seen = new Set<number>();
  for (const v of [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0], [127, 127, 127, 127], [3, 1, 2, 0], [0, 3, 1, 2]]) {
    const n = t4.pack(v);
    assert.ok(n >= 0 && n < 2 ** 30, `${v} packs to a small int`);
    assert.ok(!seen.has(n), `${v} packs apart from the others`);
    seen.add(n);
  }
  assert.equal(t4.pack([0, 0, 0, 128]), -1);
  assert.equal(t4.pack([0, -1, 0, 0]), -1);
  assert.equal(t4.pack([0, NaN, 0, 0]), -1);
  const t1 = new KeyTable(1);
  assert.equal(t1.pack([2 ** 30 - 1]), 2 ** 30 - 1);
  assert.equal(t1.pack([2 ** 30]), -1);
});

test('get/set: a key is found by its base and packed indices, another base keeps its own, the last base is remembered without mixing', () => {
  const t = new KeyTable(2);
  const a = t.pack([1, 2]), b = t.pack([2, 1]);
  assert.equal(t.get('x#1', a), undefined);
  t.set('x#1', a, 'x#1.1.2');
  t.set('x#2', a, 'x#2.1.2');
  assert.equal(t.get('x#1', a), 'x#1.1.2');
  assert.equal(t.get('x#2', a), 'x#2.1.2');
  assert.equal(t.get('x#1', b), undefined);
  assert.equal(t.get('x#3', a), undefined);
  assert.equal(t.get('x#2', a), 'x#2.1.2');
  assert.equal(t.held, 2);
});

test('a table starts again once it holds KEY_TABLE_LIMIT keys: memory stays bounded over a long run', () => {
  const t = new KeyTable(1);
  for (let i = 0; i < KEY_TABLE_LIMIT; i++) t.set('x#', i, `x#.${i}`);
  assert.equal(t.held, KEY_TABLE_LIMIT);
  assert.equal(t.get('x#', 5), 'x#.5');
  t.set('x#', KEY_TABLE_LIMIT, `x#.${KEY_TABLE_LIMIT}`);
  assert.equal(t.held, 1);
  assert.equal(t.get('x#', 5), undefined);
  assert.equal(t.get('x#', KEY_TABLE_LIMIT), `x#.${KEY_TABLE_LIMIT}`);
});

test('spellKey: the base, the text between the variable indices and their values, for 0 to 6 of them', () => {
  for (let nv = 0; nv <= 6; nv++) {
    const seps = Array.from({ length: nv + 1 }, (_, i) => (i === nv ? (nv % 2 ? '.9' : '') : i === 0 ? '.4.' : '.'));
    const vals = Array.from({ length: nv + 2 }, (_, i) => 10 + i);
    const at = Array.from({ length: nv }, (_, i) => i + 1);
    let want = 'y#7' + seps[0];
    for (let i = 0; i < nv; i++) want += String(vals[at[i]!]) + seps[i + 1];
    assert.equal(spellKey(seps, nv)('y#7', vals, at), want, `${nv} variable indices`);
  }
});

test('the cache in front of the maps answers as the maps do: per base, colliding indices apart, nothing kept past a restart', () => {
  const t = new KeyTable(2);
  const oracle = new Map<string, string>();
  let s = 7;
  const rnd = (n: number): number => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % n; };
  const bases = ['v#', 'v#1', 'w#'];
  let sets = 0, restarts = 0;
  for (let op = 0; op < 3 * KEY_TABLE_LIMIT; op++) {
    const base = bases[rnd(3)]!;
    const packed = t.pack([rnd(3000), rnd(3)]);
    const want = oracle.get(`${base}|${packed}`);
    assert.equal(t.get(base, packed), want, `get ${base} ${packed} at op ${op}`);
    if (want === undefined) {
      if (sets === KEY_TABLE_LIMIT) { oracle.clear(); sets = 0; restarts++; } // the table starts again
      const key = `${base}.${packed}`;
      t.set(base, packed, key);
      oracle.set(`${base}|${packed}`, key);
      sets++;
    }
  }
  assert.ok(restarts >= 2, `the table started again ${restarts} times`);
  // a base spelled alike but another string object finds the same keys
  const p = t.pack([1, 1]);
  t.set('v#', p, 'v#.1.1');
  assert.equal(t.get(['v', '#'].join(''), p), 'v#.1.1');
});

test('a table hands out with each key its base and packed indices (lastKey…), from the cache, the maps and a new key alike', () => {
  const t = new KeyTable(2);
  const handed = (): [string, string, number, KeyTable | null] => [keys.lastKey, keys.lastKeyBase, keys.lastKeyPacked, keys.lastKeyTable];
  const p = t.pack([3, 4]);
  t.set('v#', p, 'v#.3.4');
  assert.deepEqual(handed(), ['v#.3.4', 'v#', p, t], 'a new key');
  const q = t.pack([5, 6]);
  t.set('w#', q, 'w#.5.6');
  assert.deepEqual(handed(), ['w#.5.6', 'w#', q, t]);
  assert.equal(t.get('v#', p), 'v#.3.4');
  assert.deepEqual(handed(), ['v#.3.4', 'v#', p, t], 'found again');
  // a miss hands nothing out: the last key stays the one found last
  assert.equal(t.get('v#', t.pack([7, 7])), undefined);
  assert.deepEqual(handed(), ['v#.3.4', 'v#', p, t]);
  // another table's key
  const u = new KeyTable(1);
  u.set('x#.2', 9, 'x#.2.9');
  assert.deepEqual(handed(), ['x#.2.9', 'x#.2', 9, u]);
  // the packed indices read back: two indices of `bits` bits each
  assert.deepEqual([p >>> t.bits, p & (t.bound - 1)], [3, 4]);
});
