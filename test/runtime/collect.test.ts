// The forced collections of raw-DF memory (src/runtime/exec/shm.ts), each in a real thread of its
// own (the rule is per thread: a worker forces minor collections, often; a thread holding a DF
// store forces full ones at the whole limit). A young shared buffer dropped by a worker is freed
// by the minor collection alone, which is what lets workers skip the full ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const SHM = pathToFileURL(join(import.meta.dirname, '..', '..', 'src', 'runtime', 'exec', 'shm.js')).href;
const MB = 1024 * 1024;

/** Runs `body` (an async function body with `shm` in scope) in a new thread; its return value. */
function inThread(body: string, env: Record<string, string> = {}): Promise<unknown> {
  const code = `
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(SHM)}).then(async (shm) => { parentPort.postMessage(await (async () => { ${body} })()); })
      .catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, env: { ...process.env, ...env } });
    w.once('message', (m) => { void w.terminate(); if (m && typeof m === 'object' && 'error' in m) reject(new Error(String(m.error))); else resolve(m); });
    w.once('error', reject);
  });
}

describe('forced collections of raw-DF memory', { concurrency: true }, () => {
  test('a worker forces a minor collection every eighth of the limit, and every 16th collection is full', async () => {
    const r = await inThread(`
      const seen = [];
      for (let i = 0; i < 32; i++) {
        shm.sharedBytesChurned(2 * ${MB} - 1); shm.collectDue();
        const before = { ...shm.collections };
        shm.sharedBytesChurned(1); shm.collectDue();
        seen.push([before.minor, before.full, shm.collections.minor, shm.collections.full]);
      }
      return seen;`, { LUNA_COLLECT_SHARED_MB: '16' }) as number[][];
    // below the worker's limit (16 MB / 8) nothing is collected; at it, one collection
    for (let i = 0; i < 32; i++) {
      const [m0, f0, m1, f1] = r[i]!;
      const full = (i + 1) % 16 === 0;
      assert.equal(m0! + f0!, i, `collections before the limit was reached (round ${i})`);
      assert.deepEqual([m1! - m0!, f1! - f0!], full ? [0, 1] : [1, 0], `round ${i}: ${full ? 'a full' : 'a minor'} collection`);
    }
  });

  test('a worker\'s collection is full once the views it held through its minor ones reach four of its limits', async () => {
    const r = await inThread(`
      // what the worker reports it holds at each collection: 3 MB of views not counted before
      shm.countHeld(() => 3 * ${MB});
      const seen = [];
      for (let i = 0; i < 6; i++) {
        shm.sharedBytesChurned(2 * ${MB}); shm.collectDue();
        seen.push(shm.collections.full);
      }
      return seen;`, { LUNA_COLLECT_SHARED_MB: '16' }) as number[];
    // limit 2 MB: 3, 6 MB held through minor ones, at 9 ≥ 8 a full one; then again from 0
    assert.deepEqual(r, [0, 0, 1, 1, 1, 2]);
  });

  test('views a worker does not hold through its collections leave them minor', async () => {
    const r = await inThread(`
      shm.countHeld(() => 0);
      for (let i = 0; i < 15; i++) { shm.sharedBytesChurned(2 * ${MB}); shm.collectDue(); }
      return { ...shm.collections };`, { LUNA_COLLECT_SHARED_MB: '16' }) as { full: number; minor: number };
    assert.deepEqual(r, { full: 0, minor: 15 });
  });

  test('a thread holding a DF store forces full collections, at the whole limit', async () => {
    const r = await inThread(`
      shm.holdsDfStore();
      shm.sharedBytesChurned(15 * ${MB}); shm.collectDue();
      const below = { ...shm.collections };
      shm.sharedBytesChurned(1 * ${MB}); shm.collectDue();
      const at = { ...shm.collections };
      for (let i = 0; i < 3; i++) { shm.sharedBytesChurned(16 * ${MB}); shm.collectDue(); }
      return { below, at, after: { ...shm.collections } };`, { LUNA_COLLECT_SHARED_MB: '16' }) as Record<string, { full: number; minor: number }>;
    assert.deepEqual(r.below, { full: 0, minor: 0 });
    assert.deepEqual(r.at, { full: 1, minor: 0 });
    assert.deepEqual(r.after, { full: 4, minor: 0 });
  });

  test('a thread holding a DF store with lanes defers its due collection while a lane waits and until a fresh buffer is made, up to twice the limit', async () => {
    const r = await inThread(`
      shm.holdsDfStore();
      let waiting = true;
      const withdraw = shm.deferCollectionWhile(() => waiting);
      const seen = [];
      const look = () => seen.push(shm.collections.full);
      // due at the limit, but a lane waits: deferred, turn after turn
      shm.sharedBytesChurned(16 * ${MB}); shm.collectDue(); shm.collectDue(); look();
      // every lane running, but no worker made a fresh buffer since: still deferred
      waiting = false; shm.collectDue(); look();
      // a worker made one (its result tells): the deferred collection runs
      shm.recycling.fresh++; shm.collectDue(); look();
      // lanes wait all along: deferred below twice the limit, collected at it
      waiting = true;
      shm.sharedBytesChurned(16 * ${MB}); shm.recycling.fresh++; shm.collectDue(); look();
      shm.sharedBytesChurned(16 * ${MB} - 1); shm.collectDue(); look();
      shm.sharedBytesChurned(1); shm.collectDue(); look();
      // nothing made fresh all along: likewise
      waiting = false;
      shm.sharedBytesChurned(16 * ${MB}); shm.collectDue(); look();
      shm.sharedBytesChurned(16 * ${MB}); shm.collectDue(); look();
      // the pool stopped: nothing defers it any more
      withdraw();
      shm.sharedBytesChurned(16 * ${MB}); shm.collectDue(); look();
      return { seen, minor: shm.collections.minor };`, { LUNA_COLLECT_SHARED_MB: '16' }) as { seen: number[]; minor: number };
    assert.deepEqual(r.seen, [0, 0, 1, 1, 1, 2, 2, 3, 4]);
    assert.equal(r.minor, 0);
  });

  test('a worker\'s collections are not deferred by lanes waiting', async () => {
    const r = await inThread(`
      shm.deferCollectionWhile(() => true);
      for (let i = 0; i < 3; i++) { shm.sharedBytesChurned(2 * ${MB}); shm.collectDue(); }
      return shm.collections.minor;`, { LUNA_COLLECT_SHARED_MB: '16' }) as number;
    assert.equal(r, 3);
  });

  test('a worker with its next batch in hand leaves its due collection to its next idle moment, up to twice its limit', async () => {
    const r = await inThread(`
      const seen = [];
      shm.sharedBytesChurned(2 * ${MB});
      shm.collectDue(true); seen.push(shm.collections.minor); // due, a batch in hand: deferred
      shm.collectDue(false); seen.push(shm.collections.minor); // idle: collected
      shm.sharedBytesChurned(3 * ${MB});
      shm.collectDue(true); seen.push(shm.collections.minor); // one and a half limits: deferred
      shm.sharedBytesChurned(1 * ${MB});
      shm.collectDue(true); seen.push(shm.collections.minor); // two limits: collected even so
      return seen;`, { LUNA_COLLECT_SHARED_MB: '16' }) as number[];
    assert.deepEqual(r, [0, 1, 1, 2]);
  });

  test('past four limits at once a collection runs where the bytes are counted, without waiting for the pause', async () => {
    const r = await inThread(`
      shm.sharedBytesChurned(3 * 2 * ${MB});
      const below = shm.collections.minor;
      shm.sharedBytesChurned(2 * ${MB});
      return [below, shm.collections.minor];`, { LUNA_COLLECT_SHARED_MB: '16' }) as number[];
    assert.deepEqual(r, [0, 1]);
  });

  // process.memoryUsage().arrayBuffers counts the buffers this thread's allocator holds; a WeakRef
  // cannot tell, as V8's minor collections keep WeakRef targets
  test('a worker\'s minor collection frees the young shared buffers it made and dropped', async () => {
    const r = await inThread(`
      const held = () => process.memoryUsage().arrayBuffers;
      const before = held();
      const make = () => { const u = new Uint8Array(new SharedArrayBuffer(4 * ${MB})); u.fill(7); return u.length; };
      make(); make(); make();
      const made = held() - before;
      await new Promise((res) => setImmediate(res));
      shm.sharedBytesChurned(2 * ${MB}); shm.collectDue();
      // V8 frees the swept buffers on a background thread: wait for it (no further collection)
      for (let i = 0; i < 500 && held() - before >= ${MB}; i++) await new Promise((res) => setTimeout(res, 10));
      return { made, left: held() - before, minor: shm.collections.minor, full: shm.collections.full };`, { LUNA_COLLECT_SHARED_MB: '16' }) as { made: number; left: number; minor: number; full: number };
    assert.ok(r.made >= 12 * MB, `the three buffers were counted as made (${r.made} bytes)`);
    assert.ok(r.left < MB, `${r.left} bytes of the dropped buffers still held after a minor collection`);
    assert.deepEqual([r.minor, r.full], [1, 0]);
  });

  test('a buffer the worker still holds survives its minor collection, with its bytes', async () => {
    const r = await inThread(`
      const held = () => process.memoryUsage().arrayBuffers;
      const before = held();
      const kept = new Uint8Array(new SharedArrayBuffer(4 * ${MB}));
      kept.fill(9);
      await new Promise((res) => setImmediate(res));
      shm.sharedBytesChurned(2 * ${MB}); shm.collectDue();
      return { left: held() - before, minor: shm.collections.minor, sum: kept.reduce((a, b) => a + b, 0) };`, { LUNA_COLLECT_SHARED_MB: '16' }) as { left: number; minor: number; sum: number };
    assert.equal(r.minor, 1);
    assert.ok(r.left >= 3 * MB, `only ${r.left} bytes held: the kept 4 MiB buffer was freed`);
    assert.equal(r.sum, 9 * 4 * MB);
  });

  test('the buffers a worker\'s pool dropped, told in its result, count towards the system thread\'s full collections', async () => {
    const r = await inThread(`
      const codec = await import(${JSON.stringify(SHM.replace(/shm\.js$/, 'codec.js'))});
      shm.holdsDfStore();
      const result = (dropped) => codec.encodeResult(0, 0, [], new Float64Array(0), new Float64Array(0), { dropped });
      codec.decodeResult(result(16 * ${MB} - 1)); shm.collectDue();
      const below = { ...shm.collections };
      codec.decodeResult(result(1)); shm.collectDue();
      const at = { ...shm.collections };
      codec.decodeResult(result(0)); shm.collectDue();
      return { below, at, after: { ...shm.collections } };`, { LUNA_COLLECT_SHARED_MB: '16' }) as Record<string, { full: number; minor: number }>;
    // the system thread's views of a buffer it handed home are old: only its full collection frees them
    assert.deepEqual(r.below, { full: 0, minor: 0 });
    assert.deepEqual(r.at, { full: 1, minor: 0 });
    assert.deepEqual(r.after, { full: 1, minor: 0 }, 'a result that dropped nothing forces nothing');
  });
});
