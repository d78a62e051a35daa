// Raw DF buffers recycled by size, one pool per thread. A raw output of RECYCLE_MIN bytes or
// more is made in a buffer that carries a trailer after its bytes (and after the guard of a C++
// output): a mark, the buffer's id (the thread that made it and a number), and whether it may
// never be recycled (pinned: it was handed to something outside the node's threads, a socket).
// The id is the same in every thread's view of the buffer, so the system thread can count who
// holds it whatever view it sees (runtime/exec/shm.ts): once nothing can read it any more the
// buffer goes back to a pool, and the next output of its size takes it instead of fresh pages —
// no new memory, and no collection forced to return the old.
//
// This module is the mechanism (make, mark, pool, take); when a buffer may go back is the
// runtime's decision. A recycled buffer keeps the bytes of its last value unless the caller asks
// for zeros (TypeScript create() promises them; C++ create() does not, as in the original LuNA).
import { threadId } from 'node:worker_threads';

/** Below this many bytes a raw value is a plain SharedArrayBuffer: not tracked, left to the collector. */
export const RECYCLE_MIN = 4096;

/**
 * Int32 words of the trailer: mark, thread, number, check, pinned, generation, the guard after
 * the value now in the buffer (C++ outputs), spare.
 */
const TRAILER = 32;
const MARK = 0x6c756e61;
const CHECK = 0x2f6b5d19;
const W_MARK = 0, W_THREAD = 1, W_NUM = 2, W_CHECK = 3, W_PINNED = 4, W_GEN = 5, W_GUARD = 6;

/**
 * The size class of `len` bytes: rounded up to 2 steps an octave (2^k, 1.5 × 2^k; at most 50 %
 * more), since the sizes of a program's raw values vary from step to step (the particles a
 * subdomain keeps, the ones leaving it): exact sizes made the PIC's pools hold 300 sizes and
 * serve few, and with 8 steps an octave the freed blocks of one step fitted the next step's
 * requests too seldom, both in the pools and in the C heap: the PIC's heap kept ever more free
 * holes and its peak RSS rose 4–5 MB a step from 30 to 60 steps (docs/pic.md, "Where the rise
 * from 30 to 60 steps sits"). 2 steps against 8 (C++ kernels, 1 × 2, 60 steps, alternated, load
 * 6–9, own scheduling group at nice −19): peak RSS 662 / 644 / 656 / 694 MB against 732 / 762 /
 * 720 / 725, program 4.55 / 4.65 / 5.68 / 4.68 s against 5.24 / 5.27 / 5.81 / 5.15, buffers made
 * fresh 1 269 against 1 820; at 10 and 30 steps alike (556 / 560 against 576 / 579 MB, 598 / 598
 * against 578 / 598).
 */
const CLASS_BITS = 1;
function sizeClass(len: number): number {
  const step = 2 ** Math.max(Math.floor(Math.log2(len)) - CLASS_BITS, 2);
  return Math.ceil(len / step) * step;
}

/** The length of a recyclable buffer for `len` usable bytes: their class, then the trailer. */
export function recycledLength(len: number): number {
  return sizeClass(len) + TRAILER;
}

/** What this thread's pool did (counts since the thread started). */
export const recycleStats = {
  /** buffers made fresh (with a trailer) */
  made: 0,
  /** buffers taken from the pool instead */
  reused: 0,
  /** buffers put into the pool (by this thread or handed to it) */
  pooled: 0,
  /** buffers the pool had no room for, or let go for newer ones (left to the collector) */
  dropped: 0,
};

/**
 * An output whose size class the pool holds none of takes an idle pooled buffer of a larger class
 * (none of that class asked for since its oldest came), up to this many times its own class (1:
 * its own class only): its pages were touched already, a fresh buffer's are faulted in. Set by the
 * runtime.
 */
let larger = 1;
export function setRecycleLarger(ratio: number): void { larger = ratio; }

/** Bytes a thread's pool holds at most (0: nothing is recycled). Set by the runtime. */
let cap = 64 * 1024 * 1024;
export function setRecycleCap(bytes: number): void { cap = bytes; }
export function recycleCap(): number { return cap; }

/**
 * A check, off by default: every buffer is filled with 0xFF bytes (NaN as doubles, -1 as
 * integers) as it enters a pool, so a reader that still holds a buffer the runtime let go reads
 * poison at once rather than, by chance, the next value made in it. Set by the runtime.
 */
let poison = false;
export function setRecyclePoison(on: boolean): void { poison = on; }

/**
 * One size class of a pool: its buffers in the order they came in, when each came (arrivals'
 * count), and when an output last asked for the class (arrivals' count, -1: never).
 */
interface Shelf { bufs: SharedArrayBuffer[]; at: number[]; asked: number }
const pool = new Map<number, Shelf>();
let arrivals = 0;
let pooledBytes = 0;
let made = 0;

/** Bytes in this thread's pool now. */
export function pooledNow(): number { return pooledBytes; }

