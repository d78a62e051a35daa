// The system thread as one of a node's lanes (LUNA_SYSTEM_LANE=1): `--threads 2` runs one worker
// thread and the system thread as lane 2. A two-wide stencil whose two columns feed each other across
// the two kinds of lane must compute what the program says (also when the system lane has to
// leave a wait for the worker's value to the event loop), record its CFs on both lanes, and fail
// cleanly — naming the fragment — when a CF throws on the system thread or the worker dies
// while the system lane waits for its value.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOT_ONLY, assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';
import { PROGRAM, expected } from './stencil2.js';

// ~150 µs of work per step keeps the CFs off the inline path (tiny codes run on the system
// thread whichever lane is idle). `kind` picks a misbehaviour from step 30 on, on one kind of thread.
const UCODES = `
import { isMainThread } from 'node:worker_threads';
type In = { getInt(): number };
type Out = { setInt(v: number): void };
const spin = (ms: number): void => { const until = performance.now() + ms; while (performance.now() < until) { /* work */ } };
export function c_init(x: number, v: Out): void { v.setInt(x + 1); }
export function c_step(kind: string, t: number, x: number, a: In, b: In, v: Out): void {
  spin(0.15);
  // the worker falls behind now and then, longer than the system lane spins for its value
  if (kind === 'lag' && !isMainThread && t % 25 === 0) spin(15);
  if (t >= 30 && kind === 'throw' && isMainThread) throw new Error('boom at step ' + t);
  if (t >= 30 && kind === 'exit' && !isMainThread) { spin(15); process.exit(3); }
  v.setInt((3 * a.getInt() + 5 * b.getInt() + t + x) % 1000003);
}
export function c_print(x: number, v: In): void { console.log('v[' + x + '] = ' + v.getInt()); }
`;


let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-syslane-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'stencil.fa'), PROGRAM);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

/** A run with the system thread as a lane (LUNA_SYSTEM_LANE=1) unless `env` says otherwise. */
const run = (opts: string[], steps: number, kind: string, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  luna(['run', '--warm-start', '--timing', ...opts, join(dir, 'stencil.fa'), String(steps), kind], { env: { ...process.env, ...BOOT_ONLY, LUNA_SYSTEM_LANE: '1', ...env }, timeoutMs: 90_000 });

/** CFs per lane in a trace (luna export tables). */
async function lanesOf(trace: string): Promise<Map<string, number>> {
  const out = join(trace, '..', 'tables');
  assertOk(await luna(['export', 'tables', trace, '-o', out]));
  const lines = readFileSync(join(out, 'fragments.csv'), 'utf8').trim().split('\n');
  const lane = lines[0]!.split(',').indexOf('lane');
  const n = new Map<string, number>();
  for (const l of lines.slice(1)) { const k = l.split(',')[lane]!; n.set(k, (n.get(k) ?? 0) + 1); }
  return n;
}

test('one node, 2 threads: one worker and the system thread as lane 2 compute the same stencil as two workers, fed across the two', async () => {
  const steps = 200, want = expected(steps);
  const trace = join(dir, 'run-trace');
  const [sys, lag, workers] = await Promise.all([
    run(['--threads', '2', '--trace', trace], steps, 'ok'),
    run(['--threads', '2'], steps, 'lag'),
    run(['--threads', '2'], steps, 'ok', { LUNA_SYSTEM_LANE: '0' }),
  ]);
  for (const r of [sys, lag, workers]) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
  }
  assert.equal(timingOf<{ workers: number }>(sys).workers, 1, describeRun(sys));
  assert.equal(timingOf<{ workers: number }>(workers).workers, 2, describeRun(workers));
  assert.ok(timingOf<{ fed: number }>(sys).fed > 0, `no batch was fed across the lanes\n${describeRun(sys)}`);
  // the system lane's CFs are recorded on a lane of their own, beside the worker's
  const lanes = await lanesOf(trace);
  assert.deepEqual([...lanes.keys()].sort(), ['1', '2'], JSON.stringify([...lanes]));
  assert.ok(lanes.get('2')! >= steps / 4, `the system lane ran ${lanes.get('2')} CFs of ${2 * steps + 4}`);
});

test('a CF that throws on the system lane fails the run, naming it', async () => {
  const r = await run(['--threads', '2'], 200, 'throw');
  assertFails(r, [/exception in ucode c_step: boom at step (\d+)/, /in CF [ab]\[\d+\] \(ucode c_step/]);
  assert.equal(/boom at step (\d+)/.exec(r.stderr)![1], /in CF [ab]\[(\d+)\]/.exec(r.stderr)![1], describeRun(r));
  assert.doesNotMatch(r.stdout, /v\[/);
});

test('a worker that dies while the system lane waits for its value fails the run, naming its CF', async () => {
  const r = await run(['--threads', '2'], 200, 'exit');
  assertFails(r, [/worker thread 1 of node 0 exited with code 3 while running ucode c_step/, /in CF [ab]\[\d+\]/]);
});

test('by default every lane is a worker\'s, on several nodes too', async () => {
  const one = await run(['--threads', '2'], 60, 'ok', { LUNA_SYSTEM_LANE: '' });
  assertOk(one);
  assert.equal(timingOf<{ workers: number }>(one).workers, 2, describeRun(one));
  const r = await run(['--nodes', '2', '--threads', '2'], 60, 'ok', { LUNA_SYSTEM_LANE: '' });
  assertOk(r);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), expected(60), describeRun(r));
  assert.equal(timingOf<{ workers: number }>(r).workers, 2, describeRun(r));
});
