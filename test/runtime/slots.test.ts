// Workers handing each other what they make: fed ints and reals through the shared feed slots
// (one ring per pair of lanes; a consumer takes its value straight from the ring's next entry),
// other values through the pair's port, and fed batches long
// enough that the system thread learns of a stencil's steps in batches. The ring on its own
// (full, wrap-around of its counts, across real threads); then a two-wide stencil on real worker
// threads with each kind of value: what it computes, that it fed in long batches, and that a
// fault and a hang are still reported naming the fragment.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FeedSlots, RING, feedSlotsBuffer } from '../../src/runtime/exec/slots.js';
import { T_INT, T_REAL, type DfValue } from '../../src/ucode/value.js';
import { BOOT_ONLY, assertFails, assertOk, describeRun, luna, timingOf, type Run } from './helpers.js';

const real = (v: number): DfValue => ({ t: T_REAL, v });

test('a ring takes what fits until it is full, and gives it back in order', () => {
  const buf = feedSlotsBuffer(3);
  const a = new FeedSlots(buf, 3, 0), b = new FeedSlots(buf, 3, 2);
  assert.ok(FeedSlots.fits(null) && FeedSlots.fits(real(1)) && FeedSlots.fits({ t: T_INT, v: 3 }));
  assert.ok(!FeedSlots.fits({ t: 3, v: 'text' } as DfValue), 'strings go as messages');
  for (let i = 0; i < RING; i++) assert.ok(a.put(2, 7, i, i & 1, i === 5 ? null : i === 6 ? { t: T_INT, v: -6 } : real(i / 4)), `entry ${i}`);
  assert.equal(a.put(2, 7, RING, 0, real(0)), false, 'full');
  const got: [number, number, number, DfValue | null][] = [];
  b.drain(1, () => assert.fail('nothing came from lane 1'));
  b.drain(0, (bt, t, o, v) => got.push([bt, t, o, v]));
  assert.equal(got.length, RING);
  got.forEach(([bt, t, o, v], i) => {
    assert.deepEqual([bt, t, o], [7, i, i & 1]);
    assert.deepEqual(v, i === 5 ? null : i === 6 ? { t: T_INT, v: -6 } : real(i / 4));
  });
  assert.ok(a.put(2, 8, 0, 0, real(2.5)), 'room again once drained');
  const more: DfValue[] = [];
  b.drain(0, (_b, _t, _o, v) => more.push(v!));
  assert.deepEqual(more, [real(2.5)]);
  new FeedSlots(buf, 3, 1).drain(0, () => assert.fail('lane 1 got what was put for lane 2'));
});

test('a consumer takes its value when it is the ring\'s next entry, and nothing otherwise', () => {
  const buf = feedSlotsBuffer(2);
  const a = new FeedSlots(buf, 2, 0), b = new FeedSlots(buf, 2, 1);
  assert.equal(b.takeHead(0, 7, 0, 0), undefined, 'an empty ring');
  a.put(1, 7, 0, 0, real(1.5));
  a.put(1, 7, 1, 0, null);
  assert.equal(b.takeHead(0, 7, 1, 0), undefined, 'not the next entry: nothing taken');
  assert.equal(b.takeHead(0, 8, 0, 0), undefined, 'another batch');
  assert.equal(b.takeHead(0, 7, 0, 1), undefined, 'another output');
  assert.deepEqual(b.takeHead(0, 7, 0, 0), real(1.5));
  assert.equal(b.takeHead(0, 7, 1, 0), null, 'an unset output, now the next entry');
  assert.equal(b.takeHead(0, 7, 1, 0), undefined, 'taken once');
  a.put(1, 7, 2, 0, { t: T_INT, v: 4 });
  const rest: number[] = [];
  b.drain(0, (_bt, t) => rest.push(t));
  assert.deepEqual(rest, [2], 'what was taken is not drained again');
});

test('a ring keeps working when its counts wrap around', () => {
  const buf = feedSlotsBuffer(2);
  // ring (0 → 1) keeps its write and read counts at Int32 indices 2 and 3: just below the wrap
  const counts = new Int32Array(buf, 0, 4);
  counts[2] = counts[3] = 2 ** 31 - 5;
  const a = new FeedSlots(buf, 2, 0), b = new FeedSlots(buf, 2, 1);
  const got: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < RING; i++) assert.ok(a.put(1, round, i, 0, real(round * 1000 + i)));
    assert.equal(a.put(1, round, RING, 0, real(0)), false);
    b.drain(0, (_b, _t, _o, v) => got.push(v!.v as number));
  }
  assert.deepEqual(got, Array.from({ length: 3 * RING }, (_, k) => Math.floor(k / RING) * 1000 + (k % RING)));
});

