// The SPMD layer's records in the trace model: operations entered and left by each rank (with the
// call site resolved from its file's siteName records), collective exits with their bytes, root,
// synchronisation and sequence number, and lock acquisitions and releases. The resolver checks
// what it can check on one record (a known operation, a named call site, a rank below the run's
// THREADS) and tells its own listeners; the analyses that need the records (the pattern engine,
// the exports) `model.use(SpmdResolver)` and listen to it.
import { KIND_BY_CODE, SPMD_OPS, SYNC_MODES, type RecordKind, type SpmdOp, type SyncMode, type TraceEvent } from '../schema.js';
import { CODE, COL, type RecordBatch } from '../columns.js';
import { fileOf } from '../damage.js';
import type { Resolver, TraceModel } from './model.js';

type Ev<K extends TraceEvent['kind']> = Extract<TraceEvent, { kind: K }>;
export type SpmdEnterEvent = Ev<'spmdEnter'>;
export type SpmdExitEvent = Ev<'spmdExit'>;
export type SpmdCExitEvent = Ev<'spmdCExit'>;
export type SpmdLockEvent = Ev<'spmdAlock'> | Ev<'spmdRlock'>;

/** What the SPMD resolver tells (records as decoded, times on node 0's clock). */
export interface SpmdListener {
  /** A rank entered an operation at `site` (`file:line:col`, or `site#N` when its name was lost). */
  enter?(e: SpmdEnterEvent, site: string): void;
  exit?(e: SpmdExitEvent): void;
  cexit?(e: SpmdCExitEvent): void;
  /** A lock acquired (spmdAlock) or released (spmdRlock). */
  lock?(e: SpmdLockEvent): void;
}

/**
 * The same as numbers, with no object per record (the pattern engine): `site` resolved as for
 * SpmdListener.enter, and `callSite` the file's number of it (one file: node · 4096 + thread).
 */
export interface SpmdRowListener {
  enter(rank: number, t: number, op: number, site: string, node: number, thread: number, callSite: number): void;
  exit(rank: number, t: number, op: number): void;
  cexit(rank: number, t: number, op: number, seq: number, root: number, sync: number, sent: number, recv: number): void;
  alock(rank: number, t: number, lock: number): void;
  rlock(rank: number, t: number, lock: number): void;
}

/** Rows per block: a block's columns (~50 bytes a row) stay in the core's cache between writing and reading. */
const BLOCK = 2048;

/**
 * The layer's records as columns, handed on in blocks of up to BLOCK rows (SpmdBlockListener): a
 * listener runs one loop over a block instead of being called per record. Row i is a record of
 * kind code[i] (CODE.spmdEnter …) of rank[i] at t[i], written by (node[i], thread[i]); `a` holds
 * an enter's call site (numbered across the trace: SpmdResolver.siteNames), a collective exit's
 * seq, a lock record's lock; root, sync, sent and recv are a collective exit's.
 */
export class SpmdBlock {
  n = 0;
  readonly code = new Uint8Array(BLOCK);
  readonly rank = new Uint32Array(BLOCK);
  readonly t = new Float64Array(BLOCK);
  readonly op = new Uint8Array(BLOCK);
  readonly a = new Uint32Array(BLOCK);
  readonly root = new Int32Array(BLOCK);
  readonly sync = new Uint8Array(BLOCK);
  readonly sent = new Float64Array(BLOCK);
  readonly recv = new Float64Array(BLOCK);
  readonly node = new Uint32Array(BLOCK);
  readonly thread = new Uint32Array(BLOCK);
}

/**
 * Takes the records in blocks, in their order, each block once it is full and the last at the end
 * of the stream: later than the model's other records (for analyses that keep their own state
 * from the layer's records alone).
 */
export type SpmdBlockListener = (b: SpmdBlock) => void;

const SITE = CODE.siteName, ENTER = CODE.spmdEnter, EXIT = CODE.spmdExit, CEXIT = CODE.spmdCExit, ALOCK = CODE.spmdAlock, RLOCK = CODE.spmdRlock;
// rank and op come first in every SPMD operation record, and a lock record's lock after its rank
const RANK = COL.spmdEnter.rank, OP = COL.spmdEnter.op, CALL_SITE = COL.spmdEnter.callSite, LOCK = COL.spmdAlock.lock, CX = { ...COL.spmdCExit };
if (COL.spmdExit.rank !== RANK || COL.spmdCExit.rank !== RANK || COL.spmdExit.op !== OP || COL.spmdCExit.op !== OP || COL.spmdRlock.rank !== RANK || COL.spmdAlock.rank !== RANK || COL.spmdRlock.lock !== LOCK) {
  throw new Error('SPMD records: rank, op and lock must share their columns');
}