/**
 * Called with the byte count of each buffer taken from the pool (so the runtime does not count it
 * as new memory): set by the runtime.
 */
let onReuse: (bytes: number) => void = () => {};
export function onRecycledTake(f: (bytes: number) => void): void { onReuse = f; }
/** Called with the byte count of each buffer the pool had no room for or let go (left to the collector). */
let onDrop: (bytes: number) => void = () => {};
export function onRecycledDrop(f: (bytes: number) => void): void { onDrop = f; }

function trailer(b: SharedArrayBuffer): Int32Array {
  return new Int32Array(b, b.byteLength - TRAILER, TRAILER >> 2);
}

/**
 * A view of `bytes + guard` bytes over shared memory for a raw value of `bytes` bytes (the guard,
 * if any, right after them, as the C++ glue wants it). From RECYCLE_MIN bytes on, a buffer of
 * this size from the pool when it has one — zero-filled over `bytes` only if `zero` — else a
 * fresh one with a trailer. Fresh memory is zero-filled by the system.
 */
export function takeRaw(bytes: number, guard: number, zero: boolean): Uint8Array {
  const len = bytes + guard;
  if (bytes < RECYCLE_MIN || cap === 0) return new Uint8Array(new SharedArrayBuffer(len));
  const total = recycledLength(len);
  let shelf = pool.get(total);
  if (shelf === undefined) pool.set(total, shelf = { bufs: [], at: [], asked: arrivals });
  else shelf.asked = arrivals;
  // none of its class: an idle one of a larger class (none of its own class asked for since its
  // oldest came), up to `larger` times its own class, whose pages were touched already
  if (shelf.bufs.length === 0 && larger > 1 && pooledBytes > 0) {
    for (let c = sizeClass(total - TRAILER + 1), up = larger * (total - TRAILER); c <= up; c = sizeClass(c + 1)) {
      const s = pool.get(c + TRAILER);
      if (s !== undefined && s.bufs.length > 0 && s.asked <= s.at[0]!) { shelf = s; break; }
    }
  }
  if (shelf.bufs.length > 0) {
    // the newest: its pages are the likeliest still in the caches
    shelf.at.pop();
    const b = shelf.bufs.pop()!;
    pooledBytes -= b.byteLength;
    recycleStats.reused++;
    const t = trailer(b);
    t[W_GEN] = (t[W_GEN]! + 1) | 0;
    t[W_GUARD] = guard;
    const u = new Uint8Array(b, 0, len);
    if (zero) zeroFill(u, bytes);
    onReuse(bytes);
    return u;
  }
  const b = new SharedArrayBuffer(total);
  const t = trailer(b);
  const num = ++made | 0;
  t[W_MARK] = MARK;
  t[W_THREAD] = threadId;
  t[W_NUM] = num;
  t[W_CHECK] = MARK ^ threadId ^ num ^ CHECK;
  t[W_GUARD] = guard;
  recycleStats.made++;
  return new Uint8Array(b, 0, len);
}

/**
 * Zeros copied from ordinary memory: a Uint8Array over shared memory fills byte by byte (~1 ms a
 * MiB here, V8 keeps each store atomic), a copy from a non-shared buffer moves whole words
 * (~0.12 ms a MiB).
 */
const ZEROS = new Uint8Array(64 * 1024);
function zeroFill(u: Uint8Array, bytes: number): void {
  fillFrom(ZEROS, u, bytes);
}
let ONES: Uint8Array | undefined;
function fillFrom(src: Uint8Array, u: Uint8Array, bytes: number): void {
  for (let at = 0; at < bytes; at += src.length) {
    const n = Math.min(src.length, bytes - at);
    u.set(n === src.length ? src : src.subarray(0, n), at);
  }
}

/** The trailer of the buffer under `u` when it has one (a buffer takeRaw made), else null. */
function trailerOf(u: Uint8Array): Int32Array | null {
  const b = u.buffer;
  const n = b.byteLength;
  if (n < RECYCLE_MIN + TRAILER || (n & 3) !== 0 || !(b instanceof SharedArrayBuffer)) return null;
  const t = trailer(b);
  return t[W_MARK] === MARK && t[W_CHECK] === (MARK ^ t[W_THREAD]! ^ t[W_NUM]! ^ CHECK) ? t : null;
}

/** The id of the recyclable buffer under `u` (the same in every thread), or -1. */
export function recycledId(u: Uint8Array): number {
  const t = trailerOf(u);
  return t === null ? -1 : t[W_THREAD]! * 2 ** 32 + (t[W_NUM]! >>> 0);
}

/** The guard after the value in the recyclable buffer under `u` (-1: not such a buffer). */
export function recycledGuard(u: Uint8Array): number {
  const t = trailerOf(u);
  return t === null ? -1 : t[W_GUARD]!;
}

/** How many times the buffer under `u` was taken from a pool (0: made for its first value). */
export function recycledGeneration(u: Uint8Array): number {
  const t = trailerOf(u);
  return t === null ? 0 : t[W_GEN]!;
}

