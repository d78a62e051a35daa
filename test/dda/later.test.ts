// A TypeScript ucode's globalCount(P, into) / rearrange(P, nodes, into) do not hold its worker:
// the ucode returns at once, the node sets `into` when the operation ends and completes the CF
// then, and the worker runs other CFs meanwhile. Run for real (worker threads, 2 nodes over TCP
// in this process, one worker each): the rearrangement waits for a block that node 1 holds
// until node 0's only worker has run other CFs — with a worker blocked in the ucode, the holder
// gives up and the run fails. Nothing is lost; a refusal reaches the CF; an answer that never
// comes is a hang report naming the CF and what it waits for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';

const API = JSON.stringify(UCODE_API);

// Node 1's hold fills its block and keeps it until every tick of node 0 has run; node 0's
// spread asks for the rearrangement once the hold has the block (it would not wait otherwise),
// then node 0's single worker must run the ticks, which come after the spread in FIFO order (both
// wait for g from node 1, so that neither is a continuation of make's batch on node 0's worker).
const PROGRAM = `
import c_make(name \`P) as make;
import c_hold(block \`P, string \`dir, int \`k, name \`done) as hold : WAITS;
import c_go(name \`g) as go;
import c_spread(value \`P, value \`g, string \`dir, name \`total, name \`asked) as spread : WAITS;
import c_tick(value \`P, value \`g, int \`i, string \`dir, name \`t) as tick : WAITS;
import c_count(value \`P, value \`total, value \`t, name \`n) as count : WAITS;
import c_check(value \`total, value \`asked, value \`done, value \`n, int \`k) as check;

sub main(string dir, int k)
{
    df P, g, done, total, asked, t, n;
    make(P) @ { locator_cyclic: 0; };
    cf g1: go(g) @ { locator_cyclic: 1; };
    cf h: hold(P, dir, k, done) @ { locator_cyclic: 1; };
    cf s: spread(P, g, dir, total, asked) @ { locator_cyclic: 0; };
    for i = 0..k-1
        cf tk[i]: tick(P, g, i, dir, t[i]) @ { locator_cyclic: 0; };
    cf c: count(P, total, t[k-1], n) @ { locator_cyclic: 0; };
    check(total, asked, done, n, k) @ { locator_cyclic: 0; };
}
`;

const UCODES = `
import { existsSync, writeFileSync } from 'node:fs';
import { dynamicArray, rearrange, globalCount } from ${API};

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
/** Wait (polling, at most 15 s) until file f exists; false if it never does. */
function until(f) { for (let i = 0; i < 3000; i++) { if (existsSync(f)) return true; sleep(5); } return false; }

export function c_make(P) { P.setValue(dynamicArray('P', { elsize: 16 })); }

/** 100 elements (id, 3 id + 1) in this node's block, held until every tick ran. */
export function c_hold(P, dir, k, done) {
  P.resize(100 * P.getElsize());
  const v = P.addElement(100);
  const f = new Float64Array(v.buffer, v.byteOffset, 200);
  for (let i = 0; i < 100; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
  writeFileSync(dir + '/held', '');
  for (let i = 0; i < k; i++) if (!until(dir + '/tick-' + i)) throw new Error('tick ' + i + ' never ran while the rearrangement waited for this block');
  done.setInt(P.getNumel());
}

export function c_go(g) { g.setInt(1); }

export function c_spread(P, g, dir, total, asked) {
  if (!until(dir + '/held')) throw new Error('the block was never held');
  rearrange(P, [0, 1], total);
  writeFileSync(dir + '/asked', '');
  asked.setInt(1);
}

export function c_tick(P, g, i, dir, t) {
  if (!existsSync(dir + '/asked')) throw new Error('tick ' + i + ' ran before the rearrangement was asked');
  writeFileSync(dir + '/tick-' + i, '');
  t.setInt(i);
}

export function c_count(P, total, t, n) { globalCount(P, n); }

export function c_check(total, asked, done, n, k) {
  if (total.getInt() !== 100 || n.getInt() !== 100 || done.getInt() !== 100 || asked.getInt() !== 1) throw new Error('total ' + total.getInt() + ', count ' + n.getInt() + ', held ' + done.getInt());
  console.log('later: OK');
}
`;

test('globalCount(P, n) and rearrange(P, nodes, total) do not hold the worker: node 0\'s only worker runs other CFs while the rearrangement waits; nothing lost (2 nodes × 1 thread)', async (t) => {
  const dir = fixture(t, { 'prog.fa': PROGRAM, 'ucodes.ts': UCODES });
  const layer = dynamicArrays();
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: [dir, '4'], layers: [layer] });
  for (const r of ran.results) assert.equal(r.ok, true, ran.results.map((x) => x.message).join('\n'));
  // equal shares, each element once with its checksum
  assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [50, 50]);
  const ids = layer.nodes.flatMap((d) => { const f = d.block('P').f64(); return Array.from({ length: f.length / 2 }, (_, i) => { assert.equal(f[2 * i + 1], 3 * f[2 * i]! + 1); return f[2 * i]!; }); });
  assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i));
});

