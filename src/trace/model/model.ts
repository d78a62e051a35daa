// The trace model: one streaming pass over a run's merged events that resolves identities —
// node-local CF and DF numbers to fragments and DFs, transfers to their sends and arrivals,
// inputs to their producers — and hands resolved records to the analyses and exports that
// listen (SLOW, Perfetto, tables, the report). Memory stays bounded: a fragment record lives
// until its CF finishes (plus a short "recently finished" ring), a DF record until every node
// that held it deleted it. The model also checks what it reads and says what it dropped.
import { STATUS, type RunStatus, type TraceEvent } from '../schema.js';
import type { SiteInfo, TraceManifest } from '../manifest.js';
import { DfRec, Fragment, type Transfer } from './records.js';
import { fileOf, TraceDamage } from '../damage.js';

export interface ModelListener {
  programStart?(node: number, t: number): void;
  programFinish?(node: number, t: number, status: RunStatus): void;
  /** A CF started on its lane (times, lane and identity set). */
  start?(f: Fragment): void;
  /** A CF finished; its inputs are resolved (every arrival is known by then). */
  finish?(f: Fragment, inputs: readonly DfRec[]): void;
  /** A DF arrived on another node. */
  transfer?(t: Transfer): void;
  /** A DF got its value on its home node. */
  computed?(df: DfRec, t: number): void;
  sysBusy?(node: number, t0: number, t1: number): void;
  counter?(node: number, name: 'readyQueue' | 'liveBytes', t: number, value: number): void;
  migrate?(node: number, f: Fragment | undefined, cf: number, toNode: number, t: number): void;
  /** Every event, after the model handled it (exports that show raw instants). */
  event?(e: TraceEvent): void;
}

const RECENT_MAX = 1 << 13;

const key = (node: number, local: number): number => node * 4294967296 + local;

export class TraceModel {
  readonly N: number;
  readonly T: number;
  readonly sites: readonly SiteInfo[];
  events = 0;
  firstT = NaN;
  lastT = NaN;
  /** run start and end on the common clock (earliest programStart, latest programFinish) */
  tStart = NaN;
  tEnd = NaN;
  status: RunStatus | undefined;
  /** problems found, with how often (bounded: one entry per kind of problem) */
  readonly warnings = new Map<string, number>();
  /** events seen per node (a node with none is missing, not idle) */
  readonly perNode: Float64Array;
  private readonly listeners: ModelListener[];

  /** per node: local CF number → record */
  private readonly cfs: Map<number, Fragment>[];
  /** per node: CFs finished lately, for outputs announced after the finish */
  private readonly recent: Map<number, Fragment>[];
  private readonly recentRing = new Float64Array(RECENT_MAX).fill(-1);
  private recentPos = 0;
  private readonly names = new Map<string, DfRec>();
  /** DF numbers per node, and per (node, thread) stream for writers that number per thread */
  private readonly nodeDf: Map<number, DfRec>[];
  private readonly streamDf = new Map<number, Map<number, DfRec>>();
  /** (node, local DF) → CFs whose cfInput came before the dfName */
  private readonly unnamed = new Map<number, Fragment[]>();
  /** per lane slot: the CF running there */
  readonly running: (Fragment | null)[];
  /** per node: start and finish of the CFs its system thread ran itself since its last sysBusy */
  private readonly ranInline: number[][];
  /** per node: its latest sysBusy span, held until the CFs run inside it are known (NaN: none) */
  private readonly heldBusy: Float64Array;
  /** records dropped or corrected (the reader's damage too, when it shares this) */
  damage = new TraceDamage();
  /** nodes that wrote programFinish, and the slack beyond the end that records may still have */
  private finished = 0;
  private readonly finishedNode: Uint8Array;
  private ended = false;

  constructor(readonly manifest: TraceManifest, listeners: ModelListener[] = []) {
    this.N = Math.max(1, manifest.nodes);
    this.T = Math.max(1, manifest.threads);
    this.sites = manifest.sites ?? [];
    this.listeners = listeners;
    this.cfs = Array.from({ length: this.N }, () => new Map());
    this.recent = Array.from({ length: this.N }, () => new Map());
    this.nodeDf = Array.from({ length: this.N }, () => new Map());
    this.running = new Array<Fragment | null>(this.N * this.T).fill(null);
    this.ranInline = Array.from({ length: this.N }, () => []);
    this.heldBusy = new Float64Array(2 * this.N).fill(NaN);
    this.perNode = new Float64Array(this.N);
    this.finishedNode = new Uint8Array(this.N);
  }

