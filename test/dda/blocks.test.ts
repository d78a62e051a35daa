// Several blocks a node: each block is held and released on its own; the plan spreads a node's
// share over its blocks (the seed's plan between nodes, split block to block); a receiving block
// is free again as soon as its own parts are in, while the node's other blocks still receive;
// refusals and hang texts name the block. 1–4 in-process nodes over the in-memory mesh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Nodes } from './nodes.js';
import { blockShares, planBlocks } from '../../src/runtime/dda/plan.js';
import type { DdaBlock } from '../../src/ucode/dda.js';

/** Fill block `index` of node `node` with ids from..from+n-1 (f64 id, f64 id*3+1). */
async function fill(ns: Nodes, node: number, index: number, from: number, n: number): Promise<void> {
  const h = await ns.acquire(node, 'P', undefined, index);
  h.block.resize((h.block.getNumel() + n) * 16);
  const f = new Float64Array(h.block.addElement(n)!.buffer, 0, 2 * (h.block.getNumel()));
  for (let i = h.block.getNumel() - n, id = from; i < h.block.getNumel(); i++, id++) { f[2 * i] = id; f[2 * i + 1] = id * 3 + 1; }
  ns.release(node, 'P', h);
}

function ids(blocks: DdaBlock[]): number[] {
  const out: number[] = [];
  for (const b of blocks) {
    const f = b.f64();
    for (let i = 0; i < f.length; i += 2) { assert.equal(f[i + 1], f[i]! * 3 + 1, `element ${f[i]} intact`); out.push(f[i]!); }
  }
  return out.sort((a, b) => a - b);
}
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const perBlock = (ns: Nodes, node: number): number[] => ns.dda[node]!.blocks('P').map((b) => b.getNumel());

test('the plan over blocks: the seed\'s moves between nodes, each split block to block; a node\'s share equal over its blocks', () => {
  assert.deepEqual(blockShares(10, 3), [3, 3, 4]);
  // node 0 holds 100 in block 0; onto nodes 0 and 1, 3 blocks each: 50 leave for node 1's blocks 16/16/18 (the remainder on the last)
  // (and node 0's own 50 spread over its blocks: 16 to block 2, 16 to block 1, after the network's moves)
  const m = planBlocks(new Map([[0, [100, 0, 0]], [1, [0, 0, 0]]]), 3, [0, 1]);
  assert.deepEqual(m, [
    { from: 0, fromBlock: 0, to: 1, toBlock: 2, n: 18 },
    { from: 0, fromBlock: 0, to: 1, toBlock: 0, n: 16 },
    { from: 0, fromBlock: 0, to: 1, toBlock: 1, n: 16 },
    { from: 0, fromBlock: 0, to: 0, toBlock: 2, n: 18 },
    { from: 0, fromBlock: 0, to: 0, toBlock: 1, n: 16 },
  ]);
  // one block a node: exactly the seed's plan
  assert.deepEqual(planBlocks(new Map([[0, [10]], [1, [21]], [2, [0]]]), 1, [1, 2]), [{ from: 0, fromBlock: 0, to: 2, toBlock: 0, n: 10 }, { from: 1, fromBlock: 0, to: 2, toBlock: 0, n: 6 }]);
  // a node keeping its share moves only between its own blocks; balanced, nothing
  assert.deepEqual(planBlocks(new Map([[0, [9, 1]], [1, [5, 5]]]), 2, [0, 1]), [{ from: 0, fromBlock: 0, to: 0, toBlock: 1, n: 4 }]);
  assert.deepEqual(planBlocks(new Map([[0, [5, 5]], [1, [5, 5]]]), 2, [0, 1]), []);
  // a sender gives from its blocks most above their shares first; what is left uneven moves inside the node, last
  assert.deepEqual(planBlocks(new Map([[0, [2, 20]], [1, [0, 0]]]), 2, [0, 1]), [
    { from: 0, fromBlock: 1, to: 1, toBlock: 1, n: 6 }, { from: 0, fromBlock: 1, to: 1, toBlock: 0, n: 5 }, { from: 0, fromBlock: 1, to: 0, toBlock: 0, n: 3 },
  ]);
});

