// Benchmark of the pattern engine on a generated SPMD trace of 10^7 events (10^6 with --quick or
// --reps 1; BENCH_PATTERNS_EVENTS overrides): 8 ranks on 2 nodes running barriers, split-phase
// barriers, collectives of every synchronisation mode, lock sections and regions, written by the
// SPMD simulator through the real trace writer. Two figures, each against a baseline measured in
// the same run, alternated and repeated (median):
//   end to end — `luna analyze patterns` (decode, merge, trace model, SLOW, engine) against
//                merely decoding and merging the same files into columns (readTraceColumns);
//                decoding them into one object per record (readTrace) is shown beside it, and the
//                merge without copying (runs(), what the end-to-end path reads through);
//   analysis pass — the engine alone over the events decoded once into columns, against a loop
//                that touches the same columns (warm: after one untimed pass;
//                not after a forced full collection: measured, that made the pass 1.5–2× slower).
// Each figure also in events per CPU-second of this process (steadier than wall time under load).
// Targets (docs/benchmarks.md): ≥ 2 M events/s end to end, ≥ 20 M events/s for the analysis pass.
// Run: node dist/bench/patterns.js   (or through npm run bench patterns).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { simulateSpmd, type Phase } from '../src/analysis/sim/spmd.js';
import { analyzePatternsTrace } from '../src/analysis/patterns/analyze.js';
import { PatternEngine } from '../src/analysis/patterns/engine.js';
import { PatternResults } from '../src/analysis/patterns/results.js';
import { readTrace, readTraceColumns } from '../src/trace/merge.js';
import { CODE, COL } from '../src/trace/columns.js';
import { median, type Ctx, type SuiteOutput } from './common.js';

const RANKS = 8;
/** timed analysis passes per rep (a pass over 10^6 events is tens of ms: one scheduling hiccup would be the median) */
const PASSES = 3;

/** one function for every results tree (a new closure per pass would deoptimise the engine's calls of it) */
const ranksOf = (): number => RANKS;

/** One cycle of the generated program (≈ 150 records over 8 ranks); `i` varies who is late. */
function cycle(i: number): Phase[] {
  const late = (k: number) => (r: number): number => ((r + i) % RANKS === k ? 30_000 : 5_000 + 100 * r);
  return [
    { compute: late(0) },
    { op: 'barrier', site: 'gen.ts:10:3' },
    { compute: late(1) },
    { op: 'broadcast', root: i % RANKS, sync: { in: 'mysync' }, bytes: 64, site: 'gen.ts:12:3' },
    { lock: i % 4, ranks: [i % RANKS, (i + 3) % RANKS], hold: 2_000, site: 'gen.ts:14:5' },
    { compute: late(2) },
    { op: 'gather_all', sync: { in: 'allsync', out: 'allsync' }, bytes: 8, site: 'gen.ts:16:3' },
    { op: 'notify', site: 'gen.ts:18:3' },
    { compute: late(3) },
    { op: 'wait', site: 'gen.ts:20:3' },
    { op: 'reduce', root: 0, sync: { in: 'mysync' }, bytes: 8, site: 'gen.ts:22:3' },
    { compute: late(4) },
    { op: 'prefix_reduce', sync: { in: 'mysync' }, site: 'gen.ts:24:3' },
    { op: 'exchange', sync: { out: 'mysync' }, bytes: 256, site: 'gen.ts:26:3' },
    ...(i % 64 === 0 ? [{ op: 'all_alloc', site: 'gen.ts:28:3' } as Phase] : []),
  ];
}

function* program(records: number): Generator<Phase> {
  const cycles = Math.ceil(records / 150);
  for (let i = 0; i < cycles; i++) yield* cycle(i);
}

/** The trace's SPMD events as columns (decoded once), and the call sites interned. */
interface Columns { n: number; kind: Uint8Array; rank: Uint16Array; t: Float64Array; a: Int32Array; b: Int32Array; root: Int32Array; sync: Uint8Array }
const K_ENTER = 1, K_EXIT = 2, K_CEXIT = 3, K_ALOCK = 4, K_RLOCK = 5;

