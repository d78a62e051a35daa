// A block reserved for a CF as it is sent to a worker (DdaNode.reserve, dda-worker.ts): the CF's
// worker claims it as the CF starts, with no request; until then anyone who asks for the block —
// another CF, a global operation — takes it back, and the CF asks as it starts. 2 in-process nodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Nodes } from './nodes.js';
import { DdaBlock, dynamicArray, type DdaHandle } from '../../src/ucode/dda.js';
import type { DdaReservation } from '../../src/runtime/dda/layer.js';

const spec = { elsize: 16, capacity: 0, order: 'unordered' as const, home: 0 };

/** What the worker does as the CF starts: claim the reservation; its block, or null (taken back). */
function claim(h: object): DdaBlock | null {
  const r = (h as { reserved: DdaReservation }).reserved;
  if (Atomics.compareExchange(new Int32Array(r.word), 0, r.token, -r.token) !== r.token) return null;
  const g = r.grant;
  return new DdaBlock(g.elsize, g.buffer, g.numel, g.order, g.name, g.size);
}

async function settle(turns = 30): Promise<void> { for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r)); }

test('a free block is reserved for a CF sent; its worker claims it and releases it as a CF that asked would', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P' });
  const handle: DdaHandle = dynamicArray('P', spec);
  const cf = ns.cf();
  const h = ns.dda[0]!.reserve(handle, cf, () => `CF ${cf}`);
  assert.ok(h !== null);
  // not free while reserved: a second reservation is refused, the hang report names the holder
  assert.equal(ns.dda[0]!.reserve(handle, ns.cf(), () => 'another'), null);
  const b = claim(h)!;
  assert.ok(b !== null);
  assert.ok(b.resize(3 * 16));
  const v = b.addElement(3)!;
  new Float64Array(v.buffer, v.byteOffset, 6).set([1, 4, 2, 7, 3, 10]);
  ns.release(0, 'P', { cf, block: b });
  assert.deepEqual(ns.counts('P'), [3, 0]);
  assert.equal(await ns.count(1, 'P'), 3);
  assert.deepEqual([ns.dda[0]!.reservations, ns.dda[0]!.revoked], [1, 0]);
  await ns.close();
});

test('a reservation not claimed yet is taken back for a CF that asks for the block, and the reserved CF then asks and waits', async () => {
  const ns = new Nodes(1);
  ns.declare({ name: 'P' });
  const cf = ns.cf();
  const h = ns.dda[0]!.reserve(dynamicArray('P', spec), cf, () => `CF ${cf}`)!;
  // another CF, already running, asks: granted at once, the reservation gone
  const other = await ns.acquire(0, 'P');
  assert.equal(ns.dda[0]!.revoked, 1);
  assert.equal(claim(h), null, 'the worker finds the reservation taken back');
  // so the reserved CF asks as it starts, and waits for the other's release
  let got = false;
  const mine = ns.acquire(0, 'P', cf).then((x) => { got = true; return x; });
  await settle();
  assert.equal(got, false);
  ns.release(0, 'P', other);
  ns.release(0, 'P', await mine);
  await ns.close();
});

test('a global operation takes back a reservation not claimed, and waits for one claimed until its CF releases the block', async () => {
  const ns = new Nodes(2);
  ns.declare({ name: 'P' });
  const handle = dynamicArray('P', spec);
  // not claimed: the count goes ahead
  const a = ns.cf();
  const h1 = ns.dda[0]!.reserve(handle, a, () => `CF ${a}`)!;
  assert.equal(await ns.count(1, 'P'), 0);
  assert.equal(claim(h1), null);
  assert.equal(ns.dda[0]!.revoked, 1);
  // claimed: the count waits for the release, and counts what the CF added
  const b = ns.cf();
  const h2 = ns.dda[0]!.reserve(handle, b, () => `CF ${b}`)!;
  const block = claim(h2)!;
  let total: number | undefined;
  void ns.count(1, 'P').then((n) => { total = n; });
  await settle();
  assert.equal(total, undefined, 'the count waits for the claimed block');
  assert.match(ns.dda[0]!.waits().map((w) => w.text).join('\n'), new RegExp(`waits for its block on node 0, held by CF ${b}`));
  assert.ok(block.resize(2 * 16) && block.addElement(2));
  ns.release(0, 'P', { cf: b, block });
  await settle();
  assert.equal(total, 2);
  assert.equal(ns.dda[0]!.revoked, 1);
  // a locked array is not reserved
  const held = await ns.acquire(0, 'P');
  void ns.count(1, 'P');
  await settle();
  assert.equal(ns.dda[0]!.reserve(handle, ns.cf(), () => 'x'), null);
  ns.release(0, 'P', held);
  await ns.close();
});
