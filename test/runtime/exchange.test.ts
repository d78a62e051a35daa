// How a producing lane's exchange answers feed requests around a task it runs (exec/exchange.ts):
// requests waiting before the task are looked up before it runs (prepare) and answered first when
// it has run, those that come while it runs are answered too (a lane looks a task up after it
// ran only when requests were made to wait since it was prepared), a task that did not run keeps its
// requests, and a consumer gets every value, through the feed slots or, once a ring is full, as
// messages on the pair's port (which it reads only while the inbox count says one came).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Exchange } from '../../src/runtime/exec/exchange.js';
import { feedsFlag } from '../../src/runtime/exec/protocol.js';
import { RING } from '../../src/runtime/exec/slots.js';
import { T_REAL, type DfValue } from '../../src/ucode/value.js';
import { pair } from './exchange-pair.js';

const arrived = (): Promise<void> => new Promise((r) => setTimeout(r, 20)); // a message reaches its port

/** The system thread asks lane 0 to feed lane 1 output 0 of batch 3's tasks `tasks`. */
async function ask(flags: Int32Array, ctl: { port1: { postMessage(m: unknown): void } }, tasks: number[]): Promise<void> {
  ctl.port1.postMessage(Int32Array.from(tasks.flatMap((t) => [3, t, 0, 1])));
  await arrived();
  Atomics.add(flags, feedsFlag(2, 0), 1);
}

const real = (v: number): DfValue => ({ t: T_REAL, v });

/** Lane 0 producing batch 3 (begun, its outputs in `outs`) for lane 1; `asks` posts the system thread's requests for its tasks. */
async function batch3(body: (t: { a: Exchange; b: Exchange; outs: (DfValue | null)[][]; asks: (tasks: number[]) => Promise<void> }) => Promise<void>): Promise<void> {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs: (DfValue | null)[][] = [];
    a.begin(3, outs);
    await body({ a, b, outs, asks: (tasks) => ask(flags, ctl[0]!, tasks) });
  } finally { close(); }
}

test('requests looked up before a task runs, and one that came while it ran, are all answered when it has run', async () => {
  await batch3(async ({ a, b, outs, asks }) => {
    await asks([0]);
    a.serve();
    a.prepare(3, 0);
    await asks([0]); // while task 0 runs
    assert.equal(b.take(0, 3, 0, 0), undefined, 'nothing before the task ran');
    outs[0] = [real(1.5)];
    a.ran(3, 0);
    assert.deepEqual(b.take(0, 3, 0, 0), real(1.5));
    assert.deepEqual(b.take(0, 3, 0, 0), real(1.5), 'the second request is answered too');
    assert.equal(b.take(0, 3, 0, 0), undefined, 'and nothing more');
  });
});

test('requests taken in while a prepared task runs (a ucode waiting for an answer serves them) are answered when it has run', async () => {
  await batch3(async ({ a, b, outs, asks }) => {
    a.prepare(3, 0); // nothing waits for it yet
    await asks([0, 1]);
    a.serve(); // inside the task: its outputs are not made, so the requests wait
    outs[0] = [real(1.5)];
    a.ran(3, 0);
    assert.deepEqual(b.take(0, 3, 0, 0), real(1.5), 'the request for the task that ran');
    assert.equal(b.take(0, 3, 1, 0), undefined, 'the next task has not run');
    a.prepare(3, 1);
    outs[1] = [real(2.5)];
    a.ran(3, 1);
    assert.deepEqual(b.take(0, 3, 1, 0), real(2.5), 'the next one, looked up before it ran');
  });
});

test('a task looked up but not run keeps its requests until it runs', async () => {
  await batch3(async ({ a, b, outs, asks }) => {
    await asks([0, 1]);
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
  });
});

test('requests for a batch not begun yet wait for it, and are looked up before its task runs', async () => {
  const { flags, x, ctl, close } = pair();
  try {
    const [a, b] = x as [Exchange, Exchange];
    const outs3: (DfValue | null)[][] = [], outs4: (DfValue | null)[][] = [];
    a.begin(3, outs3);
    // the system thread asks for batch 4's task 1 while batch 3 runs
    ctl[0]!.port1.postMessage(Int32Array.from([4, 1, 0, 1]));
    await arrived();
    Atomics.add(flags, feedsFlag(2, 0), 1);
    a.prepare(3, 0);
    outs3[0] = [real(1)];
    a.ran(3, 0); // serves the request: batch 4 has not run, so it waits
    a.begin(4, outs4);
    a.prepare(4, 0);
    outs4[0] = [real(2)];
    a.ran(4, 0);
    assert.equal(b.take(0, 4, 1, 0), undefined, 'task 1 has not run');
    a.prepare(4, 1);
    outs4[1] = [real(3)];
    a.ran(4, 1);
    assert.deepEqual(b.take(0, 4, 1, 0), real(3), 'answered as batch 4\'s task 1 ran');
  } finally { close(); }
});

test('past a full ring the values come as messages, and the consumer gets each, in any order it asks', async () => {
  await batch3(async ({ a, b, outs, asks }) => {
    const n = RING + 5;
    await asks(Array.from({ length: n }, (_, t) => t));
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
  });
});

test('a lane without a batch has nothing to do for the values fed to it: only feed requests call for it (requested)', async () => {
  await batch3(async ({ a, b, outs, asks }) => {
    await asks([0, 1]);
    assert.equal(a.requested(), true, 'requests came to the producer');
    a.serve();
    assert.equal(a.requested(), false, 'and were taken in');
    for (const t of [0, 1]) { a.prepare(3, t); outs[t] = [real(t + 0.5)]; a.ran(3, t); }
    // the consumer takes the first value from its ring's head and has no batch after it: the
    // second value waits in its inbox, which must not keep its idle wait from sleeping
    assert.deepEqual(b.take(0, 3, 0, 0), real(0.5));
    assert.equal(b.requested(), false, 'a value in the inbox is no request');
    assert.equal(b.pending(), true, 'though a fed wait would look at it');
    assert.deepEqual(b.take(0, 3, 1, 0), real(1.5), 'it is there when the batch asks');
  });
});
