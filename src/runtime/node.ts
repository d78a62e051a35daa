// One node (OS process) of a run: the system thread's scheduler, DF store and CF bookkeeping.
// Structured CFs (sub calls, for, while, if) run here; atomic CFs go to worker threads in
// batches. A batch may carry continuations: a CF whose only missing inputs are outputs of an
// earlier CF of the same batch runs right after it on the same worker (in-batch forwarding),
// so a chain does not cost a worker round trip per CF.
// Everything that crosses nodes goes through `Remote` (remote.ts); with one node it is unused.
import type { CallSite, CompiledProgram, ForSite, IfSite, Site, SubCallSite, WhileSite } from '../program/compile.js';
import { displayKey } from '../program/compile.js';
import { argValue, dfValueOf, EvalError, truthy, type CDfRef, type Frame } from '../program/expr.js';
import { T_INT, T_RAW, valueSize, type DfValue } from '../ucode/value.js';
import { sharedBytesChurned } from './shm.js';
import { Cf, DISPATCHED, DONE, QUEUED, WAITING } from './cf.js';
import type { Batch, BatchResult, Task } from './protocol.js';
import type { TraceSink } from '../trace/sink.js';

/** A run-time error of the program: stops the run; names the CF when there is one. */
export class RunFault extends Error {
  constructor(message: string, readonly cf?: Cf, readonly node?: number) { super(message); }
}

/** DF entry at its owner node (LANGUAGE.md §8.4). */
interface Entry {
  v: DfValue | undefined;
  /** remaining requests; -1 = unlimited */
  count: number;
  waiters: Cf[] | null;
  /** remote requesters (node per request) */
  remote: number[] | null;
  /** destroy arrived before the post */
  destroyedEarly: boolean;
}

/** What the node needs from the world: workers and other nodes. */
export interface NodeHost {
  rank: number;
  size: number;
  threads: number;
  /** send a batch to worker `w` */
  sendBatch(w: number, b: Batch): void;
  /** batches in flight per worker */
  inflight: number[];
  /** cross-node operations (absent with one node) */
  remote?: RemoteOps;
  trace?: TraceSink;
  now(): number;
}

export interface RemoteOps {
  migrate(cf: Cf, to: number): void;
  request(key: string, owner: number): void;
  post(key: string, owner: number, v: DfValue, count: number): void;
  respond(key: string, to: number, v: DfValue): void;
  destroy(key: string, owner: number): void;
  push(pushKey: string, owner: number, v: DfValue): void;
}

const STOP = 1, OK = 0;
const MAX_BATCH = 512;

/** iterations a lazily unrolled loop spawns at a time, and the live CFs it keeps the node at */
const LOOP_CHUNK = 1024;
const LIVE_TARGET = 16384;
/** target duration of a batch with continuations */
const BATCH_NS = 2_000_000;

export class NodeRuntime {
  readonly self: number;
  readonly size: number;
  private readonly strictFifo: boolean;
  private runQ: Cf[] = [];
  private qHead = 0;
  /** ready atomic CFs (several-thread mode), consumed from readyHead */
  private readyTasks: Task[] = [];
  private readyCfs: Cf[] = [];
  private readyHead = 0;
  readonly store = new Map<string, Entry>();
  /** DFs freed because their req_count was served: a later request is "too many requests" */
  private exhausted = new Set<string>();
  /** local CFs waiting for a remote DF, per key, in request order; and the node asked */
  private remoteWait = new Map<string, Cf[]>();
  private remoteOwner = new Map<string, number>();
  /** pushed values (afterpush) by push key, and CFs waiting for them */
  private pushed = new Map<string, DfValue>();
  private pushWait = new Map<string, Cf>();
  readonly waiting = new Set<Cf>();
  /** `for` CFs still unrolling (several-thread mode) */
  private lazyLoops: Cf[] = [];
  private batches = new Map<number, Cf[]>();
  private batchSeq = 0;
  private cfSeq = 0;
  private dfSeq = 0;
  /** CFs on this node not finished (waiting, queued, dispatched) */
  live = 0;
  liveBytes = 0;
  private scheduled = false;
  private failed: RunFault | null = null;
  private frame: Frame;
  private cur!: Cf;
  /** building a batch: outputs of its members (key → task index, out ordinal) */
  private fwdOut: Map<string, number> | null = null;
  private fwdBlocked = false;
  /** while completing a traced batch: the worker's finish time of the CF being completed */
  private finishedAt = -1;
  private building: { tasks: Task[]; cfs: Cf[] } | null = null;
  private readonly needGid: boolean;
  readonly tr: TraceSink | undefined;

  onIdle: () => void = () => {};
  onFault: (f: RunFault) => void = () => {};

  constructor(readonly program: CompiledProgram, private host: NodeHost, opts: { needGid?: boolean } = {}) {
    this.self = host.rank;
    this.size = host.size;
    this.strictFifo = host.threads === 1;
    this.needGid = opts.needGid ?? false;
    this.tr = host.trace;
    const rt = this;
    this.frame = {
      env: [], missing: false, size: host.size, self: host.rank,
      read(key: string, owner: number) { return rt.read(rt.cur, key, owner); },
    };
  }

  // =================================================================== public entry points

