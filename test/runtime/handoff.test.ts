// Hand-offs between workers: a dependent step's inputs go from the worker that made them to the
// worker that runs the step (forwarded within a lane, fed across lanes), not through the system
// thread, and a worker waiting for a fed value goes on spinning while its producer's lane runs a
// CF (the policy's `fedSpinProducerNs`), instead of sleeping and being woken by the producer.
// Real worker threads: the counts come from `--timing` (handWorker, handSystem, fedNone,
// fedSpun, fedSlept), and the values, hang and fault reports from the runs themselves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_ONLY, assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';

// Every CF does ~150 µs of work (tiny codes would run on the system thread); point 1 does `lag`
// µs more, so point 0's next step waits that long for point 1's value.
const UCODES = `
import { isMainThread } from 'node:worker_threads';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
const work = (us: number): void => { const until = performance.now() + us / 1000; while (performance.now() < until) { /* work */ } };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, lag: number, t: number, x: number, a: In, b: In, v: Out): void {
  work(150 + (x === 1 ? lag : 0));
  if (!isMainThread && kind === 'throw' && t >= 30 && x === 1) throw new Error('boom at step ' + t);
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;

const STENCIL = `import c_init(int \`x, name \`v) as init;
import c_step(string \`kind, int \`lag, int \`t, int \`x, value \`a, value \`b, name \`v) as step;
import c_print(int \`x, value \`v) as print;
sub main(int steps, string kind, int lag)
{
    df v;
    for x = 0..1 init(x, v[0][x]);
    for t = 1..steps {
        cf a[t]: step(kind, lag, t, 0, v[t-1][0], v[t-1][1], v[t][0]);
        cf b[t]: step(kind, lag, t, 1, v[t-1][0], v[t-1][1], v[t][1]);
    }
    for x = 0..1 print(x, v[steps][x]);
    CF_NEVER
}
`;

/** What the stencil prints, computed here. */
function expected(steps: number): string[] {
  let v = [1, 2];
  for (let t = 1; t <= steps; t++) v = [0, 1].map((x) => (3 * v[0]! + 5 * v[1]! + t + x) % 1000003);
  return v.map((y, x) => `v[${x}] = ${y}`);
}

interface Counts { sent: number; examined: number; handWorker: number; handSystem: number; fedNone: number; fedSpun: number; fedSlept: number; systemWakes: number; workerWakes: number; fedWaitNs: number; laneGapNs: number }

const counts = (r: Run): Counts => timingOf<Counts>(r);

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-handoff-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), STENCIL.replace('CF_NEVER', ''));
  // the same stencil, and a CF that waits for a step nobody computes
  writeFileSync(join(dir, 'never.fa'), STENCIL.replace('CF_NEVER', 'cf late: print(9, v[steps + 1][0]);'));
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (file: string, threads: number, steps: number, kind: string, lag: number, env: NodeJS.ProcessEnv = {}, opts: string[] = []): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', '--threads', String(threads), ...opts, join(dir, file), String(steps), kind, String(lag)], { env: { ...process.env, ...BOOT_ONLY, ...env }, timeoutMs: 90_000 });

test('a stencil on 2 workers: the right values, each step handed over by the workers, not the system thread', async () => {
  const steps = 150;
  // the fed path's hand-offs and examinations: a planned loop (node/loop-run.ts) examines no
  // step and counts its hand-offs per task, so plans off
  const fedPath = { LUNA_LOOP_PLANS: '0' };
  const [fed, unfed, one] = await Promise.all([
    run('stencil.fa', 2, steps, 'ok', 0, fedPath),
    run('stencil.fa', 2, steps, 'ok', 0, { ...fedPath, LUNA_FEED: '0' }),
    run('stencil.fa', 1, steps, 'ok', 0),
  ]);
  for (const r of [fed, unfed, one]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  }
  const c = counts(fed), u = counts(unfed);
  const steps2 = 2 * steps; // dependent CFs
  // every dependent CF went to a worker: handed by a worker or through the system thread
  assert.ok(c.handWorker + c.handSystem >= steps2 - 4 && c.handWorker + c.handSystem <= c.sent, describeRun(fed));
  // fed: nearly every step's inputs come from the workers (the first steps may go before any
  // batch is in flight to feed them)
  assert.ok(c.handSystem <= steps2 / 10, `handed by the system thread: ${c.handSystem} of ${steps2}\n${describeRun(fed)}`);
  // each fed input is waited for once: at least one per step that reads across lanes
  const waits = c.fedNone + c.fedSpun + c.fedSlept;
  assert.ok(waits >= steps && waits <= 2 * c.handWorker, `fed waits ${waits}\n${describeRun(fed)}`);
  // the workers time their waits for fed values: time passes exactly when the value was not
  // there yet, and it is part of the lanes' time between CFs
  assert.equal(c.fedWaitNs > 0, c.fedSpun + c.fedSlept > 0, describeRun(fed));
  assert.ok(c.fedWaitNs <= c.laneGapNs, describeRun(fed));
  assert.equal(u.fedWaitNs, 0, describeRun(unfed));
  // without feeding, the steps of the two lanes go through the system thread
  assert.equal(u.fedNone + u.fedSpun + u.fedSlept, 0, describeRun(unfed));
  assert.ok(u.handSystem >= steps / 2, `unfed: handed by the system thread ${u.handSystem}\n${describeRun(unfed)}`);
  // and only the system thread wakes a worker; fed, a worker wakes the other only with a value
  assert.equal(u.workerWakes, 0, describeRun(unfed));
  assert.ok(u.systemWakes > 0, describeRun(unfed));
  assert.ok(c.workerWakes <= waits, describeRun(fed));
  // the system thread examines each CF in full once: a fed step joins its batch from the task
  // it prepared when it parked (main, its loops and the CFs sent: a few more than those sent;
  // a loop going on unrolling, or a structured CF held back behind a batch, counts again each
  // time it is looked at, and the load decides how often: 314 for 304 sent was seen under the
  // whole suite on Node 24). Every step examined twice would read ~2 × sent.
  assert.ok(c.examined >= c.sent && c.examined <= c.sent + 24, `examined ${c.examined} for ${c.sent} sent\n${describeRun(fed)}`);
});

