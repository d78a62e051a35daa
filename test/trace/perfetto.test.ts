// Chrome/Perfetto export of a hand-made two-node trace, read through the trace model.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { exportPerfetto, exportTables } from '../../src/trace/index.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import type { SiteInfo } from '../../src/trace/manifest.js';
import { manifest, tempDir } from './helpers.js';

interface Ev { ph: string; name: string; pid: number; tid: number; ts: number; dur?: number; id?: number; bp?: string; cat?: string; args?: Record<string, unknown> }

const SITES: SiteInfo[] = [
  { label: 'mul', code: 2, kind: 'call', file: 'test.fa', line: 7, col: 9, spawnNo: 0 },
  { label: 'sum', code: 3, kind: 'call', file: 'test.fa', line: 8, col: 9, spawnNo: 1 },
];

function buildTrace(dir: string): void {
  const m = manifest(2, 2, { sites: SITES });
  openTraceDir(dir, m);
  const w = (n: number, t: number): ThreadTraceWriter => ThreadTraceWriter.open(dir, n, t);
  const s0 = w(0, 0), w01 = w(0, 1), w02 = w(0, 2), s1 = w(1, 0), w11 = w(1, 1);
  s0.programStart(0);
  s0.cfCreated(10, 1, -1, 0, '1_0_0', [0]);
  s0.cfCreated(11, 2, -1, 1, '1_0_1', [0]);
  s0.cfCreated(12, 3, -1, 1, '1_1_1', [1]);
  s0.cfReady(20, 1);
  s0.readyQueue(20, 1);
  s0.sysBusy(5, 30);
  w01.cfStart(100, 1000, 1, 1);
  w01.cfFinish(200, 1080, 1, 1);
  const x = s0.dfName('x#0.3');
  s0.dfComputed(210, x, 1, 8);
  s0.liveBytes(210, 8);
  s0.cfInput(2, x);
  s0.cfReady(220, 2);
  s0.cfMigrate(225, 3, 1);
  s0.dfSendStart(230, x, 1, 8);
  s0.dfSendEnd(240, x, 1);
  s0.sysBusy(205, 245);
  w02.cfStart(300, 50, 2, 2);
  w02.cfFinish(400, 140, 2, 2);
  s1.dfName('other#1'); // so that x has a different number on node 1
  s1.cfReceive(226, 5, 0, 3, 1, '1_1_1', [1]);
  s1.cfCreated(227, 6, -1, 0, '1_1_0', [1]);
  const x1 = s1.dfName('x#0.3');
  s1.dfReceive(250, x1, 0, 8);
  s1.cfInput(5, x1);
  s1.cfReady(251, 5);
  s1.cfReady(252, 6);
  w11.cfStart(500, 0, 5, 1);
  w11.cfFinish(600, 90, 5, 1);
  // the system thread of node 1 runs CF 6 itself, on lane 2
  s1.cfStart(610, 10, 6, 2);
  s1.cfFinish(650, 50, 6, 2);
  s0.programFinish(700, 1);
  const all = [s0, w01, w02, s1, w11];
  for (const y of all) y.close();
  writeManifest(dir, { ...m, files: all.map((y) => ({ node: y.node, thread: y.thread, path: traceFileName(y.node, y.thread) })) });
}