  listen(l: ModelListener): void {
    this.listeners.push(l);
  }

  warn(what: string): void {
    this.warnings.set(what, (this.warnings.get(what) ?? 0) + 1);
  }

  codeName(code: number): string {
    return this.manifest.codes[code] ?? `code#${code}`;
  }

  /** The run's origin: the first programStart (or the first event). */
  origin(): number {
    return this.tStart === this.tStart ? this.tStart : this.firstT;
  }

  push(e: TraceEvent): void {
    this.events++;
    const t = e.t;
    const node = e.node;
    if (node >= this.N) {
      this.warn(`records of node ${node}, beyond the ${this.N} nodes of the manifest, dropped`);
      this.damage.add('unknown-id', `a ${e.kind} record of node ${node}, beyond the ${this.N} nodes of the manifest`, fileOf(node, e.thread));
      return;
    }
    // Every node ended: a record far past the end (a damaged time field) is dropped before it
    // stretches the run. Slack: a worker may still close its CF just after its node's end.
    if (this.finished >= this.N && t > this.tEnd + Math.max(1e9, this.tEnd - this.tStart)) {
      this.warn('records far after the end of the run dropped');
      this.damage.add('outside-run', `a ${e.kind} record at ${fmtT(t - this.tStart)} after the start, past the end of the run (${fmtT(this.tEnd - this.tStart)})`, fileOf(node, e.thread));
      return;
    }
    if (t === t) { if (!(this.firstT === this.firstT)) this.firstT = t; if (!(this.lastT >= t)) this.lastT = t; }
    this.perNode[node]++;
    switch (e.kind) {
      case 'programStart':
        if (!(this.tStart <= t)) this.tStart = t;
        for (const l of this.listeners) l.programStart?.(node, t);
        break;
      case 'programFinish': {
        if (!(this.tEnd >= t)) this.tEnd = t;
        this.finished++;
        this.finishedNode[node] = 1;
        const status = STATUS[e.status] ?? 'running';
        if (status !== 'running' && (this.status === undefined || this.status === 'completed')) this.status = status;
        for (const l of this.listeners) l.programFinish?.(node, t, status);
        break;
      }
      case 'cfCreated': this.created(node, e.cf, e.site, e.gid, e.labelIdx, t); break;
      case 'cfReceive': this.created(node, e.cf, e.site, e.gid, e.labelIdx, t); break;
      case 'cfMigrate': {
        const f = this.cfs[node]!.get(e.cf);
        this.cfs[node]!.delete(e.cf);
        for (const l of this.listeners) l.migrate?.(node, f, e.cf, e.toNode, t);
        break;
      }
      case 'cfReady': { const f = this.cfs[node]!.get(e.cf); if (f) f.ready = t; break; }
      case 'cfInput': this.input(node, e.thread, e.cf, e.df); break;
      case 'cfStart': this.start(node, e.lane, t, e.cpu, e.cf); break;
      case 'cfFinish': this.finish(node, e.thread, t, e.cpu, e.cf); break;
      case 'dfName': this.named(node, e.thread, e.df, e.name); break;
      case 'dfComputed': this.computed(node, e.thread, t, e.df, e.producerCf, e.bytes); break;
      case 'dfSendStart': this.send(node, e.thread, t, e.df, e.toNode); break;
      case 'dfReceive': this.receive(node, e.thread, t, e.df, e.fromNode, e.bytes); break;
      case 'dfDeleted': this.deleted(node, e.thread, e.df); break;
      case 'sysBusy': this.busy(node, t, e.end); break;
      case 'readyQueue': case 'liveBytes': for (const l of this.listeners) l.counter?.(node, e.kind, t, e.value); break;
      case 'dfSendEnd': break;
    }
    for (const l of this.listeners) l.event?.(e);
  }

