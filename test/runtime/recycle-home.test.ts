// Freed raw buffers go back to the thread that made them (exec/shm.ts homes), and a full pool lets
// its oldest buffers go for newer ones (ucode/recycle.ts evictOldest). Before, every freed buffer
// went into the system thread's pool, which kept the workers' buffers it never took and dropped
// new arrivals once full, and a worker's full pool dropped the sizes its kernels made each step:
// the PIC reused ~1 300 buffers in 30 steps and its workers made ~2 400 fresh, its peak RSS rising ~5 MB a
// step more than with recycling off (docs/pic.md, "Peak RSS with recycling on").
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { threadId } from 'node:worker_threads';
import { assertOk, describeRun, lines, luna, program, type Run } from './helpers.js';

// read once, when the runtime's modules load: so before they are imported
process.env.LUNA_RECYCLE_MB = '64';
const { batchBooking, batchDone, batchSent, buffersFor, rawFreed, rawLet, rawPosted, recycleHome, recycleHomeGone, recycleSettled, recycling } = await import('../../src/runtime/exec/shm.js');
const { poolRaw, pooledNow, recycleCap, recycledId, setRecycleCap, takeRaw } = await import('../../src/ucode/recycle.js');
const { T_RAW } = await import('../../src/ucode/value.js');

/** Post `v` to the store as the runtime does, then let its post and its entry go. */
function postAndFree(v: Uint8Array): void {
  rawPosted(v);
  rawLet(v);
  rawFreed(v);
}

describe('freed raw buffers go home', () => {
  test('a freed buffer goes back to the worker that made it with its next batch, once no batch in flight can read it', () => {
    recycleHome(threadId); // this thread stands for a worker
    try {
      const v = takeRaw(100_000, 0, false);
      const pooled = pooledNow(), homed = recycling.homed;
      const book = new Map();
      batchSent(book, 1, [{ imp: 0 }]); // makes it
      batchSent(book, 2, [{ imp: 0, fwd: [{ arg: 0, task: 0, out: 0, lane: 0, batch: 1 }] }]); // a batch fed from it
      batchBooking(book, 1);
      rawPosted(v);
      rawLet(v);
      batchDone(book, 1, [[{ t: T_RAW, v }]]);
      rawFreed(v);
      recycleSettled();
      assert.equal(buffersFor([], threadId), undefined, 'held back while the batch that may read it runs');
      batchDone(book, 2, [[]]);
      assert.equal(recycling.homed, homed + 1);
      assert.equal(pooledNow(), pooled, 'not into the system thread\'s pool');
      const out = buffersFor([], threadId);
      assert.ok(out?.some((b) => recycledId(new Uint8Array(b)) === recycledId(v)), 'handed to its maker');
      assert.equal(buffersFor([], threadId), undefined, 'once');
    } finally { recycleHomeGone(threadId); }
  });

  test('without a home (the system thread\'s own outputs) it goes into this thread\'s pool', () => {
    const v = takeRaw(120_000, 0, false);
    const pooled = pooledNow();
    postAndFree(v);
    recycleSettled();
    assert.equal(pooledNow(), pooled + v.buffer.byteLength);
    assert.equal(recycledId(takeRaw(120_000, 0, false)), recycledId(v));
  });

  test('a full pool lets its oldest buffer go for a newcomer, which a later output takes', () => {
    const cap = recycleCap();
    const pooled = pooledNow();
    setRecycleCap(pooled + 700_000);
    try {
      // two of ~262 KB (their class), then one of ~393 KB: together over the cap, the newer two not
      const old = [takeRaw(200_000, 0, false), takeRaw(200_000, 0, false)];
      for (const u of old) assert.ok(poolRaw(u.buffer as SharedArrayBuffer));
      const fresh = takeRaw(300_000, 0, false);
      assert.ok(poolRaw(fresh.buffer as SharedArrayBuffer), 'the newcomer is kept');
      assert.ok(pooledNow() <= pooled + 700_000);
      assert.equal(recycledId(takeRaw(300_000, 0, false)), recycledId(fresh), 'a later output takes it');
      assert.equal(recycledId(takeRaw(200_000, 0, false)), recycledId(old[1]!), 'the newer of the two stayed');
      assert.notEqual(recycledId(takeRaw(200_000, 0, false)), recycledId(old[0]!), 'the oldest went');
      assert.equal(pooledNow(), pooled);
    } finally { setRecycleCap(cap); }
  });
});

