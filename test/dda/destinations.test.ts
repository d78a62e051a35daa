// The per-element destination form of the dynamic array (docs/dda.md): a CF gives each element
// of its block a destination node; at release the leaving elements are packed, one part per
// destination (DdaBlock.settle), and the array's next global operation delivers them before its
// own work. On the block alone, on 3 in-process nodes driven directly (message counts), and in
// LuNA programs on 3 nodes of real threads over TCP with TypeScript and with C++ ucodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DdaBlock, dynamicArray, type DefragOrder } from '../../src/ucode/dda.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';
import { noCompiler } from '../cpp/fixtures.js';
import { Nodes } from './nodes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '../../src/trace/merge.js';
import { DDA_OPS, type TraceEvent } from '../../src/trace/schema.js';
import { exportPerfetto } from '../../src/trace/export/perfetto.js';
import { exportPerfettoProto } from '../../src/trace/export/perfetto-proto.js';
import { collectRun } from '../../src/report/collect.js';

/** A block of `n` 16-byte elements (id, 3 id + 1). */
function filled(n: number, order: DefragOrder = 'unordered', from = 0): DdaBlock {
  const b = DdaBlock.create(16, n + 4, order);
  const f = new Float64Array(b.addElement(n)!.buffer, 0, 2 * n);
  for (let i = 0; i < n; i++) { f[2 * i] = from + i; f[2 * i + 1] = 3 * (from + i) + 1; }
  return b;
}
const ids = (bytes: Uint8Array): number[] => {
  const f = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
  const out: number[] = [];
  for (let i = 0; i < f.length; i += 2) { assert.equal(f[i + 1], 3 * f[i]! + 1, `element ${f[i]} intact`); out.push(f[i]!); }
  return out;
};

for (const order of ['unordered', 'ordered'] as const) {
  test(`settle (${order}): leaving elements packed per destination in their order, the staying ones kept in order, removal wins, later ones stay`, () => {
    const b = filled(12, order);
    const d = b.destinations();
    assert.equal(d.length, 12);
    assert.ok(d.every((x) => x === -1), 'every element stays at first');
    // 0..11 → stay, 2, 2, stay(own rank 1), 0, 0, 0, 2, stay, 1(own), 2, 0
    [-1, 2, 2, -1, 1, 0, 0, 0, 2, -1, 1, 2].forEach((x, i) => (d[i] = x));
    b.remElement(6); // removed: it goes nowhere
    b.remElement(9); // removed, staying
    assert.equal(b.destinations(), d, 'one array per holding');
    b.addElement(new Float64Array([100, 301]));
    b.addElement(new Float64Array([101, 304]));
    b.remElement(12);
    const parts = new Map(b.settle(1, 3).map((p) => [p.node, p.bytes]));
    assert.deepEqual([...parts.keys()].sort(), [0, 2]);
    assert.deepEqual(ids(parts.get(0)!), [5, 7]);
    assert.deepEqual(ids(parts.get(2)!), [1, 2, 8, 11]);
    assert.ok(parts.get(0)!.buffer instanceof SharedArrayBuffer, 'parts in shared memory (they reach the system thread uncopied)');
    assert.deepEqual(ids(b.data()), [0, 3, 4, 10, 101]);
    assert.equal(b.getNumel(), 5);
    // the next holding starts without destinations
    assert.equal(b.settle(1, 3).length, 0);
    assert.deepEqual(ids(b.data()), [0, 3, 4, 10, 101]);
  });
}

test('settle refuses a destination that is not a node of the run, naming the element', () => {
  const b = filled(4);
  b.destinations()[2] = 3;
  assert.throws(() => b.settle(0, 3), /element 2 is sent to node 3, which is not a node of this run \(0\.\.2; -1 stays\)/);
});

