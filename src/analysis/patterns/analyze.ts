// `luna analyze patterns`: one pass over a trace through the trace model. SPMD records go to the
// compound-event engine (engine.ts), CF records to SLOW, whose accounting the fragmented-program
// patterns observe (fragmented.ts); both charge one results tree.
import type { DamageReport } from '../../trace/damage.js';
import type { ReadTraceOptions } from '../../trace/merge.js';
import type { TraceModel } from '../../trace/model/model.js';
import { SpmdResolver } from '../../trace/model/spmd.js';
import { readModel, type ReadProgress } from '../../trace/read.js';
import { SlowAnalyzer } from '../slow/analyzer.js';
import { finishReport } from '../slow/report.js';
import type { RunEnd, SlowReport } from '../slow/types.js';
import { P, PATTERNS } from './catalog.js';
import { PatternEngine, type CollectiveView } from './engine.js';
import { FragmentedPatterns } from './fragmented.js';
import { NOISE_PER_INSTANCE_NS, NOISE_SHARE, PatternResults, type PatternNode } from './results.js';
import { SCALASCA_PEER, barrierCompletion, earlyReduce, lateBroadcast, waitAtBarrier, type SharedPattern } from './scalasca.js';

export interface PatternOptions {
  /** also compute Scalasca's formulas for the shared patterns, on the same instances */
  compare?: boolean;
  /** time quantum of the imbalance pattern (ns); default: the run in DEFAULT_QUANTA quanta */
  quantumNs?: number;
}

export interface Comparison {
  pattern: SharedPattern;
  scalasca: string;
  instances: number;
  seedNs: number;
  scalascaNs: number;
}

export interface PatternReport {
  program: string;
  /** how the run ended (SLOW's account of it): unless `complete`, the patterns cover its part before that */
  run: RunEnd;
  nodes: number;
  threads: number;
  /** SPMD ranks (0: not an SPMD run) */
  ranks: number;
  tStart: number;
  tWall: number;
  /** the SPMD records analysed and the collectives completed */
  spmd: { events: number; collectives: number };
  /** CFs the fragmented-program patterns saw */
  cfs: number;
  patterns: PatternNode[];
  noise: { perInstanceNs: number; share: number };
  /** imbalance quantum used (ns; NaN: no imbalance computed) */
  quantumNs: number;
  /** SLOW's figures the fragmented patterns sum to (ns) */
  slow: { S: number; starvationTail: number; L: number; sendDelay: number; startDelay: number; preempt: number };
  comparison?: Comparison[];
  warnings: string[];
  damage: DamageReport;
}

/** Cumulates the seed's and Scalasca's wasted time on the collectives both apply to. */
class Comparator {
  readonly rows = new Map<number, Comparison>();
  private buf = new Float64Array(0);

  hook = (p: number, c: CollectiveView, seed: number): void => {
    const id = PATTERNS[p]!.id as SharedPattern;
    if (!(id in SCALASCA_PEER)) return;
    if (this.buf.length !== c.enter.length) this.buf = new Float64Array(c.enter.length);
    const out = this.buf;
    switch (p) {
      case P.wait_at_barrier: case P.entry_sync: case P.nxn_entry_sync: waitAtBarrier(c.enter, c.exit, out); break;
      case P.late_broadcast: lateBroadcast(c.enter, c.exit, c.root, out); break;
      case P.early_gather: earlyReduce(c.enter, c.exit, c.root, out); break;
      case P.barrier_completion: barrierCompletion(c.exit, out); break;
      default: return;
    }
    let s = 0;
    for (let r = 0; r < out.length; r++) s += out[r]!;
    let row = this.rows.get(p);
    if (!row) this.rows.set(p, (row = { pattern: id, scalasca: SCALASCA_PEER[id], instances: 0, seedNs: 0, scalascaNs: 0 }));
    row.instances++;
    row.seedNs += seed;
    row.scalascaNs += s;
  };
}

/**
 * The pattern analysis of one trace model: made before the events flow (it listens to the SPMD
 * resolver and observes the SLOW analyzer the caller makes with `observer`), finished after.
 * `luna analyze patterns` and the report's collection share it, so the report reads a trace once.
 */
export class PatternAnalysis {
  readonly observer: FragmentedPatterns;
  private readonly spmd: SpmdResolver;
  private readonly results: PatternResults;
  private engine: PatternEngine | null = null;
  private comparator: Comparator | null = null;

