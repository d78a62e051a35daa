// The streaming SLOW analyzer: one pass over the merged, time-ordered events of a run.
// Each worker thread's timeline [T_start, T_end) is partitioned exactly into CF executions
// (CPU time → U, wall − CPU → O) and idle intervals, each split by splitIdle (seed 003 §4.2) when
// the CF that ended it finishes (its inputs are all known by then), plus the tail after its last
// CF (→ S). Hence ΣT_X = T_total by construction whenever the trace is complete.

import type { TraceEvent, TraceManifest } from '../../trace/events.js';
import { KeyedRows, Series, TopK, addTo } from './accum.js';
import { PathNode } from './critical.js';
import { History } from './litvinov.js';
import { splitIdle } from './split.js';
import { CfRec, DfRec, baseName, key } from './state.js';
import { F_L, F_O, F_S, F_U, type SlowModel, type SlowOptions } from './types.js';

const NF = 5;
const RECENT_MAX = 1 << 13;

export class SlowAnalyzer {
  readonly N: number;
  readonly T: number;
  readonly model: SlowModel;
  readonly litvinov: boolean;
  events = 0;
  firstT = NaN;
  lastT = NaN;
  tStart = NaN;
  tEnd = NaN;
  readonly warnings = new Map<string, number>();

  // fragment state
  /** per node: local CF number → record (per-node maps keep keys small integers) */
  readonly cfs: Map<number, CfRec>[];
  /** per node: CFs finished lately, for outputs announced after the finish */
  readonly recent: Map<number, CfRec>[];
  private readonly recentRing = new Float64Array(RECENT_MAX).fill(-1);
  private recentPos = 0;
  readonly names = new Map<string, DfRec>();
  /** DF numbers per node, and per (node, thread) stream for writers that number per thread */
  readonly nodeDf: Map<number, DfRec>[];
  readonly streamDf = new Map<number, Map<number, DfRec>>();
  /** (node, local DF) → CFs whose cfInput came before the dfName */
  readonly unnamed = new Map<number, CfRec[]>();

  // worker timelines: slot = node·T + thread − 1
  readonly idle: Float64Array;
  readonly running: (CfRec | null)[];
  readonly history: History | null;
  private sinceprune = 0;
  private virtualWarned = 0;

  // accumulators (selected model)
  readonly tot = new Float64Array(NF);
  readonly kireev = new Float64Array(NF);
  litMoved = 0;
  readonly perNode: Float64Array;
  readonly perThread: Float64Array;
  readonly perCode = new KeyedRows<number>();
  readonly perLabel = new KeyedRows<string>();
  series: Series | null = null;
  readonly ovh = { preempt: 0, sendDelay: 0, startDelay: 0, systemCores: 0 };
  sTail = 0;
  cfCount = 0;
  readonly sysBusy: Float64Array;

  // blame
  sBlamed = 0;
  lBlamed = 0;
  readonly sByCode = new Map<number, number>();
  readonly sByLabel = new Map<string, number>();
  readonly sByCf = new TopK();
  readonly lByDfBase = new Map<string, number>();
  readonly lByDf = new TopK();
  readonly lByPair = new Map<number, number>();
  readonly lByProdLabel = new Map<string, number>();

  // critical path
  cpEnd: PathNode | null = null;

  constructor(readonly manifest: TraceManifest, readonly opts: SlowOptions = {}) {
    this.N = Math.max(1, manifest.nodes);
    this.T = Math.max(1, manifest.threads);
    this.model = opts.model ?? 'kireev2024';
    this.litvinov = this.model === 'litvinov2017' || !!opts.compare;
    const slots = this.N * this.T;
    this.nodeDf = Array.from({ length: this.N }, () => new Map());
    this.cfs = Array.from({ length: this.N }, () => new Map());
    this.recent = Array.from({ length: this.N }, () => new Map());
    this.idle = new Float64Array(slots).fill(NaN);
    this.running = new Array<CfRec | null>(slots).fill(null);
    this.history = this.litvinov ? new History(slots) : null;
    this.perNode = new Float64Array(this.N * NF);
    this.perThread = new Float64Array(slots * NF);
    this.sysBusy = new Float64Array(this.N);
  }