/** Node k's block gets ids 100k..100k+n-1; element i goes to node i mod 3, the last is removed. */
async function spray(ns: Nodes, name: string, n: number): Promise<void> {
  for (let k = 0; k < 3; k++) {
    const h = await ns.acquire(k, name);
    h.block.resize(n * 16);
    const f = new Float64Array(h.block.addElement(n)!.buffer, 0, 2 * n);
    for (let i = 0; i < n; i++) { f[2 * i] = 100 * k + i; f[2 * i + 1] = 3 * (100 * k + i) + 1; }
    const d = h.block.destinations();
    for (let i = 0; i < n; i++) d[i] = i % 3;
    h.block.remElement(n - 1);
    ns.release(k, name, h);
  }
}

/** Every element on node k: intact, and one whose id mod 100 is k mod 3. */
function where(ns: Nodes, name: string): number[][] {
  return ns.dda.map((x, k) => {
    const got = ids(x.block(name).data());
    for (const id of got) assert.equal((id % 100) % 3, k, `element ${id} on node ${k}`);
    return got.sort((a, b) => a - b);
  });
}

test('3 in-process nodes: the global count delivers what CFs sent, in one round of parts (a part per sender and destination; those for the GD\'s node in the REPORTs)', async () => {
  const ns = new Nodes(3);
  try {
    ns.declare({ name: 'P' });
    await spray(ns, 'P', 30);
    // nothing moved yet: the elements wait on their nodes
    assert.deepEqual(ns.counts('P'), [10, 10, 9]);
    const before = ns.dda.map((x) => ({ ...x.sent }));
    assert.equal(await ns.count(0, 'P'), 87);
    const sent = (k: keyof (typeof before)[0]): number => ns.dda.reduce((s, x, i) => s + x.sent[k] - before[i]![k], 0);
    // nodes 1 and 2 carry their elements for node 0 (the GD's) in their REPORTs; the other four
    // parts go by MOVE/PART, and only nodes 1 and 2 receive any, so only they answer READY
    assert.deepEqual({ lock: sent('lock'), report: sent('report'), move: sent('move'), part: sent('part'), ready: sent('ready'), unlock: sent('unlock'), carried: sent('carried') },
      { lock: 3, report: 3, move: 3, part: 4, ready: 2, unlock: 3, carried: 2 });
    const got = where(ns, 'P');
    assert.deepEqual(got.map((g) => g.length), [30, 30, 27]);
    const want = (k: number): number[] => [0, 1, 2].flatMap((j) => Array.from({ length: 30 }, (_, i) => 100 * j + i).filter((id) => (id % 100) % 3 === k && id % 100 !== 29));
    assert.deepEqual(got, [want(0), want(1), want(2)]);
    assert.equal(ns.done.at(-1)!.bytesMoved, 20 * 3 * 16 - 16 * 2, 'the bytes delivered: 20 leave each node, less the two removed ones that would have left');
    // a second count has nothing to deliver: LOCK, REPORT, UNLOCK
    const again = ns.dda.reduce((s, x) => s + x.sent.part, 0);
    assert.equal(await ns.count(1, 'P'), 87);
    assert.equal(ns.dda.reduce((s, x) => s + x.sent.part, 0), again);
  } finally { await ns.close(); }
});

test('3 in-process nodes: a rearrangement first delivers what CFs sent, then balances the counts they make', async () => {
  const ns = new Nodes(3);
  try {
    ns.declare({ name: 'P' });
    await spray(ns, 'P', 30);
    // node 2's CF sends everything it got to node 0 as well
    const h = await ns.acquire(2, 'P');
    h.block.destinations().fill(0);
    ns.release(2, 'P', h);
    assert.equal(await ns.rearrange(1, 'P', [0, 1, 2]), 87);
    assert.deepEqual(ns.counts('P'), [29, 29, 29]);
    const all = ns.dda.flatMap((x) => ids(x.block('P').data())).sort((a, b) => a - b);
    assert.deepEqual(all, [0, 1, 2].flatMap((j) => Array.from({ length: 29 }, (_, i) => 100 * j + i)), 'nothing lost, nothing twice');
  } finally { await ns.close(); }
});