test('Perfetto export: valid JSON, lane tracks, CFs and DFs named as the program names them, paired flows, counters', (t) => {
  const dir = tempDir(t);
  buildTrace(dir);
  const out = join(dir, 'run.json');
  const progress: [number, number][] = [];
  const r = exportPerfetto(dir, out, (done, estimate) => progress.push([done, estimate]));
  assert.deepEqual(r.warnings, []);
  // both exports read through readModel and tell its progress, to the end
  const tablesProgress: [number, number][] = [];
  exportTables(dir, join(dir, 'tables'), ['csv'], (done, estimate) => tablesProgress.push([done, estimate]));
  assert.ok(progress.at(-1)![0] > 0 && progress.at(-1)![0] === progress.at(-1)![1], JSON.stringify(progress));
  assert.deepEqual(tablesProgress.at(-1), progress.at(-1));
  const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: Ev[]; displayTimeUnit: string; metadata: Record<string, unknown> };
  const ev = doc.traceEvents;
  assert.equal(ev.length, r.events);
  assert.equal(doc.metadata.status, 'running'); // the manifest of this hand-made trace says nothing else
  for (const e of ev) {
    assert.equal(typeof e.ph, 'string');
    assert.equal(typeof e.pid, 'number');
    assert.equal(typeof e.tid, 'number');
    if (e.ph !== 'M') assert.equal(typeof e.ts, 'number');
  }
  const meta = ev.filter((e) => e.ph === 'M');
  for (const pid of [0, 1]) {
    assert.ok(meta.some((e) => e.name === 'process_name' && e.pid === pid && e.args?.name === `node ${pid}`));
    assert.ok(meta.some((e) => e.name === 'thread_name' && e.pid === pid && e.tid === 0 && e.args?.name === 'system'));
    assert.ok(meta.some((e) => e.name === 'thread_name' && e.pid === pid && e.tid === 2 && e.args?.name === 'lane 2'));
  }
  // CF slices: named label[indices]; code, global id, indices, position, CPU time in the arguments
  const x = ev.filter((e) => e.ph === 'X' && e.cat === 'cf');
  const mul0 = x.find((e) => e.name === 'mul[0]');
  assert.ok(mul0, x.map((e) => e.name).join());
  assert.deepEqual([mul0.pid, mul0.tid, mul0.ts, mul0.dur], [0, 1, 0.1, 0.1]);
  assert.deepEqual([mul0.args?.code, mul0.args?.gid, mul0.args?.indices, mul0.args?.at], ['mul', '1_0_0', [0], 'test.fa:7:9']);
  assert.equal(mul0.args?.cpu_us, 0.08);
  assert.equal(mul0.args?.wait_us, 0.08);
  const sum1 = x.find((e) => e.name === 'sum[1]');
  assert.ok(sum1 && sum1.pid === 1 && sum1.args?.gid === '1_1_1', 'the migrated CF is named on its new node');
  assert.deepEqual(sum1.args?.inputs, ['x[3]'], 'inputs named as the program names them');
  const inline = x.find((e) => e.name === 'mul[1]');
  assert.ok(inline && inline.pid === 1 && inline.tid === 2, 'a CF run by the system thread is drawn on its lane');
  // system busy slices on thread 0, counters per node, a transfer named after its DF
  assert.equal(ev.filter((e) => e.ph === 'X' && e.cat === 'system' && e.tid === 0).length, 2);
  assert.ok(ev.some((e) => e.ph === 'C' && e.name === 'ready queue' && e.args?.length === 1));
  assert.ok(ev.some((e) => e.ph === 'C' && e.name === 'live DF bytes' && e.args?.bytes === 8));
  assert.ok(ev.some((e) => e.ph === 'b' && e.cat === 'transfer' && e.name === 'send x[3] → node 1'));
  assert.ok(ev.some((e) => e.ph === 'i' && e.name === 'migrate sum[1] to node 1'));
  // flows: every start has exactly one finish with "bp":"e", each end inside its CF slice
  const s = ev.filter((e) => e.ph === 's');
  const f = ev.filter((e) => e.ph === 'f');
  assert.equal(s.length, 2, 'x flows to a local and a remote consumer');
  assert.equal(f.length, s.length);
  const inside = (e: Ev): boolean => x.some((sl) => sl.pid === e.pid && sl.tid === e.tid && sl.ts <= e.ts && e.ts <= sl.ts + sl.dur!);
  for (const st of s) {
    const fi = f.filter((e) => e.id === st.id);
    assert.equal(fi.length, 1);
    assert.equal(fi[0]!.bp, 'e');
    assert.equal(st.name, 'x[3]');
    assert.ok(inside(st) && inside(fi[0]!), 'flow ends bound to CF slices');
    assert.deepEqual([st.pid, st.tid], [0, 1], 'from the producer of x');
  }
  assert.deepEqual(f.map((e) => [e.pid, e.tid]).sort(), [[0, 2], [1, 1]], 'to the local and the remote consumer');
});