function decode(dir: string, cap: number, res: PatternResults): Columns {
  const c: Columns = { n: 0, kind: new Uint8Array(cap), rank: new Uint16Array(cap), t: new Float64Array(cap), a: new Int32Array(cap), b: new Int32Array(cap), root: new Int32Array(cap), sync: new Uint8Array(cap) };
  const names = new Map<number, string[]>();
  for (const r of readTraceColumns(dir).batches) {
    const f = r.f;
    for (let j = 0; j < r.n; j++) {
      const i = c.n;
      switch (r.code[j]) {
        case CODE.siteName: { const k = r.node[j]! * 4096 + r.thread[j]!; let a = names.get(k); if (!a) names.set(k, (a = [])); a[f[COL.siteName.callSite]![j]!] = r.s[j]!; continue; }
        case CODE.spmdEnter: c.kind[i] = K_ENTER; c.a[i] = f[COL.spmdEnter.op]![j]!; c.b[i] = res.site(names.get(r.node[j]! * 4096 + r.thread[j]!)![f[COL.spmdEnter.callSite]![j]!]!); break;
        case CODE.spmdExit: c.kind[i] = K_EXIT; c.a[i] = f[COL.spmdExit.op]![j]!; break;
        case CODE.spmdCExit: { const C = COL.spmdCExit; c.kind[i] = K_CEXIT; c.a[i] = f[C.op]![j]!; c.b[i] = f[C.seq]![j]!; c.root[i] = f[C.root]![j]!; c.sync[i] = f[C.sync]![j]!; break; }
        case CODE.spmdAlock: c.kind[i] = K_ALOCK; c.a[i] = f[COL.spmdAlock.lock]![j]!; break;
        case CODE.spmdRlock: c.kind[i] = K_RLOCK; c.a[i] = f[COL.spmdRlock.lock]![j]!; break;
        default: continue;
      }
      c.rank[i] = f[COL.spmdEnter.rank]![j]!; // rank is the first column of every SPMD record
      c.t[i] = r.t[j]!;
      c.n++;
    }
  }
  return c;
}

/** The analysis pass alone: every event through the engine. */
function engine(c: Columns, res: PatternResults): number {
  const eng = new PatternEngine(RANKS, res);
  const { kind, rank, t, a, b, root, sync } = c;
  for (let i = 0; i < c.n; i++) {
    switch (kind[i]) {
      case K_ENTER: eng.enter(rank[i]!, t[i]!, a[i]!, b[i]!); break;
      case K_EXIT: eng.exit(rank[i]!, t[i]!, a[i]!); break;
      case K_CEXIT: eng.cexit(rank[i]!, t[i]!, a[i]!, b[i]!, root[i]!, sync[i]!); break;
      case K_ALOCK: eng.alock(rank[i]!, t[i]!, a[i]!); break;
      case K_RLOCK: eng.rlock(rank[i]!, t[i]!, a[i]!); break;
    }
  }
  eng.end();
  return eng.collectives;
}

