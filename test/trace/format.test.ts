// Writer → reader round trips, spills, merging, and damaged files.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { HEADER_BYTES } from '../../src/trace/format.js';
import { RECORDS, fixedSize } from '../../src/trace/schema.js';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { readTrace } from '../../src/trace/merge.js';
import { readThreadFile } from '../../src/trace/reader.js';
import { DF_IDS_KEPT, ThreadTraceWriter } from '../../src/trace/writer.js';
import { TraceModel } from '../../src/trace/model/model.js';
import type { DfRec } from '../../src/trace/model/records.js';
import { TraceFormatError, traceFileName } from '../../src/trace/index.js';
import type { TraceEvent } from '../../src/trace/schema.js';
import { collect, everyKind, manifest, rng, tempDir } from './helpers.js';

const ROOT_DIR = fileURLToPath(new URL('../../../', import.meta.url));

test('every event kind survives writer → reader', (t) => {
  const dir = tempDir(t);
  const w = ThreadTraceWriter.open(dir, 3, 2);
  const expected = everyKind(w, 3, 2, 1000);
  w.close();
  const f = readThreadFile(join(dir, traceFileName(3, 2)));
  assert.equal(f.header.node, 3);
  assert.equal(f.header.thread, 2);
  const warnings: string[] = [];
  assert.deepEqual(collect(readThreadFile(f.path, { warnings }).events), expected);
  assert.deepEqual(warnings, []);
  const kinds = new Set(expected.map((e) => e.kind));
  assert.equal(kinds.size, Object.keys(RECORDS).length, 'the fixture covers every record kind');
});

test('a wait whose CPU time was not measured (NaN) reads back as such; NaN elsewhere is a corrupted record', (t) => {
  const dir = tempDir(t);
  const w = ThreadTraceWriter.open(dir, 0, 1);
  w.wait(1000, 5000, NaN, 3, -1, 0, 'resource r');
  w.cfStart(6000, NaN, 3, 1);
  w.close();
  const warnings: string[] = [];
  const events = collect(readThreadFile(w.path, { warnings }).events);
  assert.equal(events.length, 1, JSON.stringify(events));
  const e = events[0] as TraceEvent & { cpu: number; end: number };
  assert.equal(e.kind, 'wait');
  assert.ok(Number.isNaN(e.cpu));
  assert.equal(e.end, 5000);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /cfStart record\): impossible field values/);
});

test('small buffer spills many times and small read chunks reassemble records', (t) => {
  const dir = tempDir(t);
  const w = ThreadTraceWriter.open(dir, 0, 1, { bufferBytes: 8192 });
  const expected: TraceEvent[] = [];
  for (let i = 0; i < 2000; i++) expected.push(...everyKind(w, 0, 1, i * 100000, i * 10));
  w.close();
  assert.ok(w.written > 40 * 8192, 'spilled many buffers');
  assert.equal(statSync(w.path).size, w.written);
  const got = collect(readThreadFile(w.path, { chunkBytes: 1 }).events); // chunk is raised to its minimum
  assert.deepEqual(got, expected);
  const avg = (w.written - HEADER_BYTES) / w.records;
  assert.ok(avg <= 32, `average record ${avg} bytes`);
});

test('long strings are cut, non-ASCII survives', (t) => {
  const dir = tempDir(t);
  const w = ThreadTraceWriter.open(dir, 0, 0);
  w.cfCreated(1, 1, 0, 0, 'g'.repeat(5000), Array.from({ length: 300 }, (_, i) => i));
  w.cfReceive(2, 1, 0, 0, 0, 'λ'.repeat(3000), null);
  w.close();
  const [e, r] = collect(readThreadFile(w.path).events);
  assert.equal(e?.kind, 'cfCreated');
  if (e?.kind !== 'cfCreated' || r?.kind !== 'cfReceive') return;
  assert.equal(e.gid, 'g'.repeat(1024));
  assert.deepEqual(e.labelIdx, Array.from({ length: 255 }, (_, i) => i));
  assert.equal(r.gid, 'λ'.repeat(512));
});

