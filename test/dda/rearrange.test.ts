// The global operations of the dynamic array on 1–4 in-process nodes (seed 002 tests 2 and 3):
// rearrangement onto a disjoint node set and back, onto an overlapping set, the global count,
// CFs that wait for a block held by another CF or locked by a rearrangement, and refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Nodes } from './nodes.js';

/** Fill node `node`'s block with ids from..from+n-1 (f64 id, f64 id*3+1). */
async function fill(ns: Nodes, node: number, name: string, from: number, n: number): Promise<void> {
  const h = await ns.acquire(node, name);
  if (h.block.getMaxNumel() - h.block.getNumel() < n) h.block.resize((h.block.getNumel() + n) * h.block.elsize);
  const v = h.block.addElement(n)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = from + i; f[2 * i + 1] = (from + i) * 3 + 1; }
  ns.release(node, name, h);
}

/** Every element on every node: ids, each checked against its checksum. */
function all(ns: Nodes, name: string): number[] {
  const ids: number[] = [];
  for (const d of ns.dda) {
    const f = d.block(name).f64();
    for (let i = 0; i < f.length; i += 2) { assert.equal(f[i + 1], f[i]! * 3 + 1, `element ${f[i]} intact`); ids.push(f[i]!); }
  }
  return ids.sort((a, b) => a - b);
}
/** Let every message in flight arrive (the mesh delivers on later turns). */
async function settle(turns = 50): Promise<void> { for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r)); }
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('rearrangement onto a disjoint node set and back (seed 002 test 2): shares by §2.3, nothing lost, the GD moves and returns', async () => {
  const ns = new Nodes(4);
  ns.declare({ name: 'P', capacity: 100 });
  await fill(ns, 0, 'P', 0, 100);
  assert.equal(await ns.rearrange(0, 'P', [1, 2]), 100);
  assert.deepEqual(ns.counts('P'), [0, 50, 50, 0]);
  assert.deepEqual(all(ns, 'P'), range(100));
  // the GD left node 0 for node 1: asking from node 3 finds it
  assert.equal(await ns.rearrange(3, 'P', [3, 0]), 100);
  assert.deepEqual(ns.counts('P'), [50, 0, 0, 50]);
  // back onto the home node alone
  assert.equal(await ns.rearrange(2, 'P', [0]), 100);
  assert.deepEqual(ns.counts('P'), [100, 0, 0, 0]);
  assert.deepEqual(all(ns, 'P'), range(100));
  assert.equal(ns.done.length, 3);
  assert.deepEqual(ns.done.map((d) => d.bytesMoved), [100 * 16, 100 * 16, 50 * 16]);
  await ns.close();
});

test('an empty block receiving one part keeps the part\'s memory when it arrived in shared memory of its own; a block with elements, or a plain copy, appends', async () => {
  const ns = new Nodes(3, { sharedPayloads: true });
  ns.declare({ name: 'P', capacity: 100 });
  await fill(ns, 0, 'P', 0, 100);
  const sender = ns.dda[0]!.block('P').buffer;
  // nodes 1 and 2 are empty and get one part each: they keep its memory
  assert.equal(await ns.rearrange(0, 'P', [1, 2]), 100);
  assert.deepEqual(ns.dda.map((d) => d.adoptedParts), [0, 1, 1]);
  assert.deepEqual(all(ns, 'P'), range(100));
  for (const d of ns.dda.slice(1)) assert.notEqual(d.block('P').buffer, sender);
  // a kept part is a block as any other: it grows, and its elements move on
  await fill(ns, 1, 'P', 100, 10);
  assert.deepEqual(ns.counts('P'), [0, 60, 50]);
  // node 0 empty again gets parts from two nodes (more than one): it appends them
  assert.equal(await ns.rearrange(2, 'P', [0]), 110);
  assert.deepEqual(ns.dda.map((d) => d.adoptedParts), [0, 1, 1]);
  assert.deepEqual(ns.counts('P'), [110, 0, 0]);
  assert.deepEqual(all(ns, 'P'), range(110));
  // nodes 1 and 2 empty again get one part each from node 0: kept
  assert.equal(await ns.rearrange(1, 'P', [0, 1, 2]), 110);
  assert.deepEqual(ns.dda.map((d) => d.adoptedParts), [0, 2, 2]);
  // node 1, holding elements, gets node 0's and node 2's: appended
  assert.equal(await ns.rearrange(1, 'P', [1]), 110);
  assert.deepEqual(ns.counts('P'), [0, 110, 0]);
  assert.deepEqual(ns.dda.map((d) => d.adoptedParts), [0, 2, 2]);
  // node 2, empty, gets one part from node 1, which keeps the rest
  assert.equal(await ns.rearrange(0, 'P', [1, 2]), 110);
  assert.deepEqual(ns.counts('P'), [0, 55, 55]);
  assert.deepEqual(ns.dda.map((d) => d.adoptedParts), [0, 2, 3]);
  assert.deepEqual(all(ns, 'P'), range(110));
  await ns.close();
  // the same over plain copies (an in-process node's mesh): nothing kept
  const plain = new Nodes(2);
  plain.declare({ name: 'Q', capacity: 10 });
  await fill(plain, 0, 'Q', 0, 10);
  assert.equal(await plain.rearrange(0, 'Q', [1]), 10);
  assert.deepEqual(plain.dda.map((d) => d.adoptedParts), [0, 0]);
  assert.deepEqual(all(plain, 'Q'), range(10));
  await plain.close();
});