  /** The end of the stream: say what is missing. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (let n = 0; n < this.N; n++) this.releaseBusy(n);
    for (let n = 0; n < this.N; n++) {
      if (this.perNode[n] !== 0) continue;
      this.warn(`node ${n} recorded nothing (its trace files are empty or missing): it is left out, not counted as idle`);
      this.damage.add('missing-node', `node ${n} recorded nothing (its trace files hold no record): left out of the totals, not counted as idle`);
    }
    // a completed run's nodes all wrote their end: a node without it lost the end of its file
    // (cut on a record boundary, which the reader cannot see)
    for (let n = 0; n < this.N; n++) {
      if (this.manifest.status !== 'completed' || this.perNode[n] === 0 || this.finishedNode[n]) continue;
      this.damage.add('truncated', `node ${n} has no programFinish record though the manifest says the run completed: the end of its file is missing`, fileOf(n, 0));
    }
    if (!(this.tEnd === this.tEnd)) this.warn('no programFinish record: the run did not end normally; the last event ends it');
  }

  // ------------------------------------------------------------------ fragments

  private site(s: number): SiteInfo | undefined {
    return s >= 0 ? this.sites[s] : undefined;
  }

  /** Creation may be merged after the CF's own first events when they tie in time (other thread). */
  private created(node: number, cf: number, site: number, gid: string, labelIdx: number[], t: number): void {
    const s = this.site(site);
    // structured CFs (sub calls, loops, if) never run on a lane: nothing to keep
    if (s && s.kind !== 'call') return;
    const code = s ? s.code : -1, label = s ? s.label : site < 0 ? 'main' : `site${site}`;
    const r = this.cfs[node]!.get(cf);
    if (r && r.code < 0) { r.site = site; r.code = code; r.label = label; r.gid = gid; r.labelIdx = labelIdx.length ? labelIdx : null; r.created = t; return; }
    const f = new Fragment(node, cf, site, code, label, gid, labelIdx.length ? labelIdx : null);
    f.created = t;
    this.cfs[node]!.set(cf, f);
  }

  private cf(node: number, cf: number): Fragment {
    const map = this.cfs[node]!;
    let r = map.get(cf);
    if (!r) { r = new Fragment(node, cf, -1, -1, '?', `${node}:${cf}`, null); map.set(cf, r); }
    return r;
  }

  private input(node: number, thread: number, cf: number, df: number): void {
    const m = this.cf(node, cf);
    const x = this.df(node, thread, df, true);
    if (x) { (m.inputs ??= []).push(x); return; }
    // its dfName ties in time on another thread and was merged later: resolved in named()
    const k = key(node, df);
    (this.unnamed.get(k) ?? this.unnamed.set(k, []).get(k)!).push(m);
    m.unresolved++;
  }

  private start(node: number, lane: number, t: number, cpu: number, cf: number): void {
    const m = this.cf(node, cf);
    m.start = t;
    m.cpuStart = cpu;
    if (lane < 1 || lane > this.T) {
      this.warn(`CF started on lane ${lane}, beyond the ${this.T} lanes of the manifest: not placed on a timeline`);
      this.damage.add('unknown-id', `cfStart of CF ${cf} on lane ${lane}, beyond the ${this.T} lanes of the manifest`, fileOf(node, lane));
      return;
    }
    const slot = node * this.T + lane - 1;
    m.slot = slot;
    m.lane = lane;
    const busy = this.running[slot];
    if (busy) {
      // one of the two records is wrong (a damaged time or CF number): the CF that never
      // finished before the next one started is left out, rather than counted twice
      this.warn('CF started on a busy lane (the earlier CF left out)');
      this.damage.add('time-order', `CF ${m.label} (${m.gid}) starts on lane ${lane} while CF ${busy.label} (${busy.gid}) still runs there; the latter is left out`, fileOf(node, lane));
      busy.slot = -1;
    }
    this.running[slot] = m;
    for (const l of this.listeners) l.start?.(m);
  }

  /**
   * A busy span of a node's system thread. Passed on without the CFs the thread ran itself
   * meanwhile (their time is their lane's): the runtime records one span per turn of its pump and
   * leaves that to the reader (a record less per CF the system thread runs; older traces split
   * the spans themselves). The stream is ordered by start times, so the span is held until the
   * node's next one (or the end), when every CF inside it has finished.
   */
  private busy(node: number, t0: number, t1: number): void {
    this.releaseBusy(node);
    this.heldBusy[2 * node] = t0;
    this.heldBusy[2 * node + 1] = t1;
  }

