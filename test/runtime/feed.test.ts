// Feeding across lanes: a CF whose inputs are made by batches running on other workers is sent
// before they exist and the producers' workers send it the values. A two-wide stencil on real
// worker threads must compute what the program says with feeding and without, actually feed,
// and fail cleanly — naming the fragment — when a producer throws or its worker dies while
// another worker waits for its value.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_ONLY, assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';

// ~150 µs of work per step keeps the CFs on the workers (tiny codes run on the system thread).
const UCODES = `
import { isMainThread } from 'node:worker_threads';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  const until = performance.now() + 0.15;
  while (performance.now() < until) { /* work */ }
  // from step 30 on, on a worker (a lone CF may run on the system thread: it does not fault)
  if (!isMainThread && t >= 30 && x === 1) {
    if (kind === 'throw') throw new Error('boom at step ' + t);
    if (kind === 'exit') process.exit(3);
    if (kind === 'slow') { const t1 = performance.now() + 4000; while (performance.now() < t1) { /* too long */ } }
  }
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;


/** Batches sent ahead of their inputs, from --timing. */
function fed(r: Run): number {
  return timingOf<{ fed: number }>(r).fed;
}

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-feed-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'feed.fa'), PROGRAM);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** `luna run` of the stencil: `opts` before the program, `steps` and `kind` after it. */
const run = (opts: string[], steps: number, kind: string, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', ...opts, join(dir, 'feed.fa'), String(steps), kind], { env: { ...process.env, ...BOOT_ONLY, ...env }, timeoutMs: 90_000 });

test('a stencil on 2 and 3 threads computes the same with and without feeding, and feeds', async () => {
  const steps = 200, want = expected(steps);
  const [f2, f3, off, few] = await Promise.all([
    run(['--threads', '2'], steps, 'ok'),
    run(['--threads', '3'], steps, 'ok'),
    run(['--threads', '2'], steps, 'ok', { LUNA_FEED: '0' }),
    // fewer CFs waiting ahead than one per CF in flight: the loop still spawns whole iterations
    run(['--threads', '2'], steps, 'ok', { LUNA_WAIT_AHEAD_PER_CF: '0.5' }),
  ]);
  for (const r of [f2, f3, off, few]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  assert.ok(fed(f2) > 0, `2 threads fed no batch\n${describeRun(f2)}`);
  assert.ok(fed(f3) > 0, `3 threads fed no batch\n${describeRun(f3)}`);
  assert.equal(fed(off), 0, describeRun(off));
});

test('a step that reads one DF in two arguments is fed both, from the other lane', async () => {
  // column 1 reads column 0's value twice: two forwards of one pending key, fed from lane 0
  const twice = PROGRAM.replace('v[t-1][0], v[t-1][1], v[t][1]', 'v[t-1][0], v[t-1][0], v[t][1]');
  assert.notEqual(twice, PROGRAM);
  writeFileSync(join(dir, 'twice.fa'), twice);
  const steps = 200;
  const r = await luna(['run', '--warm-start', '--timing', '--threads', '2', join(dir, 'twice.fa'), String(steps), 'ok'], { env: { ...process.env, ...BOOT_ONLY }, timeoutMs: 90_000 });
  assertOk(r);
  let v = [1, 2];
  for (let t = 1; t <= steps; t++) v = [(3 * v[0]! + 5 * v[1]! + t) % 1000003, (8 * v[0]! + t + 1) % 1000003];
  assert.deepEqual(r.stdout.trim().split('\n').sort(), v.map((y, x) => `v[${x}] = ${y}`), describeRun(r));
  assert.ok(fed(r) > 0, `fed no batch\n${describeRun(r)}`);
});

test('the same on 2 nodes × 2 threads', async () => {
  const r = await run(['--nodes', '2', '--threads', '2'], 80, 'ok');
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(80), describeRun(r));
});

test('a producer that throws while another worker waits for its value fails the run, naming it', async () => {
  const r = await run(['--threads', '2'], 200, 'throw');
  assertFails(r, [/exception in ucode c_step: boom at step (\d+)/, /in CF b\[\d+\] \(ucode c_step/]);
  assert.equal(/boom at step (\d+)/.exec(r.stderr)![1], /in CF b\[(\d+)\]/.exec(r.stderr)![1], describeRun(r));
  assert.doesNotMatch(r.stdout, /v\[/);
});

test('--cf-timeout blames the slow producer, not the worker waiting for its value', async () => {
  const r = await run(['--threads', '2', '--cf-timeout', '1s'], 200, 'slow');
  assertFails(r, [/was stopped after 1(\.00)? s \(--cf-timeout\) while running ucode c_step/, /in CF b\[\d+\]/]);
  assert.doesNotMatch(r.stderr, /in CF a\[/, describeRun(r));
});

test('a producer whose worker dies while another waits for its value fails the run, naming it', async () => {
  const r = await run(['--threads', '2'], 200, 'exit');
  assertFails(r, [/worker thread \d of node 0 exited with code 3 while running ucode c_step/, /in CF b\[\d+\]/]);
});

test('a fed batch running low asks for the next one before its end, and the stencil computes the same', async () => {
  // each lane's fed batch holds many 150 µs steps: with 1 ms left it asks; with the ask off it never does
  // (the fed path's batches: a planned loop's windows go ahead of need, and its last one has the
  // CFs after the loop queued behind it, so none runs low with nothing queued)
  const steps = 300, want = expected(steps), fedPath = { LUNA_LOOP_PLANS: '0' };
  const [on, off] = await Promise.all([
    run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_RUN_LOW_US: '1000' }),
    run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_RUN_LOW_US: '0' }),
  ]);
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  assert.ok(fed(on) > 0, describeRun(on));
  assert.ok(timingOf<{ lows: number }>(on).lows > 0, `no batch ran low\n${describeRun(on)}`);
  assert.equal(timingOf<{ lows: number }>(off).lows, 0, describeRun(off));
});

test('a step parked after the batch making its input left is fed at once, and computes the same', async () => {
  // the loop unrolls its next steps while the lanes run the batches that feed them: each such
  // step parks on an output already sent, and is fed without waiting for that batch to return
  const steps = 400, want = expected(steps);
  // (the fed path's parked steps: a planned loop (node/loop-run.ts) parks none, so plans off)
  const fedPath = { LUNA_LOOP_PLANS: '0' };
  const [first, off] = await Promise.all([run(['--threads', '2'], steps, 'ok', fedPath), run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_FEED: '0' })]);
  let on = first;
  // whether a step parks after its producer's batch left is a race the loop's unrolling wins or
  // loses against the lanes: under a loaded machine's preemption (where the steps' measured time
  // can also make the node's fragments coarse and lower its lanes) a run may park none late, so
  // up to two more runs; a feeding that never feeds a late step fails all three
  for (let again = 0; again < 2 && !(timingOf<{ fedLate?: number }>(on).fedLate! > 0); again++) on = await run(['--threads', '2'], steps, 'ok', fedPath);
  for (const r of [on, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  const late = timingOf<{ fedLate?: number }>(on).fedLate;
  assert.ok(late !== undefined && late > 0, `no step parked late was fed in 3 runs\n${describeRun(on)}`);
  assert.equal(timingOf<{ fedLate?: number }>(off).fedLate, 0, describeRun(off));
});

test('a lane with little in flight gets a short fed batch first, the rest behind it, and the stencil computes the same', async () => {
  // on: 3 ms of 150 µs steps (20 CFs) go first to a lane holding under 1.5 ms, as the first fed
  // batches after the steps' cost is known (whether one is depends on when the cost comes: up to
  // six runs); off (`LUNA_FED_FIRST_US=0`), none is cut
  // (the fed path's batches: a planned loop (node/loop-run.ts) sends windows, never cut, so plans off)
  const steps = 300, want = expected(steps), fedPath = { LUNA_LOOP_PLANS: '0' };
  const [on, again, off] = await Promise.all([
    run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_FED_FIRST_US: '3000' }),
    run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_FED_FIRST_US: '3000' }),
    run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_FED_FIRST_US: '0' }),
  ]);
  for (const r of [on, again, off]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
    assert.ok(fed(r) > 0, describeRun(r));
  }
  const cut = (r: Run): number => timingOf<{ fedCut?: number }>(r).fedCut ?? -1;
  assert.equal(cut(off), 0, describeRun(off));
  // about 1 run in 6 has no lane nearly dry when a fed batch opens (measured unloaded, 12 runs):
  // up to 4 more runs, one at a time, before concluding that none is ever cut
  const tries = [on, again];
  while (tries.every((r) => cut(r) <= 0) && tries.length < 6) {
    const r = await run(['--threads', '2'], steps, 'ok', { ...fedPath, LUNA_FED_FIRST_US: '3000' });
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
    tries.push(r);
  }
  assert.ok(tries.every((r) => cut(r) >= 0) && tries.some((r) => cut(r) > 0), `no fed batch was sent short in ${tries.length} runs\n${tries.map(describeRun).join('\n')}`);
});
