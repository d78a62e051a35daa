// The streaming SLOW analyzer, a listener of the trace model (src/trace/model): the model
// resolves identities and arrivals, the analyzer does the accounting. Each lane's timeline
// [T_start, T_end) is partitioned exactly into CF executions and idle intervals. An execution of
// wall time d that waited w for resources (wait records inside it) is W = w, U = its CPU time
// less the CPU it spent waiting (at most d − w), O = the rest (pre-emption). An idle interval is
// split by splitIdle (seed 003 §4.2) when the CF that ended it finishes (its inputs are all known
// by then), plus the tail after its last CF (→ S); the parts of it a thread spent waiting outside
// any CF (an SPMD rank at a barrier) are W instead. Hence ΣT_X = T_total by construction whenever
// the trace is complete. An SPMD rank runs no CFs: its program between its first and last
// operation is its work (U), less the waits in it (W).
import { SpmdResolver } from '../../trace/model/spmd.js';
import { UnspentResolver } from '../../trace/model/unspent.js';
import { CODE } from '../../trace/columns.js';
import type { TraceManifest } from '../../trace/manifest.js';
import type { ModelListener, Slot, TraceModel } from '../../trace/model/model.js';
import type { DfRec, Fragment, Wait } from '../../trace/model/records.js';
import { KeyedRows, Series, TopK, addTo } from './accum.js';
import { PathNode } from './critical.js';
import { History } from './litvinov.js';
import { RunGraph } from '../sim/run-graph.js';
import { BusySpans } from './busy-spans.js';
import { splitIdle } from './split.js';
import { F_L, F_O, F_S, F_U, F_W, type SlowModel, type SlowOptions } from './types.js';

const NF = 5;
const ENTER = CODE.spmdEnter;
/** carveIdle's answer for a lane that did not wait (never written) */
const NO_WAITS = new Float64Array(5);

/**
 * A CF running on a lane: when that lane went idle before it, and what it waited inside (wall
 * intervals [x, y) in `waits`, the CPU spent waiting; NaN when a wait did not measure it).
 */
interface Running { f: Fragment; a: number; waits: number[] | null; waitCpu: number }

export class SlowAnalyzer implements ModelListener {
  readonly N: number;
  readonly T: number;
  readonly model: SlowModel;
  readonly litvinov: boolean;
  readonly manifest: TraceManifest;

  /** per lane slot: when it went idle (NaN: not yet used), and the CF running there */
  readonly idle: Float64Array;
  readonly running: (Running | null)[];
  readonly history: History | null;
  private sinceprune = 0;

  // accumulators (selected model)
  readonly tot = new Float64Array(NF);
  readonly kireev = new Float64Array(NF);
  litMoved = 0;
  readonly perNode: Float64Array;
  readonly perThread: Float64Array;
  readonly perCode = new KeyedRows<number>();
  readonly perLabel = new KeyedRows<string>();
  series: Series | null = null;
  readonly ovh = { preempt: 0, sendDelay: 0, startDelay: 0, startDelaySystemBusy: 0, systemCores: 0, startup: 0 };
  /** the system threads' busy spans, for the part of a start delay they account for */
  private readonly sysSpans: BusySpans;
  private sinceSpanPrune = 0;
  sTail = 0;
  /** S of lanes that ran no CF (part of sTail) */
  sIdleLanes = 0;
  cfCount = 0;
  /** CFs run per lane slot */
  readonly laneCfs: Float64Array;
  /** an SPMD run's lanes (its ranks): the first and last instant of each rank's operations (NaN: none) */
  readonly rankFirst: Float64Array | null;
  readonly rankLast: Float64Array | null;
  /** system-thread busy time per node */
  readonly busy: Float64Array;

  // blame
  sBlamed = 0;
  lBlamed = 0;
  readonly sByCode = new Map<number, number>();
  readonly sByLabel = new Map<string, number>();
  readonly sByCf = new TopK();
  /** blamed S by what its producer did meanwhile: not ready yet, ready and not started, running, not known */
  readonly sByState = new Float64Array(4);
  readonly lByDfBase = new Map<string, number>();
  readonly lByDf = new TopK();
  readonly lByPair = new Map<number, number>();
  readonly lByProdLabel = new Map<string, number>();