export const spmdOpName = (op: number): SpmdOp | `op#${number}` => SPMD_OPS[op] ?? `op#${op}`;
/** The IN and OUT modes of a collective's `sync` field. */
export const syncIn = (sync: number): SyncMode => SYNC_MODES[sync & 3] ?? 'nosync';
export const syncOut = (sync: number): SyncMode => SYNC_MODES[(sync >> 2) & 3] ?? 'nosync';

export class SpmdResolver implements Resolver {
  readonly kinds: readonly RecordKind[] = ['siteName', 'spmdEnter', 'spmdExit', 'spmdCExit', 'spmdAlock', 'spmdRlock'];
  /** ranks of the run (manifest.ranks; else grows with the ranks seen) */
  ranks: number;
  /** records of the layer seen */
  events = 0;
  private readonly listeners: SpmdListener[] = [];
  private readonly rowListeners: SpmdRowListener[] = [];
  private readonly blockListeners: SpmdBlockListener[] = [];
  private block: SpmdBlock | null = null;
  /** call-site names of the whole trace, by the numbers blocks give (one per distinct name) */
  readonly siteNames: string[] = [];
  private readonly siteIds = new Map<string, number>();
  /** per file (node · 4096 + thread): its call-site numbers → siteNames numbers (-1: not yet) */
  private readonly siteMaps = new Map<number, Int32Array>();
  private lastMapFile = -1;
  private lastMap: Int32Array | undefined;
  /** call-site names per file (node · 4096 + thread) */
  private readonly sites = new Map<number, string[]>();
  private readonly declared: boolean;

  constructor(private readonly m: TraceModel) {
    this.ranks = m.manifest.ranks ?? 0;
    this.declared = m.manifest.ranks !== undefined;
  }

  listen(l: SpmdListener): void {
    this.listeners.push(l);
  }

  listenRows(l: SpmdRowListener): void {
    this.rowListeners.push(l);
  }

  listenBlocks(l: SpmdBlockListener): void {
    this.blockListeners.push(l);
    this.block ??= new SpmdBlock();
  }

  /** The end of the stream: the last block. */
  end(): void {
    this.flush();
  }

  private flush(): void {
    const b = this.block;
    if (!b || b.n === 0) return;
    for (const l of this.blockListeners) l(b);
    b.n = 0;
  }

  /** The trace-wide number (siteNames) of call site `id` of the file of (node, thread). */
  siteNumber(node: number, thread: number, id: number): number {
    const k = node * 4096 + thread;
    let a = k === this.lastMapFile ? this.lastMap : this.siteMaps.get(k);
    if (!a || id >= a.length) {
      const w = new Int32Array(Math.max(64, 2 * (id + 1))).fill(-1);
      if (a) w.set(a);
      this.siteMaps.set(k, (a = w));
    }
    this.lastMapFile = k; this.lastMap = a;
    let g = a[id]!;
    if (g < 0) {
      const name = this.site(node, thread, id);
      g = this.siteIds.get(name) ?? -1;
      if (g < 0) { g = this.siteNames.length; this.siteNames.push(name); this.siteIds.set(name, g); }
      a[id] = g;
    }
    return g;
  }

  /** The call site number `id` of the file of (node, thread) names. */
  site(node: number, thread: number, id: number): string {
    const k = node * 4096 + thread;
    // the records of one file come in runs: its names stay at hand
    const a = k === this.lastFile ? this.lastSites : this.sites.get(k);
    this.lastFile = k; this.lastSites = a;
    return a?.[id] ?? `site#${id}`;
  }
  private lastFile = -1;
  private lastSites: string[] | undefined;

  push(e: TraceEvent): void {
    if (e.kind === 'siteName') { this.named(e.node, e.thread, e.callSite, e.name); return; }
    if (e.kind !== 'spmdEnter' && e.kind !== 'spmdExit' && e.kind !== 'spmdCExit' && e.kind !== 'spmdAlock' && e.kind !== 'spmdRlock') return;
    if (!this.admit(e.kind, e.node, e.thread, e.rank, e.kind === 'spmdAlock' || e.kind === 'spmdRlock' ? 0 : e.op)) return;
    this.events++;
    if (this.block) this.append(e);
    const ls = this.listeners, rs = this.rowListeners;
    switch (e.kind) {
      case 'spmdEnter': {
        const site = this.site(e.node, e.thread, e.callSite);
        for (const l of ls) l.enter?.(e, site);
        for (const l of rs) l.enter(e.rank, e.t, e.op, site, e.node, e.thread, e.callSite);
        break;
      }
      case 'spmdExit': for (const l of ls) l.exit?.(e); for (const l of rs) l.exit(e.rank, e.t, e.op); break;
      case 'spmdCExit': for (const l of ls) l.cexit?.(e); for (const l of rs) l.cexit(e.rank, e.t, e.op, e.seq, e.root, e.sync, e.sent, e.recv); break;
      case 'spmdAlock': for (const l of ls) l.lock?.(e); for (const l of rs) l.alock(e.rank, e.t, e.lock); break;
      default: for (const l of ls) l.lock?.(e); for (const l of rs) l.rlock(e.rank, e.t, e.lock); break;
    }
  }

