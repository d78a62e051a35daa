// Global counts answered at the GD without a message on 2 nodes (docs/dda.md, "Counts answered
// at the descriptor"): a node's CF that releases a block, or sends elements to an array whose GD
// is on the other node, tells that GD (STAND) before anything the node sends later — the
// elements sent ahead, and whether the node's LD is free with its counts. Here the CF's output
// is a message on a test channel over the same link, sent after the release as the runtime sends
// a CF's outputs; the count is asked when it arrives, as a count CF waiting for it would be.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dynamicArray } from '../../src/ucode/dda.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';
import { Nodes } from './nodes.js';
import { readTrace } from '../../src/trace/merge.js';
import { DDA_OPS, type TraceEvent } from '../../src/trace/schema.js';
import { collectRun } from '../../src/report/collect.js';

/** a channel of the test's own, beside the layer's */
const OUTPUT = 100;

/** `n` elements with ids from `id0` in node `node`'s block of `from`, all sent to array `to`'s block on its home. */
async function push(ns: Nodes, node: number, from: string, to: string, toHome: number, id0: number, n: number): Promise<void> {
  const h = await ns.acquire(node, from);
  h.block.resize((h.block.getNumel() + n) * 16);
  const f = new Float64Array(h.block.addElement(n)!.buffer, 0, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = id0 + i; f[2 * i + 1] = 3 * (id0 + i) + 1; }
  const d = h.block.destinations([dynamicArray(to, { elsize: 16, home: toHome })]);
  for (let i = h.block.getNumel() - n; i < h.block.getNumel(); i++) d[i] = 0;
  ns.release(node, from, h);
}

const ids = (f: Float64Array): number[] => Array.from({ length: f.length / 2 }, (_, i) => f[2 * i]!);

/**
 * After `before()` on node 1, node 1 sends a message to node 0 on the test's channel (the CF's
 * output); node 0 asks for the count of `array` when it arrives.
 */
function countAfterOutput(ns: Nodes, array: string, before: () => void): Promise<number> {
  let o = outputs.get(ns);
  if (o === undefined) {
    const next: (() => void)[] = [];
    ns.routers[0]!.channel(OUTPUT, 'test outputs', () => next.shift()!());
    outputs.set(ns, (o = { next, out: ns.routers[1]!.channel(OUTPUT, 'test outputs', () => {}) }));
  }
  const { next, out } = o;
  return new Promise((res, rej) => {
    next.push(() => { ns.count(0, array).then(res, rej); });
    before();
    out.send(0, 1, new Uint8Array(1));
  });
}
const outputs = new WeakMap<Nodes, { next: (() => void)[]; out: { send(to: number, tag: number, body: Uint8Array): void } }>();

const sum = (ns: Nodes, k: keyof Nodes['dda'][0]['sent']): number => ns.dda.reduce((s, d) => s + d.sent[k], 0);

test('2 nodes: a count after a push on the other node is answered at the GD with no LOCK, and includes the elements sent ahead', async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'S', home: 1 });
    ns.declare({ name: 'P', home: 0 });
    // the GD knows nothing of node 1's LD yet: the full protocol (and from its REPORT it knows it;
    // asked on node 1, whose UNLOCK comes before the answer)
    assert.equal(await ns.count(1, 'P'), 0);
    assert.equal(sum(ns, 'lock'), 2);
    assert.equal(ns.dda[0]!.countsInPlace, 0);
    const lock = sum(ns, 'lock'), report = sum(ns, 'report'), unlock = sum(ns, 'unlock');
    await push(ns, 1, 'S', 'P', 0, 0, 5);
    const total = await countAfterOutput(ns, 'P', () => {});
    assert.equal(total, 5, 'the 5 elements node 1 sent are counted');
    assert.deepEqual([sum(ns, 'lock') - lock, sum(ns, 'report') - report, sum(ns, 'unlock') - unlock], [0, 0, 0], 'no LOCK, REPORT or UNLOCK');
    assert.equal(ns.dda[0]!.countsInPlace, 1);
    assert.deepEqual(ids(ns.dda[0]!.block('P').f64()), [0, 1, 2, 3, 4], 'delivered into the GD node\'s block, in order');
    assert.equal(ns.done.at(-1)!.bytesMoved, 5 * 16);
    assert.deepEqual(ns.done.at(-1)!.moves, [{ from: 1, to: 0, n: 5 }]);
    // the push's STAND is the only message across: its elements rode in it
    assert.equal(ns.dda[1]!.sent.stand, 1);
    assert.equal(ns.dda[1]!.sent.carried, 1);
    // a second push and count: the same, counted from node 0's block and the elements ahead
    await push(ns, 1, 'S', 'P', 0, 10, 3);
    assert.equal(await countAfterOutput(ns, 'P', () => {}), 8);
    assert.equal(ns.dda[0]!.countsInPlace, 2);
    assert.equal(sum(ns, 'lock'), lock);
  } finally { await ns.close(); }
});