  // waiting
  wBlamed = 0;
  readonly wByResource = new TopK();
  readonly wByKind = new Map<string, number>();
  readonly wByWaiter = new TopK();
  waitCount = 0;
  /** per lane slot: waits outside any CF not yet charged, as [x, y) pairs (carved from idle time) */
  private readonly outside: (number[] | null)[];
  /** per lane slot: the latest end of its waits so far (waits overlapping it count once) */
  private readonly waitedTo: Float64Array;

  // critical path
  cpEnd: PathNode | null = null;
  /** the run's graph, replayed under other options to predict what advice would gain (null: not asked) */
  readonly graph: RunGraph | null;
  /** the DFs held to the end, their req_count not reached */
  readonly unspent: UnspentResolver;
  /** per lane slot: when its first CF started (NaN: none yet) */
  readonly firstStart: Float64Array;
  /** DF families the advice may name (read by CFs, or waited for): how many indices, and a label that produces them */
  readonly families = new Map<string, { indices: number; producer: string }>();
  /** label → a family of DFs its CFs produce (the first seen) */
  readonly produces = new Map<string, string>();
  private readonly ins: number[] = [];
  private readonly lats: number[] = [];
  /** each fragment's critical-path node (this listener's slot on the model's fragments) */
  readonly pathOf: Slot<PathNode>;

  constructor(readonly m: TraceModel, readonly opts: SlowOptions = {}) {
    this.manifest = m.manifest;
    this.N = m.N;
    this.T = m.T;
    this.model = opts.model ?? 'kireev2024';
    this.litvinov = this.model === 'litvinov2017' || !!opts.compare;
    const slots = this.N * this.T;
    this.idle = new Float64Array(slots).fill(NaN);
    this.running = new Array<Running | null>(slots).fill(null);
    this.history = this.litvinov ? new History(slots) : null;
    this.perNode = new Float64Array(this.N * NF);
    this.perThread = new Float64Array(slots * NF);
    this.busy = new Float64Array(this.N);
    this.sysSpans = new BusySpans(this.N);
    this.laneCfs = new Float64Array(slots);
    this.firstStart = new Float64Array(slots).fill(NaN);
    this.graph = opts.predict === false ? null : new RunGraph(this.N, this.T);
    this.unspent = m.use(UnspentResolver);
    this.outside = new Array<number[] | null>(slots).fill(null);
    this.waitedTo = new Float64Array(slots).fill(-Infinity);
    this.pathOf = m.slot<PathNode>('slow: critical path');
    const spmd = this.manifest.ranks !== undefined;
    this.rankFirst = spmd ? new Float64Array(slots).fill(NaN) : null;
    this.rankLast = spmd ? new Float64Array(slots).fill(NaN) : null;
    // an SPMD run's operations as numbers from the layer's resolver (no object per record): a
    // rank's lane is the one its operations are entered on
    if (spmd) {
      const lane: number[] = [];
      m.use(SpmdResolver).listenBlocks((b) => {
        const { code, rank, t, node, thread } = b;
        for (let i = 0; i < b.n; i++) {
          const r = rank[i]!;
          if (code[i] === ENTER) { const th = thread[i]!, nd = node[i]!; if (th >= 1 && th <= this.T && nd < this.N) lane[r] = nd * this.T + th - 1; }
          this.rankOp(lane[r], t[i]!);
        }
      });
    }
    m.listen(this);
  }

  /** An SPMD operation of the rank on lane `slot` at t: the lane has been running its program until then. */
  private rankOp(slot: number | undefined, t: number): void {
    if (slot === undefined || !(t === t)) return;
    if (!(this.rankFirst![slot]! <= t)) this.rankFirst![slot] = t;
    if (!(this.rankLast![slot]! >= t)) this.rankLast![slot] = t;
  }

  codeName(code: number): string { return this.m.codeName(code); }
  origin(): number { return this.m.origin(); }

  // ------------------------------------------------------------------ model callbacks

  sysBusy(node: number, t0: number, t1: number): void {
    this.busy[node] += t1 - t0;
    this.sysSpans.add(node, t0, t1);
  }

  start(f: Fragment): void {
    const slot = f.slot;
    const a = this.idle[slot]!;
    this.running[slot] = { f, a: a === a ? a : this.origin(), waits: null, waitCpu: 0 };
  }