  /** A row of columns: objects only for the listeners that take them. */
  row(b: RecordBatch, i: number): void {
    const code = b.code[i]!;
    if (this.listeners.length > 0 || code === SITE) { this.push(b.event(i)); return; }
    const node = b.node[i]!, thread = b.thread[i]!, t = b.t[i]!, f = b.f;
    const rank = f[RANK]![i]!;
    const op = code === ALOCK || code === RLOCK ? 0 : f[OP]![i]!;
    if ((rank >= this.ranks || op >= SPMD_OPS.length) && !this.admit(KIND_BY_CODE[code]!, node, thread, rank, op)) return;
    this.events++;
    const blk = this.block;
    if (blk) {
      const j = blk.n;
      blk.code[j] = code; blk.rank[j] = rank; blk.t[j] = t; blk.op[j] = op; blk.node[j] = node; blk.thread[j] = thread;
      if (code === ENTER) blk.a[j] = this.siteNumber(node, thread, f[CALL_SITE]![i]!);
      else if (code === CEXIT) {
        const C = CX;
        blk.a[j] = f[C.seq]![i]!; blk.root[j] = f[C.root]![i]!; blk.sync[j] = f[C.sync]![i]!; blk.sent[j] = f[C.sent]![i]!; blk.recv[j] = f[C.recv]![i]!;
      } else if (code !== EXIT) blk.a[j] = f[LOCK]![i]!;
      if ((blk.n = j + 1) === BLOCK) this.flush();
    }
    const rs = this.rowListeners;
    if (rs.length === 0) return;
    switch (code) {
      case ENTER: {
        const cs = f[CALL_SITE]![i]!;
        const site = this.site(node, thread, cs);
        for (const l of rs) l.enter(rank, t, op, site, node, thread, cs);
        break;
      }
      case EXIT: for (const l of rs) l.exit(rank, t, op); break;
      case CEXIT: {
        const C = CX;
        for (const l of rs) l.cexit(rank, t, op, f[C.seq]![i]!, f[C.root]![i]!, f[C.sync]![i]!, f[C.sent]![i]!, f[C.recv]![i]!);
        break;
      }
      case ALOCK: for (const l of rs) l.alock(rank, t, f[LOCK]![i]!); break;
      default: for (const l of rs) l.rlock(rank, t, f[LOCK]![i]!); break;
    }
  }

  /** A record object into the block (the object path: a listener of objects is there). */
  private append(e: SpmdEnterEvent | SpmdExitEvent | SpmdCExitEvent | SpmdLockEvent): void {
    const blk = this.block!, j = blk.n;
    blk.code[j] = CODE[e.kind]; blk.rank[j] = e.rank; blk.t[j] = e.t; blk.node[j] = e.node; blk.thread[j] = e.thread;
    blk.op[j] = e.kind === 'spmdAlock' || e.kind === 'spmdRlock' ? 0 : e.op;
    if (e.kind === 'spmdEnter') blk.a[j] = this.siteNumber(e.node, e.thread, e.callSite);
    else if (e.kind === 'spmdCExit') { blk.a[j] = e.seq; blk.root[j] = e.root; blk.sync[j] = e.sync; blk.sent[j] = e.sent; blk.recv[j] = e.recv; }
    else if (e.kind !== 'spmdExit') blk.a[j] = e.lock;
    if ((blk.n = j + 1) === BLOCK) this.flush();
  }

  private named(node: number, thread: number, callSite: number, name: string): void {
    const k = node * 4096 + thread;
    let a = this.sites.get(k);
    if (!a) { this.sites.set(k, (a = [])); this.lastFile = -1; }
    a[callSite] = name;
  }

  /** Checks a record of rank `rank` (op: its operation, 0 for a lock record); false: dropped. Nothing to say for a known rank and operation. */
  private admit(kind: RecordKind, node: number, thread: number, rank: number, op: number): boolean {
    const m = this.m;
    if (rank >= this.ranks) {
      if (this.declared) {
        m.warn(`SPMD records of ranks beyond the run's ${this.ranks} ranks dropped`);
        m.damage.add('unknown-id', `a ${kind} record of rank ${rank}, beyond the ${this.ranks} ranks of the manifest`, fileOf(node, thread));
        return false;
      }
      this.ranks = rank + 1;
    }
    if (op >= SPMD_OPS.length) m.warn('SPMD operations of unknown kinds (a newer writer?) kept by number');
    return true;
  }
}