  private releaseBusy(node: number): void {
    const t0 = this.heldBusy[2 * node]!, t1 = this.heldBusy[2 * node + 1]!;
    if (!(t0 === t0)) return;
    this.heldBusy[2 * node] = NaN;
    const runs = this.ranInline[node]!;
    let from = t0, i = 0;
    // every CF run inside the span finished before the node's next span began: all known here
    for (; i < runs.length; i += 2) {
      const start = runs[i]!, fin = runs[i + 1]!;
      if (fin > t1) break;
      if (fin <= from) continue;
      if (start > from) for (const l of this.listeners) l.sysBusy?.(node, from, start);
      from = fin;
    }
    if (t1 > from) for (const l of this.listeners) l.sysBusy?.(node, from, t1);
    runs.splice(0, i);
  }

  private finish(node: number, thread: number, t: number, cpu: number, cf: number): void {
    const map = this.cfs[node]!;
    const m = map.get(cf);
    if (!m || !(m.start === m.start)) {
      this.warn('cfFinish without cfStart (dropped)');
      this.damage.add('unknown-id', `cfFinish of CF ${cf}, which never started`, `node${node}`);
      return;
    }
    map.delete(cf);
    if (m.code < 0) { this.warn('CF without cfCreated/cfReceive'); this.damage.add('unknown-id', `CF ${cf} ran but was never created (no cfCreated or cfReceive record)`, m.lane > 0 ? fileOf(node, m.lane) : `node${node}`); }
    if (m.unresolved > 0) this.warn('input DF never named');
    m.finish = t;
    const wall = t - m.start;
    let used = cpu - m.cpuStart;
    const where = m.lane > 0 ? fileOf(node, m.lane) : `node${node}`;
    if (!(wall >= 0)) { this.warn('CF finishing before it started (times kept, duration 0)'); this.damage.add('time-order', `CF ${m.label} (${m.gid}) finishes ${fmtT(-wall)} before it starts`, where); m.finish = m.start; used = 0; }
    else if (this.tStart === this.tStart && m.start < this.tStart - Math.max(1e9, wall)) {
      this.warn('CF starting long before the run (duration taken as 0)');
      this.damage.add('time-order', `CF ${m.label} (${m.gid}) starts ${fmtT(this.tStart - m.start)} before the run`, where);
      m.start = t; used = 0;
    } else if (!(used >= 0)) { this.warn('negative CPU time of a CF (taken as 0)'); this.damage.add('cpu-time', `CF ${m.label} (${m.gid}): CPU time ${fmtT(used)} is negative (taken as 0)`, where); used = 0; }
    else if (used > wall * 1.0001 + 1000) { this.warn('CPU time longer than wall time (taken as the wall time)'); this.damage.add('cpu-time', `CF ${m.label} (${m.gid}): CPU time ${fmtT(used)} exceeds its wall time ${fmtT(wall)} (taken as the wall time)`, where); used = wall; }
    m.cpu = Math.min(used, Math.max(0, m.finish - m.start));
    if (m.slot >= 0 && this.running[m.slot] === m) this.running[m.slot] = null;
    if (m.outs) { for (const r of m.outs) r.finish = t; m.outs = null; }
    // a ring of keys, not Map-order eviction: deleting a Map's first entry over and over leaves
    // tombstones that make keys().next() linear
    const old = this.recentRing[this.recentPos]!;
    if (old >= 0) this.recent[Math.floor(old / 4294967296)]!.delete(old % 4294967296);
    this.recentRing[this.recentPos] = key(node, cf);
    this.recentPos = (this.recentPos + 1) % RECENT_MAX;
    this.recent[node]!.set(cf, m);
    const inputs = m.inputs ?? [];
    m.inputs = null;
    if (thread === 0) {
      const runs = this.ranInline[node]!;
      // (bounded: a trace without sysBusy records keeps only the latest)
      if (runs.length >= 2 * RECENT_MAX) runs.splice(0, RECENT_MAX);
      runs.push(m.start, m.finish);
    }
    for (const l of this.listeners) l.finish?.(m, inputs);
  }

  /** CFs still running when the stream ended (their lanes are busy to the end). */
  stillRunning(): Fragment[] {
    return this.running.filter((f): f is Fragment => f !== null);
  }

