// Freed raw DF buffers are reused for new outputs (ucode/recycle.ts, exec/shm.ts): the pool's
// mechanism on its own, and whole runs on real worker threads and node processes where many raw
// DFs of a few sizes are made, read late, aliased by copy() and freed, every reader checking its
// bytes (test/runtime/programs/recycle): a buffer handed out while anything could still read it
// fails the run naming the reader.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertOk, describeRun, lines, luna, program, type Run } from './helpers.js';
import { DF } from '../../src/ucode/df.js';
import { RECYCLE_MIN, adoptRaw, drainPool, isPinned, pinRaw, poolRaw, recycledGeneration, recycledGuard, recycledId, recycledLength, setRecycleLarger, takeRaw } from '../../src/ucode/recycle.js';

const FILE = program('recycle');
/**
 * Recycling is on by default (exec/shm.ts POOL_BYTES): these runs rely on it, with every buffer
 * poisoned as it enters a pool, so that a reader it was taken from too early reads 0xFF words.
 */
const ON: NodeJS.ProcessEnv = { ...process.env, LUNA_RECYCLE_POISON: '1' };
delete ON.LUNA_RECYCLE_MB;

/** The --timing record of a run. */
function timing(r: Run): Record<string, number> {
  const l = lines(r.stderr).find((s) => s.startsWith('luna: timing: '));
  assert.ok(l, `no timing line\n${describeRun(r)}`);
  return JSON.parse(l.slice('luna: timing: '.length)) as Record<string, number>;
}

describe('recycled raw buffers: the pool', () => {
  test('a pooled buffer is taken again for a value of its size class, zero-filled only on request', () => {
    const a = takeRaw(10_000, 0, true);
    assert.equal(a.byteLength, 10_000);
    assert.equal(a.buffer.byteLength, recycledLength(10_000));
    const id = recycledId(a);
    assert.ok(id >= 0);
    assert.equal(recycledGeneration(a), 0);
    a.fill(7);
    assert.ok(poolRaw(a.buffer as SharedArrayBuffer));
    // a little smaller: the same class
    const b = takeRaw(9_990, 0, false);
    assert.equal(recycledId(b), id, 'the pooled buffer is reused');
    assert.equal(b.byteLength, 9_990);
    assert.equal(recycledGeneration(b), 1);
    assert.equal(b[0], 7, 'not zero-filled when zeros are not asked for');
    assert.ok(poolRaw(b.buffer as SharedArrayBuffer));
    const c = takeRaw(10_000, 0, true);
    assert.equal(recycledId(c), id);
    assert.ok(c.every((x) => x === 0), 'zero-filled when asked');
    // another class: a fresh buffer
    const d = takeRaw(50_000, 0, true);
    assert.notEqual(recycledId(d), id);
  });

  test('a ucode\'s create() zero-fills a recycled buffer, and leaves its bytes with { zero: false }', () => {
    const a = takeRaw(20_000, 0, true);
    const id = recycledId(a);
    a.fill(9);
    assert.ok(poolRaw(a.buffer as SharedArrayBuffer));
    const kept = new DF('x', undefined, true).createFloat64Array(2_500, { zero: false });
    const bytes = new Uint8Array(kept.buffer, kept.byteOffset, kept.byteLength);
    assert.equal(recycledId(bytes), id, 'the pooled buffer is reused');
    assert.ok(bytes.every((x) => x === 9), 'the freed value\'s bytes, not zeros');
    assert.ok(poolRaw(kept.buffer as SharedArrayBuffer));
    const zeroed = new DF('y', undefined, true).create(20_000);
    assert.equal(recycledId(zeroed), id);
    assert.ok(zeroed.every((x) => x === 0), 'zero-filled by default');
    assert.ok(poolRaw(zeroed.buffer as SharedArrayBuffer));
    const ints = new DF('z', undefined, true).createInt32Array(5_000, { zero: true });
    assert.ok(ints.every((x) => x === 0), 'zero-filled when asked');
  });

  test('small values are plain buffers; a C++ output records its guard; a pinned buffer says so', () => {
    const s = takeRaw(RECYCLE_MIN - 1, 64, false);
    assert.equal(s.buffer.byteLength, RECYCLE_MIN - 1 + 64);
    assert.equal(recycledId(s), -1);
    pinRaw(s); // harmless without a trailer
    assert.equal(isPinned(s), false);
    const g = takeRaw(100_000, 4096, false);
    assert.equal(g.byteLength, 100_000 + 4096);
    assert.equal(recycledGuard(g.subarray(0, 100_000)), 4096);
    assert.equal(recycledGuard(takeRaw(100_000, 0, false)), 0);
    assert.equal(isPinned(g), false);
    pinRaw(g.subarray(0, 10));
    assert.equal(isPinned(g), true);
    // a buffer of the same length without a trailer is not taken for one
    const plain = new Uint8Array(new SharedArrayBuffer(recycledLength(100_000)));
    assert.equal(recycledId(plain), -1);
  });

  test('with none of its class pooled, an output takes an idle buffer of a larger class, up to the ratio', () => {
    setRecycleLarger(2);
    try {
      // a buffer of a class no output of this thread asked for (the PIC's initial cloud)
      const big = takeRaw(2_000_000, 0, false);
      const bigId = recycledId(big);
      big.fill(5);
      assert.ok(poolRaw(big.buffer as SharedArrayBuffer));
      // 1.5 MiB class, 2 MiB buffer: within twice its class
      const a = takeRaw(1_100_000, 0, true);
      assert.equal(recycledId(a), bigId, 'the larger idle buffer is taken');
      assert.equal(a.byteLength, 1_100_000);
      assert.equal(recycledGeneration(a), 1);
      assert.ok(a.every((x) => x === 0), 'zero-filled over the value when asked');
      assert.ok(poolRaw(a.buffer as SharedArrayBuffer));
      // a 1 MiB class asks for 2 MiB: still within; a 768 KiB class is not (2.7 times)
      assert.notEqual(recycledId(takeRaw(700_000, 0, false)), bigId, 'not past the ratio');
      assert.equal(recycledId(takeRaw(1_000_000, 0, false)), bigId);

      // a class asked for since its buffers came is not idle: its spare stays for it
      const x1 = takeRaw(3_000_000, 0, false), x2 = takeRaw(3_000_000, 0, false);
      assert.ok(poolRaw(x1.buffer as SharedArrayBuffer));
      assert.ok(poolRaw(x2.buffer as SharedArrayBuffer));
      assert.equal(recycledId(takeRaw(3_000_000, 0, false)), recycledId(x2), 'its own class, the newest');
      const spare = recycledId(x1);
      assert.notEqual(recycledId(takeRaw(2_000_000, 0, false)), spare, 'a busy class is not borrowed from');
      assert.equal(recycledId(takeRaw(3_000_000, 0, false)), spare);

      // off: its own class only
      setRecycleLarger(1);
      const y = takeRaw(6_000_000, 0, false);
      assert.ok(poolRaw(y.buffer as SharedArrayBuffer));
      assert.notEqual(recycledId(takeRaw(4_000_000, 0, false)), recycledId(y));
    } finally { setRecycleLarger(1); }
  });

  test('a pool hands its buffers to another thread, which takes them', () => {
    const a = takeRaw(300_000, 0, false);
    const id = recycledId(a);
    assert.ok(poolRaw(a.buffer as SharedArrayBuffer));
    const moved = drainPool(1 << 30);
    assert.ok(moved && moved.some((b) => recycledId(new Uint8Array(b)) === id));
    assert.equal(drainPool(1 << 30), undefined, 'drained');
    adoptRaw(moved!);
    assert.equal(recycledId(takeRaw(300_000, 0, false)), id);
  });
});

