// Chrome/Perfetto export of a hand-made two-node trace.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { exportPerfetto } from '../../src/trace/perfetto.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { manifest, tempDir } from './helpers.js';

interface Ev { ph: string; name: string; pid: number; tid: number; ts: number; dur?: number; id?: number; bp?: string; cat?: string; args?: Record<string, unknown> }

function buildTrace(dir: string): void {
  openTraceDir(dir, manifest(2, 2));
  const w = (n: number, t: number): ThreadTraceWriter => ThreadTraceWriter.open(dir, n, t);
  const s0 = w(0, 0), w01 = w(0, 1), w02 = w(0, 2), s1 = w(1, 0), w11 = w(1, 1);
  s0.programStart(0);
  s0.cfCreated(10, 1, -1, 2, '1_0', 'mul[0]');
  s0.cfCreated(11, 2, -1, 3, '1_1', 'sum[0]');
  s0.cfCreated(12, 3, -1, 3, '1_2', 'sum[1]');
  s0.cfReady(20, 1);
  s0.readyQueue(20, 1);
  s0.sysBusy(5, 30);
  w01.cfStart(100, 1000, 1);
  w01.cfFinish(200, 1080, 1);
  const x = s0.dfName('x');
  s0.dfComputed(210, x, 1, 8);
  s0.liveBytes(210, 8);
  s0.cfInput(2, x);
  s0.cfReady(220, 2);
  s0.cfMigrate(225, 3, 1);
  s0.dfSendStart(230, x, 1, 8);
  s0.dfSendEnd(240, x, 1);
  s0.sysBusy(205, 245);
  w02.cfStart(300, 50, 2);
  w02.cfFinish(400, 140, 2);
  s1.dfName('other'); // so that x has a different number on node 1
  s1.cfReceive(226, 5, 0, 3, '1_2', 3, 'sum[1]');
  s1.cfCreated(227, 6, -1, 2, '1_3', 'mul[1]');
  const x1 = s1.dfName('x');
  s1.dfReceive(250, x1, 0, 8);
  s1.cfInput(5, x1);
  s1.cfReady(251, 5);
  s1.cfReady(252, 6);
  w11.cfStart(500, 0, 5);
  w11.cfStart(550, 10, 6); // overlaps CF 5 on the same thread: must become an async slice
  w11.cfFinish(600, 90, 5);
  w11.cfFinish(650, 100, 6);
  s0.programFinish(700);
  const all = [s0, w01, w02, s1, w11];
  for (const x of all) x.close();
  writeManifest(dir, manifest(2, 2, { files: all.map((x) => ({ node: x.node, thread: x.thread, path: traceFileName(x.node, x.thread) })) }));
}

test('Perfetto export: valid JSON, named tracks, CF slices, paired flows, counters', async (t) => {
  const dir = tempDir(t);
  buildTrace(dir);
  const out = join(dir, 'run.json');
  const r = await exportPerfetto(dir, out);
  assert.deepEqual(r.warnings, []);
  const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: Ev[]; displayTimeUnit: string };
  const ev = doc.traceEvents;
  assert.equal(ev.length, r.events);
  for (const e of ev) {
    assert.equal(typeof e.ph, 'string');
    assert.equal(typeof e.pid, 'number');
    assert.equal(typeof e.tid, 'number');
    if (e.ph !== 'M') assert.equal(typeof e.ts, 'number');
  }
  // Metadata: process and thread names for both nodes.
  const meta = ev.filter((e) => e.ph === 'M');
  for (const pid of [0, 1]) {
    assert.ok(meta.some((e) => e.name === 'process_name' && e.pid === pid && e.args?.name === `node ${pid}`));
    assert.ok(meta.some((e) => e.name === 'thread_name' && e.pid === pid && e.tid === 0 && e.args?.name === 'system'));
    assert.ok(meta.some((e) => e.name === 'thread_name' && e.pid === pid && e.tid === 1 && e.args?.name === 'worker 1'));
  }
  // CF slices: name = code + label, args gid and CPU time.
  const x = ev.filter((e) => e.ph === 'X' && e.cat === 'cf');
  const mul0 = x.find((e) => e.name === 'mul mul[0]');
  assert.ok(mul0);
  assert.deepEqual([mul0.pid, mul0.tid, mul0.ts, mul0.dur], [0, 1, 0.1, 0.1]);
  assert.equal(mul0.args?.gid, '1_0');
  assert.equal(mul0.args?.cpu_us, 0.08);
  assert.equal(mul0.args?.wait_us, 0.08);
  assert.ok(x.some((e) => e.name === 'sum sum[1]' && e.pid === 1 && e.args?.gid === '1_2'), 'migrated CF named on its new node');
  // The overlapping CF became an async pair.
  const b = ev.filter((e) => e.ph === 'b' && e.cat === 'cf');
  assert.equal(b.length, 1);
  assert.ok(ev.some((e) => e.ph === 'e' && e.id === b[0]!.id));
  // System busy slices on thread 0, counters per node, a transfer.
  assert.equal(ev.filter((e) => e.ph === 'X' && e.cat === 'system' && e.tid === 0).length, 2);
  assert.ok(ev.some((e) => e.ph === 'C' && e.name === 'ready queue' && e.args?.length === 1));
  assert.ok(ev.some((e) => e.ph === 'C' && e.name === 'live DF bytes' && e.args?.bytes === 8));
  assert.ok(ev.some((e) => e.ph === 'b' && e.cat === 'transfer'));
  // Flows: every start has exactly one finish with "bp":"e", each end inside its CF slice.
  const s = ev.filter((e) => e.ph === 's');
  const f = ev.filter((e) => e.ph === 'f');
  assert.equal(s.length, 2, 'x flows to a local and a remote consumer');
  assert.equal(f.length, s.length);
  const inside = (e: Ev): boolean => x.some((sl) => sl.pid === e.pid && sl.tid === e.tid && sl.ts <= e.ts && e.ts <= sl.ts + sl.dur!);
  for (const st of s) {
    const fi = f.filter((e) => e.id === st.id);
    assert.equal(fi.length, 1);
    assert.equal(fi[0]!.bp, 'e');
    assert.equal(fi[0]!.cat, st.cat);
    assert.ok(inside(st) && inside(fi[0]!), 'flow ends bound to CF slices');
    assert.deepEqual([st.pid, st.tid], [0, 1], 'from the producer of x');
  }
  assert.deepEqual(f.map((e) => [e.pid, e.tid]).sort(), [[0, 2], [1, 1]], 'to the local and the remote consumer');
});
