// The columnar read path against the object path, on random traces (generated fragmented-program
// and SPMD traces, a real run's trace) intact and with damaged tails: the merged stream equals
// every file's records stably sorted by time, and the trace model, SLOW and the pattern analysis
// tell exactly the same whether the records flow as columns (readModel) or as objects (push).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, openSync, readFileSync, readdirSync, statSync, truncateSync, writeSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readTrace, readTraceColumns } from '../../src/trace/merge.js';
import { readThreadFile } from '../../src/trace/reader.js';
import { readModel } from '../../src/trace/read.js';
import { TraceModel } from '../../src/trace/model/model.js';
import { readManifest } from '../../src/trace/manifest-reader.js';
import { writeManifest } from '../../src/trace/dir.js';
import { HEADER_BYTES } from '../../src/trace/format.js';
import { TIME_FIELDS, type TraceEvent } from '../../src/trace/schema.js';
import { syntheticEvents, syntheticManifest } from '../../src/analysis/sim/synthetic.js';
import { writeSimTrace } from '../../src/analysis/sim/write.js';
import { simulateSpmd, type Phase } from '../../src/analysis/sim/spmd.js';
import { SlowAnalyzer } from '../../src/analysis/slow/analyzer.js';
import { finishReport } from '../../src/analysis/slow/report.js';
import { PatternAnalysis } from '../../src/analysis/patterns/analyze.js';
import { SpmdResolver } from '../../src/trace/model/spmd.js';
import type { ModelListener } from '../../src/trace/model/model.js';
import { manifest, rng, tempDir } from './helpers.js';
import { openTraceDir } from '../../src/trace/dir.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';
import { traceFileName } from '../../src/trace/format.js';

/** Every file's records in file order, clocks shifted, stably sorted by time then file: what the merge must give. */
function reference(dir: string): { events: TraceEvent[]; warnings: string[] } {
  const warnings: string[] = [];
  const m = readManifest(dir, warnings);
  const all: { e: TraceEvent; file: number; k: number }[] = [];
  m.files.forEach((f, file) => {
    const off = m.clock?.offsets?.[f.node] ?? 0;
    let k = 0;
    for (const e of readThreadFile(join(dir, f.path), { warnings }).events) {
      if (off !== 0) for (const x of TIME_FIELDS[e.kind]) (e as unknown as Record<string, number>)[x]! += off;
      all.push({ e, file, k: k++ });
    }
  });
  all.sort((a, b) => a.e.t - b.e.t || a.file - b.file || a.k - b.k);
  return { events: all.map((x) => x.e), warnings };
}

/** A listener that writes down everything the model tells, as text. */
function recorder(log: string[]): ModelListener {
  const f = (x: { node: number; cf: number; gid: string; name: string; lane: number; start: number; finish: number; cpu: number; seq: number } | undefined): string =>
    x ? `${x.node}:${x.cf}:${x.gid}:${x.name}:${x.lane}:${x.start}:${x.finish}:${x.cpu}:${x.seq}` : '-';
  return {
    programStart: (n, t) => log.push(`ps ${n} ${t}`),
    programFinish: (n, t, s) => log.push(`pf ${n} ${t} ${s}`),
    start: (x) => log.push(`start ${f(x)}`),
    finish: (x, inputs) => log.push(`finish ${f(x)} ${inputs.map((d) => `${d.key}@${d.home}/${d.producer?.gid ?? '-'}`).join(',')}`),
    transfer: (x) => log.push(`transfer ${x.df.key} ${x.from}>${x.to} ${x.bytes} ${x.sendStart} ${x.firstSend} ${x.arrive}`),
    computed: (d, t) => log.push(`computed ${d.key} ${t}`),
    sysBusy: (n, a, b) => log.push(`busy ${n} ${a} ${b}`),
    counter: (n, k, t, v) => log.push(`counter ${n} ${k} ${t} ${v}`),
    migrate: (n, x, cf, to, t) => log.push(`migrate ${n} ${f(x)} ${cf} ${to} ${t}`),
    wait: (w) => log.push(`wait ${w.node} ${w.thread} ${w.slot} ${f(w.fragment ?? undefined)} ${w.rank} ${w.kind} ${w.resource} ${w.start} ${w.end} ${w.cpu}`),
    event: (e) => log.push(`event ${JSON.stringify(e)}`),
  };
}

interface Outcome { log: string[]; spmd: string[]; slow: unknown; patterns: unknown; warnings: string[]; damage: unknown }

