// The trace model: one streaming pass over a run's merged events that resolves identities —
// node-local CF and DF numbers to fragments and DFs, transfers to their sends and arrivals,
// inputs to their producers, waits to the fragments that waited — and hands resolved records to
// the analyses and exports that listen (SLOW, Perfetto, tables, the report). Each record kind
// belongs to one registered resolver (fragments.ts, dfs.ts, waits.ts, and a layer's own for its
// records), so a new kind plugs in without touching this core: a layer's resolver (say, SPMD
// regions) is a class the analyses that need it `use`, sharing one instance per model, and it
// tells its own listeners; ModelListener lists what the built-in ones tell. Memory stays bounded: a fragment
// record lives until its CF finishes (plus a short "recently finished" ring), a DF record until
// every node that held it deleted it. The model also checks what it reads and says what it dropped.
import { KIND_BY_CODE, RECORDS, STATUS, type RecordKind, type RunStatus, type TraceEvent } from '../schema.js';
import { COL, type RecordBatch } from '../columns.js';
import type { SiteInfo, TraceManifest } from '../manifest.js';
import type { DfRec, Fragment, Transfer, Wait } from './records.js';
import { fileOf, TraceDamage } from '../damage.js';
import { FragmentResolver } from './fragments.js';
import { DfResolver } from './dfs.js';
import { WaitResolver } from './waits.js';
import { fmtT } from './time.js';

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
  /**
   * A thread waited for a resource (a wait record, resolved). Waits are handed on in the order of
   * their starts, before the finish of the CF they happened in.
   */
  wait?(w: Wait): void;
  /** Every event, after the model handled it (exports that show raw instants). */
  event?(e: TraceEvent): void;
  /** The kinds `event` wants (default: all): records of other kinds are not made into objects for it. */
  readonly eventKinds?: readonly RecordKind[];
}

/** Takes the records of some kinds, resolves them against the model and tells the listeners. */
export interface Resolver {
  readonly kinds: readonly RecordKind[];
  push(e: TraceEvent): void;
  /** The same record as row i of a batch of columns (no object made); without it, push gets the row's object. */
  row?(b: RecordBatch, i: number): void;
  /** the end of the stream: pass on what was held back */
  end?(): void;
}

/** A resolver made for a model (TraceModel.use makes one per model). */
export type ResolverClass<R extends Resolver> = new (m: TraceModel) => R;

/** Kinds the model handles itself: the run's envelope, which every resolver relies on. */
const OWN_KINDS: readonly RecordKind[] = ['programStart', 'programFinish'];
const START = RECORDS.programStart.code, FINISH = RECORDS.programFinish.code;

/**
 * A per-listener value on each fragment (an analysis's own record of it, e.g. SLOW's
 * critical-path node), keyed by the slot object so that listeners never share one field.
 */