  /**
   * A wait of a worker lane: inside the CF running there (whichever CF it names: one thread runs
   * one CF at a time), or outside any CF, to be carved from the lane's idle time.
   */
  wait(w: Wait): void {
    const slot = w.slot;
    if (slot < 0 || !(w.end > w.start)) return;
    const ns = w.end - w.start;
    this.waitCount++;
    this.wBlamed += ns;
    this.wByResource.add(`${w.kind} ${w.resource}`, ns);
    addTo(this.wByKind, w.kind, ns);
    const f = w.fragment;
    this.wByWaiter.add(f ? f.gid : w.rank >= 0 ? `rank ${w.rank}` : `node ${w.node} thread ${w.thread}`, ns, f ? this.codeName(f.code) : undefined, f ? f.name : undefined);
    // A thread waits for one thing at a time, but layers may nest their waits (a barrier waiting
    // on a request): W is the union. Waits come in the order of their starts, so cutting each at
    // the furthest end so far is enough; its CPU is cut in proportion.
    const to = this.waitedTo[slot]!;
    const x = w.start > to ? w.start : to;
    if (!(w.end > x)) return;
    this.waitedTo[slot] = w.end;
    const r = this.running[slot];
    if (r && r.f.start <= w.start) {
      (r.waits ??= []).push(x, w.end);
      r.waitCpu += x === w.start ? w.cpu : (w.cpu * (w.end - x)) / ns;
    } else (this.outside[slot] ??= []).push(x, w.end);
  }

  finish(f: Fragment, inputs: readonly DfRec[]): void {
    if (f.slot < 0) return;
    const r = this.running[f.slot];
    this.running[f.slot] = null;
    const a = r && r.f === f ? r.a : (this.idle[f.slot] === this.idle[f.slot] ? this.idle[f.slot]! : this.origin());
    this.account(f, inputs, a, f.finish, f.cpu, r && r.f === f ? r : null);
  }

  private getSeries(): Series {
    if (!this.series) {
      const w = this.opts.windowNs;
      this.series = new Series(this.origin(), w && w > 0 ? w : 1000, !!(w && w > 0));
    }
    return this.series;
  }

  /** Charge ns of factor f on [x, y) to a lane slot and, when given, to a CF's code and label. */
  add(f: number, ns: number, slot: number, x: number, y: number, code: Float64Array | null, label: Float64Array | null): void {
    if (ns === 0) return;
    this.tot[f] += ns;
    this.perNode[Math.floor(slot / this.T) * NF + f] += ns;
    this.perThread[slot * NF + f] += ns;
    if (code) code[f] += ns;
    if (label) label[f] += ns;
    this.getSeries().add(f, x, y, ns);
  }

