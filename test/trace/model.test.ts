// The trace model's extension points: resolvers registered per record kind, per-listener slots on
// fragments, and readModel, the one read loop of the commands.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { openTraceDir, writeManifest } from '../../src/trace/dir.js';
import { traceFileName } from '../../src/trace/format.js';
import { TraceModel, type ModelListener, type Resolver } from '../../src/trace/model/model.js';
import type { Fragment, Wait } from '../../src/trace/model/records.js';
import { readModel } from '../../src/trace/read.js';
import type { RecordKind, TraceEvent } from '../../src/trace/schema.js';
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

test('a layer plugs in a resolver for its record kind: analyses that use it share one, it tells its own listeners', () => {
  // a layer's record kind the schema does not declare yet (an SPMD region's entry, say)
  const ENTER = 'regionEnter' as RecordKind;
  interface Region { rank: number; fragment: Fragment | undefined; t: number }
  class RegionResolver implements Resolver {
    static instances = 0;
    readonly kinds = [ENTER];
    ended = 0;
    private readonly ls: ((r: Region) => void)[] = [];
    constructor(private readonly m: TraceModel) { RegionResolver.instances++; }
    listen(l: (r: Region) => void): void { this.ls.push(l); }
    push(e: TraceEvent): void {
      const x = e as unknown as { node: number; t: number; cf: number; rank: number };
      const r = { rank: x.rank, fragment: this.m.fragmentOf(x.node, x.cf), t: x.t };
      for (const l of this.ls) l(r);
    }
    end(): void { this.ended++; }
  }
  const m = new TraceModel(manifest(1, 2));
  const a: Region[] = [], b: Region[] = [], raw: string[] = [];
  m.use(RegionResolver).listen((r) => a.push(r)); // one analysis
  m.use(RegionResolver).listen((r) => b.push(r)); // another: the same resolver
  m.listen({ event: (e) => raw.push(e.kind) });
  const events = run();
  events.splice(3, 0, { kind: ENTER, t: 3, node: 0, thread: 1, cf: 5, rank: 2 } as unknown as TraceEvent);
  for (const e of events) m.push(e);
  m.end();
  m.end();
  assert.equal(RegionResolver.instances, 1);
  assert.equal(a.length, 1);
  assert.deepEqual(b, a);
  assert.equal(a[0]!.rank, 2);
  assert.equal(a[0]!.fragment?.gid, 'g5', 'resolved against the model\'s fragments');
  assert.equal(m.use(RegionResolver).ended, 1, 'ended once, with the model');
  assert.deepEqual(raw, events.map((e) => e.kind), 'every event reaches event() after its resolver');
  // a kind has one resolver; the run's envelope is the model's own
  assert.throws(() => m.register({ kinds: ['wait'], push: () => {} }), /wait already has a resolver/);
  assert.throws(() => m.register({ kinds: [ENTER], push: () => {} }), /regionEnter already has a resolver/);
  assert.throws(() => m.register({ kinds: ['programFinish'], push: () => {} }), /programFinish is the model's own/);
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
