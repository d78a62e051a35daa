// A LuNA program with a dynamic array, run for real: TypeScript ucodes on worker threads hold
// their node's block through `block` parameters, add and remove elements, rearrange the array
// onto every node and count it, on 1 and 2 nodes (over TCP). The waits for a block held by
// another CF are `descriptor` waits in the trace, and SLOW books them as W.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readTrace } from '../../src/trace/merge.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/index.js';
import { WAIT_KINDS, type TraceEvent } from '../../src/trace/schema.js';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';

const PROGRAM = `
import c_make(name \`P) as make;
import c_fill(block \`P, int \`from, int \`n, name \`done) as fill;
import c_spread(value \`P, int \`nodes, value \`a, value \`b, name \`total) as spread : WAITS;
import c_scan(block \`P, value \`t, name \`sum) as scan;
import c_count(value \`P, value \`s0, value \`s1, name \`n) as count : WAITS;
import c_check(value \`n, value \`s0, value \`s1, value \`t, int \`nodes) as check;

sub main(int nodes)
{
    df P, a, b, t, s, n;
    make(P);
    cf fa: fill(P, 0, 60, a) @ { locator_cyclic: 0; };
    cf fb: fill(P, 60, 40, b) @ { locator_cyclic: 0; };
    cf sp: spread(P, nodes, a, b, t);
    cf sc[0]: scan(P, t, s[0]) @ { locator_cyclic: 0; };
    cf sc[1]: scan(P, t, s[1]) @ { locator_cyclic: nodes - 1; };
    count(P, s[0], s[1], n);
    check(n, s[0], s[1], t, nodes);
}
`;

const UCODES = `
import { dynamicArray, rearrange, globalCount, type DdaBlock, type DF } from ${JSON.stringify(UCODE_API)};

export function c_make(P: DF): void { P.setValue(dynamicArray('P', { elsize: 16, capacity: 8 })); }

/** Adds n elements (id, 3 id + 1) and 5 strays it marks for removal; holds the block 20 ms. */
export function c_fill(P: DdaBlock, from: number, n: number, done: DF): void {
  if (P.getMaxNumel() - P.getNumel() < n + 5) P.resize((P.getNumel() + n + 5) * P.getElsize());
  const at = P.getNumel();
  const v = P.addElement(n + 5)!;
  const f = new Float64Array(v.buffer, v.byteOffset, 2 * (n + 5));
  for (let i = 0; i < n + 5; i++) { f[2 * i] = i < n ? from + i : -1; f[2 * i + 1] = i < n ? 3 * (from + i) + 1 : -1; }
  for (let i = n; i < n + 5; i++) P.remElement(at + i);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  done.setInt(P.getNumel());
}

export function c_spread(P: DF, nodes: number, a: DF, b: DF, total: DF): void {
  total.setInt(rearrange(P, Array.from({ length: nodes }, (_, i) => i)));
}

/** The sum of the ids this node holds, checking each element's checksum. */
export function c_scan(P: DdaBlock, t: DF, sum: DF): void {
  const f = P.f64();
  let s = 0;
  for (let i = 0; i < f.length; i += 2) { if (f[i + 1] !== 3 * f[i]! + 1) throw new Error('element ' + f[i] + ' corrupted'); s += f[i]!; }
  sum.setValue([P.getNumel(), s]);
}

export function c_count(P: DF, s0: DF, s1: DF, n: DF): void { n.setInt(globalCount(P)); }

/** Both scans saw their node's share (on one node both scan the same block); nothing lost. */
export function c_check(n: DF, s0: DF, s1: DF, t: DF, nodes: number): void {
  const [k0, x0] = s0.getValue() as number[];
  const [k1, x1] = s1.getValue() as number[];
  // the two fills race for node 0's block: the block holds ids 0..99 in the order the fills
  // ran (0..59 then 60..99, or 60..99 then 0..59), and node 0 keeps its first 50
  const per = 100 / nodes;
  const sum = (ids: number[]): number => ids.reduce((a, b) => a + b, 0);
  const ids = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);
  const orders = [[...ids(0, 60), ...ids(60, 100)], [...ids(60, 100), ...ids(0, 60)]];
  const wants = orders.map((o) => nodes === 1 ? [100, 4950, 100, 4950] : [per, sum(o.slice(0, per)), per, sum(o.slice(per))]);
  const got = [k0, x0, k1, x1];
  if (n.getInt() !== 100 || t.getInt() !== 100 || !wants.some((w) => got.join() === w.join())) throw new Error(\`count \${n.getInt()}, total \${t.getInt()}, blocks and sums \${got.join()}, wanted \${wants.map((w) => w.join()).join(' or ')}\`);
}
`;

const waits = (events: Iterable<TraceEvent>): Extract<TraceEvent, { kind: 'wait' }>[] => [...events].filter((e): e is Extract<TraceEvent, { kind: 'wait' }> => e.kind === 'wait');

for (const nodes of [1, 2]) {
  test(`a LuNA program fills, rearranges and counts a dynamic array with TypeScript ucodes, ${nodes} node(s) × 2 threads; waits for held blocks are W`, async (t) => {
    const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
    const layer = dynamicArrays();
    const ran = await runWithResource(dir, { nodes, threads: 2, args: [String(nodes)], traced: true, layers: [layer] });
    for (const r of ran.results) assert.equal(r.ok, true, r.message);
    const per = 100 / nodes;
    assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), new Array(nodes).fill(per));

    const events = [...readTrace(ran.trace!).events];
    const ws = waits(events);
    const held = ws.filter((w) => WAIT_KINDS[w.waitKind] === 'descriptor' && w.resource === 'dynamic array P, block of node 0');
    // a fill waited over the other's hold: its wait overlaps another CF of its node (the holder),
    // which started before the wait ended and finished after it began. (Its finish record may
    // come some milliseconds after the release on a loaded host, once its worker gets a core
    // again, so the finish is not required inside the wait.) How long it waited depends on when
    // its worker got a core, so the duration is not asserted.
    const starts = new Map<string, number>();
    for (const e of events) if (e.kind === 'cfStart') starts.set(`${e.node}:${e.cf}`, e.t);
    const spans = events.filter((e): e is Extract<TraceEvent, { kind: 'cfFinish' }> => e.kind === 'cfFinish')
      .map((f) => ({ node: f.node, cf: f.cf, start: starts.get(`${f.node}:${f.cf}`) ?? f.t, end: f.t }));
    const over = held.find((w) => spans.some((h) => h.node === w.node && h.cf !== w.cf && h.start < w.end && h.end > w.t));
    assert.ok(over, `a fill waited for the other's block: ${ws.map((w) => w.resource).join('; ')} ${held.map((w) => ((w.end - w.t) / 1e6).toFixed(2)).join(', ')} ms`);
    assert.ok(ws.some((w) => w.resource === 'a rearrangement of dynamic array P'));
    assert.ok(ws.some((w) => w.resource === 'the global count of dynamic array P'));
    const slow = analyzeSlowTrace(ran.trace!);
    const W = slow.perThread.reduce((s, x) => s + x.W, 0);
    assert.ok(W > 0 && W >= 0.99 * (over.end - over.t), `SLOW books the descriptor waits as W: ${W} ns, the fill's wait ${over.end - over.t} ns`);
  });
}
