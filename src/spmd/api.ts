// The SPMD/PGAS layer as a program sees it (`import … from 'luna-ts/spmd'`): THREADS ranks run
// the same program, each with its MYTHREAD; shared arrays are spread over the ranks block-
// cyclically; ranks read and write any element (put/get, memput/memget/memcpy), synchronise with
// barriers (also split into notify/wait), locks and collective operations. Calls are synchronous:
// a rank is a worker thread, and a kernel's loop reads like its UPC or OpenSHMEM original.
// docs/spmd.md is the reference.
import { Layout } from './layout.js';
import { CENTRY, CEXIT, CKIND, KIND_RING, lockWord, MAX_LOCKS, PARKS, rankBase, SLEEPS, STATE, WAITERS, bump } from './board.js';
import { ELEM_TYPES, type ElemArray, type ElemType } from './protocol.js';
import { Rank, RunStopped, SpmdError } from './rank.js';

export { SpmdError, RunStopped };
export type { ElemType };

/** number of ranks of the run */
export let THREADS = 0;
/** this rank, 0 … THREADS-1 */
export let MYTHREAD = -1;

let rt: Rank | undefined;

/** @internal the rank's worker installs its runtime before the program is imported */
export function install(r: Rank): void {
  rt = r;
  THREADS = r.threads;
  MYTHREAD = r.rank;
}

/** @internal */
export function runtime(): Rank {
  if (!rt) throw new SpmdError('the SPMD layer is used outside a rank: run the program with `luna spmd prog.ts`');
  return rt;
}

// ------------------------------------------------------------------ shared arrays

export interface AllocOptions {
  /** elements per block of the block-cyclic layout (default 1: element i on rank i % THREADS, as UPC) */
  block?: number;
  /** element type (default 'f64') */
  type?: ElemType;
}

/**
 * An array spread over all ranks: block b of `block` elements has affinity to rank b % THREADS.
 * `local` is this rank's part (its elements in order, no copy: the fast path of kernels).
 */
export class SharedArray<A extends ElemArray = ElemArray> {
  readonly layout: Layout;
  /** the parts of every rank of this node, side by side (perRank elements each) */
  readonly view: A;
  /** this rank's own elements */
  readonly local: A;
  private readonly first: number;
  private readonly perRank: number;

  /** @internal */
  constructor(readonly id: number, readonly length: number, readonly block: number, readonly type: ElemType, buffer: SharedArrayBuffer, private readonly r: Rank) {
    this.layout = new Layout(length, block, r.threads);
    const C = ELEM_TYPES[type];
    this.view = new C(buffer as unknown as ArrayBuffer) as A;
    this.first = r.firstLocal;
    this.perRank = this.layout.perRank;
    const off = (r.rank - this.first) * this.perRank;
    this.local = this.view.subarray(off, off + this.layout.localLength(r.rank)) as A;
  }

  /** the rank element i has affinity to */
  owner(i: number): number {
    return this.layout.owner(i);
  }

  private check(i: number, n = 1): void {
    if (!(Number.isInteger(i) && i >= 0 && Number.isInteger(n) && n >= 0 && i + n <= this.length)) {
      throw this.r.fail(n === 1 ? `index ${String(i)} outside shared array #${this.id} of ${this.length} elements` : `range [${i}, ${i + n}) outside shared array #${this.id} of ${this.length} elements`);
    }
  }

  /** Where rank t's local element j lies in this node's view, or -1 when t is on another node. */
  private at(t: number, j: number): number {
    const k = t - this.first;
    return k >= 0 && k < this.r.perNode ? k * this.perRank + j : -1;
  }

  /** read element i (put and get as UPC's assignments through a shared pointer) */
  get(i: number): number {
    this.r.op = 'get';
    return this.r.trace ? this.r.traced('get', () => this.getAt(i)) : this.getAt(i);
  }