test('elements sent by destination that no global operation delivers end the run as a hang naming them, not as a silent loss', async () => {
  const ns = new Nodes(3);
  ns.declare({ name: 'P' });
  await spray(ns, 'P', 30);
  const texts = ns.dda.flatMap((x) => x.waits().map((w) => w.text));
  assert.ok(texts.includes('10 element(s) of dynamic array P sent by destination from node 0 to node 1 wait for a global operation of the array (globalCount or rearrange) to deliver them'), texts.join('\n'));
  assert.equal(texts.length, 6, 'a wait per sender and destination');
  await ns.close();
  const end = await ns.controls[0]!.done;
  assert.equal(end.ok, false);
  assert.equal(end.kind, 'hang');
  assert.match(end.message ?? '', /element\(s\) of dynamic array P sent by destination from node \d to node \d wait for a global operation/);
});

test('settle with targets: each entry names a target array (its home node, or the node given), bad entries name the element', () => {
  const b = filled(8, 'ordered');
  const Q = dynamicArray('Q', { elsize: 16, home: 2 }), R = dynamicArray('R', { elsize: 16 });
  const d = b.destinations([Q, { array: R, node: 1 }]);
  [-1, 0, 1, 1, -1, 0, -1, 1].forEach((x, i) => (d[i] = x));
  const parts = b.settle(1, 3);
  assert.deepEqual(parts.map((p) => [p.array, p.node, ids(p.bytes)]), [['Q', 2, [1, 5]], ['R', 1, [2, 3, 7]]]);
  assert.deepEqual(ids(b.data()), [0, 4, 6]);
  const c = filled(4);
  c.destinations([Q])[3] = 1;
  assert.throws(() => c.settle(0, 3), /element 3 is sent to target 1, but 1 target\(s\) were given \(0\.\.0; -1 stays\)/);
  const e = filled(4);
  assert.throws(() => e.destinations([Q, 7 as never]), /target 1 is not a dynamic array/);
  e.destinations([{ array: Q, node: 5 }])[0] = 0;
  assert.throws(() => e.settle(0, 3), /target 0 \(array Q\) is on node 5, which is not a node of this run \(0\.\.2\)/);
});

