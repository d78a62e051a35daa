// A freed raw buffer that a batch in flight reads goes once the task reading it has run on its
// worker, not once the batch returns — unless that task made an output sharing it (copy()), or a
// later task of the batch reads it too (exec/shm.ts batchOnLane, protocol.ts taskRan). Real
// worker threads: batch 1 makes a raw value v; batch 2, on the same lane, continues from it
// (reads v, or copies it) and then holds its lane until told to end. The system thread's
// bookkeeping is driven by hand, as the runtime drives it, while batch 2 holds its lane.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// read once, when the runtime's modules load: so before they are imported
process.env.LUNA_RECYCLE_MB = '64';
const { WorkerPool } = await import('../../src/runtime/exec/pool.js');
const { batchBooking, batchDone, batchSent, rawFreed, rawLet, rawPosted, recycleSettled, recycling } = await import('../../src/runtime/exec/shm.js');
const { T_RAW } = await import('../../src/ucode/value.js');
import type { ImportDef, ParamType } from '../../src/core/imports.js';
import type { BatchResult, Task } from '../../src/runtime/exec/protocol.js';

const MODULE = (started: string, go: string): string => `
import { existsSync, writeFileSync } from 'node:fs';
export function c_make(x) { x.create(200000).fill(3); }
export function c_read(v, y) { y.setInt(v.getData()[0]); }
export function c_copy(v, y) { y.copy(v); }
export function c_hold(k) {
  writeFileSync(${JSON.stringify(started)}, '');
  const until = Date.now() + 30000;
  while (!existsSync(${JSON.stringify(go)}) && Date.now() < until) { /* holds the lane: batch 2 stays in flight */ }
}
`;

const imp = (index: number, symbol: string, params: ParamType[]): ImportDef => ({ alias: symbol, symbol, params, code: index, index, waits: false });
const IMPORTS = [imp(0, 'c_make', ['name']), imp(1, 'c_read', ['value', 'name']), imp(2, 'c_copy', ['value', 'name']), imp(3, 'c_hold', ['int'])];
const MAKE = 0, READ = 1, COPY = 2, HOLD = 3;

const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));
async function until(cond: () => boolean, what: string): Promise<void> {
  for (const t0 = Date.now(); !cond(); await sleep(5)) if (Date.now() - t0 > 30_000) assert.fail(`timed out waiting until ${what}`);
}

/** A task of batch 2 reading (or copying) v, output 0 of the lane's previous batch's task 0. */
const reader = (cf: number, code: number): Task => ({ cf, imp: code, args: [null, null], keys: ['v', `y${cf}`], fwd: [{ arg: 0, task: -1, out: 0 }] });
const hold = (cf: number): Task => ({ cf, imp: HOLD, args: [0], keys: [''] });

/**
 * Run batch 1 (makes v) and batch 2 (`tasks`) on one worker; once v is booked and freed and
 * batch 2 holds its lane, whether v went early (`recycling.early`). Then batch 2 ends and is
 * booked (its raw outputs posted, read and freed).
 */
async function wentEarly(tasks: Task[]): Promise<{ early: number; read: number | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), 'luna-recycle-task-'));
  const started = join(dir, 'started'), go = join(dir, 'go'), bundle = join(dir, 'ucodes.mjs');
  writeFileSync(bundle, MODULE(started, go));
  const results = new Map<number, BatchResult>();
  const pool = new WorkerPool({
    lanes: 1, bundle, imports: IMPORTS,
    onResult: (r) => { results.set(r.batch, r); },
    onDeath: (lane, _cf, cause) => { results.set(-1, { lane, batch: -1, outs: [], error: { task: 0, message: cause } }); },
  });
  const book = new Map() as Parameters<typeof batchSent>[0];
  try {
    const first: Task[] = [{ cf: 1, imp: MAKE, args: [null], keys: ['v'] }];
    batchSent(book, 1, first);
    pool.send(0, { id: 1, tasks: first });
    batchSent(book, 2, tasks, 1);
    pool.send(0, { id: 2, tasks });
    await until(() => results.has(1) || results.has(-1), 'batch 1 returns');
    assert.ok(!results.has(-1), `the worker died: ${results.get(-1)?.error?.message}`);
    const v = results.get(1)!.outs[0]![0]!;
    assert.equal(v.t, T_RAW);
    const bytes = v.v as Uint8Array;
    // booked: posted, handed to its readers, freed
    batchBooking(book, 1);
    rawPosted(bytes);
    rawLet(bytes);
    batchDone(book, 1, results.get(1)!.outs);
    const before = recycling.early;
    rawFreed(bytes);
    await until(() => existsSync(started), 'batch 2 holds its lane');
    recycleSettled();
    const early = recycling.early - before;
    writeFileSync(go, '');
    await until(() => results.has(2), 'batch 2 returns');
    const r = results.get(2)!;
    assert.equal(r.error, undefined);
    batchBooking(book, 2);
    const raws = r.outs.flatMap((o) => o.flatMap((x) => (x !== null && x.t === T_RAW ? [x.v as Uint8Array] : [])));
    for (const x of raws) { rawPosted(x); rawLet(x); }
    batchDone(book, 2, r.outs);
    for (const x of raws) rawFreed(x);
    const y = r.outs[0]![0];
    return { early, read: y?.t === 1 ? (y.v as number) : undefined };
  } finally {
    await pool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a freed buffer read by a batch in flight, on real worker threads', () => {
  test('goes once the task reading it has run', async () => {
    const r = await wentEarly([reader(2, READ), hold(3)]);
    assert.equal(r.read, 3, 'the reader read v');
    assert.equal(r.early, 1, 'v went while batch 2 held its lane');
  });

  test('stays while a later task of the batch reads it too', async () => {
    const r = await wentEarly([reader(2, READ), hold(3), reader(4, READ)]);
    assert.equal(r.early, 0);
  });

  test('stays while the batch is in flight when the reading task copied it into an output', async () => {
    const r = await wentEarly([reader(2, COPY), hold(3)]);
    assert.equal(r.early, 0);
  });
});
