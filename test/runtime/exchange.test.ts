// How a producing lane's exchange answers feed requests around a task it runs (exec/exchange.ts):
// requests waiting before the task are looked up before it runs (prepare) and answered first when
// it has run, those that come while it runs are answered too, a task that did not run keeps its
// requests, and a consumer gets every value, through the feed slots or, once a ring is full, as
// messages on the pair's port (which it reads only while the inbox count says one came). An int or
// real set inside a ucode reaches its consumer before the ucode returns, and is final (confirmed)
// only once the task has run; a ucode that throws after setting an output never confirms it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Exchange } from '../../src/runtime/exec/exchange.js';
import { feedsFlag } from '../../src/runtime/exec/protocol.js';
import { RING } from '../../src/runtime/exec/slots.js';
import { T_INT, T_RAW, T_REAL, type DfValue } from '../../src/ucode/value.js';
import { callUcode } from '../../src/runtime/exec/call.js';
import type { DF } from '../../src/ucode/df.js';
import { pair } from './exchange-pair.js';

const arrived = (): Promise<void> => new Promise((r) => setTimeout(r, 20)); // a message reaches its port

/** The system thread asks lane 0 to feed lane 1 output 0 of batch 3's tasks `tasks`. */
async function ask(flags: Int32Array, ctl: { port1: { postMessage(m: unknown): void } }, tasks: number[]): Promise<void> {
  ctl.port1.postMessage(Int32Array.from(tasks.flatMap((t) => [3, t, 0, 1])));
  await arrived();
  Atomics.add(flags, feedsFlag(2, 0), 1);
}

const real = (v: number): DfValue => ({ t: T_REAL, v });

test('requests looked up before a task runs, and one that came while it ran, are all answered when it has run', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await ask(flags, ctl[0]!, [0]);
    a.serve();
    a.prepare(3, 0);
    await ask(flags, ctl[0]!, [0]); // while task 0 runs
    assert.equal(b.take(0, 3, 0, 0), undefined, 'nothing before the task ran');
    outs[0] = [real(1.5)];
    a.ran(3, 0);
    assert.deepEqual(b.take(0, 3, 0, 0), real(1.5));
    assert.deepEqual(b.take(0, 3, 0, 0), real(1.5), 'the second request is answered too');
    assert.equal(b.take(0, 3, 0, 0), undefined, 'and nothing more');
  } finally { close(); }
});

test('a task looked up but not run keeps its requests until it runs', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await ask(flags, ctl[0]!, [0, 1]);
    a.serve();
    a.prepare(3, 0);
    // task 0 did not run (its ucode failed before its outputs): the next task is looked up
    a.prepare(3, 1);
    outs[1] = [real(2)];
    a.ran(3, 1);
    assert.deepEqual(b.take(0, 3, 1, 0), real(2));
    assert.equal(b.take(0, 3, 0, 0), undefined);
    outs[0] = [real(1)];
    a.ran(3, 0);
    assert.deepEqual(b.take(0, 3, 0, 0), real(1), 'task 0 answered once it ran');
  } finally { close(); }
});

test('past a full ring the values come as messages, and the consumer gets each, in any order it asks', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const n = RING + 5;
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await ask(flags, ctl[0]!, Array.from({ length: n }, (_, t) => t));
    for (let t = 0; t < n; t++) {
      a.prepare(3, t);
      outs[t] = [real(t)];
      a.ran(3, t);
    }
    await arrived();
    // the last ones first: they came as messages, after the ring's
    for (let t = n - 1; t >= n - 5; t--) assert.deepEqual(b.take(0, 3, t, 0), real(t), `task ${t}`);
    for (let t = 0; t < n - 5; t++) assert.deepEqual(b.take(0, 3, t, 0), real(t), `task ${t}`);
    assert.equal(b.take(0, 3, 0, 0), undefined);
  } finally { close(); }
});

// Outputs handed out as a ucode sets them (Exchange.early, through callUcode's DF setters).
const outDef = { symbol: 'produce', params: ['name'] as const, waits: false };

test('an int or real set inside the ucode reaches the waiting lane before the ucode returns, and is final once the task has run', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await ask(flags, ctl[0]!, [0]);
    a.serve();
    a.prepare(3, 0);
    assert.ok(a.hasDue);
    let inside: DfValue | null | undefined, finalInside = true;
    outs[0] = callUcode((out: unknown) => {
      (out as DF).setReal(2.5);
      inside = b.take(0, 3, 0, 0);
      finalInside = b.confirmed();
    }, outDef, [null], ['v'], String, undefined, 0, a);
    assert.deepEqual(inside, real(2.5), 'the consumer lane had the value while the ucode ran');
    assert.equal(finalInside, false, 'but not as final');
    assert.equal(b.confirmed(), false);
    a.ran(3, 0);
    assert.equal(b.confirmed(), true, 'final once the task has run');
    assert.equal(b.take(0, 3, 0, 0), undefined, 'handed out once');
  } finally { close(); }
});

test('an output set by a ucode that then throws is never confirmed; raw and unset outputs leave when the task has run', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await ask(flags, ctl[0]!, [0, 1, 2, 3]);
    a.serve();
    // task 0 sets its output and throws: the consumer sees the value but may never use it
    a.prepare(3, 0);
    assert.throws(() => callUcode((out: unknown) => { (out as DF).setInt(7); throw new Error('late fault'); }, outDef, [null], ['v'], String, undefined, 0, a), /late fault/);
    assert.deepEqual(b.take(0, 3, 0, 0), { t: T_INT, v: 7 });
    assert.equal(b.confirmed(), false);
    // a raw value's bytes are written after it is set: it waits for the task's end
    a.prepare(3, 1);
    outs[1] = callUcode((out: unknown) => {
      const bytes = (out as DF).create(4);
      assert.equal(b.take(0, 3, 1, 0), undefined, 'no raw value before the ucode returned');
      bytes[0] = 42;
    }, outDef, [null], ['v'], String, undefined, 1, a);
    a.ran(3, 1);
    // an output never set goes as null when the task has run
    a.prepare(3, 2);
    outs[2] = callUcode(() => {}, outDef, [null], ['v'], String, undefined, 2, a);
    a.ran(3, 2);
    await arrived();
    const raw = b.take(0, 3, 1, 0);
    assert.equal(raw?.t, T_RAW);
    assert.equal((raw!.v as Uint8Array)[0], 42, 'with the bytes written after it was set');
    assert.equal(b.take(0, 3, 2, 0), null);
    assert.equal(b.confirmed(), false, 'the value of the task that threw is still not final');
    // nor after a later task fed early (the lane that faulted confirms nothing more)
    a.prepare(3, 3);
    outs[3] = callUcode((out: unknown) => (out as DF).setReal(1), outDef, [null], ['v'], String, undefined, 3, a);
    a.ran(3, 3);
    assert.deepEqual(b.take(0, 3, 3, 0), real(1));
    assert.equal(b.confirmed(), false);
  } finally { close(); }
});