  warn(what: string): void { this.warnings.set(what, (this.warnings.get(what) ?? 0) + 1); }

  codeName(code: number): string { return this.manifest.codes[code] ?? `code#${code}`; }

  push(e: TraceEvent): void {
    this.events++;
    const t = e.t;
    if (t === t) { if (!(this.firstT === this.firstT)) this.firstT = t; this.lastT = t; }
    switch (e.kind) {
      case 'programStart':
        if (!(this.tStart <= t)) this.tStart = t;
        break;
      case 'programFinish':
        if (!(this.tEnd >= t)) this.tEnd = t;
        break;
      case 'cfCreated':
      case 'cfReceive':
        this.onCreated(e.node, e.cf, e.code, e.label, e.gid);
        break;
      case 'cfMigrate':
        if (e.node < this.N) this.cfs[e.node].delete(e.cf);
        break;
      case 'cfInput': this.onInput(e.node, e.thread, e.cf, e.df); break;
      case 'cfStart': this.onStart(e.node, e.thread, t, e.cpu, e.cf); break;
      case 'cfFinish': this.onFinish(e.node, e.thread, t, e.cpu, e.cf); break;
      case 'dfName': this.onName(e.node, e.thread, e.df, e.name); break;
      case 'dfComputed': this.onComputed(e.node, e.thread, t, e.df, e.producerCf); break;
      case 'dfSendStart': this.onSend(e.node, e.thread, t, e.df, e.toNode); break;
      case 'dfReceive': this.onReceive(e.node, e.thread, t, e.df, e.fromNode); break;
      case 'dfDeleted': this.onDeleted(e.node, e.thread, e.df); break;
      case 'sysBusy':
        if (e.node < this.N) this.sysBusy[e.node] += e.end - t;
        break;
      default: break; // cfReady, dfSendEnd and counters carry nothing the split needs
    }
  }

  /** Creation may be merged after the CF's own first events when they tie in time (other thread). */
  private onCreated(node: number, cf: number, code: number, label: string, gid: string): void {
    if (node >= this.N) return this.warn('event from a node beyond the manifest');
    const r = this.cfs[node].get(cf);
    if (r && r.code < 0) { r.code = code; r.label = label; r.gid = gid; }
    else this.cfs[node].set(cf, new CfRec(node, code, label, gid));
  }

  private cf(node: number, cf: number): CfRec {
    const map = this.cfs[node < this.N ? node : 0];
    let r = map.get(cf);
    if (!r) { r = new CfRec(node, -1, '?', `${node}:${cf}`); map.set(cf, r); }
    return r;
  }

  private df(node: number, thread: number, df: number, quiet = false): DfRec | undefined {
    let r: DfRec | undefined;
    if (node < this.N) {
      if (thread > 0 && this.streamDf.size > 0) r = this.streamDf.get(node * 4096 + thread)?.get(df);
      r ??= this.nodeDf[node].get(df);
    }
    if (!r && !quiet) this.warn('DF number without dfName');
    return r;
  }

  /**
   * dfName defines a number on its node; a writer per worker thread may number DFs on its own, so
   * names recorded by a worker thread also get a (node, thread) map that its records look up first.
   */
  private onName(node: number, thread: number, df: number, name: string): void {
    if (node >= this.N) return this.warn('event from a node beyond the manifest');
    const nm = this.nodeDf[node];
    let sm: Map<number, DfRec> | undefined;
    if (thread > 0) {
      const sk = node * 4096 + thread;
      sm = this.streamDf.get(sk);
      if (!sm) { sm = new Map(); this.streamDf.set(sk, sm); }
      if (sm.get(df)?.name === name) return;
    } else if (nm.get(df)?.name === name) return;
    let r = this.names.get(name);
    if (!r) { r = new DfRec(name); this.names.set(name, r); }
    if (sm) { sm.set(df, r); (r.entries ??= []).push(sm, df, node); }
    if (thread === 0 || !nm.has(df)) nm.set(df, r);
    if (r.addNode(node)) r.refs++;
    if (this.unnamed.size > 0) {
      const waiting = this.unnamed.get(key(node, df));
      if (waiting) {
        this.unnamed.delete(key(node, df));
        for (const c of waiting) { (c.inputs ??= []).push(r); c.unresolved--; }
      }
    }
  }

