// Benchmark of the pattern engine on a generated SPMD trace of 10^7 events (10^6 with --quick or
// --reps 1; BENCH_PATTERNS_EVENTS overrides): 8 ranks on 2 nodes running barriers, split-phase
// barriers, collectives of every synchronisation mode, lock sections and regions, written by the
// SPMD simulator through the real trace writer. Two figures, each against a baseline measured in
// the same run, alternated and repeated (median):
//   end to end — `luna analyze patterns` (decode, merge, trace model, SLOW, engine): first cold,
//                as one CLI run sees it (nothing compiled yet), then warm, against merely decoding
//                and merging the same files into columns (readTraceColumns); decoding them into one
//                object per record (readTrace) is shown beside it, and the merge without copying
//                (runs(), what the end-to-end path reads through);
//   analysis pass — the engine alone over the blocks of SPMD columns the end-to-end path hands it
//                (captured once), against a loop that touches the same columns (warm: after one
//                untimed pass; all passes before the decoding measurements, so that their garbage
//                is not collected inside a pass; not after a forced full collection: measured,
//                that made the pass 1.5–2× slower).
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
import { readModel } from '../src/trace/read.js';
import { SpmdBlock, SpmdResolver } from '../src/trace/model/spmd.js';
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

/**
 * The trace's SPMD records as the end-to-end path hands them to the engine (blocks of columns from
 * the trace model's SPMD resolver), copied once, with the call sites mapped to a results tree's.
 */
interface Blocks { blocks: SpmdBlock[]; events: number; sites: Int32Array }

function capture(dir: string, res: PatternResults): Blocks {
  const blocks: SpmdBlock[] = [];
  let events = 0, spmd!: SpmdResolver;
  readModel(dir, (m) => {
    spmd = m.use(SpmdResolver);
    spmd.listenBlocks((b) => {
      const c = new SpmdBlock();
      for (const k of ['code', 'rank', 't', 'op', 'a', 'root', 'sync', 'sent', 'recv', 'node', 'thread'] as const) c[k].set(b[k].subarray(0, b.n));
      c.n = b.n;
      events += b.n;
      blocks.push(c);
    });
  });
  const sites = Int32Array.from(spmd.siteNames, (n) => res.site(n));
  return { blocks, events, sites };
}

/** The analysis pass alone: every block through the engine, as the end-to-end path runs it. */
function engine(c: Blocks, res: PatternResults): number {
  const eng = new PatternEngine(RANKS, res);
  for (const b of c.blocks) eng.consume(b, c.sites);
  eng.end();
  return eng.collectives;
}

/** Its baseline: a loop that reads the same columns. */
function touch(c: Blocks): number {
  let s = 0;
  for (const { n, code, rank, t, op, a, root, sync } of c.blocks) for (let i = 0; i < n; i++) s += code[i]! + rank[i]! + t[i]! + op[i]! + a[i]! + root[i]! + sync[i]!;
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
    // first, the end to end as one `luna analyze patterns` runs it: nothing compiled yet
    ctx.log('patterns: end to end, cold');
    let t = performance.now(), c0 = cpu();
    let found = analyzePatternsTrace(dir).patterns.length;
    const firstMs = performance.now() - t, firstCpu = cpu() - c0;
    const sites = new PatternResults(ranksOf);
    const cols = capture(dir, sites);
    // the analysis passes before the decoding measurements, whose garbage would be collected
    // inside them; one untimed pass first (the end to end above compiled the engine already)
    engine(cols, new PatternResults(ranksOf));
    ctx.log('patterns: analysis passes');
    for (let q = 0; q < PASSES * ctx.reps; q++) {
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
    for (let rep = 0; rep < ctx.reps; rep++) {
      ctx.log(`patterns: rep ${rep + 1}/${ctx.reps}`);
      t = performance.now();
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
      c0 = cpu();
      const r = analyzePatternsTrace(dir);
      e2e.push(performance.now() - t);
      e2eCpu.push(cpu() - c0);
      found = r.patterns.length;
      if (k < 0) console.log(k);
    }
    const mE2e = median(e2e), mIter = median(iter), mPass = median(pass), mBase = median(base);
    const least = (a: number[]): number => Math.max(1e-3, Math.min(...a));
    const figures = {
      events,
      spmdEvents: cols.events,
      generateMs: Math.round(genMs),
      decodeMergeMs: Math.round(mIter),
      decodeMergeObjectsMs: Math.round(median(iterObj)),
      decodeMergeRunsMs: Math.round(median(iterRuns)),
      endToEndFirstMs: Math.round(firstMs),
      eventsPerSecEndToEndFirst: Math.round(events / (firstMs / 1000)),
      eventsPerCpuSecEndToEndFirst: Math.round(events / (firstCpu / 1000)),
      endToEndMs: Math.round(mE2e),
      eventsPerSecEndToEnd: Math.round(events / (mE2e / 1000)),
      ratioEndToEndToDecode: +(mE2e / mIter).toFixed(2),
      analysisPassMs: +mPass.toFixed(1),
      eventsPerSecAnalysisPass: Math.round(cols.events / (mPass / 1000)),
      ratioPassToTouch: +(mPass / Math.max(1e-3, mBase)).toFixed(2),
      eventsPerCpuSecEndToEnd: Math.round(events / (median(e2eCpu) / 1000)),
      eventsPerCpuSecEndToEndBest: Math.round(events / (least(e2eCpu) / 1000)),
      eventsPerCpuSecAnalysisPass: Math.round(cols.events / (Math.max(1e-3, median(passCpu)) / 1000)),
      eventsPerCpuSecAnalysisPassBest: Math.round(cols.events / (least(passCpu) / 1000)),
      patternsFound: found,
    };
    return {
      status: 'ok', figures,
      targets: [
        { key: 'eventsPerSecEndToEnd', op: '>=', value: 2e6, label: 'pattern engine end to end, decoding included' },
        { key: 'eventsPerSecAnalysisPass', op: '>=', value: 20e6, label: 'pattern engine analysis pass' },
      ],
      notes: [`${RANKS} ranks on 2 nodes; median of ${ctx.reps} (…Best: the least CPU time); baselines: decode+merge into columns alone, and a loop over the engine's blocks; the end to end first cold (as one CLI run), then warm; the analysis pass over the blocks the end to end hands the engine, after one untimed pass, ${PASSES} passes per rep, before the decoding measurements (whose garbage would be collected inside them)`],
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