  private getAt(i: number): number {
    this.check(i);
    const p = this.at(this.layout.owner(i), this.layout.localIndex(i));
    if (p >= 0) return this.view[p]!;
    const out = new (ELEM_TYPES[this.type])(1);
    this.remoteGet(this.layout.owner(i), this.layout.localIndex(i), out);
    return out[0]!;
  }

  /** write element i */
  put(i: number, v: number): void {
    this.r.op = 'put';
    if (this.r.trace) this.r.traced('put', () => this.putAt(i, v)); else this.putAt(i, v);
  }

  private putAt(i: number, v: number): void {
    this.check(i);
    const p = this.at(this.layout.owner(i), this.layout.localIndex(i));
    if (p >= 0) { this.view[p] = v; return; }
    const one = new (ELEM_TYPES[this.type])(1);
    one[0] = v;
    this.remotePut(this.layout.owner(i), this.layout.localIndex(i), one);
  }

  /** copy elements [i, i + dst.length) into dst */
  memget(dst: ElemArray, i: number): void {
    this.r.op = 'memget';
    this.check(i, dst.length);
    if (this.r.trace) this.r.enter('memget');
    this.layout.runs(i, dst.length, (t, j, at, n) => this.readPart(t, j, dst.subarray(at, at + n)));
    if (this.r.trace) this.r.exit('memget');
  }

  /** copy src into elements [i, i + src.length) */
  memput(i: number, src: ElemArray): void {
    this.r.op = 'memput';
    this.check(i, src.length);
    if (this.r.trace) this.r.enter('memput');
    this.layout.runs(i, src.length, (t, j, at, n) => this.writePart(t, j, src.subarray(at, at + n)));
    if (this.r.trace) this.r.exit('memput');
  }

  /** rank t's own elements [j, j + dst.length) into dst (OpenSHMEM's get from a PE) */
  getFrom(dst: ElemArray, t: number, j = 0): void {
    this.r.op = 'getFrom';
    this.checkPart(t, j, dst.length);
    if (this.r.trace) this.r.traced('memget', () => this.readPart(t, j, dst)); else this.readPart(t, j, dst);
  }

  /** src into rank t's own elements from j (OpenSHMEM's put to a PE) */
  putTo(t: number, j: number, src: ElemArray): void {
    this.r.op = 'putTo';
    this.checkPart(t, j, src.length);
    if (this.r.trace) this.r.traced('memput', () => this.writePart(t, j, src)); else this.writePart(t, j, src);
  }

  private checkPart(t: number, j: number, n: number): void {
    this.r.checkRank(t);
    const have = this.layout.localLength(t);
    if (!(Number.isInteger(j) && j >= 0 && j + n <= have)) throw this.r.fail(`elements [${String(j)}, ${j + n}) outside rank ${t}'s ${have} element(s) of shared array #${this.id}`);
  }

  /** @internal rank t's local elements [j, j + into.length) into `into` */
  readPart(t: number, j: number, into: ElemArray): void {
    const p = this.at(t, j);
    if (p >= 0) into.set(this.view.subarray(p, p + into.length));
    else this.remoteGet(t, j, into);
  }

  /** @internal `from` into rank t's local elements from j */
  writePart(t: number, j: number, from: ElemArray): void {
    const p = this.at(t, j);
    if (p >= 0) this.view.set(from, p);
    else this.remotePut(t, j, from);
  }

  private remoteGet(t: number, j: number, into: ElemArray): void {
    this.r.readRemote(this.id, t, j, into.length, new Uint8Array(into.buffer, into.byteOffset, into.byteLength), `${this.r.op} from rank ${t}`);
  }

  private remotePut(t: number, j: number, from: ElemArray): void {
    const bytes = new Uint8Array(from.byteLength);
    bytes.set(new Uint8Array(from.buffer, from.byteOffset, from.byteLength));
    this.r.putAsync({ k: 'put', id: 0, arr: this.id, owner: t, local: j, bytes });
  }
}

