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
  status: string;
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

/** Read `dir` once and search it for every pattern. */
export function analyzePatternsTrace(dir: string, opts: PatternOptions = {}, progress?: ReadProgress, read: ReadTraceOptions = {}): PatternReport {
  let model!: TraceModel, spmd!: SpmdResolver, slow!: SlowAnalyzer, frag!: FragmentedPatterns;
  let results!: PatternResults;
  let engine: PatternEngine | null = null;
  let comparator: Comparator | null = null;
  const r = readModel(dir, (m) => {
    model = m;
    spmd = m.use(SpmdResolver);
    const slots = m.N * m.T;
    results = new PatternResults((p) => (PATTERNS[p]!.model === 'spmd' ? Math.max(1, spmd.ranks) : p === P.imbalance_in_quantum ? m.N : slots));
    frag = new FragmentedPatterns(m, results, opts.quantumNs);
    slow = new SlowAnalyzer(m, { observe: frag });
    const ensure = (rank: number): PatternEngine => {
      if (!engine) {
        engine = new PatternEngine(Math.max(spmd.ranks, rank + 1), results);
        if (opts.compare) { comparator = new Comparator(); engine.peer = comparator.hook; }
      } else if (rank >= engine.ranks) {
        // the manifest did not say THREADS (the resolver grows them as ranks appear)
        m.warn('the manifest does not give the SPMD ranks: a collective completed before the last rank appeared was judged on fewer ranks');
        engine.grow(rank + 1);
      }
      return engine;
    };
    spmd.listen({
      enter: (e, site) => ensure(e.rank).enter(e.rank, e.t, e.op, results.site(site)),
      exit: (e) => ensure(e.rank).exit(e.rank, e.t, e.op),
      cexit: (e) => ensure(e.rank).cexit(e.rank, e.t, e.op, e.seq, e.root, e.sync),
      lock: (e) => (e.kind === 'spmdAlock' ? ensure(e.rank).alock(e.rank, e.t, e.lock) : ensure(e.rank).rlock(e.rank, e.t, e.lock)),
    });
  }, progress, read);
  const sr = finishReport(slow);
  frag.end();
  const eng = engine as PatternEngine | null;
  eng?.end();
  const warnings = [...r.readerWarnings.map((w) => `trace: ${w}`)];
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
  for (const [w, n] of model.warnings) warnings.push(n > 1 ? `${w} (${n}×)` : w);
  const ranks = eng ? eng.ranks : spmd.ranks;
  const tWall = sr.tWall;
  const T = model.T;
  const label = (p: number, loc: number): string =>
    PATTERNS[p]!.model === 'spmd' ? `rank ${loc}` : p === P.imbalance_in_quantum ? `node ${loc}` : `node ${Math.floor(loc / T)} lane ${(loc % T) + 1}`;
  const available = (kind: 'spmd' | 'fragmented'): number => (kind === 'spmd' ? ranks * tWall : sr.cores * tWall);
  const cmp = comparator as Comparator | null;
  return {
    program: model.manifest.program, status: model.status ?? model.manifest.status ?? 'running',
    nodes: model.N, threads: model.T, ranks, tStart: sr.tStart, tWall,
    spmd: { events: eng?.events ?? 0, collectives: eng?.collectives ?? 0 },
    cfs: sr.cfs,
    patterns: results.tree(label, available),
    noise: { perInstanceNs: NOISE_PER_INSTANCE_NS, share: NOISE_SHARE },
    quantumNs: frag.quantumNs,
    slow: { S: sr.models.kireev2024?.S ?? sr.t.S, starvationTail: sr.starvationTail, L: sr.models.kireev2024?.L ?? sr.t.L, sendDelay: sr.overhead.sendDelay, startDelay: sr.overhead.startDelay, preempt: sr.overhead.preempt },
    ...(cmp ? { comparison: [...cmp.rows.values()] } : {}),
    warnings,
    damage: r.damage(),
  };
}
