// A freed raw buffer waits only for the batches in flight that may still read it (exec/shm.ts):
// the batch that posted it until it is booked, the batches forwarding from that batch (fed from
// another lane, or continuing a chain from the lane's previous batch), and the batches an output
// of which may share it (forwarded to the batch that posted it, still in flight). Before, it
// waited for every batch sent before it was let go: the PIC's large outputs sat 0.5–0.6 s behind
// one long push and their next outputs were made in fresh memory (docs/pic.md). Here the
// system thread's bookkeeping is driven by hand: a buffer that reaches this thread's pool is
// recycled, one held back is not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

// read once, when the runtime's modules load: so before they are imported
process.env.LUNA_RECYCLE_MB = '64';
const { batchBooking, batchDone, batchSent, batchesDropped, rawAwaited, rawFreed, rawLet, rawPosted, recycleSettled } = await import('../../src/runtime/exec/shm.js');
const { pooledNow, takeRaw } = await import('../../src/ucode/recycle.js');
const { T_RAW } = await import('../../src/ucode/value.js');
type Book = Parameters<typeof batchSent>[0];

/** A value made by batch `id` of `book`, posted when the batch is booked (its only output). */
function bookWith(book: Book, id: number, v: Uint8Array): void {
  batchBooking(book, id);
  rawPosted(v);
  rawLet(v); // the post's readers have it
  batchDone(book, id, [[{ t: T_RAW, v }]]);
}

/** Whether the buffer under `v` went to this thread's pool at the last settle. */
function pooledAfter(v: Uint8Array, before: number): boolean {
  recycleSettled();
  return pooledNow() === before + v.buffer.byteLength;
}

const task = (fwd?: { arg: number; task: number; out: number; lane?: number; batch?: number }[]) => ({ imp: 0, fwd });

describe('a freed buffer waits only for the batches that may read it', () => {
  test('a batch in flight that forwards from no batch does not hold it back', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    const v = takeRaw(100_000, 0, false);
    bookWith(book, 1, v);
    batchSent(book, 2, [task()]); // long, reads only what it was handed (counted)
    const before = pooledNow();
    rawFreed(v);
    assert.ok(pooledAfter(v, before), 'recycled while batch 2 runs');
    batchDone(book, 2, [[]]);
  });

  test('a batch fed from the batch that posted it holds it back until it is booked', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    batchSent(book, 2, [task([{ arg: 0, task: 0, out: 0, lane: 0, batch: 1 }])]); // fed from batch 1 on lane 0
    const v = takeRaw(110_000, 0, false);
    bookWith(book, 1, v);
    const before = pooledNow();
    rawFreed(v);
    assert.ok(!pooledAfter(v, before), 'held while batch 2 may read it');
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + v.buffer.byteLength, 'recycled once batch 2 is booked');
  });

  test('a chain continuing from the lane\'s previous batch holds it back; a batch fed from another does not', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    batchSent(book, 2, [task()]);
    batchSent(book, 3, [task([{ arg: 0, task: -1, out: 0 }])], 1); // continues batch 1's chain
    batchSent(book, 4, [task([{ arg: 0, task: 0, out: 0, lane: 1, batch: 2 }])]); // fed from batch 2
    const v = takeRaw(120_000, 0, false);
    bookWith(book, 1, v);
    batchDone(book, 2, [[]]);
    const before = pooledNow();
    rawFreed(v);
    assert.ok(!pooledAfter(v, before), 'held while batch 3 may read it');
    batchDone(book, 3, [[]]);
    assert.equal(pooledNow(), before + v.buffer.byteLength, 'recycled with batch 4 still in flight');
    batchDone(book, 4, [[]]);
  });

  test('an output that may share a buffer forwarded from a batch still in flight waits for that batch', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]); // makes x, posted when booked
    batchSent(book, 2, [task([{ arg: 0, task: 0, out: 0, lane: 0, batch: 1 }])]); // y = copy() of x: the same buffer
    const v = takeRaw(130_000, 0, false);
    bookWith(book, 2, v); // batch 2 booked first: y posted, read and freed
    const before = pooledNow();
    rawFreed(v);
    assert.ok(!pooledAfter(v, before), 'held while batch 1, which posts x in it, is in flight');
    bookWith(book, 1, v); // x posted now: held again by its store entry
    assert.equal(pooledNow(), before);
    rawFreed(v);
    assert.ok(pooledAfter(v, before), 'recycled once x is freed too');
  });

  test('a batch fed from a batch sent after it holds back what was let go after it, until that batch is sent', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    const v = takeRaw(140_000, 0, false);
    bookWith(book, 1, v);
    batchSent(book, 3, [task([{ arg: 0, task: 0, out: 0, lane: 1, batch: 2 }])]); // fed from batch 2, not sent yet
    const before = pooledNow();
    rawFreed(v);
    assert.ok(!pooledAfter(v, before), 'held: batch 3 may read anything live when it was sent');
    batchSent(book, 2, [task()]); // its producer sent: batch 3 reads from batch 2 only
    assert.ok(pooledAfter(v, before), 'recycled');
    batchDone(book, 2, [[]]);
    batchDone(book, 3, [[]]);
  });

  test('a CF\'s output held past its batch waits for every batch sent before it was let go', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    const v = takeRaw(150_000, 0, false);
    rawAwaited(v); // the CF completes after its batch was booked
    const before = pooledNow();
    rawLet(v);
    assert.ok(!pooledAfter(v, before), 'held while batch 1 (which may post it) is in flight');
    batchDone(book, 1, [[]]);
    assert.equal(pooledNow(), before + v.buffer.byteLength);
  });

  test('nothing is settled while a batch is being booked; a runtime that books no more holds nothing back', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    batchSent(book, 2, [task([{ arg: 0, task: 0, out: 0, lane: 0, batch: 1 }])]);
    const v = takeRaw(160_000, 0, false);
    batchBooking(book, 1);
    rawPosted(v);
    rawLet(v);
    rawFreed(v);
    const before = pooledNow();
    assert.ok(!pooledAfter(v, before), 'batch 1 is being booked');
    batchDone(book, 1, [[{ t: T_RAW, v }]]);
    assert.equal(pooledNow(), before, 'batch 2 is fed from batch 1');
    batchesDropped(book);
    assert.equal(pooledNow(), before + v.buffer.byteLength);
  });
});

