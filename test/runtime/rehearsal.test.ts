// The rehearsal of a program while its workers boot (--warm-start): the program's fragments go
// through the system thread's path against simulated lanes, whole runs over and over until the
// budget is spent, in as many runs as it asks, no ucode runs, a run cut short stops pumping, and a program whose control
// flow reads its DFs (placeholders there) cannot keep it going past its budget. Through the CLI:
// a warm start rehearses, prints only what the real run prints, and LUNA_REHEARSE_CFS=0 turns
// it off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answering, LaneExecutors, rehearsalTraceRecords, rehearse } from '../../src/runtime/node/rehearsal.js';
import { decodeResult, encodeResult } from '../../src/runtime/exec/codec.js';
import { T_INT } from '../../src/ucode/value.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import { LoopRun } from '../../src/runtime/node/loop-run.js';
import { compileSource } from './harness.js';
import { assertOk, describeRun, luna, timingOf } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';
import { fixture } from '../ucode/fixtures.js';

const STENCIL = compileSource(PROGRAM, { c_init: 0, c_step: 0, c_print: 0 });
/** the stencil's atomic CFs for `steps` steps: 2 inits, 2 a step, 2 prints */
const cfsOf = (steps: number): number => 2 + 2 * steps + 2;
const budget = (cfs: number, runs = 1) => ({ cfs, runs, ms: 60_000, cfNs: 200_000 });

/** A default policy that counts the batches the runtime sized with it (its pump ran). */
class Counting extends DefaultPolicy {
  static pumped = 0;
  override chainLength(...a: Parameters<DefaultPolicy['chainLength']>): number {
    Counting.pumped++;
    return super.chainLength(...a);
  }
}

test('a rehearsal runs the program over and over until its budget of fragments is spent', async () => {
  const steps = 300, per = cfsOf(steps);
  let policies = 0;
  const r = await rehearse(STENCIL, [steps, 'ok'], 2, () => { policies++; return new DefaultPolicy(); }, budget(3 * per, 3));
  assert.deepEqual(r, { cfs: 3 * per, runs: 3, finished: 3 });
  assert.equal(policies, 3, 'each run a fresh policy: the real run inherits nothing it learnt');
});

test('a program smaller than a run\'s share is rehearsed in the runs the budget asks, not until its fragments are spent', async () => {
  const steps = 20, per = cfsOf(steps);
  const r = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(50 * per, 3));
  assert.deepEqual(r, { cfs: 3 * per, runs: 3, finished: 3 });
});

test('a traced run\'s rehearsal goes through the trace path (to a writer of its own), an untraced one does not', async () => {
  const steps = 100, per = cfsOf(steps);
  const before = rehearsalTraceRecords();
  const untraced = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(per));
  assert.equal(rehearsalTraceRecords(), before, 'an untraced rehearsal records nothing');
  const traced = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(per), true);
  assert.deepEqual(traced, untraced, 'tracing changes nothing the rehearsal does');
  // each fragment's creation, readiness or inputs and outputs: several records a CF
  assert.ok(rehearsalTraceRecords() - before >= 2 * per, `${rehearsalTraceRecords() - before} records for ${per} CFs`);
});

test('a long program is rehearsed in as many runs as the budget asks, each cut short', async () => {
  const steps = 2000;
  const r = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(2000, 4));
  assert.equal(r.runs, 4, JSON.stringify(r));
  assert.equal(r.finished, 0, JSON.stringify(r));
  assert.ok(r.cfs >= 2000 && r.cfs < cfsOf(steps), JSON.stringify(r));
});

test('a run cut at the budget stops there, and pumps no more', async () => {
  const steps = 2000, per = cfsOf(steps);
  Counting.pumped = 0;
  const r = await rehearse(STENCIL, [steps, 'ok'], 2, () => new Counting(), budget(500));
  assert.equal(r.finished, 0, JSON.stringify(r));
  assert.ok(r.cfs >= 500 && r.cfs < per, JSON.stringify(r));
  const pumped = Counting.pumped;
  assert.ok(pumped > 0);
  for (let i = 0; i < 20; i++) await new Promise((res) => setImmediate(res));
  await new Promise((res) => setTimeout(res, 30));
  assert.equal(Counting.pumped, pumped, 'the cut runtime went on pumping');
});

test('a program steered by its DFs, which the placeholders send round for ever, ends at the budget', async () => {
  // the placeholder of every output is the same: `x < n` never turns false
  const p = compileSource(`
import c_next(int \`x, name \`y) as next;
sub walk(int x, int n) {
  df y;
  next(x, y);
  if x < n { walk(y, n); }
}
sub main() { walk(0, 5); }
`, { c_next: 0 });
  const r = await rehearse(p, [], 2, () => new DefaultPolicy(), budget(300));
  assert.equal(r.finished, 0, JSON.stringify(r));
  assert.ok(r.cfs >= 300, JSON.stringify(r));
  const timed = await rehearse(p, [], 2, () => new DefaultPolicy(), { cfs: 1e9, runs: 1, ms: 50, cfNs: 200_000 });
  assert.equal(timed.finished, 0, JSON.stringify(timed));
});