test('the plan over blocks between neighbours: every move crosses one edge or stays inside a node; a forwarder passes on what it receives through its block furthest below its share', () => {
  // node 0 holds 90 in block 0; onto 0..2, 2 blocks each (15 a block): 60 cross edge 0-1, 30 edge 1-2
  const m = planBlocks(new Map([[0, [90, 0]], [1, [0, 0]], [2, [0, 0]]]), 2, [0, 1, 2], { neighbours: true });
  // node 1's block 0 (first of its equally empty blocks) takes its 15 and the 30 it passes on to node 2's blocks
  assert.deepEqual(m, [
    { from: 0, fromBlock: 0, to: 1, toBlock: 0, n: 45 },
    { from: 0, fromBlock: 0, to: 1, toBlock: 1, n: 15 },
    { from: 1, fromBlock: 0, to: 2, toBlock: 0, n: 15 },
    { from: 1, fromBlock: 0, to: 2, toBlock: 1, n: 15 },
    { from: 0, fromBlock: 0, to: 0, toBlock: 1, n: 15 },
  ]);
  // each block ends at its share, and no block gives more than it holds and receives
  const check = (cur: Map<number, number[]>, k: number, future: number[]): void => {
    const moves = planBlocks(cur, k, future, { neighbours: true });
    const nodes = [...cur.keys()].sort((a, b) => a - b);
    const after = new Map([...cur].map(([n, c]) => [n, [...c]]));
    for (const mv of moves) {
      assert.ok(mv.n > 0 && (mv.from === mv.to || Math.abs(nodes.indexOf(mv.from) - nodes.indexOf(mv.to)) === 1), `${JSON.stringify(mv)} between neighbours`);
      after.get(mv.from)![mv.fromBlock]! -= mv.n;
      after.get(mv.to)![mv.toBlock]! += mv.n;
    }
    const total = [...cur.values()].flat().reduce((a, b) => a + b, 0);
    const each = Math.floor(total / future.length);
    for (const n of nodes) {
      const i = future.indexOf(n), share = i < 0 ? 0 : i === future.length - 1 ? total - each * (future.length - 1) : each;
      assert.deepEqual(after.get(n), blockShares(share, k), `node ${n} of ${JSON.stringify([...cur])} onto ${future}: ${JSON.stringify(moves)}`);
    }
  };
  check(new Map([[0, [1, 2, 3]], [1, [40, 0, 0]], [2, [0, 0, 0]], [3, [0, 9, 0]]]), 3, [0, 1, 2, 3]);
  check(new Map([[0, [0, 0]], [1, [0, 0]], [2, [0, 0]], [3, [50, 7]]]), 2, [0, 1]);
  check(new Map([[0, [30, 30]], [1, [3, 0]], [2, [0, 1]], [3, [0, 0]]]), 2, [3]);
  check(new Map([[0, [5, 0]], [1, [0, 9]], [2, [1, 1]]]), 2, [2, 0]);
});

test('several blocks a node between neighbours, run: the middle node forwards what it receives; every block ends at its share, nothing lost', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'P', blocks: 2 });
  await fill(ns, 0, 0, 0, 60);
  await fill(ns, 0, 1, 60, 30);
  assert.equal(await ns.rearrange(1, 'P', [0, 1, 2], { neighbours: true }), 90);
  for (let n = 0; n < 3; n++) assert.deepEqual(perBlock(ns, n), [15, 15]);
  assert.deepEqual(ids(ns.dda.flatMap((d) => d.blocks('P'))), range(90));
  // moves only between adjacent nodes (or inside one); node 1 passed on 30 of the 60 it got
  const moves = ns.done.at(-1)!.moves;
  for (const mv of moves) assert.ok(Math.abs(mv.from - mv.to) <= 1, JSON.stringify(mv));
  assert.equal(moves.filter((mv) => mv.from === 1 && mv.to === 2).reduce((a, mv) => a + mv.n, 0), 30);
  // and back onto node 2 alone: node 1 forwards node 0's elements
  assert.equal(await ns.rearrange(0, 'P', [2], { neighbours: true }), 90);
  assert.deepEqual([0, 1, 2].map((n) => perBlock(ns, n)), [[0, 0], [0, 0], [45, 45]]);
  assert.deepEqual(ids(ns.dda.flatMap((d) => d.blocks('P'))), range(90));
  await ns.close();
});