  /**
   * The idle interval [a, D) before m and m's own execution [D, e) of CPU time u; `r`: what m
   * waited for inside (absent: nothing).
   */
  account(m: Fragment, inputs: readonly DfRec[], a: number, e: number, u: number, r: Running | null = null): void {
    const slot = m.slot, d = m.start, node = m.node;
    this.idle[slot] = e;
    this.cfCount++;
    this.laneCfs[slot]++;
    // B: the latest input to exist; G/C: the latest to arrive here and when it was first sent
    let B = -Infinity, G = -Infinity, C = -Infinity;
    let bRec: DfRec | null = null, gRec: DfRec | null = null, cpIn: PathNode | null = null;
    const ins = this.ins, lats = this.lats;
    ins.length = 0; lats.length = 0;
    for (const x of inputs) {
      const b = x.readyAt();
      if (b > B) { B = b; bRec = x; }
      const arr = x.arrival(node);
      let g: number, c: number;
      if (arr) { g = arr.at; c = arr.sent; } else { this.m.warn('remote input without dfReceive'); g = c = x.computedAt; }
      if (g > G || (g === G && c > C)) { G = g; C = c; gRec = x; }
      const p = x.producer ? this.pathOf.get(x.producer) : undefined;
      if (p && (!cpIn || p.len > cpIn.len)) cpIn = p;
      if (x.producer && !this.produces.has(x.producer.label)) this.produces.set(x.producer.label, this.family(x));
      // the graph's edge: from the producer, after the transfer's latency when it came from elsewhere
      if (p && p.idx >= 0) { ins.push(p.idx); lats.push(x.home !== node && g > b ? g - b : 0); }
    }
    const path = new PathNode((cpIn?.len ?? 0) + u, u, m.code, m.label, m.gid, m.seq, m.labelIdx, cpIn, this.opts.wholePathSteps);
    this.pathOf.set(m, path);
    if (this.graph) path.idx = this.graph.add(node, e - d, u, m.created === m.created ? m.created : d, ins, lats);
    if (this.laneCfs[slot] === 1) this.firstStart[slot] = d;
    if (!this.cpEnd || path.len > this.cpEnd.len) this.cpEnd = path;

    const sp = splitIdle(a, d, B, C, G);
    const cr = this.perCode.get(m.code), lr = this.perLabel.get(m.label);
    // waits outside any CF inside the idle interval are W, taken from the part they overlap
    const w = this.carveIdle(slot, a, d, sp.b, sp.c, sp.g, cr, lr);
    this.kireev[F_S] += sp.s - w[0]!; this.kireev[F_O] += sp.oSend - w[1]! + sp.oStart - w[3]!; this.kireev[F_L] += sp.l - w[2]!;
    let moved = 0;
    // the execution: W = its waits, U = its CPU less the CPU spent waiting, O = the rest
    const dur = e - d;
    let wIn = 0, wCpu = 0;
    if (r?.waits) {
      const ws = r.waits;
      for (let i = 0; i < ws.length; i += 2) {
        const x = Math.max(ws[i]!, d), y = Math.min(ws[i + 1]!, e);
        if (y > x) { wIn += y - x; this.add(F_W, y - x, slot, x, y, cr, lr); }
      }
      wCpu = r.waitCpu;
    }
    const busy = dur - wIn;
    const useful = Math.max(0, Math.min(wCpu === wCpu ? u - wCpu : u, busy));
    const pre = busy - useful;
    if (this.history) {
      const prodSlot = bRec?.producer?.slot ?? -1;
      const h = this.history.refine(prodSlot, a, sp.b);
      moved = Math.min(h.moved, sp.s - w[0]!);
      this.litMoved += moved;
      const ovh: number[] = [];
      if (sp.c > sp.b) ovh.push(sp.b, sp.c);
      if (d > sp.g) ovh.push(sp.g, d);
      for (const v of h.isect) ovh.push(v);
      this.history.push(slot, { start: d, end: e, preempt: pre, s1a: a, s1b: sp.b, oUniStarv: h.oUniStarv, ovh });
      if (++this.sinceprune >= 1024) { this.sinceprune = 0; this.history.prune(this.minPendingA()); }
    }
    const sel = this.model === 'litvinov2017' ? moved : 0;
    this.add(F_S, sp.s - w[0]! - sel, slot, a, sp.b, cr, lr);
    this.add(F_O, sp.oSend - w[1]! + sel, slot, sp.b, sp.c, cr, lr);
    this.add(F_L, sp.l - w[2]!, slot, sp.c, sp.g, cr, lr);
    this.add(F_O, sp.oStart - w[3]!, slot, sp.g, d, cr, lr);
    this.ovh.sendDelay += sp.oSend - w[1]!;
    this.ovh.startDelay += sp.oStart - w[3]!;
    // of the wait for a ready CF: the part its node's system thread spent busy with other work
    if (sp.oStart - w[3]! > 0) this.ovh.startDelaySystemBusy += Math.min(this.sysSpans.overlap(node, sp.g, d), sp.oStart - w[3]!);
    if (++this.sinceSpanPrune >= 1024) { this.sinceSpanPrune = 0; this.sysSpans.prune(this.minPendingA()); }
    // the O before a lane's first CF is start-up (workers booting, the first CFs being made)
    if (this.laneCfs[slot] === 1) this.ovh.startup += sp.oSend - w[1]! + sp.oStart - w[3]!;
    this.add(F_U, useful, slot, d, e, cr, lr);
    this.add(F_O, pre, slot, d, e, cr, lr);
    this.kireev[F_U] += useful; this.kireev[F_O] += pre; this.kireev[F_W] += wIn + w[4]!;
    this.ovh.preempt += pre;
    cr[NF]++;
    lr[NF]++;
    const sLeft = sp.s - w[0]!, lLeft = sp.l - w[2]!;
    const obs = this.opts.observe;
    if (obs) {
      obs.idle?.(m, sLeft, bRec?.producer ?? null, sp.oSend - w[1]!, lLeft, gRec, sp.oStart - w[3]!);
      obs.preempt?.(m, pre);
    }
    if (sLeft > 0 && bRec) this.blameS(bRec, sLeft, a, sp.b, sp.s);
    if (lLeft > 0 && gRec) this.blameL(gRec, node, lLeft);
  }