test('between real threads, every value arrives once and in order', async () => {
  const lanes = 2, n = 20_000, buf = feedSlotsBuffer(lanes);
  const url = new URL('../../src/runtime/exec/slots.js', import.meta.url).href;
  // the producer spins while the ring is full; the consumer checks order and values
  const producer = `const { workerData: d, parentPort } = require('node:worker_threads');
    import(d.url).then(({ FeedSlots }) => {
      const s = new FeedSlots(d.buf, 2, 0);
      for (let i = 0; i < d.n; i++) while (!s.put(1, i >> 8, i & 255, 0, { t: 2, v: i * 0.5 })) {}
      parentPort.postMessage('done');
    });`;
  const consumer = `const { workerData: d, parentPort } = require('node:worker_threads');
    import(d.url).then(({ FeedSlots }) => {
      const s = new FeedSlots(d.buf, 2, 1);
      let k = 0, bad = '';
      while (k < d.n && !bad) s.drain(0, (b, t, o, v) => {
        if (bad) return;
        if (b !== k >> 8 || t !== (k & 255) || o !== 0 || v.t !== 2 || v.v !== k * 0.5) bad = 'entry ' + k + ': ' + JSON.stringify([b, t, o, v]);
        k++;
      });
      parentPort.postMessage(bad || k);
    });`;
  const run = (code: string): Promise<unknown> => new Promise((res, rej) => {
    const w = new Worker(code, { eval: true, workerData: { url, buf, n } });
    w.once('message', (m) => { res(m); void w.terminate(); });
    w.once('error', rej);
  });
  const [p, c] = await Promise.all([run(producer), run(consumer)]);
  assert.equal(p, 'done');
  assert.equal(c, n);
});

// ~1 ms of work per step keeps the CFs on the workers (tiny codes run on the system thread)
const UCODES = `
import { isMainThread } from 'node:worker_threads';
type In = { getInt(): number; getReal(): number; getString(): string };
type Out = { setInt(v: number): void; setReal(v: number): void; setString(v: string): void };
const read = (kind: string, d: In): number => kind === 'real' ? d.getReal() : kind === 'int' ? d.getInt() : Number(d.getString());
function write(kind: string, d: Out, v: number): void { if (kind === 'real') d.setReal(v); else if (kind === 'int') d.setInt(v); else d.setString(String(v)); }
export function c_init(kind: string, x: number, v: Out): void { write(kind, v, x + 1); }
export function c_step(kind: string, fail: number, t: number, x: number, a: In, b: In, v: Out): void {
  const until = performance.now() + 1;
  while (performance.now() < until) { /* work */ }
  if (!isMainThread && fail > 0 && t >= fail && x === 1) throw new Error('bad step ' + t);
  write(kind, v, (3 * read(kind, a) + 5 * read(kind, b) + t + x) % 1000003);
}
export function c_print(kind: string, x: number, v: In): void { console.log('v[' + x + '] = ' + read(kind, v)); }
`;

// `late` > 0: the prints wait for a step that is never made (a hang)
const PROGRAM = `import c_init(string \`kind, int \`x, name \`v) as init;
import c_step(string \`kind, int \`fail, int \`t, int \`x, value \`a, value \`b, name \`v) as step;
import c_print(string \`kind, int \`x, value \`v) as print;
sub main(int steps, string kind, int fail, int late)
{
    df v;
    for x = 0..1 init(kind, x, v[0][x]);
    for t = 1..steps {
        cf a[t]: step(kind, fail, t, 0, v[t-1][0], v[t-1][1], v[t][0]);
        cf b[t]: step(kind, fail, t, 1, v[t-1][0], v[t-1][1], v[t][1]);
    }
    for x = 0..1 {
        cf show[x]: print(kind, x, v[steps + late][x]);
    }
}
`;

// the same steps on node 0's two workers, and node 1 reading column 0 at every step
const REMOTE = `import c_init(string \`kind, int \`x, name \`v) as init;
import c_step(string \`kind, int \`fail, int \`t, int \`x, value \`a, value \`b, name \`v) as step;
import c_print(string \`kind, int \`x, value \`v) as print;
sub main(int steps, string kind)
{
    df v;
    for x = 0..1 {
        cf i[x]: init(kind, x, v[0][x]) @ { locator_cyclic: 0; };
    }
    for t = 1..steps {
        cf a[t]: step(kind, 0, t, 0, v[t-1][0], v[t-1][1], v[t][0]) @ { locator_cyclic: 0; };
        cf b[t]: step(kind, 0, t, 1, v[t-1][0], v[t-1][1], v[t][1]) @ { locator_cyclic: 0; };
        cf p[t]: print(kind, t, v[t][0]) @ { locator_cyclic: 1; };
    }
}
`;