test('several blocks a node: CFs hold different blocks of one node at once; a rearrangement fills every block of the new nodes, nothing lost', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'P', blocks: 3 });
  // two CFs hold blocks 0 and 2 of node 0 together
  const a = await ns.acquire(0, 'P', undefined, 0);
  const b = await ns.acquire(0, 'P', undefined, 2);
  assert.notEqual(a.block.buffer, b.block.buffer);
  ns.release(0, 'P', a);
  ns.release(0, 'P', b);
  await fill(ns, 0, 0, 0, 60);
  await fill(ns, 0, 2, 60, 30);
  assert.equal(await ns.rearrange(0, 'P', [1, 2]), 90);
  assert.deepEqual(ns.counts('P'), [0, 45, 45]);
  assert.deepEqual(perBlock(ns, 1), [15, 15, 15]);
  assert.deepEqual(perBlock(ns, 2), [15, 15, 15]);
  assert.deepEqual(ids(ns.dda.flatMap((d) => d.blocks('P'))), range(90));
  // every part a move between blocks, every move recorded with its blocks
  const done = ns.done.at(-1)!;
  assert.equal(done.moves.reduce((n, m) => n + m.n, 0), 90);
  assert.ok(done.moves.every((m) => m.fromBlock !== undefined && m.toBlock !== undefined));
  assert.equal(ns.dda[0]!.sent.part, done.moves.length);
  // and back onto node 0 alone
  assert.equal(await ns.rearrange(2, 'P', [0]), 90);
  assert.deepEqual(perBlock(ns, 0), [30, 30, 30]);
  assert.deepEqual(ids(ns.dda[0]!.blocks('P')), range(90));
  await ns.close();
});

test('a receiving block is free as soon as its own parts are in: a CF works on it while the node\'s other blocks still arrive', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P', blocks: 4 });
  await fill(ns, 0, 0, 0, 400);
  // CFs wait for every block of node 1 before the rearrangement starts; the rearrangement's
  // LOCK comes first (asked first), so they get the blocks as they arrive
  let ended = false;
  const seen: { index: number; numel: number; nodeTotal: number; ended: boolean }[] = [];
  const r = ns.rearrange(0, 'P', [1]).then((n) => { ended = true; return n; });
  // node 1 has the LOCK (it reported); its parts come turns later
  while (ns.dda[1]!.sent.report === 0) await new Promise((res) => setImmediate(res));
  const holders = [0, 1, 2, 3].map((index) => ns.acquire(1, 'P', undefined, index, (blk) => {
    seen.push({ index, numel: blk.getNumel(), nodeTotal: ns.counts('P')[1]!, ended });
  }));
  const hs = await Promise.all(holders);
  // the first block granted held its whole share (100) while the node held fewer than 400: the
  // others were still arriving, and the rearrangement had not ended
  seen.sort((x, y) => x.nodeTotal - y.nodeTotal);
  assert.equal(seen[0]!.numel, 100);
  assert.ok(seen[0]!.nodeTotal < 400, `the first block was granted with ${seen[0]!.nodeTotal} of 400 elements on the node`);
  assert.equal(seen[0]!.ended, false);
  assert.ok(ns.dda[1]!.earlyFreed >= 1);
  for (const h of hs) ns.release(1, 'P', h);
  assert.equal(await r, 400);
  assert.deepEqual(perBlock(ns, 1), [100, 100, 100, 100]);
  assert.deepEqual(ids(ns.dda[1]!.blocks('P')), range(400));
  await ns.close();
});

test('several blocks a node with elements sent by destination: a delivery goes whole to the block with the fewest elements; the count waits for every block\'s holder', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P', blocks: 2 });
  await fill(ns, 1, 0, 0, 10);
  await fill(ns, 0, 1, 10, 4);
  // node 0's block 1 sends all its elements to node 1
  const h = await ns.acquire(0, 'P', undefined, 1);
  h.block.destinations().fill(1);
  ns.release(0, 'P', h);
  // a CF holding block 1 of node 1: the count waits for it
  const held = await ns.acquire(1, 'P', undefined, 1);
  let counted = false;
  const c = ns.count(0, 'P').then((n) => { counted = true; return n; });
  for (let i = 0; i < 20; i++) await new Promise((res) => setImmediate(res));
  assert.equal(counted, false);
  assert.match(ns.dda[1]!.waits().map((w) => w.text).join('\n'), /a global operation of dynamic array P waits for its block 1 on node 1, held by CF \d+/);
  ns.release(1, 'P', held);
  assert.equal(await c, 14);
  // the 4 went to node 1's block 1 (empty), not block 0 (10)
  assert.deepEqual(perBlock(ns, 1), [10, 4]);
  assert.deepEqual(ids(ns.dda.flatMap((d) => d.blocks('P'))), range(14));
  await ns.close();
});

