// The compound-event engine of seed 001 §3: it takes an SPMD trace's events in time order and
// keeps the seed's three states —
//   the region stack of each rank (R^l: the Enter events of its active operations),
//   the collective queue (C: the CExit events of the collectives not yet complete),
//   the lock ownership (O^k: the last Sync event of each lock) —
// from which the pointer attributes follow: e.enterptr is the top of e's rank's stack before e,
// a Sync event's lockptr the lock's previous Sync event. A collective is analysed when the CExit
// of its last rank arrives (coll(last) ≠ ∅); a lock acquisition when it arrives. The patterns'
// formulas (catalog.ts) charge the results tree (results.ts).
//
// The queue is keyed by the collectives' sequence numbers, which the trace records: the seed's
// per-thread FIFO (Inst = the least recent CExit of every thread) is the same when every rank
// calls the collectives in the same order, and a rank that does not is named (a mismatch)
// instead of silently pairing unrelated operations.
//
// Events are passed as numbers (no object per event): the engine runs at tens of millions of
// events per second, so a trace's analysis costs its decoding.
import { SPMD_OPS } from '../../trace/schema.js';
import { CODE } from '../../trace/columns.js';
import type { SpmdBlock } from '../../trace/model/spmd.js';
import { P } from './catalog.js';
import type { PatternResults } from './results.js';

const OP = Object.fromEntries(SPMD_OPS.map((o, i) => [o, i])) as Record<(typeof SPMD_OPS)[number], number>;
const NOSYNC = 0, MYSYNC = 1, ALLSYNC = 2;
const ENTER = CODE.spmdEnter, EXIT = CODE.spmdExit, CEXIT = CODE.spmdCExit, ALOCK = CODE.spmdAlock;
/** locks whose state lives in arrays (the SPMD layer numbers its locks from 0); those beyond, in maps */
const SMALL_LOCKS = 1 << 16;
/** slots of the collective queue's ring (a power of two) */
const RING = 64;

/**
 * The region stacks of all ranks (R^l: the Enter events of each rank's active operations), as
 * flat columns: rank r's entries are rows [r·depth, r·depth + n[r]). One set of typed arrays for
 * every rank keeps a push or a pop to a few array accesses with no object in between.
 */
class RegionStacks {
  depth = 16;
  n: Int32Array;
  t: Float64Array;
  op: Uint8Array;
  site: Int32Array;
  constructor(public ranks: number) {
    this.n = new Int32Array(ranks);
    this.t = new Float64Array(ranks * this.depth);
    this.op = new Uint8Array(ranks * this.depth);
    this.site = new Int32Array(ranks * this.depth);
  }
  /** Room for `ranks` ranks of `depth` entries each (the rows move to their new places). */
  resize(ranks: number, depth: number): void {
    const t = new Float64Array(ranks * depth), op = new Uint8Array(ranks * depth), site = new Int32Array(ranks * depth), n = new Int32Array(ranks);
    for (let r = 0; r < this.ranks; r++) {
      const a = r * this.depth, k = this.n[r]!;
      t.set(this.t.subarray(a, a + k), r * depth); op.set(this.op.subarray(a, a + k), r * depth); site.set(this.site.subarray(a, a + k), r * depth);
      n[r] = k;
    }
    this.t = t; this.op = op; this.site = site; this.n = n;
    this.ranks = ranks; this.depth = depth;
  }
}

/** One collective operation while its CExit events gather (an entry of C). */
class Instance {
  seq = 0;
  op = 0;
  root = -1;
  sync = 0;
  arrived = 0;
  mismatch = -1;
  enter: Float64Array;
  exit: Float64Array;
  site: Int32Array;
  has: Uint8Array;
  constructor(n: number) {
    this.enter = new Float64Array(n);
    this.exit = new Float64Array(n);
    this.site = new Int32Array(n);
    this.has = new Uint8Array(n);
  }
  grow(n: number): void {
    const e = new Float64Array(n), x = new Float64Array(n), s = new Int32Array(n), h = new Uint8Array(n);
    e.set(this.enter); x.set(this.exit); s.set(this.site); h.set(this.has);
    this.enter = e; this.exit = x; this.site = s; this.has = h;
  }
}

