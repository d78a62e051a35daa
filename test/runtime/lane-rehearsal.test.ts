// Workers rehearse their own per-CF path before they report ready (--warm-start): stand-ins for
// the ucodes; workers that feed each other rehearse together by default, each fed by another over
// flags, slots and ports of the rehearsal's own; a lone worker only when LUNA_LANE_REHEARSE_CFS
// asks, fed by a simulated peer lane. Nothing of it may reach the run: the ucodes run
// only in the real run, the output and the trace's fragments are those of a run without it, a
// fault in the real run is still reported and named, and a worker that dies meanwhile is
// reported as one that died booting, without the others waiting for it forever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';
import { fixture } from '../ucode/fixtures.js';
import { REHEARSE_CFS, REHEARSE_RUNS } from '../../src/runtime/policy/default.js';

// every call of a step leaves a mark in the file its run names: the rehearsal must leave none
const UCODES = `
import { appendFileSync } from 'node:fs';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  appendFileSync(process.env.STEP_MARKS!, '.');
  if (kind === 'throw' && t === 40 && x === 1) throw new Error('boom at step ' + t);
  const until = performance.now() + 0.15;
  while (performance.now() < until) { /* ~150 µs: the steps stay on the workers */ }
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

interface Timing { laneRehearsedCfs?: number; lanesRehearsedTogether?: number; laneRehearsalsCut?: number; laneRehearsalEndedSmall?: number; workers?: number }

// The system thread's rehearsal ends the workers' when it finds the program small (it ran to its
// end in each of its runs): the tests here whose subject is the workers' rehearsal turn the
// system thread's off, or run a program longer than a run of it.
const NO_SYSTEM_REHEARSAL = { LUNA_REHEARSE_CFS: '0' };

/** CFs per label in a trace (luna export tables). */
async function fragmentsOf(trace: string, out: string): Promise<string[]> {
  assertOk(await luna(['export', 'tables', trace, '-o', out, '--format', 'csv']));
  const lines = readFileSync(join(out, 'fragments.csv'), 'utf8').trim().split('\n');
  const head = lines[0]!.split(',');
  const label = head.indexOf('label'), indices = head.indexOf('indices');
  return lines.slice(1).map((l) => { const c = l.split(','); return `${c[label]}${c[indices]}`; }).sort();
}

test('two workers rehearse together before they are ready by default; the run calls its ucodes, prints and traces as without the rehearsal', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  // a program the system thread's rehearsal does not find small: its runs are cut before its end
  const steps = REHEARSE_CFS / REHEARSE_RUNS;
  const run = (name: string, env: NodeJS.ProcessEnv): Promise<Run> => luna(['run', '--warm-start', '--timing', '--threads', '2', '--trace', join(dir, `${name}.trace`), join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, STEP_MARKS: join(dir, `${name}.marks`), ...env }, timeoutMs: 120_000 });
  const [on, off] = await Promise.all([run('on', { LUNA_LANE_REHEARSE_CFS: undefined }), run('off', { LUNA_LANE_REHEARSE_CFS: '0' })]);
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  }
  const timing = timingOf<Timing>(on);
  assert.ok((timing.laneRehearsedCfs ?? 0) > 0, `no worker rehearsed\n${describeRun(on)}`);
  assert.equal(timing.lanesRehearsedTogether, 2, `the two workers rehearse together\n${describeRun(on)}`);
  assert.equal(timing.laneRehearsalEndedSmall, undefined, `not a small program\n${describeRun(on)}`);
  assert.equal(timingOf<Timing>(off).laneRehearsedCfs, undefined, describeRun(off));
  // each step ran once, in the real run: the stand-ins ran in the rehearsal, not the ucodes
  assert.equal(readFileSync(join(dir, 'on.marks'), 'utf8').length, 2 * steps);
  assert.equal(readFileSync(join(dir, 'off.marks'), 'utf8').length, 2 * steps);
  // the trace holds the program's fragments, each once, and nothing of the rehearsal
  const [a, b] = await Promise.all([fragmentsOf(join(dir, 'on.trace'), join(dir, 'on.tables')), fragmentsOf(join(dir, 'off.trace'), join(dir, 'off.tables'))]);
  assert.deepEqual(a, b);
  assert.equal(a.length, 2 + 2 * steps + 2, 'the program\'s atomic fragments: 2 inits, 2 a step, 2 prints');
});

test('without --warm-start no worker rehearses, whatever LUNA_LANE_REHEARSE_CFS says', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const r = await luna(['run', '--timing', '--threads', '2', join(dir, 'p.fa'), '30', 'ok'], { env: { ...process.env, STEP_MARKS: join(dir, 'marks'), LUNA_LANE_REHEARSE_CFS: '3000' }, timeoutMs: 90_000 });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(30), describeRun(r));
  assert.equal(timingOf<Timing>(r).laneRehearsedCfs, undefined, describeRun(r));
});

test('workers that do not feed each other (LUNA_FEED=0) rehearse alone only when asked, and the run calls each ucode once and prints as without', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const steps = 60;
  const unasked = await luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), '20', 'ok'], { env: { ...process.env, STEP_MARKS: join(dir, 'unasked.marks'), LUNA_FEED: '0', LUNA_LANE_REHEARSE_CFS: undefined }, timeoutMs: 90_000 });
  assertOk(unasked);
  assert.deepEqual(unasked.stdout.trim().split('\n').sort(), expected(20), describeRun(unasked));
  assert.equal(timingOf<Timing>(unasked).laneRehearsedCfs, undefined, `by default a worker does not rehearse alone\n${describeRun(unasked)}`);
  const r = await luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, STEP_MARKS: join(dir, 'marks'), LUNA_FEED: '0', LUNA_LANE_REHEARSE_CFS: '500' }, timeoutMs: 90_000 });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  const timing = timingOf<Timing>(r);
  assert.ok((timing.laneRehearsedCfs ?? 0) > 0, `no worker rehearsed\n${describeRun(r)}`);
  assert.equal(timing.lanesRehearsedTogether ?? 0, 0, `workers that do not feed each other rehearse alone\n${describeRun(r)}`);
  assert.equal(readFileSync(join(dir, 'marks'), 'utf8').length, 2 * steps);
});

test('after a rehearsal, a ucode that throws while the other worker waits for its value fails the run, naming it', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const r = await luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), '200', 'throw'], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, STEP_MARKS: join(dir, 'marks'), LUNA_LANE_REHEARSE_CFS: '3000' }, timeoutMs: 90_000 });
  assertFails(r, [/exception in ucode c_step: boom at step 40/, /in CF b\[40\] \(ucode c_step/]);
  assert.doesNotMatch(r.stdout, /v\[/);
});

test('three workers rehearse together, each fed by the next; the run calls each ucode once and prints as without', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const steps = 60;
  const r = await luna(['run', '--warm-start', '--timing', '--threads', '3', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, STEP_MARKS: join(dir, 'marks'), LUNA_LANE_REHEARSE_CFS: '2000', LUNA_LANE_REHEARSE_MS: '60000' }, timeoutMs: 120_000 });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  const timing = timingOf<Timing>(r);
  assert.equal(timing.lanesRehearsedTogether, 3, describeRun(r));
  assert.ok((timing.laneRehearsedCfs ?? 0) >= 3 * 100, describeRun(r));
  assert.equal(readFileSync(join(dir, 'marks'), 'utf8').length, 2 * steps);
});

// The first worker to load this module exits its thread at its 20th structuredClone: the
// rehearsal clones every batch it makes, the run itself clones nothing on a worker, so the
// thread dies inside the rehearsal, while the other worker waits for its values. The rehearsal's
// time is not what ends it here: on a loaded machine 1.5 s may not reach the 20th batch.
const DYING = `
import { isMainThread } from 'node:worker_threads';
import { openSync } from 'node:fs';
function claim(): boolean { try { openSync(process.env.DIE_CLAIM!, 'wx'); return true; } catch { return false; } }
if (!isMainThread && claim()) {
  const clone = globalThis.structuredClone;
  let n = 0;
  globalThis.structuredClone = ((v: unknown, o?: StructuredSerializeOptions) => { if (++n === 20) process.exit(7); return clone(v, o); }) as typeof structuredClone;
}
` + UCODES;

test('a worker that dies while the workers rehearse together is reported as at boot, and the other does not wait for it', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': DYING, 'p.fa': PROGRAM });
  const r = await luna(['run', '--warm-start', '--threads', '2', join(dir, 'p.fa'), '50', 'ok'], { env: { ...process.env, ...NO_SYSTEM_REHEARSAL, STEP_MARKS: join(dir, 'marks'), DIE_CLAIM: join(dir, 'claim'), LUNA_LANE_REHEARSE_CFS: '3000', LUNA_LANE_REHEARSE_MS: '60000' }, timeoutMs: 90_000 });
  assertFails(r, [/worker thread [12] of node 0 exited with code 7/]);
  assert.doesNotMatch(r.stderr, /while running ucode/, describeRun(r));
  assert.doesNotMatch(r.stdout, /v\[/);
  // no step ran: the run failed before its start
  assert.throws(() => readFileSync(join(dir, 'marks'), 'utf8'));
});

test('a program the system thread\'s rehearsal finds small ends the workers\' rehearsal, together or alone, and runs as without it', async (t) => {
  const dir = fixture(t, { 'ucodes.ts': UCODES, 'p.fa': PROGRAM });
  const steps = 20;
  // a count and a time the workers' rehearsal would take seconds to reach (LUNA_LANE_REHEARSE_CFS
  // also makes a worker that feeds no other rehearse alone): only the system thread's verdict
  // ends it before
  const lanes = { LUNA_LANE_REHEARSE_CFS: '100000', LUNA_LANE_REHEARSE_MS: '60000' };
  const run = (name: string, env: NodeJS.ProcessEnv): Promise<Run> => luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'p.fa'), String(steps), 'ok'], { env: { ...process.env, ...lanes, STEP_MARKS: join(dir, `${name}.marks`), ...env }, timeoutMs: 120_000 });
  const [together, alone] = await Promise.all([run('together', {}), run('alone', { LUNA_FEED: '0' })]);
  for (const [name, r] of [['together', together], ['alone', alone]] as const) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
    const timing = timingOf<Timing & { rehearsals?: number }>(r);
    assert.equal(timing.rehearsals, REHEARSE_RUNS, `the system thread rehearsed the program to its end in each run\n${describeRun(r)}`);
    assert.equal(timing.laneRehearsalEndedSmall, 1, `${name}: the system thread ended the workers' rehearsal\n${describeRun(r)}`);
    assert.equal(timing.laneRehearsalsCut, 2, `${name}: both workers' rehearsals ended before their count\n${describeRun(r)}`);
    assert.ok((timing.laneRehearsedCfs ?? 0) < 2 * 100_000, describeRun(r));
    assert.equal(readFileSync(join(dir, `${name}.marks`), 'utf8').length, 2 * steps);
  }
});
