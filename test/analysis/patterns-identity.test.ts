// The pattern analysis's fast path (files decoded into columns, merged in runs, the layer's records
// in blocks to the engine) against an independent one on the same trace: every file read on its
// own as objects, the clock offsets applied field by field, all records sorted by time (ties: file
// order, then file order within a file, as the merge promises), pushed one object at a time
// through a trace model; and, beside it, an engine driven one call per record by a row listener
// (the dispatch the blocks replaced). The reports must be equal, field for field — on a generated
// trace with every pattern of the engine and on a real run of the SPMD layer across two node
// processes (NPB IS, class S).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { explain, inTempDir, luna, ROOT } from '../cli/helpers.js';
import { analyzePatternsTrace, PatternAnalysis, type PatternReport } from '../../src/analysis/patterns/analyze.js';
import { PatternEngine } from '../../src/analysis/patterns/engine.js';
import { PatternResults } from '../../src/analysis/patterns/results.js';
import { simulateSpmd, type Phase } from '../../src/analysis/sim/spmd.js';
import { SlowAnalyzer } from '../../src/analysis/slow/analyzer.js';
import { finishReport } from '../../src/analysis/slow/report.js';
import { readManifest } from '../../src/trace/manifest-reader.js';
import { TraceModel } from '../../src/trace/model/model.js';
import { SpmdResolver } from '../../src/trace/model/spmd.js';
import { readThreadFile } from '../../src/trace/reader.js';
import { RECORDS, type RecordDef, type TraceEvent } from '../../src/trace/schema.js';

/** The independent path: objects, one sort, one push per record; and the per-record engine beside. */
function slowPath(dir: string): { report: PatternReport; perRecord: PatternResults; ranks: () => number } {
  const manifest = readManifest(dir, []);
  const all: { e: TraceEvent; file: number; i: number }[] = [];
  manifest.files.forEach((f, file) => {
    const off = manifest.clock?.offsets?.[f.node] ?? 0;
    let i = 0;
    for (const e of readThreadFile(join(dir, f.path)).events) {
      for (const [name, type] of (RECORDS[e.kind] as RecordDef).fields) if (type === 'time') (e as unknown as Record<string, number>)[name]! += off;
      if (!(RECORDS[e.kind] as RecordDef).fields.some(([n]) => n === 't')) (e as { t: number }).t += off;
      all.push({ e, file, i: i++ });
    }
  });
  all.sort((a, b) => a.e.t - b.e.t || a.file - b.file || a.i - b.i);
  const m = new TraceModel(manifest);
  const pa = new PatternAnalysis(m, { compare: true });
  const slow = new SlowAnalyzer(m, { observe: pa.observer });
  // the engine as it was driven before the blocks: a call per record, call sites interned by name
  let eng: PatternEngine | null = null;
  const perRecord = new PatternResults(() => Math.max(1, eng?.ranks ?? 1));
  const spmd = m.use(SpmdResolver);
  const ensure = (rank: number): PatternEngine => {
    eng ??= new PatternEngine(Math.max(spmd.ranks, rank + 1), perRecord);
    if (rank >= eng.ranks) eng.grow(rank + 1);
    return eng;
  };
  spmd.listenRows({
    enter: (rank, t, op, site) => ensure(rank).enter(rank, t, op, perRecord.site(site)),
    exit: (rank, t, op) => ensure(rank).exit(rank, t, op),
    cexit: (rank, t, op, seq, root, sync) => ensure(rank).cexit(rank, t, op, seq, root, sync),
    alock: (rank, t, lock) => ensure(rank).alock(rank, t, lock),
    rlock: (rank, t, lock) => ensure(rank).rlock(rank, t, lock),
  });
  for (const { e } of all) m.push(e);
  m.end();
  (eng as PatternEngine | null)?.end();
  const report = pa.finish(finishReport(slow), [], m.damage.report());
  return { report, perRecord, ranks: () => eng?.ranks ?? 0 };
}

function same(dir: string): PatternReport {
  const fast = analyzePatternsTrace(dir, { compare: true });
  const { report, perRecord, ranks } = slowPath(dir);
  assert.deepStrictEqual(fast, report, 'the fast path and the object path disagree');
  // the SPMD patterns as the per-record engine found them
  const spmdOnly = fast.patterns.filter((p) => p.model === 'spmd');
  const tree = perRecord.tree((_p, l) => `rank ${l}`, () => ranks() * fast.tWall);
  assert.deepStrictEqual(spmdOnly, tree, 'the blocks and the per-record engine disagree');
  assert.ok(spmdOnly.length > 0, 'SPMD patterns found');
  return fast;
}

const RANKS = 6;
/** One cycle of a program with every kind of SPMD record; `i` varies who is late. */
function cycle(i: number): Phase[] {
  const late = (k: number) => (r: number): number => ((r + i) % RANKS === k ? 30_000 : 5_000 + 100 * r);
  return [
    { compute: late(0) },
    { op: 'barrier', site: 'gen.ts:10:3' },
    { compute: late(1) },
    { op: 'broadcast', root: i % RANKS, sync: { in: 'mysync' }, bytes: 64, site: 'gen.ts:12:3' },
    { lock: i % 3, ranks: [i % RANKS, (i + 2) % RANKS], hold: 2_000, site: 'gen.ts:14:5' },
    { op: 'gather_all', sync: { in: 'allsync', out: 'allsync' }, bytes: 8, site: 'gen.ts:16:3' },
    { op: 'notify', site: 'gen.ts:18:3' },
    { compute: late(3) },
    { op: 'wait', site: 'gen.ts:20:3' },
    { op: 'reduce', root: 0, sync: { in: 'mysync' }, bytes: 8, site: `gen.ts:${22 + (i % 3)}:3` },
    { op: 'prefix_reduce', sync: { in: 'mysync' }, site: 'gen.ts:26:3' },
    { op: 'exchange', sync: { out: 'mysync' }, bytes: 256, site: 'gen.ts:28:3' },
    ...(i % 16 === 0 ? [{ op: 'all_alloc', site: 'gen.ts:30:3' } as Phase] : []),
  ];
}

test('a generated trace of every SPMD record kind: the same report by the fast path, by objects and by a call per record', async () => {
  await inTempDir('luna-patterns-identity-', async (dir) => {
    // enough records for many blocks and merge refills, few enough for the object path
    const phases = function* (): Generator<Phase> { for (let i = 0; i < 600; i++) yield* cycle(i); };
    const gen = simulateSpmd(dir, { ranks: RANKS, nodes: 2, phases: phases(), seed: 11 });
    assert.ok(gen.records > 50_000, `${gen.records} records`);
    const r = same(dir);
    assert.ok(r.spmd.events > 50_000 && r.spmd.collectives > 4_000, `${r.spmd.events} SPMD records, ${r.spmd.collectives} collectives`);
  });
});

test('a real run of the SPMD layer across two node processes (NPB IS, class S): the same report by every path', async () => {
  await inTempDir('luna-patterns-identity-', async (dir) => {
    const r = await luna(['spmd', '--threads', '4', '--nodes', '2', '--trace', 'tr', join(ROOT, 'examples/npb-is/is.ts'), 'S'], dir, 120_000, { ...process.env, LUNA_CACHE_DIR: join(dir, 'cache') });
    assert.equal(r.status, 0, explain(r));
    const rep = same(join(dir, 'tr'));
    assert.equal(rep.ranks, 4);
    assert.ok(rep.spmd.collectives > 0);
  });
});