  /**
   * The waits outside any CF of lane `slot` within the idle interval [a, d), whose parts are
   * [a, b) S, [b, c) O, [c, g) L, [g, d) O: each wait's overlap with a part is charged as W (to
   * `code`/`label` when given, the CF that ended the interval). Returns the W taken from each
   * part, and their sum last. Waits ending after d stay for the lane's next interval.
   */
  carveIdle(slot: number, a: number, d: number, b: number, c: number, g: number, code: Float64Array | null, label: Float64Array | null): Float64Array {
    const ws = this.outside[slot];
    if (!ws) return NO_WAITS;
    const out = this.carved.fill(0);
    const cuts = [a, b, c, g, d];
    let keep = 0;
    for (let i = 0; i < ws.length; i += 2) {
      const x0 = ws[i]!, y0 = ws[i + 1]!;
      for (let k = 0; k < 4; k++) {
        const x = Math.max(x0, cuts[k]!), y = Math.min(y0, cuts[k + 1]!);
        if (y > x) { out[k] += y - x; out[4] += y - x; this.add(F_W, y - x, slot, x, y, code, label); }
      }
      if (y0 > d) { ws[keep++] = Math.max(x0, d); ws[keep++] = y0; }
    }
    ws.length = keep;
    if (keep === 0) this.outside[slot] = null;
    return out;
  }

  /** W taken from each part of an idle interval (carveIdle's result, reused) */
  private readonly carved = new Float64Array(5);

  private minPendingA(): number {
    let min = Infinity;
    for (let s = 0; s < this.running.length; s++) {
      const r = this.running[s];
      const a = r ? r.a : this.idle[s]!;
      if (a === a && a < min) min = a;
    }
    return min === Infinity ? this.origin() : min;
  }

  /**
   * ns of S, the part left of the idle [a, b) of length s, waited for x: charged to its producer,
   * and split by what the producer did on [a, b) — before its readiness, between its readiness
   * and its start (queued on its lane or in a batch), running — in proportion when waits were
   * carved from the part.
   */
  private blameS(x: DfRec, ns: number, a: number, b: number, s: number): void {
    this.sBlamed += ns;
    const p = x.producer, st = this.sByState;
    if (!p || !(p.start === p.start)) { st[3] += ns; return; }
    const k = s > 0 ? ns / s : 0;
    const started = Math.max(a, Math.min(b, p.start));
    const run = b - started;
    if (p.ready === p.ready) {
      const ready = Math.max(a, Math.min(started, p.ready));
      st[0] += (ready - a) * k;
      st[1] += (started - ready) * k;
    } else st[3] += (started - a) * k;
    st[2] += run * k;
    addTo(this.sByCode, p.code, ns);
    addTo(this.sByLabel, p.label, ns);
    this.sByCf.add(p.gid, ns, this.codeName(p.code), p.name);
  }

  /** x's family, noted with its number of indices (a rule for it must have as many) */
  private family(x: DfRec): string {
    const f = x.family;
    if (!this.families.has(f) && this.families.size < 4096) {
      const k = x.key, hash = k.indexOf('#');
      let n = 0;
      for (let i = k.indexOf('.', hash); i >= 0; i = k.indexOf('.', i + 1)) n++;
      this.families.set(f, { indices: hash < 0 ? 0 : n, producer: x.producer?.label ?? '' });
    }
    return f;
  }

  private blameL(x: DfRec, node: number, ns: number): void {
    this.lBlamed += ns;
    this.family(x);
    addTo(this.lByDfBase, x.family, ns);
    this.lByDf.add(x.name, ns);
    const from = x.copyAt(node)?.from ?? -1;
    if (from >= 0) addTo(this.lByPair, from * this.N + node, ns);
    if (x.producer) addTo(this.lByProdLabel, x.producer.label, ns);
  }
}