test('2 nodes: a count while the other node holds its block of the array takes the full round trip and waits for it', async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'P', home: 0 });
    assert.equal(await ns.count(1, 'P'), 0);
    const lock = sum(ns, 'lock');
    // node 1's CF holds its block of P: node 1 tells the GD (a STAND without counts)
    const held = await ns.acquire(1, 'P');
    assert.equal(ns.dda[1]!.sent.stand, 1);
    const counting = countAfterOutput(ns, 'P', () => {});
    // the count has sent its LOCKs and waits for node 1's REPORT, which waits for the holder
    while (sum(ns, 'lock') === lock) await new Promise((r) => setImmediate(r));
    assert.equal(sum(ns, 'lock') - lock, 2);
    held.block.resize(4 * 16);
    held.block.addElement(4);
    ns.release(1, 'P', held);
    assert.equal(await counting, 4, 'the holder\'s elements are counted: the count waited for it');
    assert.equal(ns.dda[0]!.countsInPlace, 0);
  } finally { await ns.close(); }
});

test('2 nodes: elements sent to an array after its count has the node\'s REPORT make that REPORT stale: the next count has them', async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'S', home: 1 });
    ns.declare({ name: 'P', home: 0 });
    // node 0 holds P's block: the count's LOCK reaches node 1, which reports at once
    const h0 = await ns.acquire(0, 'P');
    const report = ns.dda[1]!.sent.report;
    const counting = ns.count(0, 'P', ns.cf());
    while (ns.dda[1]!.sent.report === report) await new Promise((r) => setImmediate(r));
    // then a CF of node 1 sends P elements (they wait for P's next operation), and its output
    // asks the next count on node 0, which comes right after this one
    await push(ns, 1, 'S', 'P', 0, 0, 3);
    const next = countAfterOutput(ns, 'P', () => {});
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    ns.release(0, 'P', h0);
    assert.equal(await counting, 0);
    // node 1's REPORT is stale (it told the GD so before its output): not answered from it
    assert.equal(await next, 3);
    assert.equal(ns.dda[0]!.countsInPlace, 0);
    assert.deepEqual(ids(ns.dda[0]!.block('P').f64()), [0, 1, 2]);
  } finally { await ns.close(); }
});

test('2 nodes: elements sent ahead that no global operation delivers end the run as a hang naming them at the GD', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'S', home: 1 });
  ns.declare({ name: 'P', home: 0 });
  await push(ns, 1, 'S', 'P', 0, 0, 6);
  for (let i = 0; i < 20 && ns.dda[0]!.waits().length === 0; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(ns.dda[0]!.waits().map((w) => w.text), ['6 element(s) of dynamic array P sent by destination from node 1 to node 0 wait for a global operation of the array (globalCount or rearrange) to deliver them']);
  assert.equal(ns.dda[0]!.live(), 1);
  await ns.close();
  const end = await ns.controls[0]!.done;
  assert.equal(end.kind, 'hang');
  assert.match(end.message ?? '', /6 element\(s\) of dynamic array P sent by destination from node 1 to node 0 wait/);
});

test('2 nodes: a rearrangement after elements were sent ahead delivers them (its REPORT finds them at the GD)', async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'S', home: 1 });
    ns.declare({ name: 'P', home: 0 });
    await push(ns, 1, 'S', 'P', 0, 0, 8);
    assert.equal(await ns.rearrange(1, 'P', [0, 1]), 8);
    assert.deepEqual(ns.counts('P'), [4, 4]);
    const all = ns.dda.flatMap((d) => ids(d.block('P').f64())).sort((a, b) => a - b);
    assert.deepEqual(all, [0, 1, 2, 3, 4, 5, 6, 7], 'nothing lost, nothing twice');
    // after it node 1 tells the GD its new counts; a count after a push is then answered in place
    await push(ns, 1, 'S', 'P', 0, 20, 2);
    assert.equal(await countAfterOutput(ns, 'P', () => {}), 10);
    assert.equal(ns.dda[0]!.countsInPlace, 1);
  } finally { await ns.close(); }
});

