// One streaming pass over a trace for the report: the SLOW analysis (its report and findings,
// computed by src/analysis/slow, never re-derived here), the pattern engine (src/analysis/patterns) plus a listener of the same trace model
// that keeps what the timeline draws — every fragment's lane, code and times, every DF transfer,
// every system-thread span — in growable typed columns (32 bytes per fragment, no objects).
import { SlowAnalyzer, interpretFindings, type Finding, type SlowOptions, type SlowReport } from '../analysis/slow/index.js';
import { finishReport } from '../analysis/slow/report.js';
import { PatternAnalysis, type PatternReport } from '../analysis/patterns/analyze.js';
import type { PathNode } from '../analysis/slow/critical.js';
import { readModel } from '../trace/read.js';
import type { ModelListener } from '../trace/model/model.js';
import type { DfRec, Fragment, Transfer } from '../trace/model/records.js';
import type { TraceManifest } from '../trace/manifest.js';
import type { RunStatus } from '../trace/schema.js';

/** A column of numbers that grows by doubling. */
export class Col<A extends Float64Array | Int32Array> {
  n = 0;
  constructor(public a: A, private readonly make: (n: number) => A) {}
  push(v: number): void {
    if (this.n === this.a.length) { const b = this.make(this.a.length * 2); b.set(this.a); this.a = b; }
    this.a[this.n++] = v;
  }
  view(): A { return this.a.subarray(0, this.n) as A; }
}
const f64 = (): Col<Float64Array> => new Col(new Float64Array(1024), (n) => new Float64Array(n));
const i32 = (): Col<Int32Array> => new Col(new Int32Array(1024), (n) => new Int32Array(n));

/** Fragments as columns: index i is the i-th CF to finish. */
export interface Frags { start: Float64Array; finish: Float64Array; cpu: Float64Array; slot: Int32Array; code: Int32Array }
export interface Spans { start: Float64Array; end: Float64Array; /** node it happened on (transfers: receiver) */ node: Int32Array; /** transfers: sender */ from: Int32Array; bytes: Float64Array }

export interface RunData {
  dir: string;
  manifest: TraceManifest;
  slow: SlowReport;
  findings: Finding[];
  /** how the run ended, as the manifest (or, lacking it, the records) says */
  status: RunStatus | 'unknown';
  frags: Frags;
  transfers: Spans;
  sys: Spans;
  /** indices into frags of the critical path's recorded steps, earliest first */
  critical: Int32Array;
  /** bytes of the trace files (progress and sizes) */
  traceBytes: number;
  /** the pattern engine's results (SPMD patterns, fragmented-program patterns) */
  patterns: PatternReport;
}

export interface CollectProgress { (eventsDone: number, eventsEstimated: number): void }

class Collector implements ModelListener {
  readonly fs = { start: f64(), finish: f64(), cpu: f64(), slot: i32(), code: i32() };
  readonly tr = { start: f64(), end: f64(), node: i32(), from: i32(), bytes: f64() };
  readonly sy = { start: f64(), end: f64(), node: i32() };
  /** by a fragment's finish number (Fragment.seq): its row in fs (-1: not drawn) */
  readonly rowOfSeq = i32();

  finish(f: Fragment, _inputs: readonly DfRec[]): void {
    while (this.rowOfSeq.n < f.seq) this.rowOfSeq.push(-1);
    if (f.slot < 0) { this.rowOfSeq.push(-1); return; }
    this.rowOfSeq.push(this.fs.start.n);
    this.fs.start.push(f.start); this.fs.finish.push(f.finish); this.fs.cpu.push(f.cpu);
    this.fs.slot.push(f.slot); this.fs.code.push(f.code);
  }
  transfer(t: Transfer): void {
    this.tr.start.push(t.firstSend); this.tr.end.push(t.arrive); this.tr.node.push(t.to); this.tr.from.push(t.from); this.tr.bytes.push(t.bytes);
  }
  sysBusy(node: number, t0: number, t1: number): void {
    this.sy.start.push(t0); this.sy.end.push(t1); this.sy.node.push(node);
  }
  /** The row of the fragment a critical-path node stands for (-1: none). */
  rowOf(p: PathNode): number {
    return p.seq >= 0 && p.seq < this.rowOfSeq.n ? this.rowOfSeq.a[p.seq]! : -1;
  }
}

/** Read and analyze `dir` once; throws TraceFormatError / fs errors like analyzeSlowTrace. */
export function collectRun(dir: string, opts: SlowOptions = {}, progress?: CollectProgress): RunData {
  let an!: SlowAnalyzer, pa!: PatternAnalysis;
  const col = new Collector();
  const read = readModel(dir, (model) => {
    pa = new PatternAnalysis(model);
    an = new SlowAnalyzer(model, { ...opts, observe: pa.observer });
    model.listen(col);
  }, progress);
  const slow = finishReport(an);
  const patterns = pa.finish(slow, read.readerWarnings, read.damage());
  for (const w of read.readerWarnings) slow.warnings.push(`trace: ${w}`);
  const critical: number[] = [];
  for (let p: PathNode | null = an.cpEnd; p; p = p.prev) {
    const row = col.rowOf(p);
    if (row >= 0) critical.push(row);
  }
  critical.reverse();
  const mf = read.manifest;
  const status: RunStatus | 'unknown' = mf.status && mf.status !== 'running' ? mf.status : read.model.status ?? mf.status ?? 'unknown';
  return {
    dir, manifest: mf, slow, findings: interpretFindings(slow), status,
    frags: { start: col.fs.start.view(), finish: col.fs.finish.view(), cpu: col.fs.cpu.view(), slot: col.fs.slot.view(), code: col.fs.code.view() },
    transfers: { start: col.tr.start.view(), end: col.tr.end.view(), node: col.tr.node.view(), from: col.tr.from.view(), bytes: col.tr.bytes.view() },
    sys: { start: col.sy.start.view(), end: col.sy.end.view(), node: col.sy.node.view(), from: new Int32Array(col.sy.node.n).fill(-1), bytes: new Float64Array(col.sy.node.n) },
    critical: Int32Array.from(critical),
    traceBytes: read.bytes,
    patterns,
  };
}
