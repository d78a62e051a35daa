// An idle worker lane runs tasks from the tail of its partner's fed batch (exec/handover.ts):
// real worker threads, batches sent as the system thread sends them. Lane 0's batch starts with a
// long task, so its tasks count as long enough to hand over; lane 1 is idle (no batch, or its own
// task waits for a value lane 0 makes), so lane 0 hands it the ready tasks of its tail. Each task
// reports the thread that ran it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerPool } from '../../src/runtime/exec/pool.js';
import type { ImportDef, ParamType } from '../../src/core/imports.js';
import type { Batch, BatchResult, WaitPlan } from '../../src/runtime/exec/protocol.js';

/**
 * c_long: busy 60 ms, output its thread; c_work(k): output its thread·1000 + k;
 * c_sum(a, b): output a + b (both from c_work); c_fail: throws; c_read(v): output v.
 */
const MODULE = `
import { threadId } from 'node:worker_threads';
export function c_long(x) { const until = Date.now() + 60; while (Date.now() < until) {} x.setInt(threadId); }
export function c_work(k, x) { const until = Date.now() + 5; while (Date.now() < until) {} x.setInt(threadId * 1000 + k); }
export function c_sum(a, b, x) { x.setInt(a.getInt() + b.getInt()); }
export function c_fail(x) { throw new Error('boom in a handed task'); }
export function c_read(v, x) { x.setInt(v.getInt()); }
`;

const imp = (index: number, symbol: string, params: ParamType[]): ImportDef => ({ alias: symbol, symbol, params, code: index, index, waits: false });
const IMPORTS = [
  imp(0, 'c_long', ['name']), imp(1, 'c_work', ['int', 'name']), imp(2, 'c_sum', ['value', 'value', 'name']),
  imp(3, 'c_fail', ['name']), imp(4, 'c_read', ['value', 'name']),
];
const int = (r: BatchResult, ti: number): number => (r.outs[ti]![0] as { v: number }).v;

/** A pool of `lanes` lanes on `bundle`; its results, by lane, as they come. */
function pool(bundle: string, lanes: number, plan?: WaitPlan): { p: WorkerPool; results: (lane: number) => Promise<BatchResult> } {
  const waiting = new Map<number, (r: BatchResult) => void>(), came = new Map<number, BatchResult>();
  const p = new WorkerPool({
    lanes, feed: true, bundle, imports: IMPORTS, ...(plan ? { waiting: plan } : {}),
    onResult: (r) => { const w = waiting.get(r.lane); if (w) w(r); else came.set(r.lane, r); },
    onDeath: (lane, _cf, cause) => { throw new Error(`worker ${lane} died: ${cause}`); },
  });
  const results = (lane: number): Promise<BatchResult> => {
    const r = came.get(lane);
    if (r) { came.delete(lane); return Promise.resolve(r); }
    return new Promise((res) => waiting.set(lane, (x) => { waiting.delete(lane); res(x); }));
  };
  return { p, results };
}

/** Lane 0's batch 1: the long task, then c_work 1, 2, 3, then c_sum of tasks 2 and 3 (or `tail` in place of task 3). */
function ownerBatch(tail?: { imp: number; args: unknown[]; keys: string[] }): Batch {
  const work = (cf: number, k: number) => ({ cf, imp: 1, args: [k, null], keys: ['', `w${k}`] });
  return {
    id: 1,
    tasks: [
      { cf: 1, imp: 0, args: [null], keys: ['l'] },
      work(2, 1), work(3, 2),
      tail ? { cf: 4, ...tail } : work(4, 3),
      { cf: 5, imp: 2, args: [null, null, null], keys: ['a', 'b', 's'], fwd: [{ arg: 0, task: 2, out: 0 }, { arg: 1, task: 3, out: 0 }] },
    ],
  };
}