test('a worker waiting for a value its producer is still making spins through it rather than sleep', { skip: availableParallelism() < 2 ? 'one CPU: the policy never spins' : false }, async () => {
  // point 1 takes ~2 ms longer than point 0: point 0's next step waits ~2 ms for its value,
  // past the 200 µs fed spin; fed batches of 32 ms wake the system thread (which parks a
  // spinner) every ~15 steps only
  const steps = 120, lag = 2000;
  const [on, off] = await Promise.all([
    run('stencil.fa', 2, steps, 'ok', lag, { LUNA_FED_SPIN_PRODUCER_US: '100000' }),
    run('stencil.fa', 2, steps, 'ok', lag, { LUNA_FED_SPIN_PRODUCER_US: '0' }),
  ]);
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
  }
  const a = counts(on), b = counts(off);
  // without the spin, most of the waits for the slow point's value sleep
  assert.ok(b.fedSlept >= steps / 2, `without: ${b.fedSlept} slept\n${describeRun(off)}`);
  // with it, waits end while spinning. Not all: the system thread's turns park the spinner (the
  // node's threads outnumber its CPUs), and on a machine busy with other processes a spinner
  // that gets too little CPU stops (120 waits at a load of 16 on 2 cores: 36–55 spun, against
  // 2–4 without)
  assert.ok(a.fedSpun >= steps / 10 && a.fedSpun > 2 * b.fedSpun, `spun with the spin ${a.fedSpun}, without ${b.fedSpun}\n${describeRun(on)}\n${describeRun(off)}`);
});

test('a producer that throws while the other worker spins for its value fails the run, naming it', async () => {
  const r = await run('stencil.fa', 2, 200, 'throw', 2000, { LUNA_FED_SPIN_PRODUCER_US: '100000' });
  assertFails(r, [/exception in ucode c_step: boom at step (\d+)/, /in CF b\[\d+\] \(ucode c_step/]);
  assert.equal(/boom at step (\d+)/.exec(r.stderr)![1], /in CF b\[(\d+)\]/.exec(r.stderr)![1], describeRun(r));
  assert.doesNotMatch(r.stdout, /v\[/);
});

test('--cf-timeout stops a producer the other worker spins for, and blames the producer', async () => {
  // point 1's steps take 1.5 s: the watchdog stops the first one; the waiting worker runs no CF
  const r = await run('stencil.fa', 2, 20, 'ok', 1_500_000, { LUNA_FED_SPIN_PRODUCER_US: '100000000' }, ['--cf-timeout', '1s']);
  assertFails(r, [/was stopped after 1(\.00)? s \(--cf-timeout\) while running ucode c_step/, /in CF b\[\d+\]/]);
  assert.doesNotMatch(r.stderr, /in CF a\[/, describeRun(r));
});

test('a CF waiting for a step nobody computes is reported by name once the fed steps are done', async () => {
  const steps = 60;
  const r = await run('never.fa', 2, steps, 'ok', 0);
  assertFails(r, [/hang/i, /CF late \(ucode c_print, id [\d_]+\)[^\n]* at [^\n]*never\.fa:13:5[^\n]* waits for v\[61\]\[0\]/]);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(steps), describeRun(r));
});
