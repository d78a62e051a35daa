// The trace model's extension points: resolvers registered per record kind, per-listener slots on
// fragments, and readModel, the one read loop of the commands.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { TraceModel, type ModelListener } from '../../src/trace/model/model.js';
import type { Fragment, Wait } from '../../src/trace/model/records.js';
import { readModel } from '../../src/trace/read.js';
import type { TraceEvent } from '../../src/trace/schema.js';
import { manifest, tempDir } from './helpers.js';

const run = (): TraceEvent[] => [
  { kind: 'programStart', t: 0, node: 0, thread: 0 },
  { kind: 'cfCreated', t: 1, node: 0, thread: 0, cf: 5, parentCf: -1, site: -1, gid: 'g5', labelIdx: [] },
  { kind: 'cfStart', t: 2, node: 0, thread: 1, cpu: 0, cf: 5, lane: 1 },
  { kind: 'wait', t: 3, node: 0, thread: 1, end: 7, cpu: 1, cf: 5, rank: -1, waitKind: 1, resource: 'blocks[2]' },
  { kind: 'cfFinish', t: 9, node: 0, thread: 1, cpu: 6, cf: 5, lane: 1 },
  { kind: 'wait', t: 10, node: 0, thread: 1, end: 12, cpu: NaN, cf: -1, rank: 3, waitKind: 3, resource: 'b.ts:40' },
  { kind: 'programFinish', t: 20, node: 0, thread: 0, status: 1 },
];

test('waits are resolved to the fragment that waited (or the rank) and its lane', () => {
  const m = new TraceModel(manifest(1, 2));
  const got: Wait[] = [];
  m.listen({ wait: (w) => got.push(w) });
  for (const e of run()) m.push(e);
  m.end();
  assert.equal(got.length, 2);
  assert.equal(got[0]!.fragment?.gid, 'g5');
  assert.deepEqual({ ...got[0]!, fragment: null }, { node: 0, thread: 1, slot: 0, fragment: null, rank: -1, kind: 'descriptor', resource: 'blocks[2]', start: 3, end: 7, cpu: 1 });
  assert.deepEqual({ ...got[1]!, cpu: 0 }, { node: 0, thread: 1, slot: 0, fragment: null, rank: 3, kind: 'barrier', resource: 'b.ts:40', start: 10, end: 12, cpu: 0 });
  assert.ok(Number.isNaN(got[1]!.cpu));
});

test('a layer registers a resolver for its record kind; a kind has one resolver', () => {
  const m = new TraceModel(manifest(1, 1));
  const seen: string[] = [];
  assert.throws(() => m.register({ kinds: ['wait'], push: () => {} }), /wait already has a resolver/);
  // a fresh model whose waits a layer resolves its own way (e.g. into regions)
  const m2 = new TraceModel(manifest(1, 1));
  assert.throws(() => m2.register({ kinds: ['cfStart'], push: () => {} }), /cfStart already has a resolver/);
  let ended = 0;
  // every built-in kind is taken: a layer's own kind would be new; here, a resolver of no kind still ends with the model
  m2.register({ kinds: [], push: () => {}, end: () => { ended++; } });
  const l: ModelListener = { event: (e) => seen.push(e.kind) };
  m2.listen(l);
  for (const e of run()) m2.push(e);
  m2.end();
  m2.end();
  assert.equal(ended, 1, 'end once');
  assert.deepEqual(seen, run().map((e) => e.kind), 'every event reaches event() after its resolver');
});

test('per-listener slots: two listeners keep their own value on a fragment, whatever their order', () => {
  for (const order of [0, 1]) {
    const m = new TraceModel(manifest(1, 1));
    const a = m.slot<string>('a'), b = m.slot<number>('b');
    const la: ModelListener = { start: (f) => a.set(f, `A${f.cf}`), finish: (f) => assert.equal(b.get(f), 42, 'b set by the other listener') };
    const lb: ModelListener = { start: (f) => b.set(f, 42), finish: (f) => assert.equal(a.get(f), 'A5') };
    if (order === 0) { m.listen(la); m.listen(lb); } else { m.listen(lb); m.listen(la); }
    let f: Fragment | undefined;
    m.listen({ finish: (x) => { f = x; } });
    for (const e of run()) m.push(e);
    assert.equal(a.get(f!), 'A5');
    assert.equal(b.get(f!), 42);
    assert.equal(f!.seq, 0, 'the first fragment to finish');
  }
});

test('readModel: listeners registered before the first event, progress to the end, the reader\'s warnings and damage', (t) => {
  const dir = tempDir(t);
  const sites = [{ label: 'f', code: 1, kind: 'call' as const, file: 'a.fa', line: 1, col: 1, spawnNo: 0 }];
  openTraceDir(dir, manifest(1, 2, { sites }));
  const w0 = ThreadTraceWriter.open(dir, 0, 0), w1 = ThreadTraceWriter.open(dir, 0, 1);
  w0.programStart(0); w0.cfCreated(1, 5, -1, 0, 'g5', null);
  w1.cfStart(2, 0, 5, 1); w1.wait(3, 7, 1, 5, -1, 1, 'blocks[2]'); w1.cfFinish(9, 6, 5, 1);
  w0.programFinish(20, 1);
  w0.close(); w1.close();
  writeManifest(dir, manifest(1, 2, { sites, files: [{ node: 0, thread: 0, path: traceFileName(0, 0) }, { node: 0, thread: 1, path: traceFileName(0, 1) }] }));
  const waits: Wait[] = [];
  const progress: [number, number][] = [];
  const r = readModel(dir, (m) => m.listen({ wait: (w) => waits.push(w) }), (d, e) => progress.push([d, e]));
  assert.equal(waits.length, 1);
  assert.equal(waits[0]!.fragment?.gid, 'g5');
  assert.equal(r.model.events, 6);
  assert.deepEqual(progress.at(-1), [6, 6]);
  assert.deepEqual(r.warnings(), []);
  assert.equal(r.damage().total, 0);
  assert.ok(r.bytes > 0);
});
