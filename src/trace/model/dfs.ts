// The DFs of the trace model: file-local DF numbers resolved to DfRec records by name, their
// producers, and their transfers between nodes (each arrival linked to the first hop of the chain
// that brought it).
import type { RecordKind, TraceEvent } from '../schema.js';
import { DfRec, type Fragment, type Transfer } from './records.js';
import { CODE, COL, type RecordBatch } from '../columns.js';
import type { Resolver, TraceModel } from './model.js';
import { IdMap } from './id-map.js';

const key = (node: number, local: number): number => node * 4294967296 + local;

export class DfResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['dfName', 'dfComputed', 'dfSendStart', 'dfSendEnd', 'dfReceive', 'dfDeleted'];
  private readonly names = new Map<string, DfRec>();
  /** DF numbers per node, and per (node, thread) stream for writers that number per thread */
  private readonly nodeDf: IdMap<DfRec>[];
  private readonly streamDf = new Map<number, Map<number, DfRec>>();
  /** (node, local DF) → CFs whose cfInput came before the dfName */
  private readonly unnamed = new Map<number, Fragment[]>();
  private readonly N: number;
  /** the Transfer handed to a recycling model's listeners (null: a new one per transfer) */
  private readonly reused: Transfer | null;

  constructor(private readonly m: TraceModel) {
    this.N = m.N;
    this.reused = m.recycles ? { df: new DfRec(''), from: 0, to: 0, bytes: 0, sendStart: 0, firstSend: 0, arrive: 0 } : null;
    this.nodeDf = Array.from({ length: this.N }, () => new IdMap<DfRec>());
  }

  push(e: TraceEvent): void {
    const node = e.node, thread = e.thread;
    switch (e.kind) {
      case 'dfName': this.named(node, thread, e.df, e.name); break;
      case 'dfComputed': this.computed(node, thread, e.t, e.df, e.producerCf, e.bytes); break;
      case 'dfSendStart': this.send(node, thread, e.t, e.df, e.toNode); break;
      case 'dfReceive': this.receive(node, thread, e.t, e.df, e.fromNode, e.bytes); break;
      case 'dfDeleted': this.deleted(node, thread, e.df); break;
      default: break; // dfSendEnd: the send's start is what the analyses use
    }
  }

  row(b: RecordBatch, i: number): void {
    const node = b.node[i]!, thread = b.thread[i]!, f = b.f, t = b.t[i]!;
    switch (b.code[i]) {
      case CODE.dfName: this.named(node, thread, f[COL.dfName.df]![i]!, b.s[i]!); break;
      case CODE.dfComputed: this.computed(node, thread, t, f[COL.dfComputed.df]![i]!, f[COL.dfComputed.producerCf]![i]!, f[COL.dfComputed.bytes]![i]!); break;
      case CODE.dfSendStart: this.send(node, thread, t, f[COL.dfSendStart.df]![i]!, f[COL.dfSendStart.toNode]![i]!); break;
      case CODE.dfReceive: this.receive(node, thread, t, f[COL.dfReceive.df]![i]!, f[COL.dfReceive.fromNode]![i]!, f[COL.dfReceive.bytes]![i]!); break;
      case CODE.dfDeleted: this.deleted(node, thread, f[COL.dfDeleted.df]![i]!); break;
      default: break;
    }
  }

  /** The DF a record of (node, thread) numbers `df`; `quiet`: no warning when it is unknown. */
  lookup(node: number, thread: number, df: number, quiet = false): DfRec | undefined {
    let r: DfRec | undefined;
    if (thread > 0 && this.streamDf.size > 0) r = this.streamDf.get(node * 4096 + thread)?.get(df);
    r ??= this.nodeDf[node]!.get(df);
    if (!r && !quiet) this.m.warn('DF number without dfName (record dropped)');
    return r;
  }

  /** CF `f` reads DF `df` of `node`, whose dfName comes later: add it to f's inputs then. */
  whenNamed(node: number, df: number, f: Fragment): void {
    const k = key(node, df);
    (this.unnamed.get(k) ?? this.unnamed.set(k, []).get(k)!).push(f);
    f.unresolved++;
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
        for (const c of waiting) { c.addInput(r); c.unresolved--; }
      }
    }
  }

  private deleted(node: number, thread: number, df: number): void {
    const r = this.lookup(node, thread, df);
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
    // compacted in place: a DF is unmapped once per node that held it, at 10^6 DFs
    let w = 0;
    for (let k = 0; k < e.length; k += 3) {
      const m = e[k] as Map<number, DfRec>, d = e[k + 1] as number, n = e[k + 2] as number;
      if (node < 0 || n === node) { if (m.get(d) === r) m.delete(d); }
      else { e[w++] = m; e[w++] = d; e[w++] = n; }
    }
    if (w === 0) r.entries = null; else e.length = w;
  }

  private drop(r: DfRec): void {
    this.unmap(r, -1, -1);
    if (this.names.get(r.key) === r) this.names.delete(r.key);
  }

  private computed(node: number, thread: number, t: number, df: number, producerCf: number, bytes: number): void {
    const r = this.lookup(node, thread, df);
    if (!r) return;
    r.home = node;
    r.computedAt = t;
    r.bytes = bytes;
    const ls = this.m.audience;
    for (let k = 0; k < ls.length; k++) ls[k]!.computed?.(r, t);
    // a recycling model reuses fragment records for later CFs: it links no producer (nor its finish)
    if (producerCf < 0 || this.m.recycles) return;
    const p = this.m.fragments.lookup(node, producerCf);
    if (!p) return; // produced by a structured CF (while, >>): no execution to link
    r.producer = p;
    if (p.finish === p.finish) r.finish = p.finish;
    else (p.outs ??= []).push(r);
  }

  private send(node: number, thread: number, t: number, df: number, to: number): void {
    const r = this.lookup(node, thread, df);
    if (!r || to >= this.N) return;
    // a transfer's latency starts at the first hop of the chain that brings the value to its consumer
    const first = node === r.home ? t : (r.copyAt(node)?.firstSend ?? t);
    r.pend = { k: node * this.N + to, first, next: r.pend };
    r.refs++; // a copy in flight keeps the record alive even if the sender deletes its own
  }

  private receive(node: number, thread: number, t: number, df: number, from: number, bytes: number): void {
    const r = this.lookup(node, thread, df);
    if (!r) return;
    const s = r.takePend(from * this.N + node);
    if (s === undefined) this.m.warn('DF received without dfSendStart');
    const c = r.copyAt(node);
    if (c) { c.arrive = t; c.firstSend = s ?? t; c.from = from; }
    else r.copies = { node, arrive: t, firstSend: s ?? t, from, next: r.copies };
    const ls = this.m.audience;
    // a recycling model's listeners keep no record past the call: one Transfer, written over
    const tr: Transfer = this.reused ?? { df: r, from, to: node, bytes, sendStart: s ?? t, firstSend: s ?? t, arrive: t };
    if (this.reused) { tr.df = r; tr.from = from; tr.to = node; tr.bytes = bytes; tr.sendStart = s ?? t; tr.firstSend = s ?? t; tr.arrive = t; }
    for (let k = 0; k < ls.length; k++) ls[k]!.transfer?.(tr);
    if (s !== undefined && --r.refs <= 0) this.drop(r);
  }
}