/** element i of a shared array */
export function get(a: SharedArray, i: number): number { return a.get(i); }
/** write element i of a shared array */
export function put(a: SharedArray, i: number, v: number): void { a.put(i, v); }
/** copy a's elements [i, i + dst.length) into the private array dst */
export function memget(dst: ElemArray, a: SharedArray, i: number): void { a.memget(dst, i); }
/** copy the private array src into a's elements [i, i + src.length) */
export function memput(a: SharedArray, i: number, src: ElemArray): void { a.memput(i, src); }
/** copy n elements of src from si to dst from di (shared to shared) */
export function memcpy(dst: SharedArray, di: number, src: SharedArray, si: number, n: number): void {
  const r = runtime();
  if (r.trace) r.enter('memcpy');
  const tmp = new (ELEM_TYPES[src.type])(n);
  src.memget(tmp, si);
  const conv = dst.type === src.type ? tmp : ELEM_TYPES[dst.type].from(tmp as unknown as ArrayLike<number>);
  dst.memput(di, conv);
  r.op = 'memcpy';
  if (r.trace) r.exit('memcpy');
}

/**
 * Complete this rank's puts before what follows (UPC's upc_fence): a put to another node returns
 * once sent, and here the rank waits for every acknowledgement. Barriers, notify, unlock and the
 * collectives complete them too.
 */
export function fence(): void {
  const r = runtime();
  r.op = 'fence';
  if (r.trace) r.enter('fence');
  r.completePuts();
  if (r.trace) r.exit('fence');
}

/**
 * Run f as a code block of the program's own (a phase, a kernel): traced as a `region` entered at
 * the call site, so the pattern engine's call paths and the timeline show it. Returns f's result.
 */
export function region<R>(f: () => R): R {
  const r = runtime();
  if (!r.trace) return f();
  r.enter('region');
  const v = f();
  r.exit('region');
  return v;
}

/**
 * How often this rank's waits so far outlasted their spin: `sleeps` (it slept), `parks` (it slept
 * past the silent first sleep and told its node). Diagnostics: a barrier loop whose sleeps grow
 * with its iterations pays wake-ups (20–50 µs each here) instead of spinning through.
 */
export function waitStats(): { sleeps: number; parks: number } {
  const r = runtime();
  return { sleeps: r.word(r.rank, SLEEPS), parks: r.word(r.rank, PARKS) };
}

// ------------------------------------------------------------------ barriers

let phase = 0;
let notified = false;

/** Split-phase barrier, first half: this rank has arrived (it may go on with local work). */
export function notify(): void {
  const r = runtime();
  r.op = 'notify';
  if (notified) throw r.fail('notify twice without a wait between');
  notified = true;
  if (r.trace) r.enter('notify');
  r.completePuts();
  r.arrive(++phase);
  if (r.trace) r.cexit('notify', -1, BARRIER_SYNC, 0, 0);
}

/** Split-phase barrier, second half: wait until every rank has notified this phase. */
export function wait(): void {
  const r = runtime();
  r.op = 'wait';
  if (!notified) throw r.fail('wait without a notify before it');
  notified = false;
  if (r.trace) r.enter('wait');
  waitArrived(r, phase);
  leaving();
  if (r.trace) r.cexit('wait', -1, BARRIER_SYNC, 0, 0);
}

/** Wait until every rank has arrived. */
export function barrier(): void {
  const r = runtime();
  r.op = 'barrier';
  if (notified) throw r.fail('barrier between a notify and its wait');
  if (r.trace) r.enter('barrier');
  r.completePuts();
  r.arrive(++phase);
  waitArrived(r, phase);
  leaving();
  if (r.trace) r.cexit('barrier', -1, BARRIER_SYNC, 0, 0);
}

/**
 * @internal Every rank's program starts together (an untraced barrier between importing the
 * program and calling its default export, as shmem_init synchronises): a rank's trace starts at
 * the program, not at however late its worker thread was started and its module imported.
 */
export function startTogether(): void {
  const r = runtime();
  r.op = 'start';
  r.arrive(++phase);
  startPhases++;
  waitArrived(r, phase);
}