  /** Start the program on this node (node 0 creates main's CF). */
  start(args: string[]): void {
    const main = this.program.main;
    const env = new Array<unknown>(main.frameSize);
    main.params.forEach((p, i) => {
      const raw = args[i];
      if (raw === undefined) throw new RunFault(`main expects ${main.params.length} command-line argument(s) (${main.params.map((q) => `${q.type} ${q.name}`).join(', ')}), ${args.length} given (Argv index out of range: ${i}>=${args.length})`);
      if (p.type === 'int') {
        if (!/^[-+]?\d+$/.test(raw.trim())) throw new RunFault(`argument ${i + 1} of main (int ${p.name}) is not an integer: ${JSON.stringify(raw)}`);
        env[p.slot] = Number.parseInt(raw, 10) | 0;
      } else if (p.type === 'real') {
        const x = Number(raw);
        if (raw.trim() === '' || Number.isNaN(x)) throw new RunFault(`argument ${i + 1} of main (real ${p.name}) is not a number: ${JSON.stringify(raw)}`);
        env[p.slot] = x;
      } else if (p.type === 'string') env[p.slot] = raw;
      else throw new RunFault(`main cannot take a ${p.type} parameter (${p.name})`);
    });
    const root = this.newCf(this.program.mainSite, env, '', -1);
    root.placed = true;
    // main's CF is the sub call itself: run its body now.
    this.spawnBlock(root, main.body, env, '', false);
    this.finish(root);
    this.schedule();
  }

  /** A worker finished a batch. */
  onResult(r: BatchResult): void {
    const cfs = this.batches.get(r.batch);
    if (!cfs) return;
    this.batches.delete(r.batch);
    this.measure(r.batch, r.outs.length);
    try {
      const t = this.tr ? this.host.now() : 0;
      for (let i = 0; i < r.outs.length; i++) {
        if (r.fin) this.finishedAt = r.fin[i]!;
        this.complete(cfs[i]!, r.outs[i]!);
      }
      this.finishedAt = -1;
      if (r.error) {
        const cf = cfs[r.error.task]!;
        throw new RunFault(`exception in ucode ${(cf.site as CallSite).imp.symbol}: ${r.error.message}${userStack(r.error.stack)}`, cf);
      }
      if (this.tr) this.tr.sysBusy(t, this.host.now());
    } catch (e) { this.fail(e); return; }
    this.schedule();
  }

  /** A CF arrived from node `from`, where it was CF number `remoteId`. */
  receiveCf(cf: Cf, from: number, remoteId: number): void {
    this.live++;
    if (this.tr) this.tr.cfReceive(this.host.now(), cf.id, from, remoteId, cf.gid, cf.site.code, cf.site.label);
    cf.placed = true;
    this.enqueue(cf);
  }

  /** Create a CF shell for a migrated CF (remote.ts decodes the rest). */
  makeCf(site: Site, env: unknown[], gid: string): Cf {
    return new Cf(this.cfSeq++, site, env, gid);
  }

  // owner-side DF protocol, called for local and remote operations alike --------------------

  /** Request for `key` owned here by a remote node. */
  remoteRequest(key: string, from: number): void {
    try {
      if (this.exhausted.has(key)) throw new RunFault(`node ${from} requested DF ${displayKey(key)} after it was freed by its req_count (Too many requests)`);
      const e = this.entry(key);
      if (e.destroyedEarly) throw new RunFault(`node ${from} requested DF ${displayKey(key)}, which was destroyed before it was computed`);
      if (e.v !== undefined) { this.consume(e, key, 1); this.host.remote!.respond(key, from, e.v); }
      else (e.remote ??= []).push(from);
    } catch (err) { this.fail(err); }
    this.schedule();
  }

  /** A value we requested from another node arrived. */
  response(key: string, v: DfValue): void {
    const list = this.remoteWait.get(key);
    if (!list || list.length === 0) return;
    const cf = list.shift()!;
    if (list.length === 0) { this.remoteWait.delete(key); this.remoteOwner.delete(key); }
    this.deliver(cf, key, v);
    this.schedule();
  }

  remotePost(key: string, v: DfValue, count: number): void {
    try { this.postLocal(key, v, count); } catch (err) { this.fail(err); }
    this.schedule();
  }

  remoteDestroy(key: string): void {
    try { this.destroyLocal(key); } catch (err) { this.fail(err); }
    this.schedule();
  }

  remotePush(pushKey: string, v: DfValue): void {
    this.pushLocal(pushKey, v);
    this.schedule();
  }

  /** CFs that could be given to an idle node now. */
  stealableCount(): number {
    let n = 0;
    for (let i = this.readyHead; i < this.readyCfs.length; i++) if (this.readyCfs[i]!.site.stealable) n++;
    for (let i = this.qHead; i < this.runQ.length; i++) if (this.runQ[i]!.site.stealable) n++;
    return Math.max(0, n - this.host.threads);
  }

  /**
   * Give away up to `max` CFs marked `stealable` that have not started here (dynamic load
   * balancing): ready atomic CFs first, then queued ones not yet examined.
   */
  takeStealable(max: number, to: number): Cf[] {
    const out: Cf[] = [];
    if (!this.program.hasStealable || max <= 0) return out;
    // Keep enough for our own workers; give from the tail (the work we would do last).
    const keep = this.host.threads;
    for (let i = this.readyCfs.length - 1; i >= this.readyHead + keep && out.length < max; i--) {
      const cf = this.readyCfs[i]!;
      if (!cf.site.stealable) continue;
      this.readyCfs.splice(i, 1);
      this.readyTasks.splice(i, 1);
      out.push(cf);
    }
    for (let i = this.runQ.length - 1; i > this.qHead + keep && out.length < max; i--) {
      const cf = this.runQ[i]!;
      if (!cf.site.stealable || cf.state !== QUEUED) continue;
      this.runQ.splice(i, 1);
      out.push(cf);
    }
    for (const cf of out) {
      this.live--;
      cf.state = DONE;
      if (this.tr) this.tr.cfMigrate(this.host.now(), cf.id, to);
    }
    return out;
  }