  // ------------------------------------------------------------------ DFs

  /** The DF a record of (node, thread) numbers `df` (exports naming DFs of raw records). */
  dfOf(node: number, thread: number, df: number): DfRec | undefined {
    return this.df(node, thread, df, true);
  }

  /** The fragment node-local CF `cf` is (while it lives). */
  fragmentOf(node: number, cf: number): Fragment | undefined {
    return this.cfs[node]?.get(cf) ?? this.recent[node]?.get(cf);
  }

  private df(node: number, thread: number, df: number, quiet = false): DfRec | undefined {
    let r: DfRec | undefined;
    if (thread > 0 && this.streamDf.size > 0) r = this.streamDf.get(node * 4096 + thread)?.get(df);
    r ??= this.nodeDf[node]!.get(df);
    if (!r && !quiet) this.warn('DF number without dfName (record dropped)');
    return r;
  }

  /**
   * dfName defines a number on its node; a writer per worker thread may number DFs on its own,
   * so names recorded by a worker thread also get a (node, thread) map its records look up first.
   */
  private named(node: number, thread: number, df: number, name: string): void {
    const nm = this.nodeDf[node]!;
    let sm: Map<number, DfRec> | undefined;
    if (thread > 0) {
      const sk = node * 4096 + thread;
      sm = this.streamDf.get(sk);
      if (!sm) { sm = new Map(); this.streamDf.set(sk, sm); }
      if (sm.get(df)?.key === name) return;
    } else if (nm.get(df)?.key === name) return;
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

  private deleted(node: number, thread: number, df: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    if (!r.removeNode(node)) return;
    this.unmap(r, node, df);
    if (--r.refs <= 0) this.drop(r);
  }

  /** Remove the number mappings of r on `node` (all nodes when node < 0). */
  private unmap(r: DfRec, node: number, df: number): void {
    if (node >= 0 && this.nodeDf[node]!.get(df) === r) this.nodeDf[node]!.delete(df);
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
    if (this.names.get(r.key) === r) this.names.delete(r.key);
  }

  private computed(node: number, thread: number, t: number, df: number, producerCf: number, bytes: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    r.home = node;
    r.computedAt = t;
    r.bytes = bytes;
    for (const l of this.listeners) l.computed?.(r, t);
    if (producerCf < 0) return;
    const p = this.cfs[node]!.get(producerCf) ?? this.recent[node]!.get(producerCf);
    if (!p) return; // produced by a structured CF (while, >>): no execution to link
    r.producer = p;
    if (p.finish === p.finish) r.finish = p.finish;
    else (p.outs ??= []).push(r);
  }

  private send(node: number, thread: number, t: number, df: number, to: number): void {
    const r = this.df(node, thread, df);
    if (!r || to >= this.N) return;
    // a transfer's latency starts at the first hop of the chain that brings the value to its consumer
    const first = node === r.home ? t : (r.copyAt(node)?.firstSend ?? t);
    r.pend = { k: node * this.N + to, first, next: r.pend };
    r.refs++; // a copy in flight keeps the record alive even if the sender deletes its own
  }

  private receive(node: number, thread: number, t: number, df: number, from: number, bytes: number): void {
    const r = this.df(node, thread, df);
    if (!r) return;
    const s = r.takePend(from * this.N + node);
    if (s === undefined) this.warn('DF received without dfSendStart');
    const c = r.copyAt(node);
    if (c) { c.arrive = t; c.firstSend = s ?? t; c.from = from; }
    else r.copies = { node, arrive: t, firstSend: s ?? t, from, next: r.copies };
    for (const l of this.listeners) l.transfer?.({ df: r, from, to: node, bytes, sendStart: s ?? t, firstSend: s ?? t, arrive: t });
    if (s !== undefined && --r.refs <= 0) this.drop(r);
  }
}

/** ns for damage reports (no dependency on the analyses' formatting). */
function fmtT(ns: number): string {
  const a = Math.abs(ns);
  return a >= 1e9 ? `${(ns / 1e9).toPrecision(4)} s` : a >= 1e6 ? `${(ns / 1e6).toPrecision(4)} ms` : a >= 1e3 ? `${(ns / 1e3).toPrecision(4)} µs` : `${Math.round(ns)} ns`;
}