const MISUSE = `
import c_make(name \`P) as make;
import c_count(value \`P, int \`how, name \`n) as count : WAITS;
import c_plain(value \`P, name \`n) as plain;
import c_held(block \`P, name \`n) as held : WAITS;
import c_show(value \`n) as show;
sub main(int how)
{
    df P, n, m;
    make(P);
    count(P, how, n);
    show(n);
}
`;

const MISUSE_UCODES = `
import { dynamicArray, rearrange, globalCount } from ${API};
export function c_make(P) { P.setValue(dynamicArray('P', { elsize: 8 })); }
export function c_count(P, how, n) {
  if (how === 0) rearrange(P, [5], n);      // a node not in the run: refused
  if (how === 1) { n.setInt(1); globalCount(P, n); }
  if (how === 2) globalCount(P, 7);
}
export function c_plain(P, n) { globalCount(P, n); }
export function c_held(P, n) { globalCount({ block: 'dda', id: 'Q', spec: { elsize: 8, capacity: 0, order: 'unordered', home: 0 } }, n); }
export function c_show(n) { console.log('n ' + n.getInt()); }
`;

for (const [how, message] of [
  [0, /exception in ucode c_count: the request for a rearrangement of dynamic array P refused: rearrange of array P onto node 5, which is not a node of this run/],
  [1, /exception in ucode c_count: globalCount\(…, n\): DF n is already set/],
  [2, /exception in ucode c_count: globalCount\(array, into\): `into` must be an output DF of the CF/],
] as const) {
  test(`an ask without waiting that is refused or misused fails the run naming the CF and why (case ${how})`, async (t) => {
    const dir = fixture(t, { 'prog.fa': MISUSE, 'ucodes.ts': MISUSE_UCODES });
    const ran = await runWithResource(dir, { nodes: 1, threads: 1, args: [String(how)], layers: [dynamicArrays()] });
    const r = ran.results[0]!;
    assert.equal(r.ok, false);
    assert.match(r.message!, message);
  });
}

for (const [call, message] of [
  ['plain(P, n);', /exception in ucode c_plain: globalCount\(…, n\): the ucode's import must say ': WAITS'/],
  ['held(P, n);', /exception in ucode c_held: globalCount\(…, n\): a ucode holding blocks \(block parameters\) cannot ask without waiting/],
] as const) {
  test(`an import that does not say WAITS, or holds a block, cannot ask without waiting: ${call}`, async (t) => {
    const dir = fixture(t, { 'prog.fa': MISUSE.replace('count(P, how, n);', call), 'ucodes.ts': MISUSE_UCODES });
    const ran = await runWithResource(dir, { nodes: 1, threads: 1, args: ['0'], layers: [dynamicArrays()] });
    const r = ran.results[0]!;
    assert.equal(r.ok, false);
    assert.match(r.message!, message);
  });
}

// A count asked without waiting while the block is held by a CF that itself waits for good (for
// the test lock z that take holds and never gives back): nothing can run, and the count's CF is
// named with what it waits for.
const HANG = `
import c_make(name \`P) as make;
import c_take(name \`got) as take : WAITS;
import c_hold(block \`P, value \`got, string \`dir, name \`done) as hold : WAITS;
import c_count(value \`P, string \`dir, name \`n) as count : WAITS;
import c_show(value \`n, value \`done) as show;
sub main(string dir)
{
    df P, got, done, n;
    make(P);
    take(got);
    cf h: hold(P, got, dir, done);
    cf c: count(P, dir, n);
    show(n, done);
}
`;

const HANG_UCODES = `
import { existsSync, writeFileSync } from 'node:fs';
import { context, dynamicArray, globalCount } from ${API};
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
export function c_make(P) { P.setValue(dynamicArray('P', { elsize: 8 })); }
export function c_take(got) { context().request('test.acquire', { id: 'z' }); got.setInt(1); }
export function c_hold(P, got, dir, done) { writeFileSync(dir + '/held', ''); context().request('test.acquire', { id: 'z' }); done.setInt(1); }
export function c_count(P, dir, n) {
  for (let i = 0; i < 3000 && !existsSync(dir + '/held'); i++) sleep(5);
  globalCount(P, n);
}
export function c_show(n, done) {}
`;

test('a count asked without waiting whose answer never comes is a hang report naming its CF, the array and the holder', async (t) => {
  const dir = fixture(t, { 'prog.fa': HANG, 'ucodes.ts': HANG_UCODES });
  const ran = await runWithResource(dir, { nodes: 1, threads: 2, args: [dir], layers: [dynamicArrays()] });
  const r = ran.results[0]!;
  assert.equal(r.ok, false);
  assert.equal(r.kind, 'hang', r.message);
  assert.match(r.message!, /CF c \(ucode c_count, id [^)]+\) at .*prog\.fa:\d+:\d+ waits for the global count of dynamic array P/);
  assert.match(r.message!, /a global operation of dynamic array P waits for its block, held by CF h \(ucode c_hold/);
});