describe('recycled raw buffers: whole runs', { concurrency: true }, () => {
  test('1 node × 2 threads: buffers are reused, and no reader ever sees another value', async () => {
    const r = await luna(['run', '--timing', '--threads', '2', FILE, '300'], { timeoutMs: 120_000, env: ON });
    assertOk(r);
    assert.ok(lines(r.stdout).includes('recycle ok n=300'), describeRun(r));
    const t = timing(r);
    assert.ok(t.rawRecycled! >= 300, `rawRecycled ${t.rawRecycled}: the freed x[i] went back to a pool\n${describeRun(r)}`);
    assert.ok(t.rawReused! > 0, `rawReused ${t.rawReused}: a pooled buffer served a later output\n${describeRun(r)}`);
  });

  // a value sent to the other node through the ring was copied there: its buffer goes back to a
  // pool; by the socket (rings off) a value of 16 KiB or more is written as it is: held by the
  // send until the socket's write is done, then back to a pool (a third of them, the 6 KB ones,
  // the socket's writer copies)
  for (const ring of [true, false]) {
    test(`2 nodes × 2 threads, ${ring ? 'ring' : 'socket (LUNA_RING=0)'}: values sent between nodes go back to the pools${ring ? '' : ' once written'}, local ones too, every read checked`, async () => {
      const r = await luna(['run', '--timing', '--nodes', '2', '--threads', '2', FILE, '200'], { timeoutMs: 120_000, env: ring ? ON : { ...ON, LUNA_RING: '0' } });
      assertOk(r);
      assert.ok(lines(r.stdout).includes('recycle ok n=200'), describeRun(r));
      const t = timing(r); // node 0's
      assert.ok(t.rawSent! >= 100, `rawSent ${t.rawSent}: values read on the other node were sent\n${describeRun(r)}`);
      if (ring) assert.ok(t.rawSentRecycled! >= t.rawSent! / 2, `rawSentRecycled ${t.rawSentRecycled} of ${t.rawSent}: the ring copied them\n${describeRun(r)}`);
      // (not all: the last writes may end after the figures are taken)
      else assert.ok(t.rawSentRecycled! >= 0.75 * t.rawSent! && t.rawPinned! < t.rawSent! / 4, `rawPinned ${t.rawPinned}, rawSentRecycled ${t.rawSentRecycled} of ${t.rawSent}: released once the socket wrote them\n${describeRun(r)}`);
      assert.ok(t.rawRecycled! > 0, `rawRecycled ${t.rawRecycled}\n${describeRun(r)}`);
    });
  }

  test('LUNA_RECYCLE_MB=0: nothing is recycled, the run is the same', async () => {
    const r = await luna(['run', '--timing', '--threads', '2', FILE, '100'], { timeoutMs: 120_000, env: { ...process.env, LUNA_RECYCLE_MB: '0' } });
    assertOk(r);
    assert.ok(lines(r.stdout).includes('recycle ok n=100'), describeRun(r));
    const t = timing(r);
    assert.equal(t.rawRecycled, 0, describeRun(r));
    assert.equal(t.rawReused, 0, describeRun(r));
  });
});