/**
 * The buffer under `u` must never be recycled: something outside the node's threads may still
 * read it (a socket's write in progress, a copy kept on another node). Free for buffers without
 * a trailer.
 */
export function pinRaw(u: Uint8Array): void {
  const t = trailerOf(u);
  if (t !== null) t[W_PINNED] = 1;
}

export function isPinned(u: Uint8Array): boolean {
  const t = trailerOf(u);
  return t !== null && t[W_PINNED] !== 0;
}

/** isPinned for a whole buffer made by takeRaw. */
export function isPinnedBuffer(b: SharedArrayBuffer): boolean {
  return trailer(b)[W_PINNED] !== 0;
}

/** The thread that made buffer `b` (made by takeRaw): its threadId. */
export function makerOf(b: SharedArrayBuffer): number {
  return trailer(b)[W_THREAD]!;
}

let madeReported = 0;
/** Buffers this thread made fresh since madeSince() was last asked. */
export function madeSince(): number {
  const n = recycleStats.made - madeReported;
  madeReported = recycleStats.made;
  return n;
}

/**
 * Bytes of the buffers the pool let go to make room for newer ones (evictOldest), counted since
 * the thread started: adoptRaw reads how much of it a hand-over caused.
 */
let evictedBytes = 0;

/**
 * Let the buffer that waited longest in the pool go (to the collector). A buffer no output took
 * while newer ones came in is of a size its thread no longer makes (a subdomain's particles drift
 * from class to class over a run, a grid made once): dropping the newcomer instead kept a worker's
 * pool full of those, and the sizes its kernels made each step went to the collector (the PIC at
 * 30 steps: 1 000 of 1 900 of its most common size missed, none of that size pooled).
 */
function evictOldest(): void {
  let oldest: Shelf | undefined, n = 0;
  for (const [len, s] of pool) {
    if (s.bufs.length > 0 && (oldest === undefined || s.at[0]! < oldest.at[0]!)) { oldest = s; n = len; }
  }
  if (oldest === undefined) return;
  oldest.at.shift();
  oldest.bufs.shift();
  pooledBytes -= n;
  evictedBytes += n;
  recycleStats.dropped++;
  onDrop(n);
}

/**
 * Put buffer `b` (made by takeRaw, nothing reading it any more) into this thread's pool, making
 * room by letting the oldest buffers go when it is full: false when `b` alone is over the cap (it
 * is left to the collector).
 */
export function poolRaw(b: SharedArrayBuffer): boolean {
  const n = b.byteLength;
  if (n > cap) { recycleStats.dropped++; onDrop(n); return false; }
  while (pooledBytes + n > cap) evictOldest();
  if (poison) fillFrom(ONES ??= new Uint8Array(64 * 1024).fill(0xff), new Uint8Array(b), n - TRAILER);
  let shelf = pool.get(n);
  if (shelf === undefined) pool.set(n, shelf = { bufs: [], at: [], asked: -1 });
  shelf.bufs.push(b);
  shelf.at.push(arrivals++);
  pooledBytes += n;
  recycleStats.pooled++;
  return true;
}

/** A buffer of this length from this thread's pool (to hand to another thread), if it has one. */
export function takePooled(length: number): SharedArrayBuffer | undefined {
  const shelf = pool.get(length);
  if (shelf === undefined || shelf.bufs.length === 0) return undefined;
  shelf.at.pop();
  pooledBytes -= length;
  return shelf.bufs.pop();
}

/** Take up to `maxBytes` of this thread's pool (to hand to another thread). */
export function drainPool(maxBytes: number): SharedArrayBuffer[] | undefined {
  if (pooledBytes === 0) return undefined;
  const out: SharedArrayBuffer[] = [];
  let taken = 0;
  for (const [n, shelf] of pool) {
    while (shelf.bufs.length > 0 && taken + n <= maxBytes) { shelf.at.pop(); out.push(shelf.bufs.pop()!); taken += n; }
  }
  pooledBytes -= taken;
  return out.length > 0 ? out : undefined;
}

/**
 * Bytes of buffers handed to this thread that its pool had no room for or let go, since handedDropped()
 * was last asked. The thread that handed them over held them in its pool, and its view of each
 * keeps the memory until that thread collects it: it counts them too (runtime/exec/shm.ts).
 */
let handedDroppedBytes = 0;

/** Buffers handed to this thread by another (drainPool there): into this thread's pool. */
export function adoptRaw(list: readonly SharedArrayBuffer[]): void {
  const before = evictedBytes;
  for (const b of list) if (!poolRaw(b)) handedDroppedBytes += b.byteLength;
  // the buffers let go to make room were handed over too (or this thread's own, whose old views
  // the system thread may hold as well)
  handedDroppedBytes += evictedBytes - before;
}

/** The bytes of handed buffers dropped since the last call (adoptRaw), and the count reset. */
export function handedDropped(): number {
  const n = handedDroppedBytes;
  handedDroppedBytes = 0;
  return n;
}