// A LuNA program on 2 nodes of real worker threads: node 1's CFs send elements to node 0 by
// destination (send_by), and the counts asked after them get them: both answered at the GD from
// node 1's STANDs (a release of node 1's block tells the GD its count, so even the first).
const PROGRAM = `
import c_make(block \`P, int \`id0, name \`dests) as make;
import c_check(value \`c1, value \`c2) as check;
sub main()
{
    df D, n, c, D2, n2, c2;
    dynamic P(16);
    cf m1: make(P, 0, D) @ { locator_cyclic: 1; };
    cf s1: send_by(P, D, n) @ { locator_cyclic: 1; };
    global_count(P, c) @ { request n; };
    cf m2: make(P, 20, D2) @ { locator_cyclic: 1; request c; };
    cf s2: send_by(P, D2, n2) @ { locator_cyclic: 1; };
    global_count(P, c2) @ { request n2; };
    check(c, c2);
}
`;

const UCODES = `
import type { DdaBlock, DF } from ${JSON.stringify(UCODE_API)};
/** 20 elements (id, 3 id + 1) from id0, every one of the block sent to node 0 */
export function c_make(P: DdaBlock, id0: number, dests: DF): void {
  P.resize((P.getNumel() + 20) * P.getElsize());
  const v = P.addElement(20)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 40);
  for (let i = 0; i < 20; i++) { f[2 * i] = id0 + i; f[2 * i + 1] = 3 * (id0 + i) + 1; }
  dests.createInt32Array(P.getNumel()).fill(0);
}
export function c_check(c1: DF, c2: DF): void {
  if (c1.getInt() !== 20 || c2.getInt() !== 40) throw new Error('counts ' + c1.getInt() + ', ' + c2.getInt());
  console.log('standing: OK');
}
`;

test('a LuNA program on 2 nodes (real threads): the counts after node 1 sent elements are answered at the GD, and have them', async (t) => {
  const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, layers: [layer], traced: true });
  for (const r of ran.results) assert.equal(r.ok, true, r.message);
  assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [40, 0]);
  assert.deepEqual(ids(layer.nodes[0]!.block('P').f64()), Array.from({ length: 40 }, (_, i) => i));
  assert.equal(layer.nodes[0]!.countsInPlace, 2, 'both counts');
  assert.equal(layer.nodes.reduce((s, d) => s + d.sent.lock, 0), 0, 'no LOCK');
  assert.equal(layer.nodes[1]!.sent.carried, 2, 'the elements went in two STANDs');
  // the trace shows each count as a count of the protocol is shown: the GD's span and the GD
  // node's part; node 1's part is what it told the GD ahead, with the bytes it sent
  const ops = [...readTrace(ran.trace!).events].filter((e): e is Extract<TraceEvent, { kind: 'ddaOp' }> => e.kind === 'ddaOp');
  const of = (node: number, op: string): Extract<TraceEvent, { kind: 'ddaOp' }>[] => ops.filter((e) => e.node === node && DDA_OPS[e.op] === op);
  const counts = of(0, 'count'), parts = of(0, 'count (node)');
  assert.deepEqual(counts.map((e) => [e.exchanged, e.array]), [[20 * 16, 'P'], [20 * 16, 'P']]);
  assert.deepEqual(parts.map((e) => [e.exchanged, e.rearranged, e.array]), [[0, 0, 'P'], [0, 0, 'P']], "node 0's part of each, which sent nothing");
  parts.forEach((e, i) => assert.ok(e.t === counts[i]!.t && e.end === counts[i]!.end, 'over the count\'s span'));
  const ahead = of(1, 'sent ahead (node)');
  assert.equal(ahead.length, layer.nodes[1]!.sent.stand, 'one record per STAND of node 1');
  assert.deepEqual(ahead.filter((e) => e.exchanged > 0).map((e) => e.exchanged), [20 * 16, 20 * 16], 'the elements it sent ahead');
  assert.ok(ahead.filter((e) => e.exchanged > 0).every((e, i) => e.end <= counts[i]!.t), 'each before the count that delivered them');
  assert.equal(ops.filter((e) => DDA_OPS[e.op] === 'count (node)' && e.node === 1).length, 0, 'node 1 was never locked');
  // where the report's timeline reads them: a span of the node's network row, with its bytes
  const run = collectRun(ran.trace!);
  const names = Array.from({ length: run.transfers.start.length }, (_, i) => [run.transfers.node[i], run.transfers.names!.name(i), run.transfers.bytes[i]] as const).filter((x) => x[1].includes('dynamic array'));
  assert.deepEqual(names.filter((x) => x[0] === 0).map((x) => x[1]).sort(), ['count (node) of dynamic array P', 'count (node) of dynamic array P', 'count of dynamic array P', 'count of dynamic array P']);
  assert.deepEqual(names.filter((x) => x[0] === 1 && x[2] > 0).map((x) => [x[1], x[2]]), [['sent ahead (node) of dynamic array P', 320], ['sent ahead (node) of dynamic array P', 320]]);
});