/** A completed collective as the engine saw it (for comparisons with other formulas). */
export interface CollectiveView {
  readonly seq: number;
  readonly op: number;
  readonly root: number;
  readonly enter: Float64Array;
  readonly exit: Float64Array;
}

/** Told, for each collective a pattern shared with Scalasca was computed on, the seed's wasted time. */
export type PeerHook = (p: number, c: CollectiveView, seedWasted: number) => void;

/** What the engine found wrong in the events (the caller words them as warnings). */
export interface EngineProblems {
  /** exits with no operation entered on the rank, or leaving another operation than the innermost */
  unmatchedExits: number;
  /** collectives whose ranks disagree on the operation (first: seq, rank, op, expected op) */
  mismatched: number;
  firstMismatch: { seq: number; rank: number; op: string; expected: string } | null;
  /** collectives some rank never left (incomplete at the end) */
  incomplete: number;
  /** acquisitions of a lock still held (lockptr an Alock) */
  doubleAcquire: number;
}

export class PatternEngine {
  private readonly stacks: RegionStacks;
  /**
   * The collective queue, seq → instance: a ring indexed by seq (the collectives in flight are a
   * few consecutive ones), and a map for those the ring cannot hold (ranks far apart).
   */
  private readonly ring: (Instance | null)[] = new Array<Instance | null>(RING).fill(null);
  private readonly queue = new Map<number, Instance>();
  private inRing = 0;
  private readonly pool: Instance[] = [];
  /**
   * lock ownership: per lock, the last Sync event (kind 1 = Alock, 2 = Rlock, 0 = none; its time),
   * in arrays indexed by lock for the first SMALL_LOCKS locks, in maps beyond
   */
  private lockKindA = new Uint8Array(64);
  private lockTA = new Float64Array(64);
  private readonly lockKind = new Map<number, number>();
  private readonly lockT = new Map<number, number>();
  /** the notify of a split-phase barrier: latest enter among the ranks, per rank's next wait */
  private lastNotify = NaN;
  events = 0;
  collectives = 0;
  readonly problems: EngineProblems = { unmatchedExits: 0, mismatched: 0, firstMismatch: null, incomplete: 0, doubleAcquire: 0 };

  /** optional: the comparison with Scalasca's formulas */
  peer: PeerHook | null = null;

  constructor(public ranks: number, private readonly out: PatternResults) {
    this.stacks = new RegionStacks(ranks);
  }

  /**
   * More ranks than the engine was made for (a trace whose manifest does not say THREADS): a
   * collective that completed before the last rank appeared was judged on fewer ranks.
   */
  grow(ranks: number): void {
    if (ranks <= this.ranks) return;
    this.stacks.resize(ranks, this.stacks.depth);
    for (const c of this.queue.values()) c.grow(ranks);
    for (const c of this.ring) c?.grow(ranks);
    this.pool.length = 0;
    this.ranks = ranks;
  }

  /** Told before the engine grows for a rank beyond its ranks (the caller words the warning). */
  onGrow: (() => void) | null = null;

  /**
   * A block of the layer's records, in order: one loop over the columns, each record to its
   * kind's method (inlined: no call per record through a listener). `sites` maps the block's call
   * sites to the results' (PatternResults.site).
   */
  consume(b: SpmdBlock, sites: Int32Array): void {
    const { code, rank, t, op, a, root, sync } = b;
    const n = b.n;
    this.events += n;
    for (let i = 0; i < n; i++) {
      const r = rank[i]!, c = code[i]!;
      if (r >= this.ranks) { this.onGrow?.(); this.grow(r + 1); }
      if (c === ENTER) this.push(r, t[i]!, op[i]!, sites[a[i]!]!);
      else if (c === EXIT) this.pop(r, op[i]!);
      else if (c === CEXIT) this.collectiveExit(r, t[i]!, op[i]!, a[i]!, root[i]!, sync[i]!);
      else if (c === ALOCK) this.acquired(r, t[i]!, a[i]!);
      else this.released(t[i]!, a[i]!);
    }
  }