// (a rehearsal that never ended would hang: the test's timeout fails it instead; no wall-clock
// bound is asserted, the machine may be loaded)
test('a program that the placeholders send round for ever without a fragment for the lanes ends at the time budget', { timeout: 300_000 }, async () => {
  // the real run's z is 0 and spin ends; the placeholder is 1: sub calls for ever, no atomic CF
  const p = compileSource(`
import c_zero(name \`o) as zero;
sub spin(int v) { if v > 0 { spin(v); } }
sub main() { df z; zero(z); spin(z); }
`, { c_zero: 0 });
  const r = await rehearse(p, [], 2, () => new DefaultPolicy(), { cfs: 1e9, runs: 1, ms: 200, cfNs: 200_000 });
  assert.equal(r.finished, 0, JSON.stringify(r));
  // and at its budget of fragments, which counts the CFs it makes, structured ones too
  const made = await rehearse(p, [], 2, () => new DefaultPolicy(), { cfs: 100, runs: 1, ms: 600_000, cfNs: 200_000 });
  assert.equal(made.finished, 0, JSON.stringify(made));
});

test('with no fragment for the lanes there is nothing to rehearse', async () => {
  const p = compileSource('sub f(int k) { if k > 1 { f(k - 1); } }\nsub main() { f(3); }');
  assert.deepEqual(await rehearse(p, [], 2, () => new DefaultPolicy(), budget(1000)), { cfs: 0, runs: 1, finished: 1 });
});

test('one lane rehearses the FIFO path to the end', async () => {
  const steps = 50;
  const r = await rehearse(STENCIL, [steps, 'ok'], 1, () => new DefaultPolicy(), budget(cfsOf(steps)));
  assert.deepEqual(r, { cfs: cfsOf(steps), runs: 1, finished: 1 });
});

test('where the run\'s lanes build planned steps, the rehearsal sends its planned loops as windows, as the run does', async () => {
  // the windows a planned loop emits as ranges (emitRange: the lanes build the steps) or as tasks
  const proto = LoopRun.prototype as unknown as Record<'emitRange' | 'emitTasks', (w: number) => void>;
  const was = { emitRange: proto.emitRange, emitTasks: proto.emitTasks };
  const count = { emitRange: 0, emitTasks: 0 };
  for (const k of ['emitRange', 'emitTasks'] as const) proto[k] = function (this: LoopRun, w: number) { count[k]++; was[k].call(this, w); };
  try {
    const steps = 200;
    const ranged = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(cfsOf(steps)), false, 2);
    assert.deepEqual(ranged, { cfs: cfsOf(steps), runs: 1, finished: 1 });
    assert.ok(count.emitRange > 0 && count.emitTasks === 0, `windows as ranges ${count.emitRange}, as tasks ${count.emitTasks}`);
    // lanes that take tasks only (the run's pool does not feed): the rehearsal sends tasks
    count.emitRange = count.emitTasks = 0;
    const tasks = await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(cfsOf(steps)));
    assert.deepEqual(tasks, { cfs: cfsOf(steps), runs: 1, finished: 1 });
    assert.ok(count.emitTasks > 0 && count.emitRange === 0, `windows as ranges ${count.emitRange}, as tasks ${count.emitTasks}`);
  } finally {
    Object.assign(proto, was);
  }
});

test('the rehearsal books the lanes\' batches of a planned window in either order, as a run\'s come back', async () => {
  // each booking's first step and site (the stencil's site x is on lane x)
  const proto = LoopRun.prototype as unknown as { book: (id: number, its: Int32Array, sites: Int32Array, ...rest: unknown[]) => void };
  const was = proto.book;
  const booked: [number, number][] = [];
  proto.book = function (this: LoopRun, id: number, its: Int32Array, sites: Int32Array, ...rest: unknown[]) { booked.push([its[0]!, sites[0]!]); was.call(this, id, its, sites, ...rest); };
  try {
    const steps = 200;
    await rehearse(STENCIL, [steps, 'ok'], 2, () => new DefaultPolicy(), budget(cfsOf(steps)), false, 2);
  } finally {
    proto.book = was;
  }
  let inOrder = 0, swapped = 0;
  for (let i = 1; i < booked.length; i++) {
    if (booked[i]![0] !== booked[i - 1]![0]) continue;
    if (booked[i - 1]![1] === 0 && booked[i]![1] === 1) inOrder++;
    if (booked[i - 1]![1] === 1 && booked[i]![1] === 0) swapped++;
  }
  assert.ok(inOrder > 0 && swapped > 0, `windows booked lane 0 first ${inOrder}, lane 1 first ${swapped}`);
});