  private onDeleted(node: number, thread: number, df: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    if (!r.removeNode(node)) return;
    this.unmap(r, node, df);
    if (--r.refs <= 0) this.drop(r);
  }

  /** Remove the number mappings of r on `node` (all nodes when node < 0). */
  private unmap(r: DfRec, node: number, df: number): void {
    if (node >= 0 && this.nodeDf[node].get(df) === r) this.nodeDf[node].delete(df);
    const e = r.entries;
    if (!e) return;
    const keep: (Map<number, DfRec> | number)[] = [];
    for (let k = 0; k < e.length; k += 3) {
      const m = e[k] as Map<number, DfRec>, d = e[k + 1] as number, n = e[k + 2] as number;
      if (node < 0 || n === node) { if (m.get(d) === r) m.delete(d); }
      else keep.push(m, d, n);
    }
    r.entries = keep.length > 0 ? keep : null;
  }

  private drop(r: DfRec): void {
    this.unmap(r, -1, -1);
    if (this.names.get(r.name) === r) this.names.delete(r.name);
  }

  private onComputed(node: number, thread: number, t: number, df: number, producerCf: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    r.home = node;
    r.computedAt = t;
    const p = this.cfs[node].get(producerCf) ?? this.recent[node].get(producerCf);
    if (!p) { this.warn('DF computed by an unknown CF'); return; }
    r.prod = p;
    if (p.finishT === p.finishT) { r.finish = p.finishT; r.path = p.path; }
    else (p.outs ??= []).push(r);
  }

  private onSend(node: number, thread: number, t: number, df: number, to: number): void {
    const r = this.df(node, thread, df);
    if (!r || to >= this.N) return;
    // the L interval starts at the first hop of the chain that brings the value to its consumer
    const first = node === r.home ? t : (r.copyAt(node)?.firstSend ?? t);
    r.pend = { k: node * this.N + to, first, next: r.pend };
    r.refs++; // a copy in flight keeps the record alive even if the sender deletes its own
  }

  private onReceive(node: number, thread: number, t: number, df: number, from: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    const s = r.takePend(from * this.N + node);
    if (s === undefined) this.warn('DF received without dfSendStart');
    const c = r.copyAt(node);
    if (c) { c.arrive = t; c.firstSend = s ?? t; c.from = from; }
    else r.copies = { node, arrive: t, firstSend: s ?? t, from, next: r.copies };
    if (s !== undefined && --r.refs <= 0) this.drop(r);
  }

  private onInput(node: number, thread: number, cf: number, df: number): void {
    const m = this.cf(node, cf);
    const x = this.df(node, thread, df, true);
    if (x) { (m.inputs ??= []).push(x); return; }
    // its dfName ties in time on another thread and was merged later: resolved in onName
    const k = key(node, df);
    (this.unnamed.get(k) ?? this.unnamed.set(k, []).get(k)!).push(m);
    m.unresolved++;
  }

  /** Fold input x into m's B (last producer), G/C (last arrival) and critical-path predecessor. */
  foldInput(m: CfRec, x: DfRec): void {
    const b = x.readyAt();
    if (b > m.B) { m.B = b; m.bRec = x; }
    let g: number, c: number;
    if (x.home === m.node || x.home < 0) { g = x.computedAt === x.computedAt ? x.computedAt : -Infinity; c = g; }
    else {
      const cp = x.copyAt(m.node);
      if (cp) { g = cp.arrive; c = cp.firstSend; }
      else { this.warn('remote input without dfReceive'); g = c = x.computedAt; }
    }
    if (g > m.G || (g === m.G && c > m.C)) { m.G = g; m.C = c; m.gRec = x; }
    if (x.path && (!m.cpIn || x.path.len > m.cpIn.len)) m.cpIn = x.path;
  }

