// The explicit state of one node's scheduler and the small operations every part of it shares
// (create, queue, park and finish CFs; post, destroy and push DFs, locally or through the
// cluster). The interpreter (examine.ts), the batch builder (batch.ts) and the pump
// (runtime.ts) all work on one NodeState; none keeps state of its own between calls.
import type { CompiledProgram, Site } from '../../program/compile.js';
import type { DfKey } from '../../core/dfkey.js';
import { T_INT, T_RAW, valueSize, type DfValue } from '../../ucode/value.js';
import type { TraceSink } from '../../trace/schema.js';
import type { SchedulingPolicy } from '../policy/types.js';
import { holdsDfStore, rawArrived, rawFreed, rawHeld, rawLet, rawPosted, rawSent } from '../exec/shm.js';
import { pinRaw } from '../../ucode/recycle.js';
import { Cf, DISPATCHED, DONE, QUEUED, WAITING } from './fragment.js';
import { describeSite, RunFault } from './fault.js';
import { Deque, FifoReady, PriorityReady, type ReadyQueue } from './queue.js';
import { DfStore, type Delivery, type Served } from './store.js';
import type { Spread } from './spread.js';
import { WaitList } from './waitlist.js';

/**
 * The object that drives a NodeState (the runtime): called through methods, not per-instance
 * closures, so the call sites in the hot path keep one target.
 */
export interface StateOwner {
  schedule(): void;
  /** label indices of a CF when they are plain values (traces) */
  labelIndices(cf: Cf): number[] | null;
  /** batches in flight on the node's worker threads */
  readonly inflight: number;
  /** `cf` parked: it may wait only for outputs of batches already sent (fed across lanes) */
  parked(cf: Cf): void;
  /** loop `cf`, begun and in `loops`, is planned whole before any of it is unrolled (true), or not (node/loop-plan.ts) */
  planLoop(cf: Cf): boolean;
}

const IDLE_OWNER: StateOwner = { schedule() {}, labelIndices: () => null, inflight: 0, parked() {}, planLoop: () => false };

/** Cross-node operations (absent with one node). */
export interface RemoteOps {
  migrate(cf: Cf, to: number): void;
  /** send node `to` a copy of loop `cf`, to unroll there as part of `spread` */
  spread(cf: Cf, to: number, spread: Spread): void;
  request(key: DfKey, owner: number): void;
  /** `n` more reads of `key` here, from the copy this node keeps or will get (counted at `owner`) */
  reads(key: DfKey, owner: number, n: number): void;
  /** `by`: the CF that wrote the value (named if the owner finds the DF assigned already) */
  post(key: DfKey, owner: number, v: DfValue, count: number, by: Cf): void;
  /** the value of `key` for node `to`, with what it may do with it (see DfStore's Served) */
  respond(key: DfKey, to: number, served: Served): void;
  /** `key` was freed here: nodes that kept a copy drop it */
  drop(key: DfKey, to: number): void;
  /** the request of node `to` for `key` cannot be served: that node reports `message` */
  refuse(key: DfKey, to: number, message: string): void;
  destroy(key: DfKey, owner: number): void;
  push(pushKey: string, owner: number, v: DfValue): void;
  /** send what is queued now: this thread is about to run a long ucode */
  flush(): void;
}

/** What a node needs from the world around it. */
export interface NodeHost {
  rank: number;
  size: number;
  /** executor lanes (worker threads) */
  lanes: number;
  remote?: RemoteOps;
  trace?: TraceSink;
  now(): number;
}