/** The analyses of one model, made before the records flow. */
function analyses(m: TraceModel, log: string[], spmd: string[]): () => Omit<Outcome, 'log' | 'spmd'> {
  m.listen(recorder(log));
  m.listen({ eventKinds: ['dfComputed'], event: (e) => log.push(`dfComputed only ${e.kind} ${e.t}`) });
  m.use(SpmdResolver).listen({ enter: (e, site) => spmd.push(`enter ${e.rank} ${e.t} ${e.op} ${site}`), cexit: (e) => spmd.push(`cexit ${JSON.stringify(e)}`) });
  const pa = new PatternAnalysis(m, { compare: true });
  const slow = new SlowAnalyzer(m, { observe: pa.observer });
  return () => {
    const sr = finishReport(slow);
    return { slow: sr, patterns: pa.finish(sr, [], m.damage.report()), warnings: [...m.warnings.entries()].map(([w, n]) => `${w} ${n}`), damage: m.damage.report() };
  };
}

function viaObjects(dir: string): Outcome & { readerWarnings: string[] } {
  const tr = readTrace(dir);
  const m = new TraceModel(tr.manifest);
  m.damage = tr.damage;
  const log: string[] = [], spmd: string[] = [];
  const done = analyses(m, log, spmd);
  for (const e of tr.events) m.push(e);
  m.end();
  return { log, spmd, ...done(), readerWarnings: tr.warnings };
}

function viaColumns(dir: string): Outcome & { readerWarnings: string[] } {
  const log: string[] = [], spmd: string[] = [];
  let done!: () => Omit<Outcome, 'log' | 'spmd'>;
  const r = readModel(dir, (m) => { done = analyses(m, log, spmd); });
  return { log, spmd, ...done(), readerWarnings: r.readerWarnings };
}

/** Two logs equal, or the first line where they differ. */
function sameLog(got: string[], want: string[], what: string): void {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) if (got[i] !== want[i]) assert.fail(`${what}: line ${i} of ${got.length}/${want.length}:\n  got  ${got[i]}\n  want ${want[i]}`);
}

/** Columns and objects agree, and the merge is the reference order. */
function check(dir: string, what: string): number {
  const ref = reference(dir);
  const tr = readTrace(dir, { chunkBytes: 4096 });
  const merged = [...tr.events];
  assert.equal(merged.length, ref.events.length, `${what}: records`);
  assert.deepEqual(merged, ref.events, `${what}: merged order`);
  assert.deepEqual([...tr.warnings].sort(), [...ref.warnings].sort(), `${what}: reader warnings`);
  let rows = 0;
  for (const b of readTraceColumns(dir).batches) rows += b.n;
  assert.equal(rows, ref.events.length, `${what}: rows`);
  const a = viaObjects(dir), b = viaColumns(dir);
  assert.ok(a.log.length > 0, `${what}: the model told something`);
  sameLog(b.log, a.log, `${what}: what the model told`);
  sameLog(b.spmd, a.spmd, `${what}: what the SPMD resolver told`);
  assert.deepEqual(b.slow, a.slow, `${what}: SLOW`);
  assert.deepEqual(b.patterns, a.patterns, `${what}: patterns`);
  assert.deepEqual(b.warnings, a.warnings, `${what}: model warnings`);
  assert.deepEqual(b.damage, a.damage, `${what}: damage`);
  assert.deepEqual([...b.readerWarnings].sort(), [...a.readerWarnings].sort(), `${what}: reader warnings`);
  return (b.damage as { total: number }).total;
}

/** Damage the tail of some files of a copy of `dir`: cut at a random offset, or a byte overwritten. */
function damaged(src: string, dst: string, r: () => number): string {
  cpSync(src, dst, { recursive: true });
  const files = readdirSync(dst).filter((f) => f.endsWith('.lt'));
  for (const f of files) {
    if (r() < 0.4) continue;
    const p = join(dst, f), size = statSync(p).size;
    if (size <= HEADER_BYTES + 1) continue;
    const at = HEADER_BYTES + Math.floor((0.5 + 0.5 * r()) * (size - HEADER_BYTES));
    if (r() < 0.5) truncateSync(p, at);
    else {
      const fd = openSync(p, 'r+');
      writeSync(fd, Buffer.from([r() < 0.5 ? 0xee : Math.floor(r() * 256)]), 0, 1, at);
      closeSync(fd);
    }
  }
  return dst;
}