  /** Nothing to do here right now (no queued CF, no batch in flight). */
  idle(): boolean {
    return this.qHead >= this.runQ.length && this.readyHead >= this.readyTasks.length && this.batches.size === 0 && this.lazyLoops.length === 0;
  }

  /** Every CF that waits, with what it waits for (for the hang report). */
  waitingReport(): { cf: Cf; label: string; waits: string[] }[] {
    const out: { cf: Cf; label: string; waits: string[] }[] = [];
    for (const cf of this.waiting) out.push({ cf, label: this.labelOf(cf), waits: (cf.pend ?? []).map((k) => `${displayKey(k)}${this.expectedFrom(k)}`) });
    return out;
  }

  /** Where a missing DF was expected to come from, for the hang report. */
  private expectedFrom(key: string): string {
    const remote = this.remoteOwner.get(key);
    if (remote !== undefined) return ` (requested from node ${remote})`;
    if (this.store.has(key)) return this.size > 1 ? ` (owned by node ${this.self}, never posted)` : '';
    return ' (by push, afterpush never came)';
  }

  labelOf(cf: Cf): string {
    const s = cf.site;
    if (s.labelIdx.length === 0) return s.label;
    const f = this.frame;
    f.env = cf.env;
    const saved = this.cur; this.cur = cf;
    try {
      return s.label + s.labelIdx.map((e) => `[${String(argValue(e, 'int', f, s.pos))}]`).join('');
    } catch { return s.label + '[?]'; } finally { this.cur = saved; }
  }

  // =================================================================== scheduling

  schedule(): void {
    if (this.scheduled || this.failed) return;
    this.scheduled = true;
    setImmediate(() => this.pump());
  }

  private pump(): void {
    this.scheduled = false;
    if (this.failed) return;
    const t0 = this.tr ? this.host.now() : 0;
    try {
      if (this.strictFifo) this.pumpStrict(); else this.pumpEager();
    } catch (e) { this.fail(e); return; }
    if (this.tr) { const t1 = this.host.now(); this.tr.sysBusy(t0, t1); this.tr.readyQueue(t1, this.readyTasks.length - this.readyHead); }
    if (this.idle()) this.onIdle();
  }

  /**
   * One worker thread: the original's FIFO order (LANGUAGE.md §8.3). The head of the queue is
   * examined only when no batch is in flight; consecutive ready atomic CFs (and CFs fed only by
   * them) form one batch, which gives the same order as running them one by one.
   */
  private pumpStrict(): void {
    if (this.batches.size > 0) return;
    this.building = { tasks: [], cfs: [] };
    this.fwdOut = new Map();
    try {
      // Stealable work on several nodes: small batches, so that there is something to give.
      const max = this.size > 1 && this.program.hasStealable ? Math.min(2, this.batchLimit()) : this.batchLimit();
      while (this.qHead < this.runQ.length && this.building.tasks.length < max) {
        const cf = this.runQ[this.qHead]!;
        if (this.examine(cf) === STOP) break;
        this.qHead++;
      }
      this.compactQueue();
    } finally {
      const b = this.building;
      this.building = null;
      this.fwdOut = null;
      if (b.tasks.length > 0) this.send(0, b.tasks, b.cfs);
    }
  }

  /** Several worker threads: examine everything now, dispatch ready CFs in balanced batches. */
  private pumpEager(): void {
    for (;;) {
      while (this.qHead < this.runQ.length) this.examine(this.runQ[this.qHead++]!);
      this.compactQueue();
      this.dispatchReady();
      if (!this.shouldUnroll()) break;
      this.unroll(this.lazyLoops[0]!);
    }
  }

  private compactQueue(): void {
    if (this.qHead > 1024 && this.qHead * 2 > this.runQ.length) {
      this.runQ = this.runQ.slice(this.qHead);
      this.qHead = 0;
    }
  }

  private dispatchReady(): void {
    const T = this.host.threads;
    const inflight = this.host.inflight;
    let next = this.readyHead;
    while (next < this.readyTasks.length) {
      let w = -1;
      for (let i = 0; i < T; i++) if (inflight[i]! < 2 && (w < 0 || inflight[i]! < inflight[w]!)) w = i;
      if (w < 0) break;
      // With several nodes keep batches small so that idle nodes find work to steal.
      const share = this.size > 1 && this.program.hasStealable ? 2 * T * this.size : 2 * T;
      const n = Math.min(this.batchLimit(), Math.max(1, Math.ceil((this.readyTasks.length - next) / share)));
      const tasks = this.readyTasks.slice(next, next + n);
      const cfs = this.readyCfs.slice(next, next + n);
      next += n;
      const out = this.extendChains(tasks, cfs);
      this.send(w, tasks, cfs, out);
    }
    this.continueChains();
    this.readyHead = next;
    if (next === this.readyTasks.length) { this.readyTasks = []; this.readyCfs = []; this.readyHead = 0; }
    else if (next > 4096 && next * 2 > this.readyTasks.length) {
      this.readyTasks = this.readyTasks.slice(next); this.readyCfs = this.readyCfs.slice(next); this.readyHead = 0;
    }
  }