  enter(rank: number, t: number, op: number, site: number): void {
    this.events++;
    this.push(rank, t, op, site);
  }

  /** r_Enter: the operation on top of the rank's stack. */
  private push(rank: number, t: number, op: number, site: number): void {
    const s = this.stacks;
    let k = s.n[rank]!;
    if (k === s.depth) s.resize(s.ranks, 2 * s.depth);
    k += rank * s.depth;
    s.t[k] = t; s.op[k] = op; s.site[k] = site;
    s.n[rank]++;
  }

  exit(rank: number, _t: number, op: number): void {
    this.events++;
    this.pop(rank, op);
  }

  cexit(rank: number, t: number, op: number, seq: number, root: number, sync: number): void {
    this.events++;
    this.collectiveExit(rank, t, op, seq, root, sync);
  }

  /** A CExit: pops the rank's stack (its enterptr) and joins the collective's instance. */
  private collectiveExit(rank: number, t: number, op: number, seq: number, root: number, sync: number): void {
    if (!this.pop(rank, op)) return;
    const s = this.stacks, k = rank * s.depth + s.n[rank]!;
    const enterT = s.t[k]!, site = s.site[k]!;
    const slot = seq & (RING - 1);
    let c = this.ring[slot];
    if (c === null || c.seq !== seq) c = this.queue.size > 0 ? this.queue.get(seq) ?? null : null;
    if (!c) {
      c = this.pool.pop() ?? new Instance(this.ranks);
      c.seq = seq; c.op = op; c.root = root; c.sync = sync; c.arrived = 0; c.mismatch = -1;
      c.has.fill(0);
      if (this.ring[slot] === null) { this.ring[slot] = c; this.inRing++; } else this.queue.set(seq, c);
    } else if (c.op !== op && c.mismatch < 0) {
      c.mismatch = rank;
      this.problems.mismatched++;
      this.problems.firstMismatch ??= { seq, rank, op: SPMD_OPS[op] ?? `op#${op}`, expected: SPMD_OPS[c.op] ?? `op#${c.op}` };
    }
    if (c.has[rank]) return; // a second exit of the same collective by one rank: damage, ignored
    c.has[rank] = 1;
    c.enter[rank] = enterT;
    c.exit[rank] = t;
    c.site[rank] = site;
    if (++c.arrived === this.ranks) {
      if (this.ring[slot] === c) { this.ring[slot] = null; this.inRing--; } else this.queue.delete(seq);
      if (c.mismatch < 0) this.analyse(c);
      this.pool.push(c);
    }
  }

  alock(rank: number, t: number, lock: number): void {
    this.events++;
    this.acquired(rank, t, lock);
  }

  rlock(_rank: number, t: number, lock: number): void {
    this.events++;
    this.released(t, lock);
  }

  /** Alock: lock contention (Fig. 2) against the lock's previous release. */
  private acquired(rank: number, t: number, lock: number): void {
    const small = lock < this.lockKindA.length || this.lockRoom(lock);
    const kind = small ? this.lockKindA[lock]! : this.lockKind.get(lock) ?? 0;
    if (kind === 2) {
      const rt = small ? this.lockTA[lock]! : this.lockT.get(lock)!;
      const s = this.stacks, n = s.n[rank]!;
      // e = a.enterptr: the rank's innermost operation (its lock call)
      if (n > 0) {
        const k = rank * s.depth + n - 1, et = s.t[k]!;
        if (et < rt) { this.out.add(P.lock_contention, s.site[k]!, rank, rt - et); this.out.occurred(P.lock_contention); }
      }
    } else if (kind === 1) this.problems.doubleAcquire++;
    this.sync(small, lock, 1, t);
  }

  private released(t: number, lock: number): void {
    this.sync(lock < this.lockKindA.length || this.lockRoom(lock), lock, 2, t);
  }