const setUp = (t: { after(f: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'luna-handover-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = join(dir, 'ucodes.mjs');
  writeFileSync(bundle, MODULE);
  return bundle;
};

test("an idle lane runs tasks from the tail of its partner's batch, and a task of the owner reads their outputs", async (t) => {
  const { p, results } = pool(setUp(t), 2);
  try {
    await p.allBooted();
    assert.ok(p.feeds, 'the pool feeds values across lanes');
    p.send(0, ownerBatch());
    const r = await results(0);
    assert.equal(r.error, undefined);
    assert.equal(r.outs.length, 5, 'every task of the batch is in its result');
    const owner = int(r, 0);
    const ranOn = [1, 2, 3].map((ti) => Math.floor(int(r, ti) / 1000));
    assert.equal(ranOn[0], owner, 'the task after the long one stays with its owner');
    assert.ok(ranOn.slice(1).some((x) => x !== owner), `the idle lane ran a task of the tail (threads ${ranOn.join(', ')}, owner ${owner})`);
    assert.equal(int(r, 4), int(r, 2) + int(r, 3), "the owner's last task read the outputs of the tasks handed over");
    for (const ti of [1, 2, 3]) assert.equal(int(r, ti) % 1000, ti, `task ${ti} got its own argument`);
  } finally { await p.stop(); }
});

test('a task handed over feeds a task of the idle lane that asked its owner for the value', async (t) => {
  // lane 1's wait for its value spins (a lane offers itself in a fed wait once it has spun
  // HANDOVER_FED_WAIT_NS; one that sleeps at once is not offered)
  const { p, results } = pool(setUp(t), 2, { cpus: 64, idleSpinNs: 0, fedSpinNs: 5e9, resultSpinNs: 0 });
  try {
    await p.allBooted();
    p.send(0, ownerBatch());
    // lane 1 waits for task 3 of lane 0's batch (the tail's first candidate): idle meanwhile
    p.feed(0, [1, 3, 0, 1]);
    p.send(1, { id: 2, tasks: [{ cf: 6, imp: 4, args: [null, null], keys: ['w3', 'y'], fwd: [{ arg: 0, lane: 0, batch: 1, task: 3, out: 0 }] }] });
    const [r0, r1] = await Promise.all([results(0), results(1)]);
    assert.equal(r0.error, undefined);
    assert.equal(r1.error, undefined);
    assert.equal(int(r1, 0), int(r0, 3), 'lane 1 read the value of task 3');
    assert.equal(int(r0, 3) % 1000, 3);
    assert.notEqual(Math.floor(int(r0, 3) / 1000), int(r0, 0), 'task 3 ran on the idle lane, not on its owner');
  } finally { await p.stop(); }
});

test('a fault in a task handed over fails the run, reported for that task, naming the lane that ran it', async (t) => {
  const { p, results } = pool(setUp(t), 2);
  try {
    await p.allBooted();
    // task 3 throws; task 4 reads it (so the owner waits for it)
    p.send(0, ownerBatch({ imp: 3, args: [null], keys: ['f'] }));
    const r = await results(0);
    assert.ok(r.error, 'the batch reports the fault');
    assert.equal(r.error.task, 3, 'for the task that threw');
    assert.match(r.error.message, /boom in a handed task \(run by worker lane 1, handed over by lane 0\)/);
    // (the owner drops what it had not started once the run fails: how far it got depends on timing)
    assert.ok(r.outs.length >= 1 && r.outs.length <= 3, `the result holds tasks before it only (${r.outs.length})`);
  } finally { await p.stop(); }
});

test('one lane runs its batch alone and in order; LUNA_HANDOVER=0 hands nothing over', async (t) => {
  const bundle = setUp(t);
  const one = pool(bundle, 1);
  try {
    await one.p.allBooted();
    one.p.send(0, ownerBatch());
    const r = await one.results(0);
    const threads = [0, 1, 2, 3].map((ti) => (ti === 0 ? int(r, 0) : Math.floor(int(r, ti) / 1000)));
    assert.deepEqual(new Set(threads).size, 1, 'one thread ran every task');
    assert.ok(r.start![1]! <= r.start![2]! && r.start![2]! <= r.start![3]!, 'in the batch order');
  } finally { await one.p.stop(); }
  process.env.LUNA_HANDOVER = '0';
  const two = pool(bundle, 2);
  delete process.env.LUNA_HANDOVER;
  try {
    await two.p.allBooted();
    two.p.send(0, ownerBatch());
    const r = await two.results(0);
    const threads = [0, 1, 2, 3].map((ti) => (ti === 0 ? int(r, 0) : Math.floor(int(r, ti) / 1000)));
    assert.equal(new Set(threads).size, 1, 'with hand-overs off, the owner ran every task');
  } finally { await two.p.stop(); }
});