/** the start's barrier phases (startTogether): hang reports count the program's phases */
let startPhases = 0;

let hold = 0, holdFrom = NaN;
/**
 * Hold this rank in its next synchronising operation (barrier, wait, a collective, allAlloc) for
 * `ms` milliseconds once the operation completed, before it leaves — as a rank descheduled at that
 * moment is held. With `since` (an instant of the machine's wall clock in ms,
 * `performance.timeOrigin + performance.now()`, the same in every thread and process of a machine)
 * it leaves at `since + ms` instead, or at once when the operation completed later: ranks given
 * the same instant leave together however far apart they were woken. A validation aid: the
 * pattern engine's exit patterns (a late exit from a barrier or collective) are checked with it on
 * real runs (examples/patterns).
 */
export function holdNextExit(ms: number, since?: number): void {
  const r = runtime();
  if (!(Number.isFinite(ms) && ms >= 0)) throw r.fail(`bad hold ${String(ms)}: milliseconds ≥ 0`, 'holdNextExit');
  if (since !== undefined && !Number.isFinite(since)) throw r.fail(`bad instant ${String(since)}: a wall-clock time in ms`, 'holdNextExit');
  hold = ms;
  holdFrom = since ?? NaN;
}

const wallMs = (): number => performance.timeOrigin + performance.now();
const napWord = new Int32Array(new SharedArrayBuffer(4));

/** @internal the operation completed: serve a hold the program asked for, then leave */
export function leaving(): void {
  if (hold <= 0 && Number.isNaN(holdFrom)) return;
  const until = (Number.isNaN(holdFrom) ? wallMs() : holdFrom) + hold;
  hold = 0;
  holdFrom = NaN;
  // asleep, not spinning: a sleeping rank takes no core from the others and wakes on time
  for (let left = until - wallMs(); left > 0; left = until - wallMs()) Atomics.wait(napWord, 0, 0, left);
  exitLate = Math.max(exitLate, wallMs() - until);
}

let exitLate = 0;
/**
 * The latest, in ms, that a held exit (holdNextExit) of this rank left after the instant it was
 * held until: its wake came late, or the operation completed after that instant. A validation
 * reads it to tell the machine's scheduling from the hold it injected.
 */
export function exitLateness(): number {
  return exitLate;
}

/** a barrier's synchronisation in the trace: IN_ALLSYNC + 4 · OUT_ALLSYNC (SYNC_MODES) */
export const BARRIER_SYNC = 2 + 4 * 2;

function waitArrived(r: Rank, p: number): void {
  r.awaitBarrier(p, `waits at ${r.op} (phase ${p - startPhases}) for `);
}

// ------------------------------------------------------------------ locks

/** A lock whose home is rank id % THREADS. */
export class Lock {
  /** @internal */
  constructor(readonly id: number) {}
  get home(): number { return this.id % THREADS; }
}

let locks = 0;
const held = new Set<number>();

/** Every rank gets the same new lock (collective: call it on all ranks in the same order). */
export function allLockAlloc(): Lock {
  const r = runtime();
  r.op = 'allLockAlloc';
  if (locks >= MAX_LOCKS) throw r.fail(`more than ${MAX_LOCKS} locks`);
  return new Lock(locks++);
}

function lockOf(r: Rank, l: Lock): number {
  if (!(l instanceof Lock) || !(l.id >= 0 && l.id < locks)) throw r.fail('not a lock of allLockAlloc');
  return lockWord(r.threads, l.id);
}

/** Acquire the lock, waiting while another rank holds it. */
export function lock(l: Lock): void {
  const r = runtime();
  r.op = 'lock';
  const w = lockOf(r, l);
  if (held.has(l.id)) throw r.fail(`lock ${l.id} is held by this rank already`);
  if (r.trace) r.enter('lock');
  if (r.nodeOf(l.home) === r.node) {
    const b = r.board, me = r.rank + 1;
    r.until(() => Atomics.compareExchange(b, w, 0, me) === 0, 'lock', () => `waits for lock ${l.id} held by rank ${(Atomics.load(b, w) & ~WAITERS) - 1}`);
  } else {
    r.call({ k: 'lock', id: 0, lock: l.id, attempt: false }, 'lock', `waits for lock ${l.id} (home rank ${l.home} on node ${r.nodeOf(l.home)})`);
  }
  held.add(l.id);
  if (r.trace) { r.trace.spmdAlock(r.now(), r.rank, l.id); r.exit('lock'); }
}