test('the run\'s executors and its rehearsal\'s are of one class, the counts read as they go', () => {
  const counts = { booted: 0, wakes: 0 };
  const asking = { asked: [false, true] };
  const e = new LaneExecutors({ lanes: 2, inflight: new Int32Array(2), send: () => {}, inline: undefined, feed: undefined, warm: undefined, rest: undefined, work: undefined, blocked: undefined, answers: answering(asking), ask: undefined, settle: undefined }, counts);
  const r = new LaneExecutors({ lanes: 2, inflight: new Int32Array(2), send: () => {}, inline: undefined, feed: () => {}, warm: () => {}, rest: () => {}, work: () => {}, blocked: () => false, answers: answering({ asked: [] }), ask: () => {}, settle: () => false }, { booted: 2, wakes: 0 });
  assert.deepEqual(Object.keys(e), Object.keys(r));
  assert.equal(e.booted, 0);
  counts.booted = 2;
  counts.wakes = 5;
  assert.equal(e.booted, 2);
  assert.equal(e.wakes, 5);
  assert.equal(e.answers!(1), true);
  assert.equal(e.answers!(0), false);
  asking.asked = [true, false];
  assert.equal(e.answers!(0), true, 'the imports asked are read at each call (the run sets them once the layers joined)');
});

test('a worker\'s result has every field in one order, whatever it reports', () => {
  const plain = encodeResult(0, 1, [[{ t: T_INT, v: 3 }]], new Float64Array(1), new Float64Array(1));
  const fedWaits = { none: 1, spun: 0, slept: 0, woke: 0 };
  const full = encodeResult(1, 2, [[{ t: T_INT, v: 4 }]], new Float64Array(1), new Float64Array(1), { fedWaits, idleSleeps: 2, gaps: { gapNs: 1.5, batchWaits: 0, batchWaitNs: 0.5, fedWaitNs: 0.5 } });
  const a = decodeResult(structuredClone(plain)), b = decodeResult(structuredClone(full));
  assert.deepEqual(Object.keys(a), Object.keys(b));
  assert.deepEqual(a.outs, [[{ t: T_INT, v: 3 }]]);
  assert.deepEqual(b.outs, [[{ t: T_INT, v: 4 }]]);
  assert.equal(b.idleSleeps, 2);
  assert.deepEqual(b.fedWaits, fedWaits);
  assert.equal(a.fedWaits, undefined);
});

// ------------------------------------------------------------------ through the CLI

// every call of a step leaves a mark in the file its run names: the rehearsal must leave none
const UCODES = `
import { appendFileSync } from 'node:fs';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  appendFileSync(process.env.STEP_MARKS!, '.');
  const until = performance.now() + 0.15;
  while (performance.now() < until) { /* ~150 µs: the steps stay on the workers */ }
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

test('a warm start rehearses while the workers boot, and runs and prints only what the real run does', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const steps = 100;
  const run = (env: NodeJS.ProcessEnv) => luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...env }, timeoutMs: 90_000 });
  const marks = { on: join(dir, 'on.marks'), off: join(dir, 'off.marks') };
  const [on, off] = await Promise.all([run({ STEP_MARKS: marks.on }), run({ LUNA_REHEARSE_CFS: '0', STEP_MARKS: marks.off })]);
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  }
  const timing = timingOf<{ rehearsedCfs?: number; rehearsals?: number; rehearsalMs?: number }>(on);
  assert.ok((timing.rehearsedCfs ?? 0) > 2 * steps, `the rehearsal went past the program's steps\n${describeRun(on)}`);
  assert.ok((timing.rehearsalMs ?? 0) > 0, `the rehearsal's time is printed\n${describeRun(on)}`);
  assert.equal(timingOf<{ rehearsedCfs?: number }>(off).rehearsedCfs, undefined, describeRun(off));
  // each step ran once, in the real run: none in the rehearsal
  assert.equal(readFileSync(marks.on, 'utf8').length, 2 * steps);
  assert.equal(readFileSync(marks.off, 'utf8').length, 2 * steps);
});

test('on one thread a warm start keeps the FIFO order: the run prints what and in the order it does without the rehearsal', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const steps = 60;
  const run = (env: NodeJS.ProcessEnv) => luna(['run', '--warm-start', '--timing', '--threads', '1', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...env }, timeoutMs: 90_000 });
  const marks = { on: join(dir, 'on1.marks'), off: join(dir, 'off1.marks') };
  const on = await run({ STEP_MARKS: marks.on });
  const off = await run({ LUNA_REHEARSE_CFS: '0', STEP_MARKS: marks.off });
  for (const r of [on, off]) assertOk(r);
  assert.ok((timingOf<{ rehearsedCfs?: number }>(on).rehearsedCfs ?? 0) > 0, `no rehearsal\n${describeRun(on)}`);
  assert.deepEqual(on.stdout.trim().split('\n').sort(), expected(steps), describeRun(on));
  assert.equal(on.stdout, off.stdout, `the order changed\n${describeRun(on)}\n${describeRun(off)}`);
  assert.equal(readFileSync(marks.on, 'utf8').length, 2 * steps);
});