test('rearrangement onto an overlapping node set (seed 002 test 3): only surpluses move; the remainder goes to the last node', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'P' });
  await fill(ns, 0, 'P', 0, 10);
  await fill(ns, 1, 'P', 10, 21);
  assert.equal(await ns.rearrange(1, 'P', [1, 2]), 31);
  assert.deepEqual(ns.counts('P'), [0, 15, 16]);
  assert.deepEqual(ns.done.at(-1)!.moves, [{ from: 0, to: 2, n: 10 }, { from: 1, to: 2, n: 6 }]);
  assert.equal(await ns.rearrange(0, 'P', [0, 1, 2]), 31);
  assert.deepEqual(ns.counts('P'), [10, 10, 11]);
  assert.deepEqual(all(ns, 'P'), range(31));
  // by weight, and between neighbours only
  await ns.rearrange(2, 'P', [0, 1, 2], { weights: [1, 1, 4] });
  assert.deepEqual(ns.counts('P'), [5, 5, 21]);
  await ns.rearrange(2, 'P', [0], { neighbours: true });
  assert.deepEqual(ns.done.at(-1)!.moves, [{ from: 1, to: 0, n: 26 }, { from: 2, to: 1, n: 21 }]);
  assert.deepEqual(ns.counts('P'), [31, 0, 0]);
  assert.deepEqual(all(ns, 'P'), range(31));
  await ns.close();
});

test('the global count waits for blocks held by CFs; a CF wanting a block locked by a rearrangement waits for its end', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'Q', elsize: 16 });
  await fill(ns, 0, 'Q', 0, 8);
  const held = await ns.acquire(1, 'Q');
  held.block.resize(64);
  held.block.addElement(2);
  const counted = ns.count(0, 'Q');
  let got: number | undefined;
  void counted.then((n) => { got = n; });
  await settle();
  assert.equal(got, undefined, 'the count waits for node 1\'s holder');
  assert.match(ns.dda[1]!.waits().map((w) => w.text).join('\n'), /a global operation of dynamic array Q waits for its block on node 1, held by CF \d+/);
  ns.release(1, 'Q', held);
  assert.equal(await counted, 10);
  // a rearrangement locks every block; a CF asking meanwhile waits for its end, then sees the new block
  const holder = await ns.acquire(1, 'Q');
  const r = ns.rearrange(0, 'Q', [1]);
  await settle();
  let granted = false;
  const later = ns.acquire(0, 'Q').then((h) => { granted = true; return h; });
  await settle();
  assert.equal(granted, false);
  assert.match(ns.dda[0]!.waits().map((w) => w.text).join('\n'), /CF \d+ waits for the block of dynamic array Q on node 0, locked by a global operation of the array \(its descriptor on node 0\)/);
  ns.release(1, 'Q', holder);
  await r;
  const h = await later;
  assert.equal(h.block.getNumel(), 0);
  ns.release(0, 'Q', h);
  assert.deepEqual(ns.counts('Q'), [0, 10]);
  await ns.close();
});