export class NodeState {
  readonly self: number;
  readonly size: number;
  readonly lanes: number;
  /**
   * one lane and no priorities: the original's FIFO order (docs/language.md §8.3). Several
   * lanes on one node begin in it too, until workers are wanted (toLanes): while every CF runs
   * on this thread the FIFO pump does the same work for less (see toLanes)
   */
  fifo: boolean;
  /** several lanes, begun in FIFO order: they leave it once workers are wanted (toLanes) */
  readonly fifoUntilWorkers: boolean;
  /** ready CFs are ordered by priorities (the policy's or the program's), not by arrival */
  readonly ordered: boolean;
  readonly tr: TraceSink | undefined;
  readonly remote: RemoteOps | undefined;
  readonly store: DfStore;
  /** CFs to examine */
  readonly run = new Deque<Cf>(1024);
  /** atomic CFs ready to run */
  readonly ready: ReadyQueue;
  /** CFs parked until DFs arrive (hang reports) */
  readonly waiting = new WaitList();
  /** `for` CFs unrolled lazily, several-lane mode */
  readonly loops: Cf[] = [];
  /**
   * per loop of `loops`, the first CF its newest unroll spawned: once that CF has gone to a lane
   * (or finished), the loop has less than a chunk spawned ahead of what runs (see behind)
   */
  readonly frontier = new Map<Cf, Cf>();
  /** loops this node unrolls as one of several (their CFs placed elsewhere are not spawned here) */
  readonly spreads = new Map<Cf, Spread>();
  /** CFs on this node not finished */
  live = 0;
  /** CFs woken from waiting so far: spawned before their inputs existed (--timing: woken) */
  wakes = 0;
  /** per lazily unrolled loop, what its unrolls did (see LoopMemo) */
  private readonly memos = new Map<Cf, LoopMemo>();
  private cfSeq = 0;
  /** CFs this node has made so far (atomic and structured) */
  get made(): number { return this.cfSeq; }
  /** who runs the pump (scheduled when there is something new to do) and names labels for traces */
  owner: StateOwner = IDLE_OWNER;

  constructor(readonly program: CompiledProgram, readonly host: NodeHost, readonly policy: SchedulingPolicy) {
    this.self = host.rank;
    this.size = host.size;
    this.lanes = host.lanes;
    const ordered = (this.ordered = policy.caps.orders || program.hasPriority);
    this.fifo = !ordered && (host.lanes === 1 || host.size === 1);
    this.fifoUntilWorkers = this.fifo && host.lanes > 1;
    this.tr = host.trace;
    this.remote = host.remote;
    this.ready = ordered ? new PriorityReady() : new FifoReady();
    this.loopView.nodes = host.size;
    this.loopView.ordered = ordered;
    holdsDfStore();
    this.store = new DfStore((v) => {
      if (v.t === T_RAW) rawFreed(v.v);
      if (this.tr) this.liveChanged();
    }, host.size > 1 ? host.rank : undefined, (site, node) => {
      const s = program.sites[site];
      return s === undefined ? `a CF on node ${node}` : `${describeSite(s, s.label)}${host.size > 1 ? ` on node ${node}` : ''}`;
    });
    this.store.onDrop = (key, nodes) => { for (const n of nodes) this.remote!.drop(key, n); };
    // a copy kept of another node's value holds its buffer until dropped (onFree lets it go)
    this.store.onKeep = (v) => { if (v.t === T_RAW) rawHeld(v.v); };
  }

  // ------------------------------------------------------------------ CFs

  newCf(site: Site, env: unknown[], gidPrefix: string, iter: number, parent: Cf | null): Cf {
    const cf = new Cf(this.cfSeq++, site, env, gidPrefix, iter);
    if (parent) cf.priority = parent.priority;
    this.live++;
    if (this.tr) this.tr.cfCreated(this.host.now(), cf.id, parent ? parent.id : -1, site.id, cf.gid, this.owner.labelIndices(cf));
    return cf;
  }

  /** `n` CF numbers in a row, the first returned: a planned loop's steps (loop-run.ts), no CF made. */
  reserveIds(n: number): number {
    const first = this.cfSeq;
    this.cfSeq += n;
    return first;
  }

  /** A CF that arrived from another node (see cluster/): counted and queued like a new one. */
  adopt(site: Site, env: unknown[], gid: string): Cf {
    const cf = new Cf(this.cfSeq++, site, env, '', -1);
    cf.setGid(gid);
    this.live++;
    return cf;
  }

  enqueue(cf: Cf): void {
    cf.state = QUEUED;
    this.run.push(cf);
    this.owner.schedule();
  }

