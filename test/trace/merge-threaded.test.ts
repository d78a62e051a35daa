// Reading in a worker thread gives what reading on the calling thread gives: the same merged
// records in the same order, the same warnings and damage, the same model and the same export
// bytes, on a generated trace (many batches), a real run's trace and damaged traces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Worker } from 'node:worker_threads';
import { readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTraceColumns } from '../../src/trace/merge.js';
import { readTraceColumnsThreaded, type ThreadedReadOptions } from '../../src/trace/merge-threaded.js';
import { readModel } from '../../src/trace/read.js';
import { exportPerfettoProto } from '../../src/trace/export/perfetto-proto.js';
import type { TraceColumns } from '../../src/trace/merge.js';
import { generatedTrace, tempDir } from './helpers.js';

function rows(c: TraceColumns): string[] {
  const out: string[] = [];
  c.runs((b, from, to) => { for (let i = from; i < to; i++) out.push(JSON.stringify(b.event(i))); });
  return out;
}

/** Both readings of `dir`, compared record by record; the model's fragments, transfers and names too. */
function same(dir: string, opts: ThreadedReadOptions = {}): number {
  const a = readTraceColumns(dir), b = readTraceColumnsThreaded(dir, opts);
  assert.deepEqual(b.manifest, a.manifest);
  const ra = rows(a), rb = rows(b);
  assert.equal(rb.length, ra.length);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) assert.equal(rb[i], ra[i], `record ${i}`);
  assert.deepEqual(b.warnings, a.warnings);
  assert.deepEqual(b.damage.report(), a.damage.report());
  const model = (worker: boolean): unknown => {
    const got = { finished: [] as string[], transfers: [] as string[] };
    const r = readModel(dir, (m) => m.listen({
      finish: (f, inputs) => { got.finished.push(`${f.name}@${f.node}.${f.lane} ${f.start}-${f.finish} ${inputs.map((d) => d.name).join(',')}`); },
      transfer: (t) => { got.transfers.push(`${t.df.name} ${t.from}>${t.to} ${t.firstSend}-${t.arrive}`); },
    }), undefined, { worker });
    return { ...got, warnings: r.warnings(), damage: r.damage() };
  };
  const ma = model(false) as { finished: string[] }, mb = model(true);
  assert.deepEqual(mb, ma);
  assert.ok(ma.finished.length > 0, 'some fragments finished');
  return ra.length;
}

const generated = (t: { after(fn: () => void): void }, events: number): string => generatedTrace(t, events, 7);

test('a generated trace of many batches reads the same in a worker', (t) => {
  const n = same(generated(t, 60_000));
  assert.ok(n > 3 * 16384, `${n} records span several posted batches`);
});

test('strings cross by id: with a table of 7 ids, reused all the time, the records are the same', (t) => {
  same(generated(t, 40_000), { stringIds: 7 });
});

test('strings and int lists that overflow a batch\'s shared pools cross in its message, the records the same', (t) => {
  same(generated(t, 40_000), { pools: { textUnits: 200, ints: 40 } });
});

test('the Perfetto protobuf export is byte-identical with and without the worker', (t) => {
  const dir = generated(t, 20_000), out = tempDir(t);
  const before = process.env.LUNA_TRACE_WORKER;
  try {
    process.env.LUNA_TRACE_WORKER = '0';
    exportPerfettoProto(dir, join(out, 'a.pftrace'));
    process.env.LUNA_TRACE_WORKER = '1';
    exportPerfettoProto(dir, join(out, 'b.pftrace'));
  } finally {
    if (before === undefined) delete process.env.LUNA_TRACE_WORKER; else process.env.LUNA_TRACE_WORKER = before;
  }
  assert.ok(readFileSync(join(out, 'a.pftrace')).equals(readFileSync(join(out, 'b.pftrace'))));
});

test('a real run\'s trace reads the same in a worker', (t) => {
  const trace = join(tempDir(t), 'run.trace');
  const r = spawnSync(process.execPath, ['bin/luna', 'run', '--nodes', '2', '--threads', '1', '--trace', trace, 'examples/matmul/matmul_cyclic.fa', '32', '4'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  same(trace);
});

test('damaged traces (a cut file, overwritten bytes) read the same in a worker, damage and all', (t) => {
  const dir = generated(t, 30_000);
  const files = readdirSync(dir).filter((f) => f.endsWith('.lt')).sort();
  const cut = join(dir, files[0]!);
  truncateSync(cut, statSync(cut).size - 5);
  const hit = join(dir, files[1]!), b = readFileSync(hit);
  for (let p = b.length >> 1; p < (b.length >> 1) + 64; p++) b[p] = 0xff;
  writeFileSync(hit, b);
  same(dir);
  const d = readTraceColumnsThreaded(dir);
  rows(d);
  assert.ok(d.damage.total > 0, 'the damage is reported');
});

test('a directory that is not a trace fails as the reader fails', (t) => {
  const dir = tempDir(t);
  assert.throws(() => readTraceColumns(dir), (e: Error) => {
    assert.throws(() => readTraceColumnsThreaded(dir), (f: Error) => f.message === e.message && f.constructor === e.constructor);
    return true;
  });
});

test('a reading worker killed mid-read is an error naming the trace, not a wait for ever', (t) => {
  // more batches than the ring holds: the worker is still at work (or waiting for a free slot) when killed
  const dir = generated(t, 300_000);
  let worker: Worker | undefined;
  const c = readTraceColumnsThreaded(dir, { onWorker: (w) => { worker = w; } });
  let rowsSeen = 0;
  assert.throws(() => c.runs((_b, from, to) => {
    if (rowsSeen === 0) void worker!.terminate();
    rowsSeen += to - from;
  }), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'ETRACEWORKER');
    assert.ok(e.message.includes(dir), `names the trace: ${e.message}`);
    assert.match(e.message, /reading worker thread ended without finishing/);
    return true;
  });
  assert.ok(rowsSeen > 0 && rowsSeen < 300_000, `${rowsSeen} records read before the worker died`);
});

test('a model read whose reading worker dies fails with the trace named', (t) => {
  const dir = generated(t, 300_000);
  let worker: Worker | undefined, finished = 0;
  const before = process.env.LUNA_TRACE_WORKER;
  process.env.LUNA_TRACE_WORKER = '1';
  t.after(() => { if (before === undefined) delete process.env.LUNA_TRACE_WORKER; else process.env.LUNA_TRACE_WORKER = before; });
  assert.throws(() => readModel(dir, (m) => m.listen({ finish: () => { if (finished++ === 0) void worker!.terminate(); } }), undefined, { worker: true, onWorker: (w) => { worker = w; } }),
    (e: Error) => e.message.startsWith(`reading the trace ${dir}: its reading worker thread ended without finishing`));
  assert.ok(finished > 0);
});