  /**
   * Append to the batch the CFs that wait only for outputs of its members and are their
   * producer's sole local consumer: they become continuations on the same worker.
   */
  private extendChains(tasks: Task[], cfs: Cf[], prev?: Map<string, number>): Map<string, number> {
    const out = new Map<string, number>();
    // Outputs of the worker's previous batch (still running) are forwardable too: -2 - ref.
    if (prev) for (const [k, v] of prev) if (v >= 0) out.set(k, -2 - v);
    this.fwdOut = out;
    this.building = { tasks, cfs };
    try {
      for (let i = 0; i < cfs.length; i++) this.addOutputs(cfs[i]!, i);
      const limit = this.batchLimit();
      for (let i = 0; i < cfs.length && tasks.length < limit; i++) {
        const succ = this.soleWaiter(cfs[i]!);
        if (succ === null || succ.site.kind !== 'call') continue;
        const before = tasks.length;
        this.examine(succ);
        if (tasks.length === before) continue; // not chainable: it stays waiting
      }
    } finally { this.fwdOut = null; this.building = null; }
    return out;
  }

  /** per worker: the last batch sent to it and its members' outputs (key → task, output) */
  private tails: ({ id: number; cfs: Cf[]; out: Map<string, number> } | null)[] = [];

  /**
   * A chain longer than one batch continues in a second batch to the same worker while the
   * first still runs: its first CF takes its input from the previous batch's outputs on the
   * worker, so the chain never waits for a round trip through the system thread.
   */
  private continueChains(): void {
    const inflight = this.host.inflight;
    for (let w = 0; w < this.host.threads; w++) {
      const tail = this.tails[w];
      if (!tail || inflight[w]! >= 2 || !this.batches.has(tail.id)) continue;
      const succ = this.soleWaiter(tail.cfs[tail.cfs.length - 1]!);
      if (succ === null || succ.site.kind !== 'call') continue;
      const tasks: Task[] = [], cfs: Cf[] = [];
      this.fwdOut = new Map();
      for (const [k, v] of tail.out) if (v >= 0) this.fwdOut.set(k, -2 - v);
      this.building = { tasks, cfs };
      try { this.examine(succ); } finally { this.fwdOut = null; this.building = null; }
      if (tasks.length === 0) continue;
      const out = this.extendChains(tasks, cfs, tail.out);
      this.send(w, tasks, cfs, out);
    }
  }

  private soleWaiter(cf: Cf): Cf | null {
    const keys = cf.outKeys;
    if (!keys) return null;
    let found: Cf | null = null;
    for (const k of keys) {
      const e = this.store.get(k);
      if (!e || !e.waiters) continue;
      for (const w of e.waiters) {
        if (w.chained || w.state !== WAITING) continue;
        if (found && found !== w) return null;
        found = w;
      }
      if (e.remote) return null;
    }
    return found;
  }

  private addOutputs(cf: Cf, taskIndex: number): void {
    const keys = cf.outKeys, owners = cf.outOwners;
    if (!keys || !owners) return;
    // `>>` flags of the batch are produced by it too, but only at its completion: a CF that
    // reads one must wait for the batch (marked -1: not forwardable).
    const after = cf.after;
    if (after) for (let i = 0; i < after.length; i += 3) if (after[i] === 1 && !this.fwdOut!.has(after[i + 1] as string)) this.fwdOut!.set(after[i + 1] as string, -1);
    const counts = cf.outCounts;
    // The first producer wins: a second one is a double assignment, reported at its post.
    for (let o = 0; o < keys.length; o++) {
      // dropped and pushed outputs are never published: nobody may read them from the batch
      if (owners[o] !== this.self || this.fwdOut!.has(keys[o]!) || (counts && counts[o]! <= -2)) continue;
      this.fwdOut!.set(keys[o]!, taskIndex * 65536 + o);
    }
  }

  /** Mean time per CF in recent batches (ns, exponentially weighted; round trip included). */
  private cfTime = 0;
  private sentAt = new Map<number, number>();