test('3 in-process nodes: elements sent to other arrays (a subdomain each) wait in the target array and its own count delivers them, on the same node too', async () => {
  const ns = new Nodes(3);
  try {
    for (const [name, home] of [['A', 0], ['B', 1], ['C', 0]] as const) ns.declare({ name, home, order: 'ordered' });
    const h = await ns.acquire(0, 'A');
    h.block.resize(12 * 16);
    const f = new Float64Array(h.block.addElement(12)!.buffer, 0, 24);
    for (let i = 0; i < 12; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
    // element i: i mod 3 = 0 stays, 1 → B on its home (node 1), 2 → C on node 0 (this node)
    const d = h.block.destinations([dynamicArray('B', { elsize: 16, home: 1, order: 'ordered' }), dynamicArray('C', { elsize: 16, order: 'ordered' })]);
    for (let i = 0; i < 12; i++) d[i] = i % 3 === 0 ? -1 : i % 3 === 1 ? 0 : 1;
    ns.release(0, 'A', h);
    assert.deepEqual(ids(ns.dda[0]!.block('A').data()), [0, 3, 6, 9]);
    const before = ns.dda.map((x) => ({ ...x.sent }));
    const sent = (): Record<string, number> => Object.fromEntries((['lock', 'report', 'move', 'part', 'ready', 'unlock', 'carried'] as const).map((k) => [k, ns.dda.reduce((s, x, i) => s + x.sent[k] - before[i]![k], 0)]));
    // B's count delivers B's part only, carried by node 0's REPORT to B's GD on node 1 (the
    // block's node): no MOVE, PART or READY
    assert.equal(await ns.count(2, 'B'), 4);
    assert.deepEqual(sent(), { lock: 3, report: 3, move: 0, part: 0, ready: 0, unlock: 3, carried: 1 });
    assert.deepEqual(ids(ns.dda[1]!.block('B').data()), [1, 4, 7, 10]);
    assert.deepEqual(ns.counts('C'), [0, 0, 0], "C's part still waits for C's operation");
    // C's: the part goes from node 0 to node 0, in node 0's REPORT to itself
    assert.equal(await ns.count(0, 'C'), 4);
    assert.deepEqual(ids(ns.dda[0]!.block('C').data()), [2, 5, 8, 11]);
    assert.deepEqual(sent(), { lock: 6, report: 6, move: 0, part: 0, ready: 0, unlock: 6, carried: 2 });
    assert.equal(await ns.count(1, 'A'), 4);
  } finally { await ns.close(); }
});

test('elements sent to an array whose operation has already asked for its counts wait for its next operation', async () => {
  const ns = new Nodes(2);
  try {
    ns.declare({ name: 'A' });
    ns.declare({ name: 'B', home: 1 });
    // a CF holds B's block on node 1, so B's count waits for it; node 0 reports at once, then
    // a CF of A on node 0 sends elements to B
    const B = dynamicArray('B', { elsize: 16, home: 1 });
    // two elements sent before the count: it delivers them
    const h0 = await ns.acquire(0, 'A');
    h0.block.resize(2 * 16);
    new Float64Array(h0.block.addElement(2)!.buffer, 0, 4).set([10, 31, 11, 34]);
    h0.block.destinations([B]).fill(0);
    ns.release(0, 'A', h0);
    const hb = await ns.acquire(1, 'B');
    const reported = ns.dda[0]!.sent.report;
    const counting = ns.count(1, 'B', ns.cf());
    const ha = await ns.acquire(0, 'A');
    ha.block.resize(4 * 16);
    const f = new Float64Array(ha.block.addElement(4)!.buffer, 0, 8);
    for (let i = 0; i < 4; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
    while (ns.dda[0]!.sent.report === reported) await new Promise((r) => setTimeout(r, 1));
    ha.block.destinations([B]).fill(0);
    ns.release(0, 'A', ha);
    ns.release(1, 'B', hb);
    assert.equal(await counting, 2, 'the count delivers what was sent before node 0 reported, only that');
    assert.deepEqual(ids(ns.dda[1]!.block('B').data()), [10, 11]);
    assert.equal(await ns.count(0, 'B'), 6, 'the next one delivers the rest');
    assert.deepEqual(ids(ns.dda[1]!.block('B').data()), [10, 11, 0, 1, 2, 3]);
  } finally { await ns.close(); }
});

test('messages to its own node are handled in place: on one node a global operation answers within the call, none goes through the transport', async () => {
  const ns = new Nodes(1);
  try {
    ns.declare({ name: 'P' });
    const h = await ns.acquire(0, 'P');
    h.block.resize(4 * 16);
    h.block.addElement(4);
    ns.release(0, 'P', h);
    let total = -1;
    ns.dda[0]!.global('P', { kind: 'rearrange', nodes: [0] }, ns.cf(), 'CF x', { answer: (v) => { total = v as number; }, fail: (e) => { throw new Error(e); } });
    assert.equal(total, 4, 'answered before global() returned');
    // OP, LOCK, REPORT, UNLOCK, DONE: each handled at once
    assert.equal(ns.dda[0]!.selfSent, 5);
  } finally { await ns.close(); }
});

test('on 3 nodes only the messages between the GD and its own node skip the transport', async () => {
  const ns = new Nodes(3);
  try {
    ns.declare({ name: 'P' });
    await spray(ns, 'P', 30);
    const before = ns.dda.map((x) => x.selfSent);
    assert.equal(await ns.count(0, 'P'), 87);
    // node 0 (asker and GD): OP, LOCK, REPORT, MOVE, UNLOCK, DONE (what comes to node 0 comes in
    // REPORTs, so it expects no part and sends no READY); nobody sends a part to itself
    assert.deepEqual(ns.dda.map((x, i) => x.selfSent - before[i]!), [6, 0, 0]);
  } finally { await ns.close(); }
});

// ------------------------------------------------------------------ real threads, real sockets

const PROGRAM = `
import c_fill(block \`P, int \`k, name \`done) as fill;
import c_scan(block \`P, value \`c, int \`k, name \`s) as scan;
import c_check(value \`c, value \`s0, value \`s1, value \`s2) as check;
sub main()
{
    df d, c, s, r;
    dynamic P(16);
    for k = 0..2
        cf f[k]: fill(P, k, d[k]) @ { locator_cyclic: k; };
    global_count(P, c) @ { request d[0], d[1], d[2]; };
    for k = 0..2
        cf sc[k]: scan(P, c, k, s[k]) @ { locator_cyclic: k; };
    check(c, s[0], s[1], s[2]);
    rearrange(P, 0, 1, r) @ { request s[0], s[1], s[2]; };
}
`;

/** scan and check, shared by both languages' fills: each node holds what was sent to it. */
const READ = `
export function c_scan(P, c, k, s) {
  const f = P.f64();
  let sum = 0;
  for (let i = 0; i < f.length; i += 2) {
    if (f[i + 1] !== 3 * f[i] + 1) throw new Error('element ' + f[i] + ' corrupted');
    if ((f[i] % 100) % 3 !== k) throw new Error('element ' + f[i] + ' on node ' + k);
    sum += f[i];
  }
  s.setValue([P.getNumel(), sum]);
}
export function c_check(c, s0, s1, s2) {
  const want = [0, 1, 2].map((k) => { let n = 0, sum = 0; for (let j = 0; j < 3; j++) for (let i = 0; i < 29; i++) if (i % 3 === k) { n++; sum += 100 * j + i; } return [n, sum]; });
  const got = [s0, s1, s2].map((s) => s.getValue());
  if (c.getInt() !== 87 || JSON.stringify(got) !== JSON.stringify(want)) throw new Error('count ' + c.getInt() + ', blocks ' + JSON.stringify(got) + ', wanted ' + JSON.stringify(want));
}
`;

const FILL_TS = `
import type { DdaBlock, DF } from ${JSON.stringify(UCODE_API)};
/** 30 elements (id 100 k + i, 3 id + 1); element i to node i mod 3; the last removed. */
export function c_fill(P: DdaBlock, k: number, done: DF): void {
  P.resize(30 * P.getElsize());
  const v = P.addElement(30)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 60);
  for (let i = 0; i < 30; i++) { f[2 * i] = 100 * k + i; f[2 * i + 1] = 3 * (100 * k + i) + 1; }
  const d = P.destinations();
  for (let i = 0; i < 30; i++) d[i] = i % 3;
  P.remElement(29);
  done.setInt(P.getNumel());
}
`;

const FILL_CPP = `#include "ucenv.h"
using namespace luna::ucenv;
struct El { double id, sum; };
extern "C" void c_fill(DdaBlock &P, int k, OutputDF &done) {
  P.resize(30 * P.getElsize());
  El *e = P.addElements<El>(30);
  for (int i = 0; i < 30; i++) e[i] = El{100.0 * k + i, 3 * (100.0 * k + i) + 1};
  int32_t *d = P.destinations();
  for (int i = 0; i < 30; i++) d[i] = i % 3;
  P.remElement(29);
  done = static_cast<int>(P.getNumel());
}
`;

for (const lang of ['TypeScript', 'C++'] as const) {
  test(`a LuNA program sends elements by destination with ${lang} ucodes, 3 nodes of real threads over TCP; the count delivers them`, { skip: lang === 'C++' && noCompiler() }, async (t) => {
    const files: Record<string, string> = lang === 'C++'
      ? { 'prog.fa': PROGRAM, 'ucodes.cpp': FILL_CPP, 'ucodes.ts': READ }
      : { 'prog.fa': PROGRAM, 'ucodes.ts': FILL_TS + READ };
    const dir = fixture(t, files);
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes: 3, threads: 1, layers: [layer], traced: lang === 'TypeScript' });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    // the count delivered 30, 30, 27 (c_check); the rearrangement then moved node 2's 27 onto nodes 0 and 1
    assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [43, 44, 0]);
    // the count: a part from each node to each other node, in one round (those to node 0, the
    // GD's, in the REPORTs of nodes 1 and 2); the rearrangement: 2 parts
    assert.equal(layer.nodes.reduce((s, d) => s + d.sent.part, 0), 4 + 2);
    assert.equal(layer.nodes.reduce((s, d) => s + d.sent.carried, 0), 2);
    assert.equal(layer.nodes.reduce((s, d) => s + d.sent.move, 0), 3 + 3);
    if (lang !== 'TypeScript') return;
    // both operations are spans of the trace, on the GD's system thread, with the bytes they moved
    const ops = [...readTrace(ran.trace!).events].filter((e): e is Extract<TraceEvent, { kind: 'ddaOp' }> => e.kind === 'ddaOp');
    assert.deepEqual(ops.filter((e) => e.op < 2).map((e) => [e.node, e.thread, DDA_OPS[e.op], e.exchanged, e.rearranged, e.array]), [
      [0, 0, 'count', 58 * 16, 0, 'P'],
      [0, 0, 'rearrange', 0, 27 * 16, 'P'],
    ]);
    // and every node's part of them, with the bytes it sent: by destination 19, 19 and 20
    // elements (the removed one would have left node 0 and 1); node 2's 27 to the plan
    assert.deepEqual(ops.filter((e) => e.op >= 2).map((e) => [e.node, e.thread, DDA_OPS[e.op], e.exchanged, e.rearranged, e.array]).sort((a, b) => String(a).localeCompare(String(b))), [
      [0, 0, 'count (node)', 19 * 16, 0, 'P'],
      [0, 0, 'rearrange (node)', 0, 0, 'P'],
      [1, 0, 'count (node)', 19 * 16, 0, 'P'],
      [1, 0, 'rearrange (node)', 0, 0, 'P'],
      [2, 0, 'count (node)', 20 * 16, 0, 'P'],
      [2, 0, 'rearrange (node)', 0, 27 * 16, 'P'],
    ]);
    for (const e of ops) assert.ok(e.end >= e.t && e.t > 0);
    const gdOps = ops.filter((e) => e.op < 2);
    for (const e of ops.filter((x) => x.op >= 2)) {
      const g = gdOps.find((x) => x.op === e.op - 2)!;
      assert.ok(e.t >= g.t - 1e6 && e.end >= g.end - 1e6, `node ${e.node}'s part of the ${DDA_OPS[g.op]} lies within it and ends after its UNLOCK left`);
    }
    // the Perfetto export shows them as slices, and the report's timeline on node 0's network row
    const out = join(dir, 'trace.json');
    exportPerfetto(ran.trace!, out);
    const all = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: { ph: string; cat?: string; name: string; pid: number; tid: number; args?: Record<string, number> }[] }).traceEvents.filter((x) => x.cat === 'dynamic array');
    assert.deepEqual(all.filter((x) => x.name.includes('(node)')).map((x) => x.pid).sort(), [0, 0, 1, 1, 2, 2], "each node's parts on its own row");
    const slices = all.filter((x) => !x.name.includes('(node)'));
    assert.deepEqual(slices.map((x) => [x.ph, x.name, x.pid, x.tid, x.args?.exchanged_bytes, x.args?.rearranged_bytes]), [
      ['X', 'count of dynamic array P', 0, 1022, 928, 0],
      ['X', 'rearrange of dynamic array P', 0, 1022, 0, 432],
    ]);
    const proto = join(dir, 'trace.pftrace');
    exportPerfettoProto(ran.trace!, proto);
    const text = readFileSync(proto).toString('latin1');
    for (const name of ['count of dynamic array P', 'rearrange of dynamic array P', 'exchanged_bytes', 'rearranged_bytes']) assert.ok(text.includes(name), `the protobuf export names ${name}`);
    const run = collectRun(ran.trace!);
    const names = Array.from({ length: run.transfers.start.length }, (_, i) => run.transfers.names!.name(i));
    assert.deepEqual(names.filter((x) => x.includes('dynamic array') && !x.includes('(node)')), ['count of dynamic array P', 'rearrange of dynamic array P']);
  });
}