  private sync(small: boolean, lock: number, kind: number, t: number): void {
    if (small) { this.lockKindA[lock] = kind; this.lockTA[lock] = t; } else { this.lockKind.set(lock, kind); this.lockT.set(lock, t); }
  }

  /** Whether `lock` fits the arrays, grown up to SMALL_LOCKS. */
  private lockRoom(lock: number): boolean {
    if (lock >= SMALL_LOCKS) return false;
    const n = Math.min(SMALL_LOCKS, Math.max(2 * this.lockKindA.length, lock + 1));
    const k = new Uint8Array(n), t = new Float64Array(n);
    k.set(this.lockKindA); t.set(this.lockTA);
    this.lockKindA = k; this.lockTA = t;
    return true;
  }

  /** The end of the events: collectives still gathering never completed. */
  end(): void {
    this.problems.incomplete += this.queue.size + this.inRing;
    this.queue.clear();
    this.ring.fill(null);
    this.inRing = 0;
  }

  /**
   * r_Exit: pop the Enter of `op` (it stays readable just above the top: the exit's enterptr).
   * An exit of an operation below the top drops those left open above it; of none, is counted.
   */
  private pop(rank: number, op: number): boolean {
    const s = this.stacks, n = s.n[rank]!;
    if (n === 0 || s.op[rank * s.depth + n - 1] !== op) {
      this.problems.unmatchedExits++;
      if (n === 0 || !this.unwind(rank, op)) return false;
    }
    s.n[rank]--;
    return true;
  }

  /** An exit of `op` below the top of rank's stack: drop the operations left open above it. */
  private unwind(rank: number, op: number): boolean {
    const s = this.stacks, base = rank * s.depth;
    for (let i = s.n[rank]! - 1; i >= 0; i--) if (s.op[base + i] === op) { s.n[rank] = i + 1; return true; }
    return false;
  }

  // ------------------------------------------------------------------ the patterns of a collective

  private analyse(c: Instance): void {
    this.collectives++;
    const op = c.op, sIn = c.sync & 3, sOut = (c.sync >> 2) & 3;
    switch (op) {
      case OP.barrier:
        this.shared(P.wait_at_barrier, c, this.toLatest(P.wait_at_barrier, c, c.enter));
        this.shared(P.barrier_completion, c, this.toLatest(P.barrier_completion, c, c.exit));
        return;
      case OP.notify: {
        let m = -Infinity;
        for (let r = 0; r < this.ranks; r++) if (c.enter[r]! > m) m = c.enter[r]!;
        this.lastNotify = m;
        return;
      }
      case OP.wait:
        this.splitWait(c);
        this.toLatest(P.barrier_completion, c, c.exit);
        return;
      case OP.all_alloc:
        this.beforeRoot(P.wait_in_all_alloc, c, c.root >= 0 ? c.root : 0);
        return;
      default: break;
    }
    const oneToMany = op === OP.broadcast || op === OP.scatter;
    const manyToOne = op === OP.gather || op === OP.reduce;
    const nxn = op === OP.gather_all || op === OP.exchange;
    if (sIn === ALLSYNC) this.shared(P.entry_sync, c, this.toLatest(P.entry_sync, c, c.enter));
    else if (sIn === MYSYNC) {
      if (oneToMany && c.root >= 0) { this.shared(P.late_broadcast, c, this.beforeRoot(P.late_broadcast, c, c.root)); this.alone(c, c.root); }
      else if (manyToOne && c.root >= 0) { this.shared(P.early_gather, c, this.rootBefore(P.early_gather, c, c.root)); this.alone(c, c.root); }
      else if (nxn) this.shared(P.nxn_entry_sync, c, this.toLatest(P.nxn_entry_sync, c, c.enter));
      else if (op === OP.prefix_reduce) this.lowerRanks(c);
    }
    if (sOut === ALLSYNC) this.toLatest(P.exit_sync, c, c.exit);
    else if (sOut === MYSYNC && nxn) this.toLatest(P.nxn_exit_sync, c, c.exit);
    void NOSYNC;
  }

  private shared(p: number, c: Instance, wasted: number): void {
    this.peer?.(p, c, wasted);
  }