  /**
   * CFs per batch, continuations included: about BATCH_NS of work, 4 until CF times are known.
   * A batch's outputs leave (and its memory is held) until it ends, so long CFs go one by one:
   * they spread over idle workers and each result is published as soon as it exists, while the
   * worker round trip stays small against them; tiny CFs go by hundreds.
   */
  private batchLimit(): number {
    if (this.cfTime === 0) return 4;
    return Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_NS / this.cfTime)));
  }

  private measure(batch: number, n: number): void {
    const t0 = this.sentAt.get(batch);
    if (t0 === undefined || n === 0) return;
    this.sentAt.delete(batch);
    const per = (performance.now() * 1e6 - t0) / n;
    this.cfTime = this.cfTime === 0 ? per : 0.7 * this.cfTime + 0.3 * per;
  }

  private send(w: number, tasks: Task[], cfs: Cf[], out?: Map<string, number>): void {
    const id = this.batchSeq++;
    this.batches.set(id, cfs);
    this.tails[w] = out ? { id, cfs, out } : null;
    this.sentAt.set(id, performance.now() * 1e6);
    for (const cf of cfs) cf.state = DISPATCHED;
    this.host.sendBatch(w, { id, tasks });
  }

  private enqueue(cf: Cf): void {
    cf.state = QUEUED;
    this.runQ.push(cf);
    this.schedule();
  }

  private park(cf: Cf): number {
    cf.state = WAITING;
    this.waiting.add(cf);
    return OK;
  }

  private newCf(site: Site, env: unknown[], gid: string, parent: number): Cf {
    const cf = new Cf(this.cfSeq++, site, env, gid);
    this.live++;
    if (this.tr) this.tr.cfCreated(this.host.now(), cf.id, parent, site.code, gid, site.label);
    return cf;
  }

  private finish(cf: Cf): void {
    cf.state = DONE;
    this.live--;
    // Drop the inputs now: a queue may still hold this CF, and its values can be large.
    cf.got = null;
    cf.pend = null;
  }

  // =================================================================== examining a CF

  /** Decide what `cf` can do now: wait, migrate, run (structured) or become a task (atomic). */
  private examine(cf: Cf): number {
    const f = this.frame;
    this.cur = cf;
    f.env = cf.env;
    f.missing = false;
    this.fwdBlocked = false;
    const site = cf.site;
    if (!cf.placed) {
      const target = site.locator ? site.locator(f) : 0;
      if (this.fwdBlocked) return STOP;
      if (f.missing) return this.park(cf);
      if (target !== this.self) {
        if (this.building && this.building.tasks.length > 0) return STOP;
        return this.migrate(cf, target);
      }
      cf.placed = true;
    }
    for (const r of site.requests) this.readRef(r);
    switch (site.kind) {
      case 'call': return this.examineCall(cf, site);
      default:
        // Structured CFs spawn children: in FIFO mode they must not overtake a pending batch.
        if (this.strictFifo && this.building && this.building.tasks.length > 0) return STOP;
        if (this.fwdBlocked) return STOP;
        switch (site.kind) {
          case 'subcall': return this.runSubCall(cf, site);
          case 'for': return this.runFor(cf, site);
          case 'while': return this.runWhile(cf, site);
          case 'if': return this.runIf(cf, site);
        }
    }
  }

  private readRef(r: CDfRef): DfValue | undefined {
    const f = this.frame;
    const was = f.missing;
    f.missing = false;
    const key = r.key(f), owner = r.owner(f);
    if (f.missing) return undefined;
    f.missing = was;
    return f.read(key, owner);
  }

  private migrate(cf: Cf, to: number): number {
    if (!this.host.remote) throw new RunFault(`internal: CF placed on node ${to} in a one-node run`, cf);
    cf.placed = true; // the receiving node runs it where it lands
    this.live--;
    if (this.tr) this.tr.cfMigrate(this.host.now(), cf.id, to);
    this.host.remote.migrate(cf, to);
    cf.state = DONE;
    return OK;
  }

  private examineCall(cf: Cf, site: CallSite): number {
    const f = this.frame;
    const n = site.args.length;
    const args = new Array<unknown>(n);
    const keys = new Array<string>(n);
    let fwd: number[] | undefined;
    const outKeys: string[] = [], outOwners: number[] = [];
    // `wait x`: x arrives by push (afterpush), never by request — look for it first.
    for (const w of site.waits) this.readPushed(cf, site, w);
    for (let i = 0; i < n; i++) {
      const a = site.args[i]!;
      keys[i] = '';
      if (a.kind === 'in') {
        const ref = a.expr.dfRef;
        if (ref) {
          const was = f.missing;
          f.missing = false;
          const key = ref.key(f), owner = ref.owner(f);
          if (f.missing) continue; // its index is a DF still to come
          f.missing = was;
          keys[i] = key;
          const fw = this.fwdOut?.get(key);
          if (fw !== undefined && fw !== -1 && cf.gotValue(key) === undefined) {
            if (!cf.isPending(key)) this.waitLocal(cf, key);
            // task ≥ 0: this batch; task < 0: task −1−task of the worker's previous batch
            const ref = fw >= 0 ? fw : -2 - fw, task = Math.floor(ref / 65536);
            (fwd ??= []).push(i, fw >= 0 ? task : -1 - task, ref % 65536);
            args[i] = null;
          } else args[i] = f.read(key, owner);
        } else args[i] = dfValueOf(a.expr, f);
      } else if (a.kind === 'val') args[i] = argValue(a.expr, a.type, f, site.pos);
      else {
        const key = a.ref.key(f);
        keys[i] = key;
        args[i] = null;
        outKeys.push(key);
        if (a.ref.replicas) {
          (cf.replicas ??= [])[outKeys.length - 1] = a.ref.replicas(f);
          outOwners.push(-1);
        } else outOwners.push(a.ref.owner(f));
      }
    }
    // Output rules and after-actions are evaluated now, while DFs can still be fetched.
    const counts = this.outCounts(cf, site, outKeys);
    const after = this.afterActions(site);
    if (this.fwdBlocked) return this.building && !this.strictFifo ? OK : STOP;
    if (f.missing) {
      if (fwd && cf.state !== WAITING) return STOP; // partly fed by the batch, partly not: later
      return cf.state === WAITING ? OK : this.park(cf);
    }
    if (fwd && cf.pend && cf.pend.some((k) => !this.fwdOut!.has(k))) return STOP;
    if (this.waiting.delete(cf)) cf.chained = fwd !== undefined;
    else if (fwd) cf.chained = true;
    cf.outKeys = outKeys;
    cf.outOwners = outOwners;
    cf.outCounts = counts;
    cf.after = after;
    const task: Task = { cf: cf.id, imp: this.importIndex(site), args, keys };
    if (fwd) task.fwd = fwd;
    if (this.tr) this.traceReady(cf, keys, site);
    if (this.building) {
      const idx = this.building.tasks.length;
      this.building.tasks.push(task);
      this.building.cfs.push(cf);
      this.addOutputs(cf, idx);
    } else {
      cf.state = QUEUED;
      this.readyTasks.push(task);
      this.readyCfs.push(cf);
    }
    return OK;
  }

  private traceReady(cf: Cf, keys: string[], site: CallSite): void {
    const tr = this.tr!;
    if (!cf.chained) tr.cfReady(this.host.now(), cf.id); // a continuation is ready when its worker reaches it
    for (let i = 0; i < keys.length; i++) {
      if (!keys[i]) continue;
      // Outputs are interned now too: their dfComputed is stamped back to the worker's finish.
      const df = tr.dfName(keys[i]!);
      if (site.args[i]!.kind === 'in') tr.cfInput(cf.id, df);
    }
  }

  private importIndex(site: CallSite): number {
    return this.program.imports.indexOf(site.imp);
  }

  /** Per output: its request count (-1 unlimited, -2 drop, -3 - k afterpush rule k). */
  private outCounts(cf: Cf, site: CallSite, outKeys: string[]): number[] | null {
    if (site.reqCount.length === 0 && site.drop.length === 0 && site.afterpush.length === 0) return null;
    const f = this.frame;
    const counts = outKeys.map(() => -1);
    const match = (ref: CDfRef, v: number) => {
      const k = ref.key(f);
      const i = outKeys.indexOf(k);
      if (i >= 0) counts[i] = v;
    };
    for (const r of site.reqCount) {
      const n = argValue(r.expr, 'int', f, site.pos) as number;
      if (!f.missing && n < 0) throw new RunFault(`req_count of ${displayKey(r.ref.key(f))} is negative (${n})`, cf);
      match(r.ref, n);
    }
    for (const r of site.drop) match(r, -2);
    site.afterpush.forEach((r, k) => match(r.ref, -3 - k));
    return counts;
  }

  /** `>>` and `-->`/`delete` targets: flat [op, key, owner, …] (op 1 = set 1, 2 = destroy). */
  private afterActions(site: Site): unknown[] | null {
    if (site.setdfs.length === 0 && site.deletes.length === 0) return null;
    const f = this.frame;
    const out: unknown[] = [];
    for (const r of site.setdfs) out.push(1, r.key(f), r.owner(f));
    for (const r of site.deletes) out.push(2, r.key(f), r.owner(f));
    return out;
  }

  private runAfter(after: unknown[] | null, cf: Cf): void {
    if (!after) return;
    for (let i = 0; i < after.length; i += 3) {
      const key = after[i + 1] as string, owner = after[i + 2] as number;
      if (after[i] === 1) this.post(key, owner, { t: T_INT, v: 1 }, -1, cf);
      else this.destroy(key, owner, cf);
    }
  }

  // =================================================================== structured CFs

  private childGid(parent: Cf, prefix: string, spawnNo: number): string {
    if (!this.needGid) return '';
    return prefix === '' ? String(spawnNo) : `${prefix}_${spawnNo}`;
  }

  private spawnBlock(parent: Cf, block: { dfs: { slot: number; name: string }[]; stmts: Site[] }, env: unknown[], gidPrefix: string, copy: boolean): void {
    let e = env;
    if (block.dfs.length > 0) {
      if (copy) e = env.slice();
      const suffix = this.self === 0 ? '' : `@${this.self}`;
      for (const d of block.dfs) e[d.slot] = `${d.name}#${this.dfSeq++}${suffix}`;
    }
    for (const s of block.stmts) this.enqueue(this.newCf(s, e, this.childGid(parent, gidPrefix, s.spawnNo), parent.id));
  }

  private runSubCall(cf: Cf, site: SubCallSite): number {
    const f = this.frame;
    const t = site.target;
    const env = new Array<unknown>(t.frameSize);
    for (let i = 0; i < site.args.length; i++) {
      const a = site.args[i]!, p = t.params[i]!;
      env[p.slot] = a.kind === 'name' ? a.ref.key(f) : argValue(a.expr, a.type, f, site.pos);
    }
    for (const nf of site.nf) env[nf.slot] = argValue(nf.expr, 'int', f, site.pos);
    const after = this.afterActions(site);
    if (f.missing) return cf.state === WAITING ? OK : this.park(cf);
    this.waiting.delete(cf);
    this.spawnBlock(cf, t.body, env, cf.gid, false);
    this.runAfter(after, cf);
    this.finish(cf);
    return OK;
  }

  private runFor(cf: Cf, site: ForSite): number {
    const f = this.frame;
    const first = argValue(site.first, 'int', f, site.pos) as number;
    const last = argValue(site.last, 'int', f, site.pos) as number;
    if (f.missing) return cf.state === WAITING ? OK : this.park(cf);
    this.waiting.delete(cf);
    // With several threads a long loop unrolls lazily (order is free there): a chunk now, the
    // rest while few CFs are alive or the node would otherwise idle — memory stays bounded.
    if (!this.strictFifo && last - first + 1 > LOOP_CHUNK) {
      cf.iter = first;
      cf.loopEnd = last;
      this.lazyLoops.push(cf);
      this.unroll(cf);
      return OK;
    }
    this.spawnIterations(cf, site, first, last);
    this.finish(cf);
    return OK;
  }

  private spawnIterations(cf: Cf, site: ForSite, first: number, last: number): void {
    for (let i = first; i <= last; i++) {
      const env = cf.env.slice();
      env[site.varSlot] = i;
      this.spawnBlock(cf, site.body, env, this.needGid ? (cf.gid === '' ? String(i) : `${cf.gid}_${i}`) : '', false);
    }
  }

  /** Spawn the next chunk of a lazily unrolled loop; finish it after its last iteration. */
  private unroll(cf: Cf): void {
    const end = Math.min(cf.loopEnd, cf.iter + LOOP_CHUNK - 1);
    this.spawnIterations(cf, cf.site as ForSite, cf.iter, end);
    cf.iter = end + 1;
    if (cf.iter > cf.loopEnd) {
      this.lazyLoops.splice(this.lazyLoops.indexOf(cf), 1);
      this.finish(cf);
    }
  }

  /** Unroll more when few CFs are alive, or when nothing else could run (never a deadlock). */
  private shouldUnroll(): boolean {
    if (this.lazyLoops.length === 0) return false;
    return this.live < LIVE_TARGET || (this.batches.size === 0 && this.readyHead >= this.readyTasks.length && this.qHead >= this.runQ.length);
  }

  private runWhile(cf: Cf, site: WhileSite): number {
    const f = this.frame;
    if (cf.iter === 0 && cf.outKeys === null) {
      const start = argValue(site.start, 'int', f, site.pos) as number;
      if (f.missing) return cf.state === WAITING ? OK : this.park(cf);
      cf.iter = start;
      cf.outKeys = []; // marks "started"
    }
    const env = cf.env.slice();
    env[site.varSlot] = cf.iter;
    f.env = env;
    const go = truthy(site.cond, f);
    if (f.missing) return cf.state === WAITING ? OK : this.park(cf);
    this.waiting.delete(cf);
    cf.got = null; // the condition is fetched anew every round
    if (go) {
      this.spawnBlock(cf, site.body, env, this.needGid ? (cf.gid === '' ? String(cf.iter) : `${cf.gid}_${cf.iter}`) : '', false);
      cf.iter++;
      this.enqueue(cf);
      return OK;
    }
    f.env = cf.env;
    const key = site.out.key(f), owner = site.out.owner(f);
    this.post(key, owner, { t: T_INT, v: cf.iter }, -1, cf);
    this.finish(cf);
    return OK;
  }

  private runIf(cf: Cf, site: IfSite): number {
    const f = this.frame;
    const go = truthy(site.cond, f);
    if (f.missing) return cf.state === WAITING ? OK : this.park(cf);
    this.waiting.delete(cf);
    if (go) this.spawnBlock(cf, site.body, cf.env, this.needGid ? cf.gid : '', true);
    this.finish(cf);
    return OK;
  }

  // =================================================================== completing atomic CFs

  private complete(cf: Cf, outs: (DfValue | null)[]): void {
    const site = cf.site as CallSite;
    const keys = cf.outKeys!, owners = cf.outOwners!, counts = cf.outCounts;
    for (let j = 0; j < keys.length; j++) {
      const count = counts ? counts[j]! : -1;
      const v = outs[j];
      if (count === -2) continue; // drop
      if (v === null || v === undefined) {
        throw new RunFault(`ucode ${site.imp.symbol} did not set its output DF ${displayKey(keys[j]!)} (Posting an unset value)`, cf);
      }
      if (count <= -3) {
        const r = site.afterpush[-3 - count]!;
        this.cur = cf; this.frame.env = cf.env;
        const labelKey = r.label + r.labelIdx.map((e) => `[${String(argValue(e, 'int', this.frame, site.pos))}]`).join('');
        this.push(`${labelKey}|${keys[j]!}`, r.owner(this.frame), v);
        continue;
      }
      if (owners[j] === -1) for (const node of cf.replicas![j]!) this.post(keys[j]!, node, v, count, cf);
      else this.post(keys[j]!, owners[j]!, v, count, cf);
    }
    this.runAfter(cf.after, cf);
    cf.after = null;
    this.finish(cf);
  }

  // =================================================================== DF protocol

  /** Frame reader: the value of `key` for `cf`, or undefined after requesting it. */
  private read(cf: Cf, key: string, owner: number): DfValue | undefined {
    const got = cf.gotValue(key);
    if (got !== undefined) return got;
    if (this.fwdOut !== null && this.fwdOut.has(key)) { this.fwdBlocked = true; this.frame.missing = true; return undefined; }
    if (cf.isPending(key)) { this.frame.missing = true; return undefined; }
    if (owner === this.self) {
      if (this.exhausted.has(key)) throw new RunFault(`too many requests for DF ${displayKey(key)}: it was freed after its req_count requests were served (Too many requests)`, cf);
      const e = this.entry(key);
      if (e.v !== undefined) {
        this.consume(e, key, 1);
        cf.addGot(key, e.v);
        return e.v;
      }
      this.waitLocal(cf, key);
    } else {
      (cf.pend ??= []).push(key);
      const list = this.remoteWait.get(key);
      if (list) list.push(cf); else { this.remoteWait.set(key, [cf]); this.remoteOwner.set(key, owner); }
      this.host.remote!.request(key, owner);
    }
    this.frame.missing = true;
    return undefined;
  }

  private waitLocal(cf: Cf, key: string): void {
    const e = this.entry(key);
    if (e.destroyedEarly) throw new RunFault(`DF ${displayKey(key)} is requested after it was destroyed (before it was computed)`, cf);
    (e.waiters ??= []).push(cf);
    (cf.pend ??= []).push(key);
  }

  private readPushed(cf: Cf, site: CallSite, ref: CDfRef): void {
    const f = this.frame;
    const labelKey = site.label + site.labelIdx.map((e) => `[${String(argValue(e, 'int', f, site.pos))}]`).join('');
    const key = ref.key(f);
    const pk = `${labelKey}|${key}`;
    if (cf.gotValue(key) !== undefined) return;
    const v = this.pushed.get(pk);
    if (v !== undefined) { this.pushed.delete(pk); cf.addGot(key, v); return; }
    if (!cf.isPending(key)) { (cf.pend ??= []).push(key); this.pushWait.set(pk, cf); }
    f.missing = true;
  }

  private push(pushKey: string, owner: number, v: DfValue): void {
    if (owner === this.self) this.pushLocal(pushKey, v);
    else this.host.remote!.push(pushKey, owner, v);
  }

  private pushLocal(pushKey: string, v: DfValue): void {
    const cf = this.pushWait.get(pushKey);
    if (cf) { this.pushWait.delete(pushKey); this.deliver(cf, pushKey.slice(pushKey.indexOf('|') + 1), v); }
    else this.pushed.set(pushKey, v);
  }

  private entry(key: string): Entry {
    let e = this.store.get(key);
    if (!e) { e = { v: undefined, count: -1, waiters: null, remote: null, destroyedEarly: false }; this.store.set(key, e); }
    return e;
  }

  /** `n` requests of `key` were served: count down, free at zero. */
  private consume(e: Entry, key: string, n: number): void {
    if (e.count < 0) return;
    if (n > e.count) throw new RunFault(`too many requests for DF ${displayKey(key)} (req_count exhausted: Too many requests)`);
    e.count -= n;
    if (e.count === 0) this.free(key, e);
  }

  private free(key: string, e: Entry): void {
    this.store.delete(key);
    if (e.count === 0) this.exhausted.add(key);
    if (e.v !== undefined) {
      if (e.v.t === T_RAW) sharedBytesChurned(e.v.v.byteLength);
      this.liveBytes -= valueSize(e.v);
      if (this.tr) this.tr.liveBytes(this.host.now(), this.liveBytes);
    }
  }

  private post(key: string, owner: number, v: DfValue, count: number, producer: Cf): void {
    // An atomic CF's outputs exist from the moment its worker finished it (a continuation may
    // already have used them), so they are stamped with that time.
    if (this.tr) this.tr.dfComputed(this.finishedAt >= 0 ? this.finishedAt : this.host.now(), this.tr.dfName(key), producer.id, valueSize(v));
    if (owner === this.self) {
      try { this.postLocal(key, v, count); } catch (e) {
        if (e instanceof RunFault && !e.cf) throw new RunFault(e.message, producer);
        throw e;
      }
    } else this.host.remote!.post(key, owner, v, count);
  }

  private postLocal(key: string, v: DfValue, count: number): void {
    const e = this.entry(key);
    if (e.v !== undefined) throw new RunFault(`DF ${displayKey(key)} is assigned twice (Duplicate id in post)`);
    if (e.destroyedEarly) { this.store.delete(key); return; }
    e.v = v;
    e.count = count;
    this.liveBytes += valueSize(v);
    if (this.tr) this.tr.liveBytes(this.host.now(), this.liveBytes);
    const waiters = e.waiters, remote = e.remote;
    e.waiters = null; e.remote = null;
    const n = (waiters ? waiters.length : 0) + (remote ? remote.length : 0);
    if (n === 0) { if (count === 0) this.free(key, e); return; }
    this.consume(e, key, n);
    if (waiters) for (const w of waiters) this.deliver(w, key, v);
    if (remote) for (const node of remote) this.host.remote!.respond(key, node, v);
  }

  private deliver(cf: Cf, key: string, v: DfValue): void {
    cf.addGot(key, v);
    const done = cf.arrived(key);
    if (cf.chained || cf.state !== WAITING) return;
    if (done) { this.waiting.delete(cf); this.enqueue(cf); }
  }

  private destroy(key: string, owner: number, by: Cf): void {
    if (this.tr) this.tr.dfDeleted(this.host.now(), this.tr.dfName(key));
    if (owner !== this.self) { this.host.remote!.destroy(key, owner); return; }
    try { this.destroyLocal(key); } catch (e) {
      if (e instanceof RunFault && !e.cf) throw new RunFault(e.message, by);
      throw e;
    }
  }

  private destroyLocal(key: string): void {
    const e = this.store.get(key);
    if (!e) { this.entry(key).destroyedEarly = true; return; }
    if (e.v === undefined) {
      if (e.waiters && e.waiters.length > 0 || e.remote && e.remote.length > 0) throw new RunFault(`DF ${displayKey(key)} is destroyed while CFs still wait for it (Request(s) present at destroy)`);
      e.destroyedEarly = true;
      return;
    }
    if (e.count > 0) throw new RunFault(`attempting to destroy DF ${displayKey(key)} with ${e.count} request(s) still expected (positive requests count)`);
    this.free(key, e);
  }

  // =================================================================== failure

  fail(e: unknown): void {
    if (this.failed) return;
    let f: RunFault;
    if (e instanceof RunFault) f = e;
    else if (e instanceof EvalError) f = new RunFault(e.message, this.cur);
    else f = new RunFault(`internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`, this.cur);
    this.failed = f;
    this.onFault(f);
  }
}

/** The user's part of a ucode stack (frames of the bundled ucode module only). */
function userStack(stack: string | undefined): string {
  if (!stack) return '';
  const lines = stack.split('\n').filter((l) => /ucodes-[0-9a-f]+\.mjs|ucodes\.ts/.test(l)).slice(0, 5);
  return lines.length ? '\n' + lines.join('\n') : '';
}