test('generated fragmented-program traces, intact and damaged: columns and objects give the same model, SLOW and patterns', (t) => {
  const root = tempDir(t);
  const r = rng(7);
  let hurt = 0;
  for (let k = 0; k < 4; k++) {
    const o = { events: 2000 + Math.floor(r() * 4000), nodes: 1 + Math.floor(r() * 3), threads: 1 + Math.floor(r() * 3), seed: 1 + k };
    const dir = join(root, `g${k}`);
    const m = writeSimTrace(dir, syntheticManifest(o), syntheticEvents(o));
    // clocks put on node 0's: every time field shifted, ties between nodes reordered
    if (k % 2 === 1) writeManifest(dir, { ...m, clock: { ...m.clock!, offsets: Array.from({ length: o.nodes }, (_, n) => (n === 0 ? 0 : Math.round((r() - 0.5) * 2e5))) } });
    check(dir, `trace ${k} ${JSON.stringify(o)}`);
    for (let d = 0; d < 2; d++) hurt += check(damaged(dir, join(root, `g${k}d${d}`), r), `trace ${k} damaged ${d}`);
  }
  assert.ok(hurt > 0, 'the damaged copies were read as damaged');
});

test('generated SPMD traces, intact and damaged: the pattern engine gets the same records from columns as from objects', (t) => {
  const root = tempDir(t);
  const r = rng(11);
  let hurt = 0;
  for (let k = 0; k < 4; k++) {
    const ranks = 2 + Math.floor(r() * 5);
    const phases: Phase[] = [];
    for (let i = 0; i < 40; i++) {
      const late = Math.floor(r() * ranks), ns = 1000 + Math.floor(r() * 20_000);
      phases.push({ compute: (x) => (x === late ? ns : 500) });
      const pick = Math.floor(r() * 6);
      if (pick === 0) phases.push({ op: 'barrier', site: `p.ts:${i}:1` });
      else if (pick === 1) phases.push({ op: 'broadcast', root: late, sync: { in: 'mysync' }, bytes: 8, site: `p.ts:${i}:2` });
      else if (pick === 2) phases.push({ op: 'gather_all', sync: { in: 'allsync', out: 'allsync' }, site: `p.ts:${i}:3` });
      else if (pick === 3) phases.push({ lock: i % 3, hold: 1500, site: `p.ts:${i}:4` });
      else if (pick === 4) phases.push({ op: 'notify', site: `p.ts:${i}:5` }, { compute: 700 }, { op: 'wait', site: `p.ts:${i}:6` });
      else phases.push({ op: 'reduce', root: 0, sync: { in: 'mysync' }, site: `p.ts:${i}:7` });
    }
    const dir = join(root, `s${k}`);
    simulateSpmd(dir, { ranks, nodes: 1 + (k % 2), phases, seed: k + 1, jitter: 300 });
    check(dir, `SPMD trace ${k}`);
    for (let d = 0; d < 2; d++) hurt += check(damaged(dir, join(root, `s${k}d${d}`), r), `SPMD trace ${k} damaged ${d}`);
  }
  assert.ok(hurt > 0, 'the damaged copies were read as damaged');
});

test('a real run\'s trace (2 nodes × 2 threads), intact and damaged: columns and objects agree', (t) => {
  const root = tempDir(t);
  const dir = join(root, 'real');
  const res = spawnSync(process.execPath, [resolve('bin/luna'), 'run', '--nodes', '2', '--threads', '2', '--trace', dir, resolve('test/trace/programs/spread/spread.fa'), '6'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(res.status, 0, res.stderr);
  assert.ok(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).files.length >= 4);
  check(dir, 'real trace');
  const r = rng(3);
  let hurt = 0;
  for (let d = 0; d < 3; d++) hurt += check(damaged(dir, join(root, `real${d}`), r), `real trace damaged ${d}`);
  assert.ok(hurt > 0, 'the damaged copies were read as damaged');
});

test('a merge window smaller than the lateness: order approximate, said once per file; without the limit, exact', (t) => {
  const dir = tempDir(t);
  openTraceDir(dir, manifest(1, 1));
  const w = ThreadTraceWriter.open(dir, 0, 0, { bufferBytes: 8192 });
  let tt = 0;
  for (let i = 0; i < 2000; i++) {
    tt += 10;
    if (i % 50 === 49) w.sysBusy(tt - 400, tt); // a span over the 40 records before it
    else w.cfReady(tt, i);
  }
  w.close();
  writeManifest(dir, manifest(1, 1, { files: [{ node: 0, thread: 0, path: traceFileName(0, 0) }] }));
  const small = readTraceColumns(dir, { maxBuffered: 4 });
  const times: number[] = [];
  for (const b of small.batches) for (let i = 0; i < b.n; i++) times.push(b.t[i]!);
  assert.equal(times.length, 2000);
  assert.ok(times.some((x, i) => i > 0 && x < times[i - 1]!), 'out of order where the window is exceeded');
  assert.deepEqual(small.warnings, [`${traceFileName(0, 0)}: more than 4 events within 390 ns of a late record; merged order is approximate there`]);
  assert.deepEqual([...readTrace(dir, { maxBuffered: 4 }).events].map((e) => e.t), times, 'objects: the same order');
  check(dir, 'late spans');
});
