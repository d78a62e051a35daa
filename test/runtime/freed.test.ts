// The freed-key set of the DF store (runtime/node/freed.ts): exact against a plain set of the
// keys, in little memory for sweeps and stencils. Pure bookkeeping: runs in milliseconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FreedKeys, familyOf, foundCol, foundRow, inFamily, type FreedPlace } from '../../src/runtime/node/freed.js';
import { KeyTable } from '../../src/program/keys.js';

/** The internal tables, to check what a sweep or a stencil costs. */
interface Inside { ranges: Map<string, number[]>; rows: Map<string, { lo: number; hi: number; cols: number[] }[]> }
const inside = (f: FreedKeys): Inside => f as unknown as Inside;

/** A small deterministic generator (tests must not depend on Math.random's sequence). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
}

test('freed keys with two indices: exactly the keys added, whatever the order, rows with the same indices merged', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const rnd = lcg(seed);
    const f = new FreedKeys();
    const oracle = new Set<string>();
    const rows = 1 + Math.floor(rnd() * 12), cols = 1 + Math.floor(rnd() * 6);
    const all: string[] = [];
    for (let t = -1; t < rows; t++) for (let x = -1; x < cols; x++) all.push(`v#3.${t}.${x}`);
    // add a random subset in a random order, checking every key after each add
    const order = all.filter(() => rnd() < 0.7).sort(() => rnd() - 0.5);
    for (const k of order) {
      f.add(k);
      oracle.add(k);
      for (const q of all) assert.equal(f.has(q), oracle.has(q), `seed ${seed}: ${q} after adding ${k}`);
    }
    // then the rest: every row the same, one run
    for (const k of all) f.add(k);
    for (const q of all) assert.ok(f.has(q), `seed ${seed}: ${q}`);
    assert.equal(inside(f).rows.get('v#3')!.length, 1, `seed ${seed}: complete rows are one run`);
    assert.equal(f.has(`v#3.${rows}.0`), false);
    assert.equal(f.has(`v#3.0.${cols}`), false);
  }
});

test('freed keys of different shapes do not mix: one index, two, three, other keys', () => {
  const f = new FreedKeys();
  f.add('x#0.5');
  assert.ok(f.has('x#0.5'));
  assert.equal(f.has('x#0.0.5'), false, 'a key with two indices is another DF');
  assert.equal(f.has('x#0.5.0'), false);
  f.add('x#0.1.2');
  assert.ok(f.has('x#0.1.2') && !f.has('x#0.1') && !f.has('x#0.2') && !f.has('x#0.1.2.0'));
  f.add('x#0.1.2.3');
  assert.ok(f.has('x#0.1.2.3') && !f.has('x#0.1.2.2') && !f.has('x#0.2.2.3'));
  // the block id is not an index; main's block is empty
  f.add('v#.7');
  f.add('v#.8.1');
  assert.ok(f.has('v#.7') && f.has('v#.8.1') && !f.has('v#.8') && !f.has('v#.7.1') && !f.has('v#1.7'));
  // negative indices, and parts that are not numbers
  f.add('A#2.1.-3');
  assert.ok(f.has('A#2.1.-3') && !f.has('A#2.1.3') && !f.has('A#2.-1.-3'));
  f.add('s#4');
  f.add('t#4.x');
  f.add('u#4.-');
  assert.ok(f.has('s#4') && f.has('t#4.x') && f.has('u#4.-') && !f.has('s#5') && !f.has('t#4.y'));
  // more digits than a double holds exactly: kept whole, not as a number
  f.add('w#0.1234567890123456');
  assert.ok(f.has('w#0.1234567890123456') && !f.has('w#0.1234567890123457'));
});

test('a stencil of 100 000 steps, freed row after row in either column order, costs one run of rows', () => {
  const f = new FreedKeys();
  for (let t = 0; t < 100_000; t++) {
    const first = t % 3 === 0 ? 1 : 0;
    // the next row is posted (asked about) while this one is freed
    assert.equal(f.has(`v#.${t + 1}.0`), false);
    f.add(`v#.${t}.${first}`);
    f.add(`v#.${t}.${1 - first}`);
  }
  assert.equal(inside(f).rows.size, 1, 'one family: the prefix before the row');
  assert.equal(inside(f).rows.get('v#')!.length, 1, 'one run of rows');
  assert.ok(f.has('v#.0.0') && f.has('v#.99999.1') && !f.has('v#.100000.0') && !f.has('v#.5.2'));
  // a row freed out of order splits the run and merges back
  const g = new FreedKeys();
  for (let t = 0; t < 10; t++) if (t !== 4) { g.add(`v#.${t}.0`); g.add(`v#.${t}.1`); }
  assert.equal(inside(g).rows.get('v#')!.length, 2);
  g.add('v#.4.1');
  assert.equal(inside(g).rows.get('v#')!.length, 3);
  assert.ok(g.has('v#.4.1') && !g.has('v#.4.0'));
  g.add('v#.4.0');
  assert.equal(inside(g).rows.get('v#')!.length, 1);
  // and a run split in its middle by a row that frees more
  g.add('v#.5.7');
  assert.equal(inside(g).rows.get('v#')!.length, 3);
  assert.ok(g.has('v#.5.7') && !g.has('v#.4.7') && !g.has('v#.6.7') && g.has('v#.4.1') && g.has('v#.6.0'));
});

test('a key added at the place has() found for it is freed exactly as by add, whenever the place was found', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const rnd = lcg(seed);
    const f = new FreedKeys();
    const oracle = new Set<string>();
    const all: string[] = [];
    for (let t = -1; t < 8; t++) {
      all.push(`x#2.${t}`);
      for (let c = 0; c < 3; c++) all.push(`v#3.${t}.${c}`);
    }
    all.push('s#4', 't#4.x');
    // each key's place is found when it is first asked about (its first post or read), some before
    // anything of its family is freed, and the key is freed later, as the store does
    const places = new Map<string, FreedPlace>();
    const ask = (k: string): void => {
      assert.equal(f.has(k), oracle.has(k), `seed ${seed}: ${k}`);
      if (!places.has(k)) places.set(k, { fam: f.seenKey === k ? f.seenFam : null, frow: f.row, fcol: f.col });
    };
    const order = all.slice().sort(() => rnd() - 0.5);
    for (const k of order) {
      for (let j = 0; j < 3; j++) ask(order[Math.floor(rnd() * order.length)]!);
      ask(k);
      f.addAt(k, places.get(k)!);
      oracle.add(k);
      for (const q of all) assert.equal(f.has(q), oracle.has(q), `seed ${seed}: ${q} after adding ${k}`);
    }
    assert.equal(inside(f).rows.get('v#3')!.length, 1, `seed ${seed}: complete rows are one run`);
    assert.deepEqual(inside(f).ranges.get('x#2'), [-1, 7]);
  }
});

test('rows freed out of order a few rows apart, as worker lanes free a stencil, stay exact and end as one run', () => {
  // each row's columns are freed within a window of later rows, in a shuffled order: runs split,
  // merge and are kept for reuse many times over (with three stores at once, which share them)
  const rnd = lcg(7);
  const stores = [new FreedKeys(), new FreedKeys(), new FreedKeys()];
  const oracles = stores.map(() => new Set<string>());
  const rows = 600, cols = 3, window = 5;
  const pending: string[] = [];
  for (let t = 0; t < rows + window; t++) {
    if (t < rows) for (let x = 0; x < cols; x++) pending.push(`v#2.${t}.${x}`);
    // free a random part of what is pending, but everything older than the window
    const keep: string[] = [];
    for (const k of pending) {
      const row = Number(k.split('.')[1]);
      if (row <= t - window || rnd() < 0.4) {
        const s = Math.floor(rnd() * stores.length);
        stores[s]!.add(k);
        oracles[s]!.add(k);
      } else keep.push(k);
    }
    pending.splice(0, pending.length, ...keep);
    for (let q = Math.max(0, t - window - 1); q <= Math.min(rows, t + 1); q++) {
      for (let x = 0; x <= cols; x++) {
        const k = `v#2.${q}.${x}`;
        for (let s = 0; s < stores.length; s++) assert.equal(stores[s]!.has(k), oracles[s]!.has(k), `row ${t}: store ${s}, ${k}`);
      }
    }
  }
  // every key freed into one store: a single run of rows
  const f = new FreedKeys();
  for (let t = 0; t < rows; t += 2) for (let x = cols - 1; x >= 0; x--) f.add(`v#2.${t + 1}.${x}`), f.add(`v#2.${t}.${x}`);
  assert.equal(inside(f).rows.get('v#2')!.length, 1);
  assert.ok(f.has('v#2.0.0') && f.has(`v#2.${rows - 1}.${cols - 1}`) && !f.has(`v#2.${rows}.0`) && !f.has(`v#2.3.${cols}`));
});

test('a key a table handed out last is answered from its indices as numbers, exactly as its text would be, and not read again', () => {
  // families by rows (two indices; one index under a base ending in an index, as a `name`
  // parameter passes `x[3]`) and by ranges (one index), freed at random
  const two = new KeyTable(2), one = new KeyTable(1), other = new KeyTable(2);
  const spell = (t: KeyTable, base: string, v: number[]): string => {
    const p = t.pack(v);
    const key = t.get(base, p) ?? `${base}.${v.join('.')}`;
    if (t.get(base, p) === undefined) t.set(base, p, key);
    return key;
  };
  const cases: [KeyTable, string, number][] = [[two, 'v#', 2], [two, 'v#4_1', 2], [one, 'x#.3', 1], [one, 'x#.-2', 1], [one, 'y#7', 1], [one, 'z#', 1]];
  for (let seed = 1; seed <= 12; seed++) {
    const rnd = lcg(seed);
    const located = new FreedKeys(), text = new FreedKeys();
    const noParse = located as unknown as { parse: (k: string) => boolean };
    const all: [KeyTable, string, number[]][] = [];
    for (const [t, base, n] of cases) for (let a = 0; a < 5; a++) for (let b = 0; b < (n === 2 ? 4 : 1); b++) all.push([t, base, n === 2 ? [a, b] : [a]]);
    for (const [t, base, v] of all) {
      if (rnd() < 0.5) { const k = spell(t, base, v); located.add(k); text.add(k); }
    }
    for (const [t, base, v] of all) {
      const k = spell(t, base, v); // handed out last: `located` answers without reading it
      noParse.parse = () => { throw new Error(`${k} was read back out of its text`); };
      const got = located.has(k);
      delete (noParse as { parse?: unknown }).parse;
      other.set('q#', 0, 'q#.0.0'); // another key handed out: `text` reads k's text
      const want = text.has(k);
      assert.equal(got, want, `seed ${seed}: ${k}`);
      assert.equal(located.col, text.col, `seed ${seed}: ${k}'s last index`);
      if (v.length === 2 || base.startsWith('x')) assert.equal(located.row, text.row, `seed ${seed}: ${k}'s row`);
      assert.equal(located.seenFam === null, text.seenFam === null, `seed ${seed}: ${k}'s family found`);
    }
  }
});

test('keys added by numbers (a family, a row, a last index) answer as the same keys added by their text', () => {
  // the shapes of a loop's output reference: base, constant leading indices, the indices' count
  const shapes: { base: string; lead: number[]; n: number; key: (r: number, c: number) => string }[] = [
    { base: 'v#', lead: [], n: 2, key: (r, c) => `v#.${r}.${c}` },
    { base: 'v#3_1', lead: [4], n: 3, key: (r, c) => `v#3_1.4.${r}.${c}` },
    { base: 'x#2', lead: [], n: 1, key: (_r, c) => `x#2.${c}` },
    // a name parameter's base ends in an index: its keys of one index are rows of the caller's
    { base: 'z#.6', lead: [], n: 1, key: (_r, c) => `z#.6.${c}` },
    { base: 'A#.-1', lead: [], n: 1, key: (_r, c) => `A#.-1.${c}` },
  ];
  for (const sh of shapes) {
    const fam = familyOf(sh.base, sh.lead, sh.n);
    const rowOf = (r: number): number => (sh.n >= 2 ? r : fam.row);
    for (let seed = 1; seed <= 10; seed++) {
      const rnd = lcg(seed);
      const byNumbers = new FreedKeys(), byText = new FreedKeys();
      const grid: [number, number][] = [];
      for (let r = -1; r < 5; r++) for (let c = -2; c < 6; c++) grid.push([r, c]);
      for (const [r, c] of grid.filter(() => rnd() < 0.6).sort(() => rnd() - 0.5)) {
        const key = sh.key(r, c), had = byText.has(key);
        assert.equal(byNumbers.addIn(fam, rowOf(r), c), !had, `${key}: added, unless freed already`);
        byText.add(key);
      }
      for (const [r, c] of grid) {
        const key = sh.key(r, c);
        assert.equal(byNumbers.has(key), byText.has(key), `${sh.base} seed ${seed}: ${key}`);
        assert.ok(inFamily(key, fam) && foundCol === c && (sh.n < 2 || foundRow === r), `${key} is of its family`);
      }
    }
  }
  // not of the family: another base, shape or row
  const v = familyOf('v#', [], 2);
  for (const key of ['w#.1.2', 'v#1.1.2', 'v#.1', 'v#.1.2.3', 'v#.1.x']) assert.equal(inFamily(key, v), false, key);
  assert.equal(inFamily('x#2.7', familyOf('x#2', [], 1)), true);
  assert.equal(inFamily('x#2.1.7', familyOf('x#2', [], 1)), false);
});

test('a run of iterations added at once (addRangeIn) answers as its keys added one by one, and anyIn tells whether one was freed already', () => {
  const shapes: { base: string; lead: number[]; n: number; key: (r: number, c: number) => string }[] = [
    { base: 'v#', lead: [], n: 2, key: (r, c) => `v#.${r}.${c}` },
    { base: 'x#2', lead: [], n: 1, key: (_r, c) => `x#2.${c}` },
    { base: 'z#.6', lead: [], n: 1, key: (_r, c) => `z#.6.${c}` },
  ];
  // (row, last index) = (ar·t + br, ac·t + bc): a chain's next index, a stride, a stencil's rows, backwards
  const forms = [[0, 0, 1, 1], [0, 3, 2, -1], [1, 0, 0, 1], [1, -1, 1, 0], [0, 0, -1, 20]] as const;
  for (const sh of shapes) {
    const fam = familyOf(sh.base, sh.lead, sh.n);
    const rowOf = (r: number): number => (sh.n >= 2 ? r : fam.row);
    for (const [ar0, br0, ac, bc] of forms) {
      if (sh.n < 2 && ac === 0) continue; // (one index: the same key each iteration)
      // (one index: the family's row, as the loop's kept form says)
      const ar = sh.n < 2 ? 0 : ar0, br = sh.n < 2 ? fam.row : br0;
      for (let seed = 1; seed <= 12; seed++) {
        const rnd = lcg(seed);
        const byRange = new FreedKeys(), oneByOne = new FreedKeys();
        const keys = new Set<string>();
        // some keys freed before, then runs of iterations, some of them meeting those keys
        for (let j = 0; j < 4; j++) {
          const t = Math.floor(rnd() * 30) - 5, r = ar * t + br, c = ac * t + bc;
          byRange.addIn(fam, rowOf(r), c); oneByOne.addIn(fam, rowOf(r), c); keys.add(sh.key(r, c));
        }
        for (let j = 0; j < 4; j++) {
          const t0 = Math.floor(rnd() * 30) - 5, t1 = t0 + Math.floor(rnd() * 8);
          let freed = false;
          for (let t = t0; t <= t1; t++) freed ||= keys.has(sh.key(ar * t + br, ac * t + bc));
          assert.equal(byRange.anyIn(fam, t0, t1, ar, br, ac, bc), freed, `${sh.base} ${[ar, br, ac, bc]} seed ${seed}: ${t0}..${t1}`);
          if (freed) continue;
          byRange.addRangeIn(fam, t0, t1, ar, br, ac, bc);
          for (let t = t0; t <= t1; t++) { assert.equal(oneByOne.addIn(fam, ar * t + br, ac * t + bc), true); keys.add(sh.key(ar * t + br, ac * t + bc)); }
        }
        // then runs one after the other, as a chain's turns record them
        let t0 = 31 + Math.floor(rnd() * 3);
        for (let j = 0; j < 3; j++) {
          const t1 = t0 + Math.floor(rnd() * 3);
          assert.equal(byRange.anyIn(fam, t0, t1, ar, br, ac, bc), false);
          byRange.addRangeIn(fam, t0, t1, ar, br, ac, bc);
          for (let t = t0; t <= t1; t++) { oneByOne.addIn(fam, ar * t + br, ac * t + bc); keys.add(sh.key(ar * t + br, ac * t + bc)); }
          t0 = t1 + 1;
        }
        for (let r = -40; r < 65; r++) for (let c = -65; c < 65; c++) {
          if (sh.n < 2 && r !== fam.row) continue;
          const key = sh.key(r, c);
          assert.equal(byRange.has(key), oneByOne.has(key), `${sh.base} ${[ar, br, ac, bc]} seed ${seed}: ${key}`);
          assert.equal(byRange.has(key), keys.has(key), `${sh.base} ${[ar, br, ac, bc]} seed ${seed}: ${key} freed exactly`);
        }
      }
    }
  }
});