  private onStart(node: number, thread: number, t: number, cpu: number, cf: number): void {
    const m = this.cf(node, cf);
    m.started = true;
    m.startT = t;
    m.startCpu = cpu;
    if (thread > this.T || node >= this.N) return this.warn('thread beyond the manifest');
    const slot = thread >= 1 ? node * this.T + thread - 1 : this.virtualSlot(node);
    if (slot < 0) return;
    m.slot = slot;
    const a = this.idle[slot];
    m.A = a === a ? a : this.origin();
    if (this.running[slot]) this.warn('CF started on a busy thread');
    this.running[slot] = m;
  }

  /**
   * A runtime that records worker CFs through its system thread (thread 0) does not say which
   * worker ran them: give the CF the free worker that went idle last (a worker that just finished
   * usually takes the next ready CF). Totals stay exact when at most T CFs overlap on a node.
   */
  private virtualSlot(node: number): number {
    if (this.virtualWarned === 0) this.warn('worker CFs recorded by the system thread: worker threads reconstructed');
    this.virtualWarned = 1;
    let best = -1, bestA = -Infinity;
    for (let s = node * this.T; s < (node + 1) * this.T; s++) {
      if (this.running[s]) continue;
      const a = this.idle[s] === this.idle[s] ? this.idle[s] : this.origin();
      if (best < 0 || a > bestA) { best = s; bestA = a; }
    }
    if (best < 0) this.warn('more overlapping CFs than worker threads on a node');
    return best;
  }

  origin(): number { return this.tStart === this.tStart ? this.tStart : this.firstT; }

  private getSeries(): Series {
    if (!this.series) {
      const w = this.opts.windowNs;
      this.series = new Series(this.origin(), w && w > 0 ? w : 1000, !!(w && w > 0));
    }
    return this.series;
  }

  /** Charge ns of factor f on [x, y) to a worker slot and, when given, to a CF's code and label. */
  add(f: number, ns: number, slot: number, x: number, y: number, code: Float64Array | null, label: Float64Array | null): void {
    if (ns === 0) return;
    this.tot[f] += ns;
    this.perNode[Math.floor(slot / this.T) * NF + f] += ns;
    this.perThread[slot * NF + f] += ns;
    if (code) code[f] += ns;
    if (label) label[f] += ns;
    this.getSeries().add(f, x, y, ns);
  }

  private onFinish(node: number, thread: number, t: number, cpu: number, cf: number): void {
    const map = this.cfs[node < this.N ? node : 0];
    const m = map.get(cf);
    if (!m || !m.started) { this.warn('cfFinish without cfStart'); return; }
    map.delete(cf);
    if (m.code < 0) this.warn('CF without cfCreated/cfReceive');
    // inputs are folded at the finish: by then every input's arrival is in, whatever the order
    // of events that tie in time across threads
    if (m.unresolved > 0) this.warn('input DF never named');
    if (m.inputs) { for (const x of m.inputs) this.foldInput(m, x); m.inputs = null; }
    m.finishT = t;
    const u = cpu - m.startCpu;
    m.path = new PathNode((m.cpIn?.len ?? 0) + u, u, m.code, m.label, m.gid, m.cpIn);
    m.cpIn = null;
    if (!this.cpEnd || m.path.len > this.cpEnd.len) this.cpEnd = m.path;
    if (m.outs) { for (const r of m.outs) { r.finish = t; r.path = m.path; } m.outs = null; }
    // a ring of keys, not Map-order eviction: deleting a Map's first entry over and over leaves
    // tombstones that make keys().next() linear
    const old = this.recentRing[this.recentPos];
    if (old >= 0) this.recent[Math.floor(old / 4294967296)].delete(old % 4294967296);
    this.recentRing[this.recentPos] = key(m.node, cf);
    this.recentPos = (this.recentPos + 1) % RECENT_MAX;
    this.recent[m.node].set(cf, m);
    if (m.slot >= 0) this.account(m, t, u);
    m.bRec = m.gRec = null; // DfRec.prod keeps m alive: do not let it pin the whole history
  }

