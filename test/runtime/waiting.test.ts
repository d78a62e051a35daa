// How waiting threads wait, on real worker threads: a worker with nothing to do spins only while
// the node's threads on a CPU leave a core free, and the count of threads on a CPU follows every
// sleep, wake-up and rest of the system thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool, waitPlan } from '../../src/runtime/exec/pool.js';
import type { BatchResult, WaitPlan } from '../../src/runtime/exec/protocol.js';

/** A pool of `lanes` workers without ucodes (empty batches only) and the results it returned. */
function pool(lanes: number, waiting: WaitPlan): { p: WorkerPool; results: BatchResult[]; next: () => Promise<BatchResult> } {
  const results: BatchResult[] = [];
  let waiter: ((r: BatchResult) => void) | undefined;
  const p = new WorkerPool({
    lanes, imports: [], waiting,
    onResult: (r) => { results.push(r); waiter?.(r); waiter = undefined; },
    onDeath: (lane, _cf, cause) => { throw new Error(`worker ${lane} ${cause}`); },
  });
  return { p, results, next: () => new Promise((res) => { waiter = res; }) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` every few ms up to `ms`. */
async function eventually(cond: () => boolean, ms = 5000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(5)) if (cond()) return true;
  return cond();
}

const LONG_SPIN = 600_000_000_000; // 10 min: longer than the test even on a loaded machine (a spin that ran out parked the spinner), so only the gate can end it

test('a worker with nothing to do spins while a core is free for it, and sleeps at once when none is', async () => {
  // many CPUs: the worker spins on its empty port after its batch
  const free = pool(1, { cpus: 64, idleSpinNs: LONG_SPIN, fedSpinNs: 0, resultSpinNs: 0 });
  await free.p.allBooted();
  let r = free.next();
  free.p.send(0, { id: 1, tasks: [] });
  assert.equal((await r).batch, 1);
  await sleep(100);
  assert.equal(free.p.asleep(0), false, 'spinning, not asleep, 100 ms after its batch');
  assert.equal(free.p.onCpu, 2, 'the system thread and the spinning worker');
  // a batch sent to a spinning worker is taken without a wake-up
  r = free.next();
  free.p.send(0, { id: 2, tasks: [] });
  assert.equal((await r).batch, 2);
  await free.p.stop();

  // one CPU, taken by the system thread: the worker sleeps at once despite its long spin
  const none = pool(1, { cpus: 1, idleSpinNs: LONG_SPIN, fedSpinNs: 0, resultSpinNs: 0 });
  await none.p.allBooted();
  r = none.next();
  none.p.send(0, { id: 1, tasks: [] });
  await r;
  assert.ok(await eventually(() => none.p.asleep(0)), 'asleep: the system thread needs the only core');
  assert.equal(none.p.onCpu, 1, 'only the system thread');
  // the system thread rests: the count drops to none; a batch wakes the worker and counts it at once
  none.p.rest();
  assert.equal(none.p.onCpu, 0);
  r = none.next();
  none.p.work();
  none.p.send(0, { id: 2, tasks: [] });
  assert.ok(none.p.onCpu >= 1);
  assert.equal((await r).batch, 2);
  assert.ok(await eventually(() => none.p.asleep(0) && none.p.onCpu === 1), 'asleep again, the system thread alone counted');
  await none.p.stop();
});

test('waiting workers never outnumber the CPUs the working threads leave them', async () => {
  // 2 CPUs, 2 workers and the working system thread: one worker spins, the other sleeps
  const { p, next } = pool(2, { cpus: 2, idleSpinNs: LONG_SPIN, fedSpinNs: 0, resultSpinNs: 0 });
  try {
    await p.allBooted();
    const settled = (): boolean => p.asleep(0) !== p.asleep(1) && p.onCpu === 2;
    // two workers that found the CPUs full at the same moment both sleep (the gate is decided
    // by each alone): a batch then wakes one, which spins after it
    await sleep(50);
    if (p.asleep(0) && p.asleep(1)) { const r0 = next(); p.send(0, { id: 0, tasks: [] }); await r0; }
    assert.ok(await eventually(settled), 'one worker spins beside the system thread, the other sleeps');
    const sleeper = p.asleep(0) ? 0 : 1;
    await sleep(100);
    assert.ok(settled(), `and goes on spinning (on a CPU ${p.onCpu}, asleep ${p.asleep(0)} ${p.asleep(1)})`);
    // waking the sleeper (its waker counts it at once) makes three threads on two CPUs: one of
    // the two workers goes back to sleep once its batch is done (whichever saw the count first);
    // on a loaded machine the spinner may park too, when other processes starve it of its core
    // (the spin's own rule), so what is checked is the bound: never two spinning, and the count
    // is the system thread and the spinner if any
    const r = next();
    p.send(sleeper, { id: 1, tasks: [] });
    assert.equal((await r).batch, 1);
    const spinning = (): number => (p.asleep(0) ? 0 : 1) + (p.asleep(1) ? 0 : 1);
    const bounded = (): boolean => spinning() <= 1 && p.onCpu === 1 + spinning();
    assert.ok(await eventually(bounded), `settled again: at most one spins, the rest sleep (on a CPU ${p.onCpu}, asleep ${p.asleep(0)} ${p.asleep(1)})`);
    const asleep = p.asleep(0) ? 0 : 1;
    // the system thread rests: a core is free, yet nobody is woken for it (the spinner may
    // still park on its own, when other processes starve it of its core: not what this checks)
    p.rest();
    assert.ok(p.onCpu <= 1);
    await sleep(50);
    assert.ok(p.asleep(asleep), `the sleeper stays asleep (on a CPU ${p.onCpu}, asleep ${p.asleep(0)} ${p.asleep(1)})`);
  } finally {
    await p.stop();
  }
});

test('the working system thread leaves the count while every lane has a batch queued behind its running one', async () => {
  // many CPUs: the worker spins on its empty port, so it stays counted throughout
  const { p, results } = pool(1, { cpus: 64, idleSpinNs: LONG_SPIN, fedSpinNs: 0, resultSpinNs: 0 });
  try {
    await p.allBooted();
    assert.ok(await eventually(() => !p.asleep(0) && p.onCpu === 2), 'the spinning worker and the working system thread');
    // one batch in flight: the worker may soon wait for this thread's next one, so it counts
    p.send(0, { id: 1, tasks: [] });
    assert.equal(p.onCpu, 2);
    // a second one queued behind it: this thread only builds ahead, and leaves a core to spinners
    p.send(0, { id: 2, tasks: [] });
    assert.equal(p.onCpu, 1, 'the system thread is not counted while it builds ahead');
    // a result booked leaves the lane one batch: counted again while it works
    assert.ok(await eventually(() => results.length === 2));
    assert.equal(p.onCpu, 2);
    p.rest();
    assert.equal(p.onCpu, 1, 'resting, it is not counted');
    // a batch sent while it rests does not count it (it works again only at its next result)
    p.send(0, { id: 3, tasks: [] });
    p.send(0, { id: 4, tasks: [] });
    assert.ok(await eventually(() => results.length === 4));
    assert.equal(p.onCpu, 2, 'booking the results, it works and counts again');
  } finally {
    await p.stop();
  }
});

test('the environment overrides the policy\'s spins, in µs', () => {
  const plan: WaitPlan = { cpus: 2, idleSpinNs: 1, fedSpinNs: 2, resultSpinNs: 3 };
  const keep = { ...process.env };
  try {
    process.env.LUNA_SPIN_US = '0';
    process.env.LUNA_FED_SPIN_US = '500';
    delete process.env.LUNA_RESULT_SPIN_US;
    assert.deepEqual(waitPlan(plan), { cpus: 2, idleSpinNs: 0, fedSpinNs: 500_000, resultSpinNs: 3 });
    process.env.LUNA_SPIN_US = 'x';
    assert.equal(waitPlan(plan).idleSpinNs, 1, 'not a number: the policy\'s');
  } finally {
    for (const k of ['LUNA_SPIN_US', 'LUNA_FED_SPIN_US', 'LUNA_RESULT_SPIN_US']) { if (keep[k] === undefined) delete process.env[k]; else process.env[k] = keep[k]; }
  }
});