// ------------------------------------------------------------------ the destination form in the language

const SEND_BY_PROGRAM = `
import c_make(block \`P, int \`k, name \`dests) as make;
import c_scan(block \`P, value \`c, int \`k, name \`s) as scan;
import c_check(value \`c, value \`s0, value \`s1, value \`s2) as check;
sub main()
{
    df D, n, c, s;
    dynamic P(16);
    for k = 0..2 {
        cf m[k]: make(P, k, D[k]) @ { locator_cyclic: k; };
        cf sb[k]: send_by(P, D[k], n[k]) @ { locator_cyclic: k; };
    }
    global_count(P, c) @ { request n[0], n[1], n[2]; };
    for k = 0..2
        cf sc[k]: scan(P, c, k, s[k]) @ { locator_cyclic: k; };
    check(c, s[0], s[1], s[2]);
}
`;

/** The elements as FILL_TS makes them, and their destinations as a plain DF of int32s (no array API). */
const MAKE_TS = `
import type { DdaBlock, DF } from ${JSON.stringify(UCODE_API)};
export function c_make(P: DdaBlock, k: number, dests: DF): void {
  P.resize(30 * P.getElsize());
  const v = P.addElement(30)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 60);
  for (let i = 0; i < 30; i++) { f[2 * i] = 100 * k + i; f[2 * i + 1] = 3 * (100 * k + i) + 1; }
  P.remElement(29);
  const d = dests.createInt32Array(29);
  for (let i = 0; i < 29; i++) d[i] = i % 3 === k ? -1 : i % 3;
}
`;

