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
    const rs = this.rowListeners;
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