test('several files merge into one time-ordered stream (stable ties, late spans, every time offset: fields and untimed records)', (t) => {
  const dir = tempDir(t);
  openTraceDir(dir, manifest(2, 2));
  const files = [];
  const all: TraceEvent[] = [];
  const r = rng(7);
  for (const [node, thread] of [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]] as const) {
    const w = ThreadTraceWriter.open(dir, node, thread, { bufferBytes: 8192 });
    let tt = 0;
    for (let i = 0; i < 3000; i++) {
      const prev = tt; // when the previous record was written
      tt += Math.floor(r() * 50); // many equal times across files
      const off = node === 1 ? 1e6 : 0;
      if (thread === 1 && i % 120 === 119) {
        w.cfInput(i, 7); // untimed: stamped with the previous record's time, on this node's clock too
        all.push({ kind: 'cfInput', t: prev + off, cf: i, df: 7, node, thread });
        tt = prev;
      } else if (thread === 0 && i % 100 === 99) {
        w.sysBusy(tt - 2000, tt); // recorded at the end of the span, stamped with its start
        all.push({ kind: 'sysBusy', t: tt - 2000 + off, end: tt + off, node, thread });
      } else if (thread === 1 && i % 150 === 149) {
        w.wait(tt - 1500, tt, 3.5, i, -1, 6, 'r'); // a span too: both its times move with the offset
        all.push({ kind: 'wait', t: tt - 1500 + off, end: tt + off, cpu: 3.5, cf: i, rank: -1, waitKind: 6, resource: 'r', node, thread });
      } else {
        w.cfReady(tt, i);
        all.push({ kind: 'cfReady', t: tt + off, cf: i, node, thread } as TraceEvent);
      }
    }
    w.close();
    files.push({ node, thread, path: traceFileName(node, thread) });
  }
  writeManifest(dir, manifest(2, 2, { files, clock: { cpuExact: true, offsets: [0, 1e6] } }));
  const trace = readTrace(dir);
  const got = collect(trace.events);
  assert.deepEqual(trace.warnings, []);
  assert.equal(got.length, all.length);
  for (let i = 1; i < got.length; i++) {
    const a = got[i - 1]!, b = got[i]!;
    assert.ok(a.t < b.t || (a.t === b.t && (a.node < b.node || (a.node === b.node && a.thread <= b.thread))), `order at ${i}`);
  }
  // Same multiset of events, and per-file relative order of equal times preserved.
  const key = (e: TraceEvent): string => JSON.stringify(Object.entries(e).sort());
  assert.deepEqual(got.map(key).sort(), all.map(key).sort());
});

test('a DF the writer stopped numbering is named again, and both numbers mean the same DF', (t) => {
  const dir = tempDir(t);
  const sites = [{ label: 'use', code: 1, kind: 'call' as const, file: 'test.fa', line: 1, col: 1, spawnNo: 0 }];
  openTraceDir(dir, manifest(1, 1, { sites }));
  const w = ThreadTraceWriter.open(dir, 0, 0);
  let tt = 1;
  w.programStart(tt++);
  const reads = (cf: number, df: string): void => {
    w.cfCreated(tt++, cf, -1, 0, `g${cf}`, null);
    w.cfInput(cf, w.dfName(df));
    w.cfReady(tt++, cf);
    w.cfStart(tt++, 0, cf, 1);
    w.cfFinish(tt++, 1, cf, 1);
  };
  reads(0, 'a');
  reads(1, 'a'); // still numbered: no second dfName
  for (let i = 0; i < 2 * DF_IDS_KEPT; i++) w.dfComputed(tt++, w.dfName(`b${i}`), -1, 8);
  reads(2, 'a'); // evicted by 2 × DF_IDS_KEPT newer names
  w.programFinish(tt++, 0);
  w.close();
  writeManifest(dir, manifest(1, 1, { sites, files: [{ node: 0, thread: 0, path: traceFileName(0, 0) }] }));
  const trace = readTrace(dir);
  const inputs = new Map<number, readonly DfRec[]>();
  const model = new TraceModel(trace.manifest, [{ finish: (f, ins) => { inputs.set(f.cf, ins); } }]);
  let namesOfA = 0;
  for (const e of trace.events) {
    if (e.kind === 'dfName' && e.name === 'a') namesOfA++;
    model.push(e);
  }
  model.end();
  assert.equal(namesOfA, 2, 'named once per generation it was missing from');
  assert.deepEqual([...inputs.keys()], [0, 1, 2]);
  for (const ins of inputs.values()) assert.equal(ins.length, 1);
  assert.equal(inputs.get(0)![0]!.key, 'a');
  assert.equal(inputs.get(2)![0], inputs.get(0)![0], 'both numbers resolve to one DF');
  assert.deepEqual([...model.warnings.keys()], []);
});

