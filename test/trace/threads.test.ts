// Writers in real worker threads, and the thread CPU clock inside workers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { cpuClockExact, newRunOrigin, threadCpuNs } from '../../src/trace/clock.js';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { readTrace } from '../../src/trace/merge.js';
import { traceFileName } from '../../src/trace/format.js';
import { manifest, tempDir } from './helpers.js';

const fixture = new URL('./worker-fixture.js', import.meta.url);

function run<T>(data: object): Promise<T> {
  return new Promise((resolve, reject) => {
    const w = new Worker(fixture, { workerData: data });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

test('writers in concurrent worker threads each write their own file; the merge is ordered', async (t) => {
  const dir = tempDir(t);
  openTraceDir(dir, manifest(1, 3));
  const origin = newRunOrigin().toString();
  const n = 20000;
  const res = await Promise.all([1, 2, 3].map((thread) => run<{ records: number }>({ mode: 'write', dir, node: 0, thread, n, origin })));
  for (const r of res) assert.equal(r.records, 3 * n);
  writeManifest(dir, manifest(1, 3, { files: [1, 2, 3].map((thread) => ({ node: 0, thread, path: traceFileName(0, thread) })) }));
  const trace = readTrace(dir);
  let count = 0;
  let last = -Infinity;
  const perThread = new Map<number, number>();
  const open = new Map<number, { t: number; cpu: number }>();
  for (const e of trace.events) {
    count++;
    assert.ok(e.t >= last, 'merged stream in time order');
    last = e.t;
    perThread.set(e.thread, (perThread.get(e.thread) ?? 0) + 1);
    if (e.kind === 'cfStart') open.set(e.cf, { t: e.t, cpu: e.cpu });
    if (e.kind === 'cfFinish') {
      const s = open.get(e.cf);
      assert.ok(s, 'every finish has a start');
      assert.equal(Math.floor(e.cf / 1_000_000), e.thread);
      assert.ok(e.cpu >= s.cpu, 'thread CPU monotone');
      open.delete(e.cf);
    }
  }
  assert.deepEqual(trace.warnings, []);
  assert.equal(count, 9 * n);
  assert.equal(open.size, 0);
  assert.deepEqual([...perThread.entries()].sort(), [[1, 3 * n], [2, 3 * n], [3, 3 * n]]);
});

test('thread CPU clock: monotone and at most wall time for a busy loop inside a worker', async (t) => {
  const r = await run<{ exact: boolean; samples: number[]; cpu: number; wall: number }>({ mode: 'busy', origin: '0' });
  assert.equal(r.exact, cpuClockExact, 'the addon loads inside worker threads too');
  for (let i = 1; i < r.samples.length; i++) assert.ok(r.samples[i]! >= r.samples[i - 1]!, 'monotone');
  assert.ok(r.cpu > 0);
  // Both clocks count the same interval; allow for the clocks' read granularity only.
  assert.ok(r.cpu <= r.wall + 50_000, `cpu ${r.cpu} ns ≤ wall ${r.wall} ns`);
  if (!cpuClockExact) t.diagnostic('exact CPU clock unavailable: fallback tested');
});

test('thread CPU clock: a sleeping worker uses next to no CPU', { skip: !cpuClockExact && 'exact CPU clock unavailable' }, async () => {
  const r = await run<{ exact: boolean; cpu: number; wall: number }>({ mode: 'sleep', origin: '0' });
  assert.ok(r.wall >= 250e6, 'slept');
  assert.ok(r.cpu < r.wall / 10, `sleeping thread used ${r.cpu} ns of CPU in ${r.wall} ns`);
  // And the main thread's clock is its own: it is not the sum of all threads.
  assert.ok(threadCpuNs() >= 0);
});