  /**
   * Several lanes, begun in FIFO order: from now on, the several-lane order. A loop the FIFO pump
   * was unrolling waits in the run queue; the several-lane pump unrolls it from `loops`.
   */
  toLanes(): void {
    if (!this.fifo || !this.fifoUntilWorkers) return;
    this.fifo = false;
    const run = this.run;
    for (let n = run.length; n > 0; n--) {
      const cf = run.shift()!;
      if (cf.begun && cf.site.kind === 'for') this.loops.push(cf);
      else run.push(cf);
    }
  }

  park(cf: Cf): void {
    cf.state = WAITING;
    this.waiting.add(cf);
    this.owner.parked(cf);
  }

  /** Iterations of `loop` to spawn now (the policy decides from what the node is doing). */
  unrollChunk(remaining: number, starving: boolean, loop: Cf): number {
    let memo = this.memos.get(loop);
    if (!memo) this.memos.set(loop, memo = { lastChunk: 0, wakesAt: this.wakes, calm: Infinity });
    const v = this.loopView;
    v.remaining = remaining;
    v.behind = this.behind(loop);
    v.live = this.live;
    v.waiting = this.waiting.size;
    v.starving = starving;
    v.inflight = this.owner.inflight;
    v.lastChunk = memo.lastChunk;
    v.wokenSince = this.wakes - memo.wakesAt;
    v.calm = memo.calm;
    // whole iterations, whatever the policy says: a loop's counter stays an integer
    const chunk = Math.floor(this.policy.unrollChunk(v));
    if (chunk > 0) {
      memo.calm = v.wokenSince > 0 ? 0 : memo.calm + 1;
      memo.lastChunk = Math.min(chunk, remaining);
      memo.wakesAt = this.wakes;
    }
    return chunk;
  }

  /** `loop` is unrolled to its end: its memo goes. */
  unrolled(loop: Cf): void {
    this.memos.delete(loop);
  }

  /** reused for every question (plain data for the policy, no garbage per unroll) */
  private readonly loopView = { remaining: 0, live: 0, waiting: 0, starving: false, nodes: 1, ordered: false, inflight: 0, lastChunk: 0, wokenSince: 0, calm: Infinity, behind: false };

  /** Whether what `loop` spawned last has begun to run: its lanes run dry unless it unrolls more. */
  behind(loop: Cf): boolean {
    const f = this.frontier.get(loop);
    return f !== undefined && (f.state === DISPATCHED || f.state === DONE);
  }

  /**
   * The loop the pump unrolls next: the next one that is behind, in turn after the one unrolled
   * last, else the next in turn. Unrolling always the first let it take the whole budget of CFs waiting
   * ahead, and a second loop spawned nothing until the first was done: two independent chains of
   * 2 000 links of 70 µs on two lanes ran one after the other (a trace: chain 1 started its
   * 65th link when chain 0 was at its ~1 850th).
   */
  nextLoop(): Cf {
    const loops = this.loops, n = loops.length;
    for (let k = 1; k <= n; k++) {
      const l = loops[(this.loopTurn + k) % n]!;
      if (this.behind(l)) { this.loopTurn = (this.loopTurn + k) % n; return l; }
    }
    this.loopTurn = (this.loopTurn + 1) % n;
    return loops[this.loopTurn]!;
  }

  /** index in `loops` of the loop nextLoop chose last */
  private loopTurn = -1;

  finish(cf: Cf): void {
    cf.state = DONE;
    this.live--;
    // Drop the inputs now: a queue may still hold this CF, and its values can be large. Their
    // raw buffers may be recycled once nothing else holds them (exec/shm.ts).
    for (let i = 0, n = cf.gotCount; i < n; i++) {
      const v = cf.gotValue(cf.gotKeyAt(i));
      if (v !== undefined && v.t === T_RAW) rawLet(v.v);
    }
    cf.clearGot();
    cf.clearPending();
  }

  migrate(cf: Cf, to: number): void {
    if (!this.remote) throw new RunFault(`internal: CF placed on node ${to} in a one-node run`, cf);
    cf.placed = true; // the receiving node runs it where it lands
    this.live--;
    if (this.tr) this.tr.cfMigrate(this.host.now(), cf.id, to);
    this.remote.migrate(cf, to);
    cf.state = DONE;
  }