test('elements delivered by destination free their receiving block early in a count: a CF works on it before the node answers READY; a rearrangement keeps it for its plan', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'P', blocks: 2 });
  await fill(ns, 2, 1, 100, 3);
  /** node 1's block 0 sends 6 elements to node 2 (whose block 0, the smaller, receives them) */
  const send = async (from: number): Promise<void> => {
    await fill(ns, 1, 0, from, 6);
    const h = await ns.acquire(1, 'P', undefined, 0);
    h.block.destinations().fill(2);
    ns.release(1, 'P', h);
  };
  for (const kind of ['count', 'rearrange'] as const) {
    await send(kind === 'count' ? 0 : 6);
    const ready = ns.dda[2]!.sent.ready, early = ns.dda[2]!.earlyFreed, reports = ns.dda[2]!.sent.report;
    const op = kind === 'count' ? ns.count(0, 'P') : ns.rearrange(0, 'P', [2]);
    // node 2 has the LOCK (it reported); the part comes turns later
    while (ns.dda[2]!.sent.report === reports) await new Promise((res) => setImmediate(res));
    let at: { numel: number; ready: number } | undefined;
    const h = await ns.acquire(2, 'P', undefined, 0, (b) => { at = { numel: b.getNumel(), ready: ns.dda[2]!.sent.ready }; });
    if (kind === 'count') {
      // granted with the 6 delivered elements, before node 2 told the GD its parts were in
      assert.deepEqual(at, { numel: 6, ready });
      // (and node 2's block 1, which receives nothing, at its MOVE)
      assert.equal(ns.dda[2]!.earlyFreed, early + 2);
    } else {
      // the plan needs the delivered counts: the block waits for the plan's round
      assert.ok(at!.ready > ready, `granted after node 2's READY of the delivery: ${JSON.stringify(at)}`);
    }
    ns.release(2, 'P', h);
    assert.equal(await op, kind === 'count' ? 9 : 15);
  }
  assert.deepEqual(ids(ns.dda[2]!.blocks('P')), [...range(12), 100, 101, 102]);
  await ns.close();
});

test('several blocks a node: refusals and hang texts name the block', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P', blocks: 2 });
  await assert.rejects(ns.acquire(0, 'P', undefined, 2), /asks for block 2 of dynamic array P, which has 2 block\(s\) a node \(0\.\.1\)/);
  const h = await ns.acquire(1, 'P', 7, 1);
  await assert.rejects(ns.acquire(1, 'P', 7, 1), /CF 7 already holds block 1 of array P on node 1/);
  await assert.rejects(ns.count(1, 'P', 7), /holds block 1 of array P on node 1 and asks for a global count/);
  const waiting = ns.acquire(1, 'P', 8, 1);
  assert.match(ns.dda[1]!.waits().map((w) => w.text).join('\n'), /CF 8 waits for block 1 of dynamic array P on node 1, held by CF 7/);
  ns.release(1, 'P', h);
  ns.release(1, 'P', await waiting);
  // another number of blocks a node is another array
  assert.throws(() => ns.dda[0]!.declare({ name: 'P', elsize: 16, capacity: 0, order: 'unordered', home: 0, blocks: 3 }), /named with 3 block\(s\) a node, but it has 2/);
  assert.throws(() => ns.dda[0]!.declare({ name: 'Q', elsize: 16, capacity: 0, order: 'unordered', home: 0, blocks: 0 }), /0 blocks a node is not a positive integer/);
  await ns.close();
});

test('one node, blocks evened inside it: a CF waiting for the block that gives its elements away gets it only once its sends are done', async () => {
  const ns = new Nodes(1);
  ns.declare({ name: 'P', blocks: 3 });
  await fill(ns, 0, 1, 0, 2);
  // CF a holds block 0, so the rearrangement waits; CF b queues for block 1 meanwhile
  const a = await ns.acquire(0, 'P', undefined, 0);
  const r = ns.rearrange(0, 'P', [0]);
  const b = ns.acquire(0, 'P', undefined, 1);
  ns.release(0, 'P', a);
  // block 1 gives its 2 elements to block 2 (the node's share, 2, on its last block): handled in
  // place, the round ends within the send; b gets block 1 after its memory was given back
  const hb = await b;
  assert.equal(hb.block.getNumel(), 0);
  hb.block.resize(16);
  new Float64Array(hb.block.addElement(1)!.buffer, 0, 2).set([2, 7]);
  ns.release(0, 'P', hb);
  assert.equal(await r, 2);
  assert.deepEqual(perBlock(ns, 0), [0, 1, 2]);
  assert.deepEqual(ids(ns.dda[0]!.blocks('P')), [0, 1, 2]);
  await ns.close();
});