export class Slot<T> {
  constructor(private readonly i: number, readonly name: string) {}
  // the first slot lives in a field: one analysis (SLOW's critical path) costs no array per CF
  get(f: Fragment): T | undefined {
    return (this.i === 0 ? f.slot0 : f.slots?.[this.i - 1]) as T | undefined;
  }
  set(f: Fragment, v: T): void {
    if (this.i === 0) f.slot0 = v;
    else (f.slots ??= [])[this.i - 1] = v;
  }
}

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
  /** records dropped or corrected (the reader's damage too, when it shares this) */
  damage = new TraceDamage();
  /** the built-in resolvers (other layers register their own) */
  readonly fragments: FragmentResolver;
  readonly dfs: DfResolver;
  private readonly listeners: ModelListener[];
  private readonly resolvers: Partial<Record<RecordKind, Resolver>> = {};
  private readonly all: Resolver[] = [];
  private readonly made = new Map<ResolverClass<Resolver>, Resolver>();
  private slots = 0;
  /** nodes that wrote programFinish */
  private finished = 0;
  private readonly finishedNode: Uint8Array;
  private ended = false;

  /**
   * Whether fragment records are reused for later CFs (`recycle`): only for listeners that keep
   * no Fragment, inputs array or Transfer past the call that hands it to them and need no DF's producer
   * (DfRec.producer and finish stay unknown): the exports that write each record as it comes. A run of any length then makes only as many records as
   * are alive at once, which at 10^6 CFs saves more garbage collection than the resolving costs.
   */
  readonly recycles: boolean;

  constructor(readonly manifest: TraceManifest, listeners: ModelListener[] = [], opts: { recycle?: boolean } = {}) {
    this.recycles = opts.recycle === true;
    this.N = Math.max(1, manifest.nodes);
    this.T = Math.max(1, manifest.threads);
    this.sites = manifest.sites ?? [];
    this.listeners = listeners;
    this.perNode = new Float64Array(this.N);
    this.finishedNode = new Uint8Array(this.N);
    this.dfs = this.use(DfResolver);
    this.fragments = this.use(FragmentResolver);
    this.use(WaitResolver);
    this.register({
      kinds: ['readyQueue', 'liveBytes'],
      push: (e) => { if (e.kind === 'readyQueue' || e.kind === 'liveBytes') for (const l of this.listeners) l.counter?.(e.node, e.kind, e.t, e.value); },
      row: (b, i) => {
        const kind = b.code[i] === RECORDS.readyQueue.code ? 'readyQueue' : 'liveBytes';
        const ls = this.listeners;
        for (let k = 0; k < ls.length; k++) ls[k]!.counter?.(b.node[i]!, kind, b.t[i]!, b.f[COL[kind].value]![i]!);
      },
    });
  }

  /** Give the records of `r.kinds` to `r` (a kind has one resolver). */
  register(r: Resolver): void {
    for (const k of r.kinds) {
      if (OWN_KINDS.includes(k)) throw new Error(`trace model: record kind ${k} is the model's own`);
      if (this.resolvers[k]) throw new Error(`trace model: record kind ${k} already has a resolver`);
    }
    for (const k of r.kinds) this.resolvers[k] = r;
    this.all.push(r);
  }

  /**
   * The model's resolver of class `C`, made and registered at the first call: every analysis that
   * needs a layer's records asks for it, and they share the one instance (and its listeners).
   */
  use<R extends Resolver>(C: ResolverClass<R>): R {
    let r = this.made.get(C) as R | undefined;
    if (!r) {
      r = new C(this);
      this.register(r);
      this.made.set(C, r);
    }
    return r;
  }

  listen(l: ModelListener): void {
    this.listeners.push(l);
  }

  /** The listeners, in the order they listen (resolvers tell them). */
  get audience(): readonly ModelListener[] {
    return this.listeners;
  }

  /** A new per-listener slot on fragments. */
  slot<T>(name: string): Slot<T> {
    return new Slot<T>(this.slots++, name);
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
    if (!this.admit(e.kind, e.node, e.thread, e.t)) return;
    if (e.kind === 'programStart') this.programStart(e.node, e.t);
    else if (e.kind === 'programFinish') this.programFinish(e.node, e.t, e.status);
    else this.resolvers[e.kind]?.push(e);
    for (const l of this.listeners) if (l.event && (!l.eventKinds || l.eventKinds.includes(e.kind))) l.event(e);
  }

  /**
   * The records of a batch of columns (rows [from, to)), in order: the same as push() of each row's object, with
   * objects made only for resolvers without a `row` method and for listeners of `event`.
   */
  pushRows(b: RecordBatch, from = 0, to = b.n): void {
    const byCode = this.byCode();
    const code = b.code, node = b.node, thread = b.thread, t = b.t;
    for (let i = from; i < to; i++) {
      const c = code[i]!;
      const kind = KIND_BY_CODE[c]!;
      if (!this.admit(kind, node[i]!, thread[i]!, t[i]!)) continue;
      let e: TraceEvent | undefined;
      if (c === START) this.programStart(node[i]!, t[i]!);
      else if (c === FINISH) this.programFinish(node[i]!, t[i]!, b.f[COL.programFinish.status]![i]!);
      else {
        const r = byCode.resolver[c];
        if (r?.row) r.row(b, i);
        else if (r) r.push((e = b.event(i)));
      }
      const ls = byCode.events[c]!;
      if (ls.length > 0) { e ??= b.event(i); for (const l of ls) l.event!(e); }
    }
  }

  /** Per kind code: its resolver and the listeners of its events (made when the records start to flow). */
  private codes: { resolver: (Resolver | undefined)[]; events: ModelListener[][] } | null = null;
  private codesFor = -1;
  private byCode(): { resolver: (Resolver | undefined)[]; events: ModelListener[][] } {
    if (this.codes && this.codesFor === this.listeners.length + this.all.length) return this.codes;
    const resolver: (Resolver | undefined)[] = [], events: ModelListener[][] = [];
    for (const [k, d] of Object.entries(RECORDS)) {
      resolver[d.code] = this.resolvers[k as RecordKind];
      events[d.code] = this.listeners.filter((l) => l.event && (!l.eventKinds || l.eventKinds.includes(k as RecordKind)));
    }
    this.codesFor = this.listeners.length + this.all.length;
    return (this.codes = { resolver, events });
  }

  /** Counts a record and checks its node and time; false: dropped (with the damage said). */
  private admit(kind: RecordKind, node: number, thread: number, t: number): boolean {
    this.events++;
    if (node >= this.N) {
      this.warn(`records of node ${node}, beyond the ${this.N} nodes of the manifest, dropped`);
      this.damage.add('unknown-id', `a ${kind} record of node ${node}, beyond the ${this.N} nodes of the manifest`, fileOf(node, thread));
      return false;
    }
    // Every node ended: a record far past the end (a damaged time field) is dropped before it
    // stretches the run. Slack: a worker may still close its CF just after its node's end.
    if (this.finished >= this.N && t > this.tEnd + Math.max(1e9, this.tEnd - this.tStart)) {
      this.warn('records far after the end of the run dropped');
      this.damage.add('outside-run', `a ${kind} record at ${fmtT(t - this.tStart)} after the start, past the end of the run (${fmtT(this.tEnd - this.tStart)})`, fileOf(node, thread));
      return false;
    }
    if (t === t) { if (!(this.firstT === this.firstT)) this.firstT = t; if (!(this.lastT >= t)) this.lastT = t; }
    this.perNode[node]++;
    return true;
  }

  private programStart(node: number, t: number): void {
    if (!(this.tStart <= t)) this.tStart = t;
    for (const l of this.listeners) l.programStart?.(node, t);
  }

  private programFinish(node: number, t: number, statusIdx: number): void {
    if (!(this.tEnd >= t)) this.tEnd = t;
    this.finished++;
    this.finishedNode[node] = 1;
    const status = STATUS[statusIdx] ?? 'running';
    if (status !== 'running' && (this.status === undefined || this.status === 'completed')) this.status = status;
    for (const l of this.listeners) l.programFinish?.(node, t, status);
  }

  /** The end of the stream: say what is missing. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const r of this.all) r.end?.();
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

  /** Per lane slot (node · T + lane − 1): the CF running there. */
  get running(): readonly (Fragment | null)[] {
    return this.fragments.running;
  }

  /** CFs still running when the stream ended (their lanes are busy to the end). */
  stillRunning(): Fragment[] {
    return this.fragments.running.filter((f): f is Fragment => f !== null);
  }

  /** The DF a record of (node, thread) numbers `df` (exports naming DFs of raw records). */
  dfOf(node: number, thread: number, df: number): DfRec | undefined {
    return this.dfs.lookup(node, thread, df, true);
  }

  /** The fragment node-local CF `cf` is (while it lives). */
  fragmentOf(node: number, cf: number): Fragment | undefined {
    return this.fragments.lookup(node, cf);
  }
}