  /** Σ_e max(times) − e.time, each rank charged its own term at its call site; returns the sum. */
  private toLatest(p: number, c: Instance, times: Float64Array): number {
    let m = -Infinity;
    for (let r = 0; r < this.ranks; r++) if (times[r]! > m) m = times[r]!;
    let sum = 0;
    for (let r = 0; r < this.ranks; r++) {
      const w = m - times[r]!;
      if (w > 0) { this.out.add(p, c.site[r]!, r, w); sum += w; }
    }
    if (sum > 0) this.out.occurred(p);
    return sum;
  }

  /** Σ_{e.time < r.time} r.time − e.time, r the root's enter (late broadcast, collective allocation). */
  private beforeRoot(p: number, c: Instance, root: number): number {
    const rt = c.enter[root]!;
    let sum = 0;
    for (let r = 0; r < this.ranks; r++) {
      const w = rt - c.enter[r]!;
      if (w > 0) { this.out.add(p, c.site[r]!, r, w); sum += w; }
    }
    if (sum > 0) this.out.occurred(p);
    return sum;
  }

  /** max(0, max(others' enters) − root enter), charged to the root (early gather). */
  private rootBefore(p: number, c: Instance, root: number): number {
    let m = -Infinity;
    for (let r = 0; r < this.ranks; r++) if (r !== root && c.enter[r]! > m) m = c.enter[r]!;
    const w = m - c.enter[root]!;
    if (!(w > 0)) return 0;
    this.out.add(p, c.site[root]!, root, w);
    this.out.occurred(p);
    return w;
  }

  /** Early prefix reduction: each rank waits for the latest enter among the lower ranks. */
  private lowerRanks(c: Instance): void {
    let m = -Infinity, any = false;
    for (let r = 0; r < this.ranks; r++) {
      const w = m - c.enter[r]!;
      if (w > 0) { this.out.add(P.early_prefix_reduction, c.site[r]!, r, w); any = true; }
      if (c.enter[r]! > m) m = c.enter[r]!;
    }
    if (any) this.out.occurred(P.early_prefix_reduction);
  }

  /** The wait of a split-phase barrier: until the last notify, at most until it left. */
  private splitWait(c: Instance): void {
    const last = this.lastNotify;
    if (!(last === last)) return;
    let any = false;
    for (let r = 0; r < this.ranks; r++) {
      const w = Math.min(last, c.exit[r]!) - c.enter[r]!;
      if (w > 0) { this.out.add(P.wait_at_barrier, c.site[r]!, r, w); any = true; }
    }
    if (any) this.out.occurred(P.wait_at_barrier);
  }

  /** sorted [enter, exit] of the other ranks (scratch, reused) */
  private order: number[] = [];

  /**
   * Wait inside a collective (Fig. 5b): the root's [enter, exit] less the union of the other
   * ranks' intervals that overlap it — the time the root is alone in the operation.
   */
  private alone(c: Instance, root: number): void {
    const a = c.enter[root]!, b = c.exit[root]!;
    if (!(b > a)) return;
    const idx = this.order;
    idx.length = 0;
    for (let r = 0; r < this.ranks; r++) if (r !== root && c.exit[r]! > a && c.enter[r]! < b) idx.push(r);
    // insertion sort by enter time: a few ranks, and no closure per collective
    const en = c.enter;
    for (let i = 1; i < idx.length; i++) {
      const v = idx[i]!, tv = en[v]!;
      let j = i - 1;
      while (j >= 0 && en[idx[j]!]! > tv) { idx[j + 1] = idx[j]!; j--; }
      idx[j + 1] = v;
    }
    let covered = 0, x = a;
    for (const r of idx) {
      const s = Math.max(c.enter[r]!, x), e = Math.min(c.exit[r]!, b);
      if (e > s) { covered += e - s; x = e; }
    }
    const w = b - a - covered;
    if (w > 0) { this.out.add(P.wait_inside_collective, c.site[root]!, root, w); this.out.occurred(P.wait_inside_collective); }
  }
}
