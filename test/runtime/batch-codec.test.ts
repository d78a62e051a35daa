// The encoding of a batch for a worker: every kind of argument comes back as it was sent — plain
// numbers and strings, DF values of each type, outputs, inputs forwarded within the batch and fed
// from another lane — also in batches that outgrow the encoder's scratch, and with one task
// whose arguments alone outgrow it; and a result comes back with every field it carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchKeys, batchId, batchKeys, batchSize, decodeBatch, decodeResult, encodeBatch, encodeResult } from '../../src/runtime/exec/codec.js';
import type { Task } from '../../src/runtime/exec/protocol.js';
import { T_INT, T_JS, T_REAL, T_STRING, type DfValue } from '../../src/ucode/value.js';

/** Task `i`: one argument of each kind, keys named after the task. */
function task(i: number): Task {
  const k = (s: string): string => `${s}#.${i}`;
  return {
    cf: 1000 + i, imp: i % 3,
    args: [i, `txt${i}`, { t: T_INT, v: -i }, { t: T_REAL, v: i + 0.25 }, { t: T_STRING, v: `s${i}` }, { t: 7, v: { obj: i } }, null, null, null, null],
    keys: ['', '', k('a'), k('b'), k('c'), k('d'), k('o'), k('f'), k('x'), k('y')],
    fwd: [
      { arg: 7, task: i - 1, out: 0, lane: undefined, batch: undefined },
      { arg: 8, task: i, out: 1, lane: 1, batch: 40 + i },
    ],
  };
}

function check(tasks: Task[], id: number): void {
  const wire = structuredClone(encodeBatch(id, tasks));
  assert.equal(batchId(wire), id);
  assert.equal(batchSize(wire), tasks.length);
  const keys = new BatchKeys(batchKeys(wire));
  const back = decodeBatch(wire);
  assert.equal(back.length, tasks.length);
  back.forEach((d, i) => {
    const t = tasks[i]!;
    assert.equal(d.cf, t.cf);
    assert.equal(d.imp, t.imp);
    // a forwarded argument travels as its source, an output as null
    const fwdArgs = new Set((t.fwd ?? []).map((f) => f.arg));
    assert.deepEqual(d.args, t.args.map((a, j) => (fwdArgs.has(j) ? null : a)), `task ${i}`);
    assert.deepEqual(d.keys.map((n) => (n < 0 ? '' : keys.get(n))), t.keys, `task ${i}'s keys`);
    const want = (t.fwd ?? []).map((f) => (f.lane === undefined ? { arg: f.arg, task: f.task, out: f.out } : { arg: f.arg, lane: f.lane, batch: f.batch, task: f.task, out: f.out }));
    assert.deepEqual(d.fwd ?? [], want, `task ${i}'s forwards`);
  });
}

test('a batch round-trips every kind of argument, also past the scratch buffer', () => {
  check([task(1)], 3);
  // ~60 numbers a task: 100 tasks outgrow a scratch of 256 numbers several times
  check(Array.from({ length: 100 }, (_, i) => task(i + 1)), 4);
  // and a small batch after it encodes from the start of the scratch again
  check([task(5), task(6)], 5);
});

test('one task whose arguments alone outgrow the scratch', () => {
  const n = 300;
  const t: Task = {
    cf: 1, imp: 0,
    args: Array.from({ length: n }, (_, j) => (j % 2 === 0 ? { t: T_INT, v: j } : null)),
    keys: Array.from({ length: n }, (_, j) => `z#.${j}`),
    fwd: Array.from({ length: n / 2 }, (_, j) => ({ arg: 2 * j + 1, task: 0, out: j, lane: 0, batch: 9 })),
  };
  check([t], 6);
});

test('a result round-trips every field: outputs of each kind, times, error and notes, also past the scratch buffer', () => {
  const outs = (n: number): (DfValue | null)[][] => Array.from({ length: n }, (_, i) => [{ t: T_INT, v: -i - 1 }, { t: T_REAL, v: i + 0.5 }, null, { t: T_STRING, v: `s${i}` }, { t: T_JS, v: { obj: i } }]);
  const times = (n: number, at: number): Float64Array => Float64Array.from({ length: n }, (_, i) => at + i + 0.25);
  const notes = {
    error: { task: 2, message: 'boom', stack: 'at x', kind: 'ucode' as const },
    fedWaits: { none: 1, spun: 2, slept: 3, woke: 4 }, idleSleeps: 5,
    gaps: { gapNs: 6.5, batchWaits: 7, batchWaitNs: 8.5, fedWaitNs: 9.5 },
  };
  for (const n of [0, 3, 300]) {
    // the starts and finishes of the tasks that ran come first in longer arrays (a batch cut by an error)
    const start = times(n + 2, 1e9), fin = times(n + 2, 2e9);
    const r = decodeResult(structuredClone(encodeResult(1, 40 + n, outs(n), start, fin, notes)));
    assert.equal(r.lane, 1);
    assert.equal(r.batch, 40 + n);
    assert.deepEqual(r.outs, outs(n));
    assert.deepEqual([...r.start!], [...start.subarray(0, n)]);
    assert.deepEqual([...r.fin!], [...fin.subarray(0, n)]);
    assert.deepEqual(r.error, notes.error);
    assert.deepEqual(r.fedWaits, notes.fedWaits);
    assert.equal(r.idleSleeps, 5);
    assert.deepEqual(r.gaps, notes.gaps);
  }
  // nothing to say: every note absent, and the next result's fields are not left over from the last
  const r = decodeResult(structuredClone(encodeResult(0, 1, [[null]], new Float64Array(1), new Float64Array(1))));
  assert.deepEqual({ ...r, start: [...r.start!], fin: [...r.fin!] }, { lane: 0, batch: 1, outs: [[null]], start: [0], fin: [0], error: undefined, fedWaits: undefined, idleSleeps: undefined, gaps: undefined });
});