describe('a freed buffer waits only for the readers of the outputs it backs', () => {
  /** Book batch `id` of `book` with raw outputs `outs` (per task), each posted, read and freed. */
  function bookOuts(book: Book, id: number, outs: Uint8Array[][]): void {
    batchBooking(book, id);
    for (const o of outs) for (const v of o) { rawPosted(v); rawLet(v); }
    batchDone(book, id, outs.map((o) => o.map((v) => ({ t: T_RAW, v }))));
  }

  test('a batch fed from another output of the batch that posted it does not hold it back; a reader of its own output does', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task(), task()]);
    batchSent(book, 2, [task([{ arg: 0, task: 1, out: 0, lane: 0, batch: 1 }])]); // reads task 1's output
    batchSent(book, 3, [task([{ arg: 0, task: 0, out: 1, lane: 0, batch: 1 }])]); // reads task 0's second output
    const a = takeRaw(210_000, 0, false), b = takeRaw(211_000, 0, false), c = takeRaw(212_000, 0, false);
    bookOuts(book, 1, [[a, b], [c]]);
    let before = pooledNow();
    rawFreed(a);
    assert.ok(pooledAfter(a, before), 'task 0\'s first output: no batch in flight reads it');
    before = pooledNow();
    rawFreed(c);
    assert.ok(!pooledAfter(c, before), 'held while batch 2 may read it');
    rawFreed(b);
    assert.equal(pooledNow(), before, 'held while batch 3 may read it');
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + c.buffer.byteLength, 'c recycled once batch 2 is booked');
    before = pooledNow();
    batchDone(book, 3, [[]]);
    assert.equal(pooledNow(), before + b.buffer.byteLength, 'b recycled once batch 3 is booked');
  });

  test('a long batch\'s reads, past those it scans, each hold their output: read twice or once, the first or the last', () => {
    const book: Book = new Map();
    const n = 40;
    batchSent(book, 1, Array.from({ length: n }, () => task()));
    // every task of batch 2 reads task i of batch 1, and every third reads task 0's again
    batchSent(book, 2, Array.from({ length: n }, (_, i) => task([
      { arg: 0, task: i, out: 0, lane: 0, batch: 1 },
      ...(i % 3 === 0 ? [{ arg: 1, task: 0, out: 0, lane: 0, batch: 1 }] : []),
    ])));
    const outs = Array.from({ length: n }, (_, i) => takeRaw(230_000 + i * 1_000, 0, false));
    bookOuts(book, 1, outs.map((v) => [v]));
    const before = pooledNow();
    for (const v of [outs[0]!, outs[17]!, outs[n - 1]!]) {
      rawFreed(v);
      assert.ok(!pooledAfter(v, before), `output of length ${v.length} held while batch 2 may read it`);
    }
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + outs[0]!.buffer.byteLength + outs[17]!.buffer.byteLength + outs[n - 1]!.buffer.byteLength, 'all three recycled once batch 2 is booked');
    for (const [i, v] of outs.entries()) if (i !== 0 && i !== 17 && i !== n - 1) rawFreed(v);
    recycleSettled();
  });

  test('two outputs in one buffer (a copy()) wait for the readers of either', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task(), task()]);
    batchSent(book, 2, [task([{ arg: 0, task: 1, out: 0, lane: 0, batch: 1 }])]);
    const v = takeRaw(220_000, 0, false);
    bookOuts(book, 1, [[v], [v]]); // task 1's output shares task 0's buffer
    const before = pooledNow();
    rawFreed(v);
    rawFreed(v);
    assert.ok(!pooledAfter(v, before), 'held while batch 2 reads task 1\'s output');
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + v.buffer.byteLength);
  });

  test('a chain reads the previous batch\'s outputs by task: another task\'s buffer goes', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task(), task()]);
    batchSent(book, 2, [task([{ arg: 0, task: -2, out: 0 }])], 1); // continues task 1 of batch 1
    const a = takeRaw(230_000, 0, false), b = takeRaw(231_000, 0, false);
    bookOuts(book, 1, [[a], [b]]);
    let before = pooledNow();
    rawFreed(a);
    assert.ok(pooledAfter(a, before), 'task 0\'s output is read by nothing in flight');
    before = pooledNow();
    rawFreed(b);
    assert.ok(!pooledAfter(b, before), 'task 1\'s output is read by batch 2');
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + b.buffer.byteLength);
  });

  test('a reader linked when its producer is sent later counts by output too', () => {
    const book: Book = new Map();
    batchSent(book, 3, [task([{ arg: 0, task: 0, out: 0, lane: 1, batch: 2 }])]); // fed from batch 2, not sent yet
    batchSent(book, 2, [task(), task()]);
    const a = takeRaw(240_000, 0, false), b = takeRaw(241_000, 0, false);
    bookOuts(book, 2, [[a], [b]]);
    let before = pooledNow();
    rawFreed(b);
    assert.ok(pooledAfter(b, before), 'task 1\'s output: batch 3 reads task 0\'s');
    before = pooledNow();
    rawFreed(a);
    assert.ok(!pooledAfter(a, before), 'held while batch 3 may read it');
    batchDone(book, 3, [[]]);
    assert.equal(pooledNow(), before + a.buffer.byteLength);
  });

  test('a buffer posted while a batch is booked but none of its outputs waits for all its readers', () => {
    const book: Book = new Map();
    batchSent(book, 1, [task()]);
    batchSent(book, 2, [task([{ arg: 0, task: 0, out: 1, lane: 0, batch: 1 }])]);
    const a = takeRaw(250_000, 0, false), x = takeRaw(251_000, 0, false);
    batchBooking(book, 1);
    rawPosted(a); rawLet(a);
    rawPosted(x); rawLet(x); // posted by a CF finished in the booking, not in the result
    batchDone(book, 1, [[{ t: T_RAW, v: a }]]);
    let before = pooledNow();
    rawFreed(a);
    assert.ok(pooledAfter(a, before), 'output 0 is read by nothing in flight');
    before = pooledNow();
    rawFreed(x);
    assert.ok(!pooledAfter(x, before), 'held while any reader of batch 1 is in flight');
    batchDone(book, 2, [[]]);
    assert.equal(pooledNow(), before + x.buffer.byteLength);
  });
});
