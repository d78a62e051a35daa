// A CF fed across lanes: its executor records cfReady as it starts (the system thread never sees
// its inputs come). The model takes its readiness from its inputs instead, so the exports' ready
// time and SLOW's split (S until the last input existed, ready → start after) agree.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { readModel } from '../../src/trace/read.js';
import type { Fragment } from '../../src/trace/model/records.js';
import { exportTables } from '../../src/trace/export/tables.js';
import { exportPerfetto } from '../../src/trace/export/perfetto.js';
import { analyzeSlowTrace } from '../../src/analysis/slow/trace.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { manifest, tempDir } from './helpers.js';

/**
 * One node, two lanes. Lane 1 runs `early` [0, 10), making y, then idles until `use` [130, 180),
 * which reads x. Lane 2 runs `first` [0, 60), then `make` [60, 100), which reads y and makes x.
 * The system thread records y and x only when the batches come back (dfComputed stamped 10 and
 * 100, written after a record at 150). `make` and `use` are fed across lanes: their lane writes
 * their cfReady at their start (`atStart`), or the system thread saw them become ready (`make` at
 * 30, `use` at 110). `blind`: x's dfComputed is never written.
 */
function writeFed(dir: string, o: { atStart: boolean; blind?: boolean }): void {
  const labels = ['early', 'make', 'use', 'first'];
  const m = manifest(1, 2, {
    codes: labels, status: 'completed', clock: { cpuExact: true, offsets: [0] },
    sites: labels.map((label, code) => ({ label, code, kind: 'call' as const, file: 'fed.fa', line: code + 1, col: 5, spawnNo: code })),
  });
  openTraceDir(dir, m);
  const s = ThreadTraceWriter.open(dir, 0, 0), w1 = ThreadTraceWriter.open(dir, 0, 1), w2 = ThreadTraceWriter.open(dir, 0, 2);
  s.programStart(0);
  for (const cf of [1, 2, 3, 4]) s.cfCreated(0, cf, -1, cf - 1, `g${cf}`, null);
  s.cfReady(0, 1); s.cfReady(0, 4);
  s.cfInput(2, s.dfName('y#0'));
  s.cfInput(3, s.dfName('x#0'));
  w1.cfStart(0, 0, 1, 1); w1.cfFinish(10, 10, 1, 1);
  w2.cfStart(0, 0, 4, 2); w2.cfFinish(60, 60, 4, 2);
  if (o.atStart) w2.cfReady(60, 2); else s.cfReady(30, 2);
  w2.cfStart(60, 60, 2, 2); w2.cfFinish(100, 100, 2, 2);
  if (o.atStart) w1.cfReady(130, 3); else s.cfReady(110, 3);
  w1.cfStart(130, 10, 3, 1); w1.cfFinish(180, 60, 3, 1);
  s.readyQueue(150, 0);
  // the batches' results, after the record at 150
  s.dfComputed(10, s.dfName('y#0'), 1, 8);
  if (!o.blind) s.dfComputed(100, s.dfName('x#0'), 2, 8);
  s.programFinish(200, 1);
  for (const w of [s, w1, w2]) w.close();
  m.files = [0, 1, 2].map((thread) => ({ node: 0, thread, path: traceFileName(0, thread) }));
  writeManifest(dir, m);
}

/** Each CF's ready time as the model hands it to its listeners. */
function readyTimes(dir: string): Map<string, number> {
  const got = new Map<string, number>();
  readModel(dir, (m) => m.listen({ finish: (f: Fragment) => { got.set(f.label, f.ready); } }));
  return got;
}

test('a fed CF recorded ready at its start is ready when its last input was computed', (t) => {
  const dir = tempDir(t);
  writeFed(dir, { atStart: true });
  const ready = readyTimes(dir);
  assert.equal(ready.get('use'), 100, 'ready when make finished x, not at its own start (130)');
  assert.equal(ready.get('make'), 10, 'ready when early finished y, not at its own start (60)');
  assert.equal(ready.get('early'), 0);
  // SLOW: lane 1 idles [10, 130): S until x existed, ready → start after; the same split as the model's
  const r = analyzeSlowTrace(dir, { predict: false });
  const lane1 = r.perThread.find((x) => x.thread === 1)!;
  assert.deepEqual({ S: lane1.S, O: lane1.O, U: lane1.U }, { S: 90 + 20, O: 30, U: 10 + 50 });
  assert.equal(r.overhead.startDelay, 130 - ready.get('use')!, 'ready → start of SLOW is start − the model\'s ready');
  assert.equal(r.sum, r.tTotal);
  // the S [10, 100) waited for make: ready (10) and not started until 60, then running
  assert.deepEqual(r.blame.starvation.byProducerState, { notReady: 0, queued: 50, running: 40, unknown: 0 });
  // the exports read the same ready time
  const out = join(dir, 'tables');
  exportTables(dir, out);
  const rows = parse(readFileSync(join(out, 'fragments.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
  assert.equal(rows.find((x) => x.label === 'use')!.ready, '100');
  const pf = join(dir, 'trace.json');
  exportPerfetto(dir, pf);
  const ev = (JSON.parse(readFileSync(pf, 'utf8')) as { traceEvents: { ph: string; name: string; args?: { wait_us?: number } }[] }).traceEvents;
  assert.equal(ev.find((e) => e.ph === 'X' && e.name === 'use')!.args!.wait_us, 0.03);
});

test('a CF the system thread saw become ready keeps its recorded readiness', (t) => {
  const dir = tempDir(t);
  writeFed(dir, { atStart: false });
  const ready = readyTimes(dir);
  assert.equal(ready.get('use'), 110);
  assert.equal(ready.get('make'), 30);
  // the S [10, 100) waited for make: not ready until 30, queued until 60, then running
  const r = analyzeSlowTrace(dir, { predict: false });
  assert.deepEqual(r.blame.starvation.byProducerState, { notReady: 20, queued: 30, running: 40, unknown: 0 });
  assert.equal(r.overhead.startDelay, 30, 'SLOW\'s ready → start still from the inputs (x computed at 100)');
});

test('a fed CF whose inputs\' times are unknown keeps its recorded readiness', (t) => {
  const dir = tempDir(t);
  writeFed(dir, { atStart: true, blind: true });
  assert.equal(readyTimes(dir).get('use'), 130);
});
