// A ucode that may wait for its node (`: WAITS`) never shares a worker's batch with the CFs
// before it: their outputs (values read on another node, by the system thread, or by another
// lane) leave only when their batch ends, and the waiting ucode may wait for what they release.
// Run for real (worker threads, 2 nodes over TCP in this process, one worker each): node 0
// makes the array and asks for a rearrangement that waits for node 1's block, filled by a CF
// that needs the array's handle from node 0. With the make and the rearrangement in one batch,
// the handle would reach node 1 only once the rearrangement had ended — never.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamicArrays } from '../../src/runtime/dda/index.js';
import { fixture, runWithResource, UCODE_API } from '../ucode/fixtures.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { ForwardingPolicy } from '../../src/runtime/policy/forward.js';

const API = JSON.stringify(UCODE_API);

const FILL = 'cf f: fill(P, dir, done) @ { locator_cyclic: 1; };';

/**
 * Where the fill is written: before the rearrangement, after it, or after it inside a `for` or a
 * sub (node 0's one lane spawns it); `bound`: inside a `for` whose bound k a CF of the batch
 * before the rearrangement's makes, beside a note of node 0's (21).
 */
type Fill = 'first' | 'after' | 'loop' | 'sub' | 'bound';
const FILLS: Record<Fill, string> = {
  first: '', after: FILL,
  loop: 'for i = 1..1 { cf g[i]: fill(P, dir, done) @ { locator_cyclic: 1; }; }',
  sub: 'filler(P, dir, done);',
  bound: 'for i = 1..k { cf g[i]: fill(P, dir, done) @ { locator_cyclic: 1; }; cf h[i]: note(dir, 20 + i); }',
};
const SPAWNS: readonly Fill[] = ['loop', 'sub', 'bound'];

/**
 * Node 0's own CFs around a spawning fill: in FIFO order a runs, each loop or sub takes its place
 * at the tail when examined, z runs, then the loops' children: 1, 2, (21,) 11, 12, 13.
 */
const NOTES = (fill: string): string => `cf a: note(dir, 1);
    ${fill}
    for i = 1..3 { cf l[i]: note(dir, 10 + i); }
    cf z: note(dir, 2);`;

// spread reads only P, which make (before it, on node 0's only worker) produces: a continuation
// of make's batch. It waits until node 1's fill has the block, so that its rearrangement waits
// for the fill's release and moves its elements.
const program = (fill: Fill): string => `
import c_make(name \`P) as make;
import c_fill(block \`P, string \`dir, name \`done) as fill;
import c_spread(value \`P, string \`dir, name \`total) as spread : WAITS;
import c_check(value \`total, value \`done) as check;
import c_note(string \`dir, int \`k) as note;
import c_one(name \`k) as one;

sub filler(name P, string dir, name done)
{
    ${FILL}
}

sub main(string dir)
{
    df P, done, total, k;
    cf m: make(P) @ { locator_cyclic: 0; };
    ${fill === 'first' ? FILL : ''}
    ${fill === 'bound' ? 'cf o: one(k) @ { locator_cyclic: 0; };' : ''}
    cf s: spread(P, dir, total) @ { locator_cyclic: 0; };
    ${SPAWNS.includes(fill) ? NOTES(FILLS[fill]) : FILLS[fill]}
    check(total, done) @ { locator_cyclic: 0; };
}
`;

const UCODES = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { dynamicArray, rearrange } from ${API};

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export function c_make(P) { P.setValue(dynamicArray('P', { elsize: 16 })); }

/** 100 elements (id, 3 id + 1) in node 1's block, held until the rearrangement is asked. */
export function c_fill(P, dir, done) {
  P.resize(100 * P.getElsize());
  const v = P.addElement(100);
  const f = new Float64Array(v.buffer, v.byteOffset, 200);
  for (let i = 0; i < 100; i++) { f[2 * i] = i; f[2 * i + 1] = 3 * i + 1; }
  writeFileSync(dir + '/filling', '');
  for (let i = 0; i < 200 && !existsSync(dir + '/asking'); i++) sleep(5);
  done.setInt(P.getNumel());
}

/** Waits (at most 10 s) until node 1's fill holds its block, then rearranges onto both nodes. */
export function c_spread(P, dir, total) {
  let i = 0;
  while (!existsSync(dir + '/filling')) { if (++i > 2000) throw new Error('node 1 never filled its block while the rearrangement waited for it'); sleep(5); }
  writeFileSync(dir + '/asking', '');
  total.setInt(rearrange(P, [0, 1]));
}