  constructor(private readonly m: TraceModel, opts: PatternOptions = {}) {
    const spmd = (this.spmd = m.use(SpmdResolver));
    const slots = m.N * m.T;
    const results = (this.results = new PatternResults((p) => (PATTERNS[p]!.model === 'spmd' ? Math.max(1, this.engine?.ranks ?? spmd.ranks) : p === P.imbalance_in_quantum ? m.N : slots)));
    this.observer = new FragmentedPatterns(m, results, opts.quantumNs);
    // the layer's records in blocks of columns: one loop of the engine per block, no call per record
    let sites = new Int32Array(64), mapped = 0;
    spmd.listenBlocks((b) => {
      let e = this.engine;
      if (!e) {
        // as many ranks as the manifest says, else as the first record shows (the engine grows)
        e = this.engine = new PatternEngine(m.manifest.ranks !== undefined ? spmd.ranks : b.rank[0]! + 1, results);
        e.onGrow = () => m.warn('the manifest does not give the SPMD ranks: a collective completed before the last rank appeared was judged on fewer ranks');
        if (opts.compare) { this.comparator = new Comparator(); e.peer = this.comparator.hook; }
      }
      const names = spmd.siteNames;
      if (names.length > sites.length) { const w = new Int32Array(2 * names.length); w.set(sites); sites = w; }
      for (; mapped < names.length; mapped++) sites[mapped] = results.site(names[mapped]!);
      e.consume(b, sites);
    });
  }

  /** The report, once the events were read and SLOW finished (`sr`). */
  finish(sr: SlowReport, readerWarnings: readonly string[], damage: DamageReport): PatternReport {
    const m = this.m;
    this.observer.end();
    const eng = this.engine;
    eng?.end();
    const warnings = readerWarnings.map((w) => `trace: ${w}`);
    if (eng) {
      const pb = eng.problems;
      if (pb.unmatchedExits) warnings.push(`${pb.unmatchedExits} SPMD exit(s) without the matching enter on their rank (left out)`);
      if (pb.firstMismatch) {
        const f = pb.firstMismatch;
        warnings.push(`${pb.mismatched} mismatched collective(s): collective #${f.seq} is ${f.expected} on one rank but ${f.op} on rank ${f.rank} (not analysed)`);
      }
      if (pb.incomplete) warnings.push(`${pb.incomplete} collective(s) some rank never left (the run ended inside them; not analysed)`);
      if (pb.doubleAcquire) warnings.push(`${pb.doubleAcquire} lock acquisition(s) of a lock the trace shows held (a release is missing)`);
    }
    for (const [w, n] of m.warnings) warnings.push(n > 1 ? `${w} (${n}×)` : w);
    const ranks = eng ? eng.ranks : this.spmd.ranks;
    const tWall = sr.tWall, T = m.T;
    const label = (p: number, loc: number): string =>
      PATTERNS[p]!.model === 'spmd' ? `rank ${loc}` : p === P.imbalance_in_quantum ? `node ${loc}` : `node ${Math.floor(loc / T)} lane ${(loc % T) + 1}`;
    const available = (kind: 'spmd' | 'fragmented'): number => (kind === 'spmd' ? ranks * tWall : sr.cores * tWall);
    const k = sr.models.kireev2024 ?? sr.t;
    return {
      program: m.manifest.program, run: sr.run,
      nodes: m.N, threads: T, ranks, tStart: sr.tStart, tWall,
      spmd: { events: eng?.events ?? 0, collectives: eng?.collectives ?? 0 },
      cfs: sr.cfs,
      patterns: this.results.tree(label, available),
      noise: { perInstanceNs: NOISE_PER_INSTANCE_NS, share: NOISE_SHARE },
      quantumNs: this.observer.quantumNs,
      slow: { S: k.S, starvationTail: sr.starvationTail, L: k.L, sendDelay: sr.overhead.sendDelay, startDelay: sr.overhead.startDelay, preempt: sr.overhead.preempt },
      ...(this.comparator ? { comparison: [...this.comparator.rows.values()] } : {}),
      warnings,
      damage,
    };
  }
}

/** Read `dir` once and search it for every pattern. */
export function analyzePatternsTrace(dir: string, opts: PatternOptions = {}, progress?: ReadProgress, read: ReadTraceOptions = {}): PatternReport {
  let pa!: PatternAnalysis, slow!: SlowAnalyzer;
  const r = readModel(dir, (m) => {
    pa = new PatternAnalysis(m, opts);
    slow = new SlowAnalyzer(m, { observe: pa.observer });
  }, progress, read);
  const sr = finishReport(slow);
  return pa.finish(sr, r.readerWarnings, r.damage());
}