describe('freed raw buffers go home: a whole run', () => {
  // programs/board_recycle: 48 arrays of 64 KiB, each made and checked by fragments that wait on
  // the ready board while both lanes are busy, with poisoned reuse: the freed arrays reach the
  // lanes ahead of board entries, and no check reads a reused buffer
  test('lanes that take their fragments from the ready board get their freed buffers ahead of the entries', async () => {
    const n = 48;
    const r = await luna(['run', '--timing', '--threads', '2', program('board_recycle'), String(n)], {
      timeoutMs: 120_000, env: { ...process.env, LUNA_RECYCLE_POISON: '1' },
    });
    assertOk(r);
    assert.ok(lines(r.stdout).includes(`made and checked ${n}`), describeRun(r));
    const l = lines(r.stderr).find((s) => s.startsWith('luna: timing: '));
    assert.ok(l, describeRun(r));
    const t = JSON.parse(l.slice('luna: timing: '.length)) as Record<string, number>;
    assert.ok(t.boardTaken! > 0, `no fragment taken from the board\n${describeRun(r)}`);
    assert.ok(t.rawHomedAhead! > 0, `no freed buffer went ahead of a board entry (homed ${t.rawHomed}, fresh ${t.rawFresh})\n${describeRun(r)}`);
    assert.ok(t.rawReused! > 0, describeRun(r));
  });

  // programs/recycle_drift: one kernel makes each of 2 chains' raw DFs (256 and 384 KiB at first),
  // of the chain's own size, growing by 1/16 every 4 steps, on 2 worker lanes, with pools of 8 MB
  // and poisoned reuse. How many outputs find a freed buffer of their size depends on how the
  // batches overlap (121 / 143 of 318 under load 17, 18–55 on a quieter machine), so the run
  // asserts what holds in any order: freed buffers went home to their makers, and every value
  // read was the one written (a buffer reused too early would be poisoned, and its chain wrong).
  async function drift(n: number, env: NodeJS.ProcessEnv = {}): Promise<{ r: Run; t: Record<string, number> }> {
    const r = await luna(['run', '--timing', '--threads', '2', program('recycle_drift'), String(n), '2', '512', '4'], {
      timeoutMs: 120_000, env: { ...process.env, LUNA_RECYCLE_MB: '8', LUNA_RECYCLE_POISON: '1', ...env },
    });
    assertOk(r);
    const out = lines(r.stdout);
    for (const c of [0, 1]) assert.ok(out.includes(`chain ${c} ok n=${n}`), describeRun(r));
    const l = lines(r.stderr).find((s) => s.startsWith('luna: timing: '));
    assert.ok(l, describeRun(r));
    return { r, t: JSON.parse(l.slice('luna: timing: '.length)) as Record<string, number> };
  }

  test('buffers go home in a real run, and no value is read from a reused buffer', async () => {
    const { r, t } = await drift(160);
    assert.ok(t.rawHomed! > 0, `no freed buffer went home (recycled ${t.rawRecycled}, fresh ${t.rawFresh})\n${describeRun(r)}`);
    assert.ok(t.rawReused! > 0, `no output took a freed buffer (homed ${t.rawHomed}, fresh ${t.rawFresh})\n${describeRun(r)}`);
  });

  // the same program with the system thread as the second lane (LUNA_SYSTEM_LANE=1): the outputs
  // its batches make fresh are counted apart from the worker's (rawFresh counts a worker's
  // alone, from its results), so --timing tells a run's fresh buffers whichever thread made them
  test('buffers made fresh on the system thread are counted too', async () => {
    const { r, t } = await drift(64, { LUNA_SYSTEM_LANE: '1' });
    assert.ok(t.systemLaneBatches! > 0, `the system lane ran no batch\n${describeRun(r)}`);
    assert.ok(t.rawFreshSystem! > 0, `no buffer counted as made fresh on the system thread (workers' ${t.rawFresh})\n${describeRun(r)}`);
  });
});