export function c_note(dir, k) { appendFileSync(dir + '/order', k + '\\n'); }

export function c_one(k) { k.setInt(1); }

export function c_check(total, done) {
  if (total.getInt() !== 100 || done.getInt() !== 100) throw new Error('total ' + total.getInt() + ', filled ' + done.getInt());
  console.log('spread: OK');
}
`;

/** The default policy with one batch in flight on the one lane: the next is built only once the last came back. */
class OneInFlight extends ForwardingPolicy {
  override readonly fifoDepth = 1;
  constructor() { super(new DefaultPolicy()); }
}

/**
 * Run the program (`depth`: the batches the one lane keeps in flight, the policy's fifoDepth);
 * the elements end half on each node, every id once, its record intact.
 */
async function spreads(t: { after(fn: () => void): void }, fill: Fill, depth = 2): Promise<void> {
  const dir = fixture(t, { 'prog.fa': program(fill), 'ucodes.ts': UCODES });
  const layer = dynamicArrays();
  const policy = depth === 1 ? { policy: () => new OneInFlight() } : {};
  const ran = await runWithResource(dir, { nodes: 2, threads: 1, args: [dir], layers: [layer], ...policy });
  for (const r of ran.results) assert.equal(r.ok, true, ran.results.map((x) => x.message).join('\n'));
  assert.deepEqual(layer.nodes.map((d) => d.block('P').getNumel()), [50, 50]);
  const ids = layer.nodes.flatMap((d) => { const f = d.block('P').f64(); return Array.from({ length: f.length / 2 }, (_, i) => { assert.equal(f[2 * i + 1], 3 * f[2 * i]! + 1); return f[2 * i]!; }); });
  assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i));
  if (SPAWNS.includes(fill)) {
    const order = fill === 'bound' ? [1, 2, 21, 11, 12, 13] : [1, 2, 11, 12, 13];
    assert.deepEqual(readFileSync(join(dir, 'order'), 'utf8').trim().split('\n').map(Number), order, "node 0's own CFs ran in FIFO order");
  }
}

test('a WAITS ucode does not wait in the batch of the CF that made its input: the other node gets that CF\'s outputs first (2 nodes × 1 thread)', (t) => spreads(t, 'first'));

// In FIFO order the fill comes after the waiting rearrangement on node 0's one lane: it must
// still leave for node 1 while the rearrangement waits (the order across nodes is free).
test('a CF due on another node, queued behind a WAITS ucode on a one-lane node, leaves while it waits (2 nodes × 1 thread)', (t) => spreads(t, 'after'));

// The same, the fill spawned by a loop or a sub call queued behind the rearrangement: they spawn
// their children while it waits, and the fill leaves.
test('a CF due on another node that a loop behind a WAITS ucode spawns leaves while it waits (2 nodes × 1 thread)', (t) => spreads(t, 'loop'));
test('a CF due on another node that a sub call behind a WAITS ucode spawns leaves while it waits (2 nodes × 1 thread)', (t) => spreads(t, 'sub'));
// The loop's bound comes from the batch before the rearrangement's, still in flight when the
// rearrangement's batch is sent: the loop spawns once that batch is back, not parked on k and
// woken at the end of the queue (its note then ran after the other loop's: 1, 2, 11, 12, 13, 21).
test('a loop behind a WAITS ucode whose bound the batch before it makes spawns its CF due on another node while the ucode waits, in FIFO order (2 nodes × 1 thread)', (t) => spreads(t, 'bound'));

// With one batch in flight (the policy's fifoDepth 1) the pump builds nothing while the waiting
// batch runs: what is due elsewhere must leave all the same, plain or spawned.
test('with one batch in flight on the one lane, a CF due on another node queued behind a WAITS ucode leaves while it waits (fifoDepth 1)', (t) => spreads(t, 'after', 1));
test('with one batch in flight on the one lane, a CF due on another node that a loop behind a WAITS ucode spawns leaves while it waits (fifoDepth 1)', (t) => spreads(t, 'loop', 1));
test('with one batch in flight on the one lane, a CF due on another node that a sub call behind a WAITS ucode spawns leaves while it waits (fifoDepth 1)', (t) => spreads(t, 'sub', 1));
test('with one batch in flight on the one lane, a loop behind a WAITS ucode whose bound the batch before it makes spawns its CF due on another node while the ucode waits (fifoDepth 1)', (t) => spreads(t, 'bound', 1));