/** Acquire the lock if it is free; whether it was. */
export function attempt(l: Lock): boolean {
  const r = runtime();
  r.op = 'attempt';
  const w = lockOf(r, l);
  if (held.has(l.id)) throw r.fail(`lock ${l.id} is held by this rank already`);
  let ok: boolean;
  if (r.trace) r.enter('lock_attempt');
  if (r.nodeOf(l.home) === r.node) ok = Atomics.compareExchange(r.board, w, 0, r.rank + 1) === 0;
  else ok = r.call({ k: 'lock', id: 0, lock: l.id, attempt: true }, 'lock', `attempts lock ${l.id}`) as boolean;
  if (ok) held.add(l.id);
  if (r.trace) { if (ok) r.trace.spmdAlock(r.now(), r.rank, l.id); r.exit('lock_attempt'); }
  return ok;
}

/** Release a lock this rank holds. */
export function unlock(l: Lock): void {
  const r = runtime();
  r.op = 'unlock';
  const w = lockOf(r, l);
  if (!held.has(l.id)) {
    const h = r.nodeOf(l.home) === r.node ? (Atomics.load(r.board, w) & ~WAITERS) - 1 : -1;
    throw r.fail(`lock ${l.id} is not held by this rank${h >= 0 ? ` (rank ${h} holds it)` : ''}`);
  }
  if (r.trace) r.enter('unlock');
  // what this rank wrote under the lock is in place before the next holder can read it
  r.completePuts();
  held.delete(l.id);
  if (r.trace) r.trace.spmdRlock(r.now(), r.rank, l.id);
  if (r.nodeOf(l.home) === r.node) {
    if (Atomics.compareExchange(r.board, w, r.rank + 1, 0) !== r.rank + 1) r.post({ k: 'unlock', id: 0, lock: l.id }); // other nodes queue: the node hands it over
    else bump(r.board);
  } else {
    r.unlockRemote(l.id);
  }
  if (r.trace) r.exit('unlock');
}

// ------------------------------------------------------------------ collective allocation

let arrays = 0;
let collectives = 0;

/** @internal the next collective operation's number on this rank; its kind is recorded for the mismatch check */
export function enterCollective(r: Rank, kind: number): number {
  r.completePuts();
  const k = ++collectives;
  r.setWords(CKIND + (k % KIND_RING), kind, CENTRY, k);
  return k;
}

/** @internal wait until rank t entered collective k, and check it entered the same kind */
export function awaitEntry(r: Rank, t: number, k: number, kind: number, kindName: (n: number) => string): void {
  r.untilCollective(() => r.word(t, CENTRY) >= k, () => `waits in ${r.op} (collective #${k}) for rank ${t} to enter it`);
  const theirs = r.word(t, CKIND + (k % KIND_RING));
  if (theirs !== kind && r.word(t, CENTRY) - k < KIND_RING) {
    throw r.fail(`mismatched collective #${k}: this rank called ${kindName(kind)}, rank ${t} called ${kindName(theirs)}`);
  }
}

/** @internal */
export function awaitExit(r: Rank, t: number, k: number): void {
  r.untilCollective(() => r.word(t, CEXIT) >= k, () => `waits in ${r.op} (collective #${k}) for rank ${t} to finish it`);
}

/** @internal */
export function exitCollective(r: Rank, k: number): void {
  r.completePuts();
  r.setWords(CEXIT, k);
}

/** @internal the allocation sequence */
export function nextArray(): number {
  return ++arrays;
}

export { rankBase };