/** Its baseline: a loop that reads the same columns. */
function touch(c: Columns): number {
  const { kind, rank, t, a, b, root, sync } = c;
  let s = 0;
  for (let i = 0; i < c.n; i++) s += kind[i]! + rank[i]! + t[i]! + a[i]! + b[i]! + root[i]! + sync[i]!;
  return s;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const small = ctx.quick || ctx.reps === 1;
  const want = Number(process.env.BENCH_PATTERNS_EVENTS ?? (small ? 1e6 : 1e7));
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-patterns-'));
  try {
    ctx.log(`patterns: generating ${want.toExponential(0)} events`);
    const t0 = performance.now();
    const gen = simulateSpmd(dir, { ranks: RANKS, nodes: 2, phases: program(want), seed: 3 });
    const genMs = performance.now() - t0;
    const events = gen.records;
    const e2e: number[] = [], iter: number[] = [], iterRuns: number[] = [], iterObj: number[] = [], pass: number[] = [], base: number[] = [], e2eCpu: number[] = [], passCpu: number[] = [];
    // CPU time (user + system) of this process: steadier than wall time on a shared machine
    const cpu = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
    let found = 0;
    const sites = new PatternResults(ranksOf);
    ctx.log('patterns: decoding the columns');
    const cols = decode(dir, events, sites);
    // one untimed pass first: the analysis pass is a throughput, and with --reps 1 the only timed
    // pass would otherwise include compiling the engine (the end-to-end figure keeps its warm-up)
    engine(cols, new PatternResults(ranksOf));
    for (let rep = 0; rep < ctx.reps; rep++) {
      ctx.log(`patterns: rep ${rep + 1}/${ctx.reps}`);
      let t = performance.now();
      let k = 0;
      for (const b of readTraceColumns(dir).batches) k += b.n;
      iter.push(performance.now() - t);
      t = performance.now();
      readTraceColumns(dir).runs((_rows, from, to) => { k += to - from; });
      iterRuns.push(performance.now() - t);
      t = performance.now();
      for (const e of readTrace(dir).events) k += e.t > 0 ? 1 : 0;
      iterObj.push(performance.now() - t);
      t = performance.now();
      let c0 = cpu();
      const r = analyzePatternsTrace(dir);
      e2e.push(performance.now() - t);
      e2eCpu.push(cpu() - c0);
      found = r.patterns.length;
      if (k < 0) console.log(k);
      for (let q = 0; q < PASSES; q++) {
        t = performance.now();
        const s = touch(cols);
        base.push(performance.now() - t);
        const res = new PatternResults(ranksOf);
        t = performance.now();
        c0 = cpu();
        const n = engine(cols, res);
        pass.push(performance.now() - t);
        passCpu.push(cpu() - c0);
        if (s === -1 || n < 0) console.log(s, n);
      }
    }
    const mE2e = median(e2e), mIter = median(iter), mPass = median(pass), mBase = median(base);
    const figures = {
      events,
      spmdEvents: cols.n,
      generateMs: Math.round(genMs),
      decodeMergeMs: Math.round(mIter),
      decodeMergeObjectsMs: Math.round(median(iterObj)),
      decodeMergeRunsMs: Math.round(median(iterRuns)),
      endToEndMs: Math.round(mE2e),
      eventsPerSecEndToEnd: Math.round(events / (mE2e / 1000)),
      ratioEndToEndToDecode: +(mE2e / mIter).toFixed(2),
      analysisPassMs: +mPass.toFixed(1),
      eventsPerSecAnalysisPass: Math.round(cols.n / (mPass / 1000)),
      ratioPassToTouch: +(mPass / Math.max(1e-3, mBase)).toFixed(2),
      eventsPerCpuSecEndToEnd: Math.round(events / (median(e2eCpu) / 1000)),
      eventsPerCpuSecAnalysisPass: Math.round(cols.n / (Math.max(1e-3, median(passCpu)) / 1000)),
      patternsFound: found,
    };
    return {
      status: 'ok', figures,
      targets: [
        { key: 'eventsPerSecEndToEnd', op: '>=', value: 2e6, label: 'pattern engine end to end, decoding included' },
        { key: 'eventsPerSecAnalysisPass', op: '>=', value: 20e6, label: 'pattern engine analysis pass' },
      ],
      notes: [`${RANKS} ranks on 2 nodes; median of ${ctx.reps}; baselines: decode+merge into columns alone, and a loop over the decoded columns; the analysis pass after one untimed pass, ${PASSES} passes per rep`],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const reps = Number(process.argv.includes('--reps') ? process.argv[process.argv.indexOf('--reps') + 1] : 3);
  run({ quick: process.argv.includes('--quick'), reps, previous: {}, log: (m) => process.stderr.write(`${m}\n`) })
    .then((r) => console.log(JSON.stringify(r.figures, null, 2)))
    .catch((e) => { console.error(e); process.exit(1); });
}