  /** The idle interval [A, D) before m and m's own execution [D, E). */
  private account(m: CfRec, e: number, u: number): void {
    const slot = m.slot, a = m.A, d = m.startT;
    this.running[slot] = null;
    this.idle[slot] = e;
    this.cfCount++;
    const sp = splitIdle(a, d, m.B, m.C, m.G);
    this.kireev[F_S] += sp.s; this.kireev[F_O] += sp.oSend + sp.oStart; this.kireev[F_L] += sp.l;
    let moved = 0;
    if (this.history) {
      const prodSlot = m.bRec?.prod?.slot ?? -1;
      const r = this.history.refine(prodSlot, a, sp.b);
      moved = r.moved;
      this.litMoved += moved;
      const ovh: number[] = [];
      if (sp.c > sp.b) ovh.push(sp.b, sp.c);
      if (d > sp.g) ovh.push(sp.g, d);
      for (const v of r.isect) ovh.push(v);
      this.history.push(slot, { start: d, end: e, preempt: (e - d) - u, s1a: a, s1b: sp.b, oUniStarv: r.oUniStarv, ovh });
      if (++this.sinceprune >= 1024) { this.sinceprune = 0; this.history.prune(this.minPendingA()); }
    }
    const sel = this.model === 'litvinov2017' ? moved : 0;
    const cr = this.perCode.get(m.code), lr = this.perLabel.get(m.label);
    this.add(F_S, sp.s - sel, slot, a, sp.b, cr, lr);
    this.add(F_O, sp.oSend + sel, slot, sp.b, sp.c, cr, lr);
    this.add(F_L, sp.l, slot, sp.c, sp.g, cr, lr);
    this.add(F_O, sp.oStart, slot, sp.g, d, cr, lr);
    this.ovh.sendDelay += sp.oSend;
    this.ovh.startDelay += sp.oStart;
    const pre = (e - d) - u;
    this.add(F_U, u, slot, d, e, cr, lr);
    this.add(F_O, pre, slot, d, e, cr, lr);
    this.kireev[F_U] += u; this.kireev[F_O] += pre;
    this.ovh.preempt += pre;
    cr[NF]++;
    lr[NF]++;
    if (sp.s > 0 && m.bRec) this.blameS(m.bRec, sp.s);
    if (sp.l > 0 && m.gRec) this.blameL(m.gRec, m.node, sp.l);
  }

  private minPendingA(): number {
    let min = Infinity;
    for (let s = 0; s < this.running.length; s++) {
      const r = this.running[s];
      const a = r ? r.A : this.idle[s];
      if (a === a && a < min) min = a;
    }
    return min === Infinity ? this.origin() : min;
  }

  private blameS(x: DfRec, ns: number): void {
    this.sBlamed += ns;
    const p = x.prod;
    if (!p) return;
    addTo(this.sByCode, p.code, ns);
    addTo(this.sByLabel, p.label, ns);
    this.sByCf.add(p.gid, ns, this.codeName(p.code), p.label);
  }

  private blameL(x: DfRec, node: number, ns: number): void {
    this.lBlamed += ns;
    addTo(this.lByDfBase, baseName(x.name), ns);
    this.lByDf.add(x.name, ns);
    const from = x.copyAt(node)?.from ?? -1;
    if (from >= 0) addTo(this.lByPair, from * this.N + node, ns);
    if (x.prod) addTo(this.lByProdLabel, x.prod.label, ns);
  }
}