  // ------------------------------------------------------------------ DFs

  /** The value of `key` for `cf`, or undefined after requesting it (locally or from `owner`). */
  read(cf: Cf, key: DfKey, owner: number): DfValue | undefined {
    if (owner === this.self) {
      let v: DfValue | undefined;
      try { v = this.store.read(key, cf); } catch (e) { throw RunFault.blame(e, cf); }
      if (v !== undefined) { cf.addGot(key, v); if (v.t === T_RAW) rawHeld(v.v); }
      return v;
    }
    // a copy of the value kept here from an earlier read: only the read crosses, counted there
    const copy = this.store.readCopy(key, cf);
    if (copy !== undefined) {
      if (copy.counted) this.remote!.reads(key, owner, 1);
      cf.addGot(key, copy.v);
      // the CF holds the copy's buffer until it is finished (finish lets it go), as any input
      if (copy.v.t === T_RAW) rawHeld(copy.v.v);
      return copy.v;
    }
    if (this.store.awaitRemote(key, owner, cf)) this.remote!.request(key, owner);
    else this.remote!.reads(key, owner, 1); // the value on its way serves this CF too
    return undefined;
  }

  /** A value reached `cf` (it was waiting for it): queue the CF once it has everything. */
  deliver(cf: Cf, key: DfKey, v: DfValue): void {
    // A CF already handed to a worker with this input fed or forwarded gets the value there:
    // kept here it would only be garbage (unless a label index of a report reads it)
    if (cf.chained && cf.state !== WAITING && !cf.site.labelReadsDf) { cf.arrived(key); return; }
    cf.addGot(key, v);
    if (v.t === T_RAW) rawHeld(v.v);
    const done = cf.arrived(key);
    if (cf.chained || cf.state !== WAITING) return;
    if (!done) return;
    this.waiting.delete(cf);
    this.wakes++;
    if (this.fifo) { this.enqueue(cf); return; }
    // Several lanes, where the order is free: a woken CF is examined before the CFs spawned
    // meanwhile. A recursion that expands eagerly (`if k < n` waits for nothing) otherwise runs
    // ahead of its steps by the whole run queue, every step parked and woken again (a loop of
    // 400 000 levels held 3x the memory of one lane and took 2x the time).
    cf.state = QUEUED;
    this.run.pushFront(cf);
    this.owner.schedule();
  }

  /** tracing: the live bytes changed since the last liveBytes record; the most they reached */
  private liveDirty = false;
  private livePeak = 0;

  private liveChanged(): void {
    const b = this.store.liveBytes;
    if (!this.liveDirty || b > this.livePeak) this.livePeak = b;
    this.liveDirty = true;
  }

  /**
   * Record the bytes of DF values held here, once per turn of the pump rather than at every post
   * and free (two of a fine-grained CF's ten records): the most they reached in the turn when
   * they fell from it, then their value now.
   */
  traceLive(at: number): void {
    if (!this.liveDirty || !this.tr) return;
    const b = this.store.liveBytes;
    if (this.livePeak > b) this.tr.liveBytes(at, this.livePeak);
    this.tr.liveBytes(at, b);
    this.liveDirty = false;
  }

  /** Publish `v` as `key` at its owner; `at` is when it came into existence (trace). */
  post(key: DfKey, owner: number, v: DfValue, count: number, producer: Cf, at: number): void {
    if (this.tr) this.tr.dfComputed(at, this.tr.dfName(key), producer.id, valueSize(v));
    if (owner !== this.self) {
      // held across the send: a raw value whose bytes the transport copied goes back to a pool
      // once nothing here reads it (exec/shm.ts rawSent)
      if (v.t === T_RAW) { rawSent(v.v); this.remote!.post(key, owner, v, count, producer); rawLet(v.v); }
      else this.remote!.post(key, owner, v, count, producer);
      return;
    }
    // a raw value counts its holders from here: the store's entry, and this post until its
    // waiting readers have it (the store may free it before they are handed it)
    const raw = v.t === T_RAW;
    if (raw) rawPosted(v.v);
    let d;
    try { d = this.store.post(key, v, count, producer.site.id, this.self); } catch (e) { throw RunFault.blame(e, producer); }
    if (this.tr) this.liveChanged();
    // (most posts find nobody waiting: a fragment's output is posted before its readers look)
    if (d.waiters !== null || d.remote !== null) this.serve(key, v, d);
    if (d.excess) this.excess(key, d.excess);
    if (raw) rawLet(v.v);
  }