test('misuse is refused with the array, the block and the holder named', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P' });
  const h = await ns.acquire(0, 'P');
  await assert.rejects(ns.rearrange(0, 'P', [1], { cf: h.cf }), /CF on node 0 holds the block of array P on node 0 and asks for a global rearrange of it.*it would wait for itself/);
  await assert.rejects(ns.acquire(0, 'P', h.cf), /already holds the block of array P on node 0/);
  await assert.rejects(ns.rearrange(1, 'P', [2]), /onto node 2, which is not a node of this run \(0\.\.1\)/);
  await assert.rejects(ns.rearrange(1, 'P', [1, 1]), /a node is named twice/);
  await assert.rejects(ns.rearrange(1, 'P', []), /onto no node/);
  await assert.rejects(ns.rearrange(1, 'P', [0, 1], { weights: [1, -1] }), /2 positive weights wanted/);
  assert.throws(() => ns.dda[0]!.declare({ name: 'P', elsize: 8, capacity: 0, order: 'unordered', home: 0 }), /array P is named with 8-byte unordered elements, but it has 16-byte unordered ones/);
  assert.throws(() => ns.dda[0]!.release('P', 999, undefined, 0), /released by CF 999, but CF \d+ holds it/);
  ns.release(0, 'P', h);
  await ns.close();
});

test('a CF waiting for a block that is never released is named in the hang report with the array, the block and the holder', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P' });
  await ns.acquire(1, 'P', 7);
  void ns.acquire(1, 'P', 8).catch(() => {});
  await settle();
  const texts = ns.dda[1]!.waits().map((w) => w.text);
  assert.deepEqual(texts, ['CF 8 waits for the block of dynamic array P on node 1, held by CF 7']);
  await ns.close();
});

test('rounds of a rearrangement: none for migration when the plan moves nothing; MOVE only to movers, READY only from receivers', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'R' });
  await fill(ns, 0, 'R', 0, 10);
  await fill(ns, 1, 'R', 10, 10);
  const sent = (): Record<string, number> => {
    const t: Record<string, number> = { lock: 0, report: 0, move: 0, part: 0, ready: 0, unlock: 0, carried: 0, stand: 0 };
    for (const d of ns.dda) for (const [k, v] of Object.entries(d.sent)) t[k]! += v;
    return t;
  };
  // already balanced over nodes 0 and 1: LOCK, REPORT, UNLOCK and nothing else
  assert.equal(await ns.rearrange(2, 'R', [0, 1]), 20);
  await settle();
  assert.deepEqual(sent(), { lock: 3, report: 3, move: 0, part: 0, ready: 0, unlock: 3, carried: 0, stand: 0 });
  assert.deepEqual(ns.done.at(-1)!.moves, []);
  assert.equal(ns.done.at(-1)!.bytesMoved, 0);
  // 10 from node 0 to node 1: node 2 takes no part in the migration; only node 1 answers READY
  await fill(ns, 0, 'R', 20, 20);
  assert.equal(await ns.rearrange(1, 'R', [0, 1]), 40);
  await settle();
  assert.deepEqual(sent(), { lock: 6, report: 6, move: 2, part: 1, ready: 1, unlock: 6, carried: 0, stand: 0 });
  assert.deepEqual(ns.counts('R'), [20, 20, 0]);
  assert.deepEqual(all(ns, 'R'), range(40));
  // a forwarder (neighbours only: 2 → 1 → 0) receives, then sends, then answers READY; node 2 sends only
  assert.equal(await ns.rearrange(0, 'R', [2], { neighbours: true }), 40);
  await settle();
  assert.deepEqual(ns.counts('R'), [0, 0, 40]);
  assert.deepEqual(sent(), { lock: 9, report: 9, move: 5, part: 3, ready: 3, unlock: 9, carried: 0, stand: 0 });
  assert.deepEqual(all(ns, 'R'), range(40));
  await ns.close();
});