function expected(steps: number): string[] {
  let v = [1, 2];
  for (let t = 1; t <= steps; t++) v = [0, 1].map((x) => (3 * v[0]! + 5 * v[1]! + t + x) % 1000003);
  return v.map((y, x) => `v[${x}] = ${y}`);
}

function timing(r: Run): { fed: number; batches: number; sent: number } {
  return timingOf<{ fed: number; batches: number; sent: number }>(r);
}

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'luna-slots-'));
  writeFileSync(join(dir, 'ucodes.ts'), UCODES);
  writeFileSync(join(dir, 'slots.fa'), PROGRAM);
  writeFileSync(join(dir, 'remote.fa'), REMOTE);
});
after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

const run = (steps: number, kind: string, o: { fail?: number; late?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Run> =>
  luna(['run', '--threads', '2', '--warm-start', '--timing', join(dir, 'slots.fa'), String(steps), kind, String(o.fail ?? 0), String(o.late ?? 0)],
    { env: { ...process.env, ...BOOT_ONLY, ...o.env }, timeoutMs: 120_000 });

test('a stencil of reals, ints and strings computes the same with the slots and without, fed in long batches', async () => {
  const steps = 120, want = expected(steps);
  // long fed batches whatever the machine's load does to the measured cost of a step
  const env = { LUNA_FED_RUN_MS: '1000' };
  const runs = await Promise.all([
    run(steps, 'real', { env }), run(steps, 'int', { env }), run(steps, 'string', { env }),
    run(steps, 'real', { env: { ...env, LUNA_FEED_SLOTS: '0' } }),
  ]);
  for (const r of runs) {
    assertOk(r);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), want, describeRun(r));
    const t = timing(r);
    assert.ok(t.fed > 0, `fed no batch\n${describeRun(r)}`);
    // sized as other batches (8 ms of work), the 244 CFs went as ~58 batches here
    assert.ok(t.batches * 10 <= t.sent, `the system thread was sent ${t.batches} batches for ${t.sent} CFs\n${describeRun(r)}`);
  }
});

test('a producer that throws inside a long fed batch fails the run, naming its fragment', async () => {
  const r = await run(120, 'real', { fail: 57, env: { LUNA_FED_RUN_MS: '1000' } });
  assertFails(r, [/exception in ucode c_step: bad step \d+/, /in CF b\[\d+\] \(ucode c_step/]);
  // (on a worker: a lone CF the system thread ran itself would not throw)
  const step = Number(/bad step (\d+)/.exec(r.stderr)![1]);
  assert.ok(step >= 57, describeRun(r));
  assert.match(r.stderr, new RegExp(`in CF b\\[${step}\\]`), describeRun(r));
  assert.doesNotMatch(r.stdout, /v\[/);
});

test('fragments waiting for a step never made are named in the hang report after the fed steps ran', async () => {
  const r = await run(60, 'real', { late: 1, env: { LUNA_FED_RUN_MS: '1000' } });
  assertFails(r, [/hangs/, /CF show\[0\] \(ucode c_print[^\n]* waits for v\[61\]\[0\]/, /CF show\[1\] \(ucode c_print[^\n]* waits for v\[61\]\[1\]/]);
  assert.ok(timing(r).fed > 0, describeRun(r));
  assert.doesNotMatch(r.stderr, /CF [ab]\[/, 'every step ran');
});

test('fed batches whose outputs another node reads stay short, and that node reads every step', async () => {
  const steps = 100;
  const r = await luna(['run', '--nodes', '2', '--threads', '2', '--warm-start', '--timing', join(dir, 'remote.fa'), String(steps), 'real'],
    { env: { ...process.env, ...BOOT_ONLY, LUNA_FED_RUN_MS: '1000' }, timeoutMs: 120_000 });
  assertOk(r);
  let v = [1, 2];
  const want: string[] = [];
  for (let t = 1; t <= steps; t++) { v = [0, 1].map((x) => (3 * v[0]! + 5 * v[1]! + t + x) % 1000003); want.push(`v[${t}] = ${v[0]}`); }
  assert.deepEqual(r.stdout.trim().split('\n').sort(), want.sort(), describeRun(r));
  const t = timing(r);
  assert.ok(t.fed > 0, describeRun(r));
  // 1 000 ms of fed work a batch would hold every step (one batch per lane); node 1 would then see
  // v[t][0] a batch late. Short batches hold BATCH_NS of work: 8–25 CFs of this size, by the speed
  // of the machine and Node (at least 6 batches for the 202 CFs)
  assert.ok(t.batches * 40 > t.sent, `${t.batches} batches for ${t.sent} CFs\n${describeRun(r)}`);
});
