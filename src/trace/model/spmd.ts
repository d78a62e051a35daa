// The SPMD layer's records in the trace model: operations entered and left by each rank (with the
// call site resolved from its file's siteName records), collective exits with their bytes, root,
// synchronisation and sequence number, and lock acquisitions and releases. The resolver checks
// what it can check on one record (a known operation, a named call site, a rank below the run's
// THREADS) and tells its own listeners; the analyses that need the records (the pattern engine,
// the exports) `model.use(SpmdResolver)` and listen to it.
import { SPMD_OPS, SYNC_MODES, type RecordKind, type SpmdOp, type SyncMode, type TraceEvent } from '../schema.js';
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

  /** The call site number `id` of the file of (node, thread) names. */
  site(node: number, thread: number, id: number): string {
    return this.sites.get(node * 4096 + thread)?.[id] ?? `site#${id}`;
  }

  push(e: TraceEvent): void {
    if (e.kind === 'siteName') {
      const k = e.node * 4096 + e.thread;
      let a = this.sites.get(k);
      if (!a) this.sites.set(k, (a = []));
      a[e.callSite] = e.name;
      return;
    }
    if (e.kind !== 'spmdEnter' && e.kind !== 'spmdExit' && e.kind !== 'spmdCExit' && e.kind !== 'spmdAlock' && e.kind !== 'spmdRlock') return;
    const m = this.m;
    if (e.rank >= this.ranks) {
      if (this.declared) {
        m.warn(`SPMD records of ranks beyond the run's ${this.ranks} ranks dropped`);
        m.damage.add('unknown-id', `a ${e.kind} record of rank ${e.rank}, beyond the ${this.ranks} ranks of the manifest`, fileOf(e.node, e.thread));
        return;
      }
      this.ranks = e.rank + 1;
    }
    if ((e.kind === 'spmdEnter' || e.kind === 'spmdExit' || e.kind === 'spmdCExit') && e.op >= SPMD_OPS.length) m.warn('SPMD operations of unknown kinds (a newer writer?) kept by number');
    this.events++;
    const ls = this.listeners;
    switch (e.kind) {
      case 'spmdEnter': {
        const site = this.site(e.node, e.thread, e.callSite);
        for (const l of ls) l.enter?.(e, site);
        break;
      }
      case 'spmdExit': for (const l of ls) l.exit?.(e); break;
      case 'spmdCExit': for (const l of ls) l.cexit?.(e); break;
      default: for (const l of ls) l.lock?.(e); break;
    }
  }
}