test('a missing manifest file list falls back to the files found, with a warning', (t) => {
  const dir = tempDir(t);
  openTraceDir(dir, manifest(1, 1));
  const w = ThreadTraceWriter.open(dir, 0, 1);
  w.programStart(5);
  w.close();
  const trace = readTrace(dir);
  assert.equal(collect(trace.events).length, 1);
  assert.match(trace.warnings.join('\n'), /manifest lists no files/);
});

function writeSample(dir: string): { path: string; events: TraceEvent[] } {
  const w = ThreadTraceWriter.open(dir, 1, 1, { bufferBytes: 8192 });
  const events: TraceEvent[] = [];
  for (let i = 0; i < 50; i++) events.push(...everyKind(w, 1, 1, i * 1e5, i * 10));
  w.close();
  return { path: w.path, events };
}

test('truncated at random offsets: the valid prefix is kept and the cut is reported', (t) => {
  const dir = tempDir(t);
  const { path, events } = writeSample(dir);
  const bytes = readFileSync(path);
  const r = rng(42);
  const cut = join(dir, 'cut.lt');
  let reported = 0;
  for (let k = 0; k < 60; k++) {
    const n = HEADER_BYTES + Math.floor(r() * (bytes.length - HEADER_BYTES));
    writeFileSync(cut, bytes.subarray(0, n));
    const warnings: string[] = [];
    const got = collect(readThreadFile(cut, { warnings }).events);
    assert.deepEqual(got, events.slice(0, got.length), `prefix at cut ${n}`);
    if (warnings.length === 0) continue; // the cut fell on a record boundary
    reported++;
    assert.equal(warnings.length, 1);
    const m = /^cut\.lt: truncated at byte offset (\d+): the last (\d+) bytes/.exec(warnings[0]!);
    assert.ok(m, warnings[0]);
    assert.equal(Number(m[1]) + Number(m[2]), n, 'offset + bytes cut = file size');
  }
  assert.ok(reported > 40);
});

test('a corrupted kind byte stops the file at the last valid record, naming offset and kind', (t) => {
  const dir = tempDir(t);
  const { path, events } = writeSample(dir);
  const bytes = Buffer.from(readFileSync(path));
  // Records 0 and 1 of the sample are programStart and programFinish (fixed size): damage the third.
  const off = HEADER_BYTES + fixedSize(RECORDS.programStart) + fixedSize(RECORDS.programFinish);
  assert.deepEqual([events[0]!.kind, events[1]!.kind], ['programStart', 'programFinish']);
  bytes[off] = 0xee;
  writeFileSync(path, bytes);
  const warnings: string[] = [];
  const got = collect(readThreadFile(path, { warnings }).events);
  assert.deepEqual(got, events.slice(0, 2));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, new RegExp(`corrupted record at byte offset ${off}: unknown kind byte 238`));
});

