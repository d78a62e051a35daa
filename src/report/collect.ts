// One streaming pass over a trace for the report: the SLOW analysis (its report and findings,
// computed by src/analysis/slow, never re-derived here), the pattern engine (src/analysis/patterns) plus a listener of the same trace model
// that keeps what the timeline draws — every fragment's lane, code and times, every DF transfer,
// every system-thread span — in growable typed columns (32 bytes per fragment, no objects).
import { SlowAnalyzer, interpretFindings, type Finding, type SlowOptions, type SlowReport } from '../analysis/slow/index.js';
import { finishReport } from '../analysis/slow/report.js';
import { PatternAnalysis, type PatternReport } from '../analysis/patterns/analyze.js';
import { pathSteps, type PathNode } from '../analysis/slow/critical.js';
import { NameTable } from './names.js';
import { readModel } from '../trace/read.js';
import type { ModelListener } from '../trace/model/model.js';
import type { DfRec, Fragment, Transfer } from '../trace/model/records.js';
import type { TraceManifest } from '../trace/manifest.js';
import { DDA_OPS, type RecordKind, type RunStatus, type TraceEvent } from '../trace/schema.js';

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
export interface Frags {
  start: Float64Array; finish: Float64Array; cpu: Float64Array; slot: Int32Array; code: Int32Array;
  /** the name of each (`sw[57][0]`) */
  names: NameTable;
  /** how many inputs each read, and the names of its first TIP_INPUTS (fragment i: inNames inOff[i] .. inOff[i + 1]) */
  inCount: Int32Array; inOff: Int32Array; inNames: NameTable;
  /** the global id of each: kept when asked (CollectOptions) */
  gid?: string[];
}
export interface Spans {
  start: Float64Array; end: Float64Array; /** node it happened on (transfers: receiver) */ node: Int32Array; /** transfers: sender */ from: Int32Array; bytes: Float64Array;
  /** transfers: the DF of each */
  names?: NameTable;
}

/** Inputs named per fragment in the timeline's tooltips (the count is always there). */
const TIP_INPUTS = 3;

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
  /** indices into frags of the critical path's steps, earliest first (the whole path unless longer than the analysis keeps) */
  critical: Int32Array;
  /** the names of those steps (`sw[57][0]`) */
  criticalNames: NameTable;
  /** bytes of the trace files (progress and sizes) */
  traceBytes: number;
  /** the pattern engine's results (SPMD patterns, fragmented-program patterns) */
  patterns: PatternReport;
}

export interface CollectProgress { (eventsDone: number, eventsEstimated: number): void }

class Collector implements ModelListener {
  readonly fs = { start: f64(), finish: f64(), cpu: f64(), slot: i32(), code: i32(), inCount: i32(), inOff: i32() };
  readonly names = new NameTable();
  readonly inNames = new NameTable();
  readonly tr = { start: f64(), end: f64(), node: i32(), from: i32(), bytes: f64() };
  readonly trNames = new NameTable();
  constructor(readonly gids: string[] | undefined) { this.fs.inOff.push(0); }
  readonly sy = { start: f64(), end: f64(), node: i32() };
  /** by a fragment's finish number (Fragment.seq): its row in fs (-1: not drawn) */
  readonly rowOfSeq = i32();

  finish(f: Fragment, inputs: readonly DfRec[]): void {
    while (this.rowOfSeq.n < f.seq) this.rowOfSeq.push(-1);
    if (f.slot < 0) { this.rowOfSeq.push(-1); return; }
    this.rowOfSeq.push(this.fs.start.n);
    this.fs.start.push(f.start); this.fs.finish.push(f.finish); this.fs.cpu.push(f.cpu);
    this.fs.slot.push(f.slot); this.fs.code.push(f.code);
    this.gids?.push(f.gid);
    this.names.add(f.label, f.labelIdx);
    this.fs.inCount.push(inputs.length);
    for (let k = 0; k < inputs.length && k < TIP_INPUTS; k++) this.inNames.addKey(inputs[k]!.key);
    this.fs.inOff.push(this.inNames.size);
  }
  transfer(t: Transfer): void {
    this.tr.start.push(t.firstSend); this.tr.end.push(t.arrive); this.tr.node.push(t.to); this.tr.from.push(t.from); this.tr.bytes.push(t.bytes);
    this.trNames.addKey(t.df.key);
  }
  sysBusy(node: number, t0: number, t1: number): void {
    this.sy.start.push(t0); this.sy.end.push(t1); this.sy.node.push(node);
  }
  readonly eventKinds: readonly RecordKind[] = ['ddaOp'];
  /** A dynamic array's global operation: a span of its GD node's network row, with the bytes it moved. */
  event(e: TraceEvent): void {
    if (e.kind !== 'ddaOp') return;
    this.tr.start.push(e.t); this.tr.end.push(e.end); this.tr.node.push(e.node); this.tr.from.push(e.node); this.tr.bytes.push(e.exchanged + e.rearranged);
    this.trNames.addKey(`${DDA_OPS[e.op] ?? 'operation'} of dynamic array ${e.array}`);
  }
  /** The row of the fragment a critical-path node stands for (-1: none). */
  rowOf(p: PathNode): number {
    return p.seq >= 0 && p.seq < this.rowOfSeq.n ? this.rowOfSeq.a[p.seq]! : -1;
  }
}

export interface CollectOptions {
  /** keep every fragment's global id (a distribution is shown applied to the run) */
  gids?: boolean;
}

/** Read and analyze `dir` once; throws TraceFormatError / fs errors like analyzeSlowTrace. */
export function collectRun(dir: string, opts: SlowOptions = {}, progress?: CollectProgress, co: CollectOptions = {}): RunData {
  let an!: SlowAnalyzer, pa!: PatternAnalysis;
  const col = new Collector(co.gids ? [] : undefined);
  const read = readModel(dir, (model) => {
    pa = new PatternAnalysis(model);
    an = new SlowAnalyzer(model, { ...opts, observe: pa.observer });
    model.listen(col);
  }, progress);
  const slow = finishReport(an);
  const patterns = pa.finish(slow, read.readerWarnings, read.damage());
  for (const w of read.readerWarnings) slow.warnings.push(`trace: ${w}`);
  const critical: number[] = [];
  const criticalNames = new NameTable();
  for (const p of pathSteps(an.cpEnd)) {
    const row = col.rowOf(p);
    if (row < 0) continue;
    critical.push(row);
    criticalNames.add(p.label, p.labelIdx);
  }
  const status = slow.run.status;
  return {
    dir, manifest: read.manifest, slow, findings: interpretFindings(slow), status,
    frags: { start: col.fs.start.view(), finish: col.fs.finish.view(), cpu: col.fs.cpu.view(), slot: col.fs.slot.view(), code: col.fs.code.view(), names: col.names, inCount: col.fs.inCount.view(), inOff: col.fs.inOff.view(), inNames: col.inNames, ...(col.gids ? { gid: col.gids } : {}) },
    transfers: { start: col.tr.start.view(), end: col.tr.end.view(), node: col.tr.node.view(), from: col.tr.from.view(), bytes: col.tr.bytes.view(), names: col.trNames },
    sys: { start: col.sy.start.view(), end: col.sy.end.view(), node: col.sy.node.view(), from: new Int32Array(col.sy.node.n).fill(-1), bytes: new Float64Array(col.sy.node.n) },
    critical: Int32Array.from(critical), criticalNames,
    traceBytes: read.bytes,
    patterns,
  };
}