test('send_by (LuNA): the block of each node sends element i to node D[i], counted; the global count delivers them (3 nodes over TCP)', async (t) => {
  const dir = fixture(t, { 'prog.fa': SEND_BY_PROGRAM, 'ucodes.ts': MAKE_TS + READ });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 3, threads: 1, layers: [layer], traced: true });
  for (const r of ran.results) assert.equal(r.ok, true, r.message);
  assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [30, 30, 27]);
  assert.equal(layer.nodes.reduce((s, d) => s + d.sent.part + d.sent.carried, 0), 6, 'one part per sender and destination');
  assert.equal(layer.nodes.reduce((s, d) => s + d.sent.carried, 0), 2, 'those to node 0, the GD\'s, in the REPORTs');
  const ops = [...readTrace(ran.trace!).events].filter((e): e is Extract<TraceEvent, { kind: 'ddaOp' }> => e.kind === 'ddaOp' && e.op === 0);
  assert.deepEqual(ops.map((e) => e.exchanged), [(19 + 19 + 20) * 16], 'each node sent those of its 29 that are not its own');
});

test('send_by refuses destinations that are not one per element, naming the array and the DF', async (t) => {
  const prog = SEND_BY_PROGRAM.replace('global_count(P, c) @ { request n[0], n[1], n[2]; };', 'global_count(P, c) @ { request n[0], n[1], n[2]; };');
  const ucodes = MAKE_TS.replace('const d = dests.createInt32Array(29);', 'const d = dests.createInt32Array(k === 1 ? 28 : 29);').replace('for (let i = 0; i < 29; i++) d[i]', 'for (let i = 0; i < d.length; i++) d[i]');
  const dir = fixture(t, { 'prog.fa': prog, 'ucodes.ts': ucodes + READ });
  const ran = await runWithResource(dir, { nodes: 3, threads: 1, layers: [dynamicArrays()] });
  const failed = ran.results.find((r) => !r.ok);
  assert.ok(failed, 'the run fails');
  assert.match(failed.message ?? '', /send_by\(array P#?[^,]*, block of node 1, D\[1\]\): 28 destination\(s\) for the 29 element\(s\) of the block: one per element/);
});