test('an impossible value (NaN time) is reported with the record kind', (t) => {
  const dir = tempDir(t);
  const { path, events } = writeSample(dir);
  const bytes = Buffer.from(readFileSync(path));
  const off = HEADER_BYTES;
  bytes.writeDoubleLE(NaN, off + 1);
  writeFileSync(path, bytes);
  const warnings: string[] = [];
  const got = collect(readThreadFile(path, { warnings }).events);
  assert.equal(got.length, 0);
  assert.ok(events.length > 0);
  assert.match(warnings[0]!, /corrupted record at byte offset 32 \(a programStart record\): impossible field values/);
});

test('wrong magic, version or file kind: a clear TraceFormatError naming the file', (t) => {
  const dir = tempDir(t);
  const { path } = writeSample(dir);
  const good = readFileSync(path);
  const cases: [string, (b: Buffer) => void, RegExp][] = [
    ['version', (b) => b.writeUInt16LE(9, 8), /version 9 is not supported/],
    ['old version', (b) => b.writeUInt16LE(1, 8), /version 1 was written by an older luna-ts.*record the run again/],
    ['kind', (b) => b.writeUInt16LE(3, 10), /file kind 3 is not a per-thread event file/],
    ['magic', (b) => b.write('GARBAGE!', 0, 'latin1'), /not a luna-ts trace file/],
    ['short', () => undefined, /truncated header/],
  ];
  for (const [name, damage, re] of cases) {
    const b = Buffer.from(name === 'short' ? good.subarray(0, 12) : good);
    damage(b);
    writeFileSync(path, b);
    assert.throws(() => readThreadFile(path), (e: unknown) => {
      assert.ok(e instanceof TraceFormatError, name);
      assert.ok(e.message.startsWith(path), e.message);
      assert.match(e.message, re);
      return true;
    });
  }
  // In a directory, a file whose header is cut is damage: its records are left out, counted
  // with the file; a file of another format version stops the reader.
  writeManifest(dir, manifest(2, 1, { files: [{ node: 1, thread: 1, path: traceFileName(1, 1) }] }));
  const tr = readTrace(dir);
  assert.deepEqual(tr.damage.counts, { corrupted: 1 });
  assert.equal(tr.damage.examples[0]!.file, traceFileName(1, 1));
  assert.match(tr.damage.examples[0]!.detail, /truncated header/);
  const b = Buffer.from(good);
  b.writeUInt16LE(9, 8);
  writeFileSync(path, b);
  assert.throws(() => readTrace(dir), /version 9 is not supported/);
});

test('docs/trace-format.md lists every record kind exactly as the schema defines it', () => {
  const doc = readFileSync(join(ROOT_DIR, 'docs', 'trace-format.md'), 'utf8');
  const type = (t: string): string => (t === 'time' ? 'f64' : t);
  for (const [kind, d] of Object.entries(RECORDS) as [string, (typeof RECORDS)[keyof typeof RECORDS]][]) {
    const variable = d.fields.some(([, t]) => t === 'str' || t === 'ints');
    const fields = d.fields.map(([n, t]) => `${n} ${type(t)}`).join(', ');
    const row = `| ${d.code} | ${kind} | ${fixedSize(d)}${variable ? '+v' : ''} | ${fields} | ${d.doc} |`;
    assert.ok(doc.includes(row), `docs/trace-format.md lacks (or has a different) row for ${kind}:\n${row}`);
  }
  const rows = doc.split('\n').filter((l) => /^\| \d+ \| \w+ \|/.test(l));
  assert.equal(rows.length, Object.keys(RECORDS).length, 'the records table has rows the schema does not define');
});

test('no record has a field named like the envelope of a decoded event (kind, node, thread)', () => {
  for (const [kind, d] of Object.entries(RECORDS)) {
    for (const [f] of d.fields) assert.ok(!['kind', 'node', 'thread'].includes(f), `${kind}.${f} would be overwritten by the event's own ${f}`);
  }
});