  /** A post from node `from` for a DF owned here, written there by CF `gid` of spawn site `site`. */
  postFromRemote(key: DfKey, v: DfValue, count: number, site: number, gid: string, from: number): void {
    // a raw value received into a recyclable buffer counts its holders as a local post does
    const raw = v.t === T_RAW;
    if (raw) rawArrived(v.v, 2);
    let d;
    try { d = this.store.post(key, v, count, site, from); } catch (e) {
      const s = this.program.sites[site];
      throw e instanceof RunFault && s !== undefined ? new RunFault(e.message, undefined, from, { site: s, gid }) : e;
    }
    if (this.tr) this.liveChanged();
    this.serve(key, v, d);
    if (d.excess) this.excess(key, d.excess);
    if (raw) rawLet(v.v);
  }

  /**
   * A value this node requested arrived: the CFs waiting for it have it, and a copy may stay for
   * later readers. A raw one received into a recyclable buffer is held by its arrival until they
   * have it, by each of them until finished, and by the copy until dropped.
   */
  responded(key: DfKey, served: Served): void {
    const v = served.v;
    const raw = v.t === T_RAW;
    if (raw) rawArrived(v.v, 1);
    for (const cf of this.store.remoteArrived(key, served)) this.deliver(cf, key, v);
    if (raw) rawLet(v.v);
  }

  /** The first request too many at a post: a local reader fails here, a remote one is refused. */
  private excess(key: DfKey, x: { cf?: Cf; node?: number; message: string }): void {
    if (x.cf) throw new RunFault(x.message, x.cf);
    this.remote!.refuse(key, x.node!, x.message);
  }

  private serve(key: DfKey, v: DfValue, d: Delivery): void {
    const ws = d.waiters;
    if (ws !== null) for (let i = 0; i < ws.length; i++) this.deliver(ws[i]!, key, v);
    const remote = d.remote;
    if (remote === null) return;
    // one value per node, whatever the number of its requests (it serves them all)
    for (let i = 0; i < remote.length; i++) {
      const node = remote[i]!;
      if (remote.indexOf(node) !== i) continue;
      let granted = 1;
      for (let j = i + 1; j < remote.length; j++) if (remote[j] === node) granted++;
      const served: Served = { v, granted, left: d.left ?? 0, keep: d.keep === true };
      if (v.t === T_RAW) { rawSent(v.v); this.remote!.respond(key, node, served); rawLet(v.v); }
      else this.remote!.respond(key, node, served);
    }
  }

  destroy(key: DfKey, owner: number, by: Cf): void {
    if (this.tr) this.tr.dfDeleted(this.host.now(), this.tr.dfName(key));
    if (owner !== this.self) { this.remote!.destroy(key, owner); return; }
    try { this.store.destroy(key); } catch (e) { throw RunFault.blame(e, by); }
  }

  push(pushKey: string, owner: number, v: DfValue): void {
    if (owner !== this.self) { this.remote!.push(pushKey, owner, v); return; }
    this.pushHere(pushKey, v);
  }

  pushHere(pushKey: string, v: DfValue): void {
    // a pushed value is kept apart from the store until its CF takes it: never recycled
    if (v.t === T_RAW) pinRaw(v.v);
    const cf = this.store.push(pushKey, v);
    if (cf) this.deliver(cf, pushKey.slice(pushKey.indexOf('|') + 1), v);
  }

  /** `>>` flags are set to int 1. */
  static readonly FLAG: DfValue = { t: T_INT, v: 1 };
}

/**
 * What a loop's unrolls did: the iterations its previous one spawned, the node's wake count then
 * (CFs woken since were spawned too early), and its unrolls since one was followed by a wake
 * (Infinity: none ever was).
 */
interface LoopMemo { lastChunk: number; wakesAt: number; calm: number }
