// Memory of raw DFs (shared buffers). Most raw outputs are recycled (the second half of this
// file): once nothing can read a freed DF's buffer it serves a later output of its size. The
// rest is the collector's, and V8 does not count SharedArrayBuffer memory as GC pressure: a long
// run that makes and frees large raw DFs would grow without bound (2000 × 1 MiB chain → 2 GiB).
// Each thread counts the shared bytes it dropped (system thread) or created (worker) and not
// recycled, and forces a collection past its limit, so the freed buffers' memory is returned,
// and keepFreedMemory() lets the next large buffers reuse it rather than fault in fresh pages.
//
// A raw DF's memory is returned only once every thread that held a view of it has collected that
// view: the system thread's (the DF store's value, dropped when the DF is freed) and each
// worker's (the output it made and posted, the inputs it was sent). The system thread's views
// live as long as their DFs, across its frequent scavenges (2 MB semi-spaces), so they are old by
// the time they die and only a full collection frees them (minor ones instead: the PIC peaked at
// 1.38 GB against 0.55). A worker's die young: it posts an output with its batch's result and
// drops its inputs with the batch, and its own allocation is too small to scavenge often (the
// PIC's workers scavenged 4–5 times in a run). So a worker forces minor collections, often, and
// a full one for the views that outlived two scavenges (a batch's outputs kept to feed the next
// batch, a long batch's inputs, a value read all through a step): once the views it held through
// its minor collections add up (AGED_SHARE), and every FULL_EVERY-th time regardless.
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadAddon } from '../../core/addon.js';
import { tuned } from '../tuning.js';
import { RECYCLE_MIN, drainPool, recycleCap, takeRaw, isPinned, isPinnedBuffer, makerOf, onRecycledDrop, onRecycledTake, poolRaw, pooledNow, recycledGeneration, recycledId, setRecycleCap, setRecycleLarger, setRecyclePoison, takePooled } from '../../ucode/recycle.js';
import { T_RAW } from '../../ucode/value.js';
import { previousTask, type Forward } from './protocol.js';

/**
 * The system thread's limit: the raw-DF bytes it drops between the full collections it forces.
 * `LUNA_COLLECT_SHARED_MB` overrides it. A dropped buffer's memory comes back only once the
 * workers have also collected their views of it, so the peak follows how far the workers lag as
 * much as this limit: with workers collecting every eighth of it (WORKER_SHARE), 128 MB peaks
 * where 64 did when workers collected every 64 MB (load 7–10, the PIC at the seed's size, C++
 * kernels, 1 × 2, 3 alternated rounds each: peak RSS 538–581 MB and 10 full collections on the
 * system thread at 128 with workers at 16; 545–566 MB and 19–20 at 64 with workers at 64; 651–669
 * MB and 10–11 at 128 with workers at 64; 507–542 MB and 13–14 at 96 with workers at 16; 606–653
 * MB and 7–8 at 192). Before workers' collections were minor ones (quiet, 3 alternated rounds:
 * program 2.16–2.36 s, peak RSS 508–564 MB at 64; 1.97–2.04 s, 651–687 MB at 128; 1.54–1.98 s,
 * 738–832 MB at 256; a chain of 2 000 freed 1 MiB DFs peaks at 251 / 357–378 / 513–564 MiB).
 * A limit scaled to the live raw set (the DF stores' bytes) would not help the PIC: its live set
 * peaks at 69 MB.
 */
const LIMIT = (tuned('LUNA_COLLECT_SHARED_MB') ?? 128) * 1024 * 1024;

/**
 * A worker forces a minor collection every LIMIT / WORKER_SHARE bytes of raw outputs it makes:
 * minor ones are cheap (median pause 0.9–2.3 ms against 30–50 ms for a worker's full one, load
 * 8–10), and the sooner a worker drops its views, the more memory the system thread's own
 * collection returns (the figures above).
 */
const WORKER_SHARE = 8;

/**
 * Every FULL_EVERY-th of a worker's collections is full, for the views that outlived two
 * scavenges (2 × LIMIT of raw outputs made between a worker's full collections). Every
 * 8th at 64 MB limits, the PIC's workers ran 0–1 full collections a run against 14–16 at the same
 * peak RSS (532–599 MB against 532–593, 5 alternated rounds, load 8); every 16th at 16 MB, 2 a run.
 */
const FULL_EVERY = 16;

type Gc = (o?: { type: 'minor' | 'major' }) => void;

// The collector is made on first need: `gc` is reachable only from a new V8 context, which costs
// each thread 5–25 ms and ~1 MB, and most runs never churn LIMIT bytes.
let collector: Gc | undefined;
function collect(minor: boolean): void {
  collector ??= (() => {
    try {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as unknown;
      return typeof gc === 'function' ? (gc as Gc) : () => {};
    } catch { return () => {}; }
  })();
  if (minor) { collector({ type: 'minor' }); collections.minor++; } else { collector(); collections.full++; }
}

let pending = 0;
/** this thread holds a node's DF store: the raw views it drops are old, its limit the whole one */
let dropsOldViews = false;
let limit = LIMIT / WORKER_SHARE;
let forced = 0;

/** The collections this thread forced so far, by kind. */
export const collections = { full: 0, minor: 0 };

/**
 * The calling thread holds a node's DF store (a system thread): the raw values it drops outlived
 * its scavenges, so it forces full collections, every LIMIT bytes dropped. Threads that never call
 * this (workers) force minor ones, more often.
 */
export function holdsDfStore(): void {
  dropsOldViews = true;
  limit = LIMIT;
}

/**
 * Past the limit a collection is due at the thread's next pause (collectDue: the system thread at
 * the end of its turn, its batches sent; a worker once its result is posted), so that the pause
 * overlaps the others' work instead of holding a batch or a result back; past this many limits at
 * once (a long batch making large outputs) it runs where it is.
 */
const AT_ONCE = 4;

/** Account `bytes` of shared memory made unreachable (or churned); a collection is due past the limit. */
export function sharedBytesChurned(bytes: number): void {
  pending += bytes;
  if (pending >= AT_ONCE * limit) collectDue();
}

/**
 * A thread holding a DF store, with worker lanes, defers its due full collection while a lane may
 * wait for it (one with no batch in flight: its next batch, the results to book) and until a
 * worker makes a fresh raw buffer (the freed memory is asked for again); past this many limits it
 * collects regardless, so memory stays bounded. Runs end with a burst of drops (the PIC at the
 * seed's size: ~140 MB in its last ~100 ms) that made a collection due, and run, while the last
 * results waited (40-70 ms); nothing is made after them. Lanes-only deferral did not move it
 * (every lane had 2 batches in flight then); with the fresh-buffer condition the PIC forced 1 full
 * collection a run against 1-2, the tail after the last push was shorter and P_U higher (+0.5 to
 * +5.3 points) in 8 of 8 alternated pairs, peak RSS unchanged (load 4-11, docs/pic.md, "The
 * forced collection deferred to where memory is asked for"). With no fresh buffer reported
 * (LUNA_RECYCLE_MB=0) it collects at 2 × the limit: a freed 1 MiB chain peaked 68-113 MiB higher.
 */
const DEFER_UP_TO = 2;
/** per node pool on this thread: whether one of its lanes may be waiting for this thread now */
const lanesWait = new Set<() => boolean>();
/** recycling.fresh when the due collection was first deferred (-1: none deferred) */
let freshAtDue = -1;

/**
 * Defer the due full collections while `waiting()` (exec/pool.ts: a worker lane has no batch in
 * flight) and until a worker makes a fresh buffer. Returns the function that withdraws it (the
 * pool stops).
 */
export function deferCollectionWhile(waiting: () => boolean): () => void {
  lanesWait.add(waiting);
  return () => { lanesWait.delete(waiting); };
}

/**
 * Collect now if the thread's limit was churned since the last collection. `busy`: the calling
 * worker has its next batch in hand already (with the ready board, most often), so a pause now
 * would hold that batch back: the collection waits for the worker's next idle moment, up to
 * DEFER_UP_TO limits. In the PIC at the seed's size (C++ kernels, 1 × 2, 6 alternated pairs at
 * load 11–16) the lanes' time from a result to their next batch in hand, where the collections
 * ran, fell from 284–356 to 93–265 ms a run (26–38 → 7–14 ms of CPU: a forced scavenge's wall
 * time is mostly its wait for cores); docs/pic.md, "The lanes' idle by cause".
 */
export function collectDue(busy = false): void {
  if (limbo.length !== 0) recycleSettled();
  if (pending < limit) return;
  if (busy && pending < DEFER_UP_TO * limit) return;
  if (dropsOldViews && lanesWait.size !== 0 && pending < DEFER_UP_TO * limit) {
    for (const w of lanesWait) if (w()) return;
    if (freshAtDue < 0) freshAtDue = recycling.fresh;
    if (recycling.fresh === freshAtDue) return;
  }
  freshAtDue = -1;
  pending = 0;
  let minor = !dropsOldViews && ++forced % FULL_EVERY !== 0;
  if (minor && holding !== undefined) {
    aged += holding();
    if (aged >= AGED_SHARE * limit) minor = false;
  }
  if (!minor) aged = 0;
  collect(minor);
}

/**
 * A worker's collection is full once the raw views it held through its minor ones since its last
 * full one reach this many of its limits. A view that survives a scavenge is promoted by the next
 * one it lives through, and from then on only a full collection frees it, and with the last
 * thread's view the buffer. Views die young when a value is read once, soon after it is made; a
 * value read by many fragments over a long time (the PIC's Poisson slabs, read by every push of a
 * step on both lanes) is held through the workers' minor collections, and with a full one only
 * every FULL_EVERY-th the slab run's peak RSS grew ~40 MB a step on 2 threads (1.26–1.32 GB at 30
 * steps against 0.84–0.86 with this, docs/pic.md). 2 and 8 against 4 (subdomain sweeps, 30 steps,
 * 2 alternated rounds, load 9–10): peak RSS 725 / 725 and 783 / 735 MB against 687 / 718, program
 * 4.8 / 4.9 and 5.0 / 5.0 s against 4.6 / 5.0; slabs, one run each: 820 and 892 MB against 841.
 */
const AGED_SHARE = 4;
/** what the worker holds now that it did not report before (countHeld) */
let holding: (() => number) | undefined;
/** bytes of raw views held through this worker's minor collections since its last full one */
let aged = 0;

/**
 * A worker tells how to count what it holds: `f` returns the bytes of the raw views the worker
 * holds now (its running batch's inputs, outputs kept to feed other lanes or the next batch,
 * values fed to it) that it did not count before. Asked at each minor collection it forces.
 */
export function countHeld(f: () => number): void {
  holding = f;
}

// ------------------------------------------------------------------ reuse of freed buffers

const KEEP_FREED_DEFAULT_MB = 1024;

/**
 * `LUNA_KEEP_FREED_MB`: how much freed memory a node process keeps for its next large buffers
 * (default 1024; 0 leaves the C library's own policy). NaN when the variable is malformed.
 */
export function keepFreedMb(): number {
  const v = process.env.LUNA_KEEP_FREED_MB;
  if (v === undefined || v.trim() === '') return KEEP_FREED_DEFAULT_MB;
  return tuned('LUNA_KEEP_FREED_MB') ?? NaN;
}

let kept: boolean | undefined;
let fresh: ((on: boolean) => void) | undefined;

/**
 * Blocks from this size up are fresh mappings even under keepFreedMemory: clearing one taken
 * from the kept heap blocks the allocating thread for seconds (memory.c, freshMappings), while a
 * mapping's pages are supplied as the transfer writes them. Their page faults cost little next
 * to moving that many bytes.
 */
const FRESH_BYTES = 64 * 1024 * 1024;

/** A zero-filled shared buffer of `n` bytes (e.g. a DF received from another node). */
export function sharedBytes(n: number): Uint8Array {
  if (n < FRESH_BYTES || !fresh) return new Uint8Array(new SharedArrayBuffer(n));
  fresh(true);
  try { return new Uint8Array(new SharedArrayBuffer(n)); } finally { fresh(false); }
}

/**
 * The buffer a raw DF value received from another node is assembled in (the transport's
 * allocPayload for the DF protocol's posts and responses): a recyclable one, from this thread's
 * pool when it holds one of the class. The node counts its holders from its arrival (rawArrived)
 * as it does a value posted here, so once nothing reads it any more it serves the next arrival or
 * output of its class instead of fresh pages: a fresh 0.96 MB buffer costs its first writer ~3 ms
 * of page faults here, a reused one 0.04 ms (Node 20, docs/pic.md "The border planes through the
 * ring, and received values in recycled buffers"), and the PIC's 2 × 1 receives ~38 such border
 * planes a run on each node's system thread. Not zeroed: the transfer writes every byte. From
 * FRESH_BYTES up, as sharedBytes.
 */
export function receivedBytes(n: number): Uint8Array {
  if (n >= FRESH_BYTES || recycleCap() === 0) return sharedBytes(n);
  return takeRaw(n, 0, false);
}

/**
 * Serve large blocks (received DFs, raw outputs) from memory freed earlier instead of fresh
 * pages (native/memory.c says why). Once per process, from the node's system thread; true when
 * the policy is in force (glibc, the addon built, LUNA_KEEP_FREED_MB not 0).
 */
export function keepFreedMemory(): boolean {
  if (kept !== undefined) return kept;
  kept = false;
  const mb = keepFreedMb();
  if (!(mb > 0)) return kept;
  // without the addon the C library's default stays: slower, not wrong
  const addon = loadAddon<{ keepFreedMemory(trimBytes: number): boolean; freshMappings?(on: boolean): void }>('luna_memory');
  if (!addon) return kept;
  kept = addon.keepFreedMemory(mb * 1024 * 1024);
  if (kept && addon.freshMappings) fresh = addon.freshMappings;
  return kept;
}

// ------------------------------------------------------------------ raw buffers recycled
//
// The system thread counts who holds each recyclable raw buffer (ucode/recycle.ts), by the id
// its trailer carries, since the views of one buffer differ from thread to thread and two DFs
// may share one buffer (copy(), setData of an input's bytes):
//   - the DF store, from the post of a value to its free (its last request served, or destroyed);
//   - every CF that received it, until the CF is finished (its batch's result booked, or its
//     inline call returned): a CF takes its inputs when it is examined, long before it runs;
//   - a post, until its waiting readers have been handed the value;
//   - a CF that completes after its batch was booked (it asked its node without waiting), its
//     raw outputs until it completes (rawAwaited).
// When the count falls to 0 the buffer waits for the batches in flight that may still read it
// uncounted: a worker reads an output of another batch (fed from another lane, exchange.ts, or
// forwarded from the lane's previous batch) without the system thread handing it over, and such
// a reader's batch is always sent while the producing batch is in flight, before the value is
// posted. So each batch in flight counts, per output, the batches that forward from it
// (Flight.outReaders), and a buffer remembers the batches whose booked outputs it held (Held.src)
// and which of their outputs it backs (Flight.outBufs): it waits while one of them is unbooked or
// one of those outputs is read by a batch in flight (counted per batch, a batch fed one output of
// a producer held back all that producer's buffers). An output may share a buffer with an input
// forwarded to its CF (copy(), setData), whose producing batch may still be in flight: a booked
// batch's outputs also name the batches it forwarded from that are still in flight. A buffer no
// booked batch posted (a CF's output held until the CF completes after its batch, rawAwaited)
// or let go while a batch with a forward nobody resolved is in flight waits as before: for every
// batch sent to any lane before it was let go. Then the buffer goes back to the thread that made it: a
// worker's with the next batch sent to it (homes), the system thread's own into its pool, and
// from there to a worker whose ucodes made that length last. A buffer that left the node's threads
// (a value sent to another node whose bytes a socket may still be writing; one a same-machine
// ring copied did not leave) is pinned and never recycled; so is one whose holders were not all
// counted off (a migrated CF's inputs, a loop condition's): the collector returns those, as
// before. A ucode that keeps a view of a DF's bytes after its call returns (in a global, in a
// JS value) reads whatever the buffer holds next: a use after free, as with the original
// LuNA's DF after its delete.

/**
 * `LUNA_RECYCLE_MB`: the bytes of freed raw buffers each thread keeps for reuse, MB (0: none is
 * recycled; the collector returns them, as before). 64: the PIC at the seed's size, C++ kernels,
 * 1 × 2, ran 2 full collections against 10–11 and 3.13–3.26 s of process CPU against 3.35, its
 * peak RSS 0–80 MB higher (load 7–16, docs/pic.md); turned on again after the in-flight book
 * moved to the runtime, against 0, 2 alternated rounds at load 9–12: 2 / 2 full collections
 * against 11 / 11, process CPU 3.30 / 3.16 s against 3.37 / 3.50, peak RSS 417 / 425 MB against
 * 428 / 377. Checked again once workers' dropped buffers were counted on the system thread
 * (30 steps, 2 alternated rounds, load 12–16, peak RSS / program ms / forced full collections):
 * 0: 597 / 696 MB, 6.2 / 5.6 s, 20 / 20; 16: 727 / 721, 6.0 / 5.9 s, 18 / 17; 32: 723 / 690, 5.3 /
 * 6.5 s, 11 / 11; 64: 707 / 739, 5.8 / 6.1 s, 5 / 5 — peaks and times within the spread, the
 * fewest collections at 64 (docs/pic.md "Peak RSS with recycling on"). 96 since one step's 8 centre
 * particle arrays of the PIC (8 MiB class, 67.1 MB) did not fit 64 MiB of a worker's home or pool:
 * when one worker made them all, some were dropped and made fresh again next step (24–26 of that
 * class made in a run, or 30–39). 96 against 64 and 128 (6 alternated rounds, load 7–9, C++
 * kernels, 1 × 2): the heap's high water 442–454 MB against 445–504 and 443–464, that class made
 * 24–25 times against 24–39 and 24–26, minor faults 113.6–116.7 k against 115.1–127.1 k and
 * 113.8–119.0 k (docs/pic.md, "The high water: what the heap's fresh bytes are"). The recycling tests run programs whose
 * every reader checks its bytes, on threads, processes and in-process nodes, with each buffer
 * poisoned as it enters a pool (LUNA_RECYCLE_POISON): none reads a reused buffer.
 */
const POOL_BYTES = (tuned('LUNA_RECYCLE_MB') ?? 96) * 1024 * 1024;
setRecycleCap(POOL_BYTES);
/**
 * `LUNA_RECYCLE_LARGER`: an output whose class its thread's pool holds none of takes an idle
 * buffer of a larger class (none of that class asked for since it came), up to this many times
 * its own class. Nothing is returned to the C heap during a PIC run (its one forced full
 * collection comes at the end), so the heap's high water is the bytes made fresh; the initial
 * cloud's four 16 MiB parts, dead after step 0 and of a class asked for never again, waited in
 * the pools to be dropped while step 1 made its centre subdomains' 8 MiB particle arrays fresh.
 * 2 against 1 (the PIC at the seed's size, C++ kernels, 1 × 2, pools of 96 MB, 5 alternated
 * pairs, load 8.7–9.8): bytes made fresh 367–395 MB against 399–420, lower in 5 of 5; the heap's
 * high water 414–449 MB against 442–464 (4 of 5); minor faults 108.5–112.4 k against 115.0–119.2 k
 * in 4 of 5 (docs/pic.md, "The high water: what the heap's fresh bytes are").
 */
setRecycleLarger(tuned('LUNA_RECYCLE_LARGER') ?? 2);
// a check of the above: a buffer let go too early is read as poison (ucode/recycle.ts)
setRecyclePoison(tuned('LUNA_RECYCLE_POISON') === 1);
// a buffer taken from a pool is not new memory: the accounting of raw outputs made (call.ts)
// counts it, so it is taken back here
onRecycledTake((bytes) => { pending -= bytes; });
// one the pool has no room for is garbage like any freed raw value
onRecycledDrop((bytes) => { sharedBytesChurned(bytes); });


interface Held {
  id: number;
  n: number;
  buffer: SharedArrayBuffer | null;
  /** sendSeq when its count last fell to 0 (-1: held again since) */
  seq: number;
  /** whether it is in the limbo's list */
  waiting: boolean;
  /** the batches whose booked outputs held it: it waits while a batch forwarding from one is in flight */
  src: Flight[] | null;
  /**
   * the batches they forwarded from, in flight then: it waits until they are booked (an output of
   * theirs may share the buffer; posted, it joins src)
   */
  via: Flight[] | null;
  /** a CF held it past its batch (rawAwaited): it waits for every batch sent before its let */
  awaited: boolean;
  /** performance.now() when it entered the limbo (--timing: rawLimboMs) */
  letAt: number;
  /** it holds a value received from another node (--timing: rawReceivedRecycled) */
  received: boolean;
  /** it was sent to another node (--timing: rawSentRecycled) */
  sent: boolean;
}
const held = new Map<number, Held>();
/** buffers whose count fell to 0, waiting for the batches in flight that may read them */
const limbo: Held[] = [];

/** What the system thread did with raw buffers (--timing). */
export const recycling = {
  tracked: 0, recycled: 0, recycledBytes: 0, reused: 0, pinned: 0, homed: 0, homeDropped: 0, fresh: 0,
  /** freed buffers handed to a worker ahead of a ready-board entry (exec/pool.ts post), not with a batch of its own */
  homedAhead: 0,
  /**
   * raw values received from other nodes into recyclable buffers, how many of those buffers were
   * reused ones, and how many went back to a pool once nothing read them
   */
  received: 0, receivedReused: 0, receivedRecycled: 0,
  /** raw values sent to other nodes from recyclable buffers, and how many of those buffers went back to a pool (the others were pinned) */
  sent: 0, sentRecycled: 0,
  /** the time buffers of 1 MiB or more waited in the limbo, summed, and the longest wait, ms */
  limboMs: 0, limboMaxMs: 0,
};

/**
 * Per worker thread (its threadId), the freed buffers it made, on their way home: they go to it
 * with its next batch (buffersFor), into its own pool, not into this thread's. A worker's kernels
 * make the same sizes step after step; the system thread makes few raw outputs itself, and a
 * pool of buffers the workers made, kept here, served none of its own and stayed full (the PIC at
 * 30 steps: 63 MB from step ~8 on, every buffer a worker's, 1 696 new arrivals dropped), while the
 * worker it handed them to by its ucodes' last sizes missed most of them.
 */
interface Home { list: SharedArrayBuffer[]; bytes: number }
const homes = new Map<number, Home>();

/** Worker thread `thread` is up: the freed buffers it made go back to it. */
export function recycleHome(thread: number): void {
  if (!homes.has(thread)) homes.set(thread, { list: [], bytes: 0 });
}

/** Worker thread `thread` ended: what waited for it is the collector's. */
export function recycleHomeGone(thread: number): void {
  const h = homes.get(thread);
  if (h === undefined) return;
  homes.delete(thread);
  if (h.bytes > 0) sharedBytesChurned(h.bytes);
}

/** Batches sent so far (their sequence). */
let sendSeq = 0;
interface Flight {
  seq: number;
  imps: number[];
  /** its result was booked (or its runtime books no more) */
  done: boolean;
  /** forwards from this one's outputs by batches in flight: one per reading batch and output */
  readers: number;
  /** the same by output (outKey): a buffer waits only for the readers of the outputs it backs */
  outReaders: Map<number, number> | null;
  /** the batches in flight it forwards from (counted in their readers until it is done), one per output read */
  reads: Flight[] | null;
  /** the output (outKey) of reads[i] it reads */
  readKeys: number[] | null;
  /** reads and readKeys by batch once there are SCAN_READS of them (null before, and once done) */
  readIndex: Map<Flight, Set<number>> | null;
  /**
   * once booked, the output keys of its raw outputs by buffer id: a buffer it posted waits only for
   * the readers of these (one that is none of its outputs, for all its readers)
   */
  outBufs: Map<number, number[]> | null;
  /**
   * forwards of it naming a batch not sent yet (a fed batch of the same pass, sent after it: linked
   * when it is sent) or none: while some is unresolved it may read whatever was live when it was sent
   */
  wild: number;
}

/** Output `out` of task `task` of a batch, as one number (a ucode has far fewer than 65 536 outputs). */
const outKey = (task: number, out: number): number => task * 65536 + out;

/** Per book, the batches not sent yet that batches in flight forward from: their readers and the outputs read, to link when sent. */
const ahead = new WeakMap<FlightBook, Map<number, { f: Flight; key: number }[]>>();

/**
 * A batch's reads are looked up by scanning them up to this many, by an index beyond: a fed batch
 * of ~400 CFs links ~800 reads, and scanning them all made its sending n²/2 comparisons (~1 µs
 * of the system thread's CPU a CF at Task Bench's METG sizes, docs/benchmarks.md).
 */
const SCAN_READS = 16;

/** Batch `r` reads output `key` of `s` (in flight): counted in s's readers until r is done. */
function linkRead(r: Flight, s: Flight, key: number): void {
  const reads = r.reads ??= [], keys = r.readKeys ??= [];
  if (reads.length < SCAN_READS) {
    for (let i = 0; i < reads.length; i++) if (reads[i] === s && keys[i] === key) return;
  } else {
    let index = r.readIndex;
    if (index === null) {
      index = r.readIndex = new Map();
      for (let i = 0; i < reads.length; i++) indexRead(index, reads[i]!, keys[i]!);
    }
    if (!indexRead(index, s, key)) return;
  }
  reads.push(s);
  keys.push(key);
  s.readers++;
  const m = s.outReaders ??= new Map();
  m.set(key, (m.get(key) ?? 0) + 1);
}

/** Adds output `key` of `s` to a batch's read index; false if it was there. */
function indexRead(index: Map<Flight, Set<number>>, s: Flight, key: number): boolean {
  let keys = index.get(s);
  if (keys === undefined) index.set(s, keys = new Set());
  if (keys.has(key)) return false;
  keys.add(key);
  return true;
}

/**
 * One node runtime's batches in flight, by batch id: each one's sequence and its tasks' ucodes.
 * The runtime keeps the book itself, whatever runs its batches (worker threads, the system lane,
 * the synchronous lanes of in-process nodes): a batch's reader of a value it was forwarded or fed
 * is counted by nothing else. In-process nodes run several runtimes on this thread, each with a
 * book of its own, since their batch ids are numbered alike.
 */
export type FlightBook = Map<number, Flight>;
/** the books with a batch in flight */
const books = new Set<FlightBook>();
/**
 * Per ucode (its import's number), the buffer lengths of the raw outputs it made last: what its
 * next call will likely take from a pool (the PIC's kernels make the same few sizes every step).
 */
const madeBy = new Map<number, number[]>();

/**
 * Ids by view: the store's entry and the CFs that read a value share one view of it on this
 * thread, and reading the trailer makes a typed array (the PIC's system thread scavenged 29 → 39
 * times a run when every count read it).
 */
const ids = new WeakMap<Uint8Array, number>();

function idOf(v: Uint8Array): number {
  if (v.byteLength < RECYCLE_MIN) return -1;
  let id = ids.get(v);
  if (id === undefined) ids.set(v, id = recycledId(v));
  return id;
}

/**
 * Raw value `v` is posted to this node's store: counted from now on, for the store's entry and
 * for the post itself until its waiting readers have it (rawLet once they do). Only values
 * posted here are counted: a value that reached the node otherwise (from another node) has no
 * trailer, and one pushed (`>>`) is pinned.
 */
export function rawPosted(v: Uint8Array): void {
  countOutput(v, 2);
}

/**
 * Raw value `v` is sent to another node (its owner, or a node that asked for it): held by the send
 * until rawLet after it. A transport that copied its bytes leaves the buffer to be recycled as a
 * local value's once nothing here reads it; one that keeps them (a socket's write pending) had the
 * buffer pinned meanwhile (cluster/data.ts), and it is never recycled. Counted as a local post is,
 * since the value may be an output of the batch being booked, which readers forwarded from it
 * read uncounted.
 */
export function rawSent(v: Uint8Array): void {
  const h = countOutput(v, 1);
  if (h !== undefined && !h.sent) { h.sent = true; recycling.sent++; }
}

function countOutput(v: Uint8Array, n: number): Held | undefined {
  const id = idOf(v);
  if (id < 0) return undefined;
  const h = tracked(id, v, false);
  h.n += n;
  h.seq = -1; // out of limbo, if it was there
  // an output of the batch being booked: readers forwarded from it (or from what it forwarded
  // from, still in flight) may read the buffer uncounted
  const b = booking;
  if (b !== null) {
    if (h.src === null) h.src = [b];
    else if (!h.src.includes(b)) h.src.push(b);
    const r = b.reads;
    if (r !== null) for (let i = 0; i < r.length; i++) {
      const f = r[i]!;
      if (f.done) continue;
      if (h.via === null) h.via = [f];
      else if (!h.via.includes(f)) h.via.push(f);
    }
  }
  return h;
}

/**
 * Raw value `v` arrived from another node (receivedBytes made its buffer): counted from now on,
 * for `n` holders (a post: the store's entry and the post itself until its waiting readers have it;
 * a response: the arrival until the CFs waiting for it, and the copy kept for later readers, have
 * it), each let go as a local value's are. A value without a trailer is left to the collector.
 */
export function rawArrived(v: Uint8Array, n: number): void {
  const id = idOf(v);
  if (id < 0) return;
  const h = tracked(id, v, true);
  h.n += n;
  h.seq = -1;
}

/** The holders' entry of buffer `id` (value `v`'s), made on its first count (`received`: from another node). */
function tracked(id: number, v: Uint8Array, received: boolean): Held {
  let h = held.get(id);
  if (h !== undefined) return h;
  held.set(id, h = { id, n: 0, buffer: null, seq: -1, waiting: false, src: null, via: null, awaited: false, letAt: 0, received, sent: false });
  recycling.tracked++;
  const reused = recycledGeneration(v) > 0;
  if (reused) recycling.reused++;
  if (received) { recycling.received++; if (reused) recycling.receivedReused++; }
  return h;
}

/** A CF (or a socket's write) received raw value `v`, to let it go when finished; whether it is counted (false: never recycled here). */
export function rawHeld(v: Uint8Array): boolean {
  const id = idOf(v);
  const h = id < 0 ? undefined : held.get(id);
  if (h === undefined) return false;
  h.n++;
  h.seq = -1;
  return true;
}

/**
 * A CF that completes after its batch was booked (its ucode asked its node without waiting,
 * exec/desk.ts settle) holds raw output `v` until it completes (rawLet then): the output may
 * share the buffer of an input forwarded to it, which no holder counted but the batch, now
 * closed. Counted even before anything posted the buffer: the input may come from another lane's
 * batch not booked yet.
 */
export function rawAwaited(v: Uint8Array): void {
  const id = idOf(v);
  if (id < 0) return;
  let h = held.get(id);
  if (h === undefined) held.set(id, h = { id, n: 0, buffer: null, seq: -1, waiting: false, src: null, via: null, awaited: false, letAt: 0, received: false, sent: false });
  h.n++;
  h.seq = -1;
  h.awaited = true;
}

/** One holder of raw value `v` let it go; at none the buffer waits to be recycled. */
export function rawLet(v: Uint8Array): void {
  const id = idOf(v);
  const h = id < 0 ? undefined : held.get(id);
  if (h === undefined || --h.n > 0) return;
  if (isPinned(v)) { held.delete(id); recycling.pinned++; sharedBytesChurned(v.buffer.byteLength); return; }
  h.buffer = v.buffer as SharedArrayBuffer;
  h.seq = sendSeq;
  h.letAt = performance.now();
  if (!h.waiting) { h.waiting = true; limbo.push(h); }
}

/** The store freed raw value `v`: its holder goes, or, untracked, it is left to the collector (and counted for the forced collections). */
export function rawFreed(v: Uint8Array): void {
  const id = idOf(v);
  if (id < 0 || !held.has(id)) { sharedBytesChurned(v.byteLength); return; }
  rawLet(v);
}

/**
 * Batch `id` of `tasks` was sent (by the runtime owning `book`); `prev`: the batch sent to the same
 * lane before it, from which a forward with a negative task reads. Its forwards name the batches
 * in flight whose outputs it reads without the system thread handing them over; `reads`: it
 * may read outputs of any batch in flight that no forward names (it is wild until it lands).
 */
export function batchSent(book: FlightBook, id: number, tasks: readonly { imp: number; fwd?: readonly Forward[] }[], prev?: number, reads = false): void {
  const imps = new Array<number>(tasks.length);
  // `reads`: its tasks read batches it does not name (a planned window, built by its worker):
  // wild until it lands
  let links: { s: Flight; key: number }[] | null = null, wild = reads ? 1 : 0, later: { from: number; key: number }[] | null = null;
  // the batches not sent yet that it reads from (few: a window's other lanes), each counted wild
  // once; found by scanning `later` instead, a planned window's batch of 512 steps reading the
  // other lane's made ~131 000 comparisons
  let laterFroms: number[] | null = null;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    imps[i] = t.imp;
    const fwd = t.fwd;
    if (fwd === undefined) continue;
    for (let j = 0; j < fwd.length; j++) {
      const f = fwd[j]!;
      // a member of the same batch: read before the batch is booked, and its outputs with it
      if (f.lane === undefined && f.task >= 0) continue;
      const from = f.lane !== undefined ? f.batch : prev;
      if (from === id) continue;
      if (from === undefined) { wild++; continue; }
      const key = outKey(f.lane !== undefined ? f.task : previousTask(f.task), f.out);
      const s = book.get(from);
      if (s === undefined) {
        if (later === null) { later = []; laterFroms = []; }
        if (!laterFroms!.includes(from)) { laterFroms!.push(from); wild++; }
        later.push({ from, key });
        continue;
      }
      (links ??= []).push({ s, key });
    }
  }
  if (book.size === 0) books.add(book);
  const f: Flight = { seq: sendSeq++, imps, done: false, readers: 0, outReaders: null, reads: null, readKeys: null, readIndex: null, outBufs: null, wild };
  book.set(id, f);
  if (links !== null) for (const l of links) linkRead(f, l.s, l.key);
  if (later !== null) {
    let m = ahead.get(book);
    if (m === undefined) ahead.set(book, m = new Map());
    for (const l of later) { const w = m.get(l.from); if (w === undefined) m.set(l.from, [{ f, key: l.key }]); else w.push({ f, key: l.key }); }
  }
  const waiting = ahead.get(book)?.get(id);
  if (waiting !== undefined) {
    ahead.get(book)!.delete(id);
    // a reader's forwards from this batch are all linked now: its wild count falls once
    const seen: Flight[] = [];
    for (const { f: r, key } of waiting) {
      if (r.done) continue;
      linkRead(r, f, key);
      if (!seen.includes(r)) { seen.push(r); r.wild--; }
    }
  }
}

/** A batch in flight no longer: the batches it forwarded from are no longer read by it. */
function landed(f: Flight): void {
  f.done = true;
  const r = f.reads, keys = f.readKeys;
  if (r === null || keys === null) return;
  f.reads = null;
  f.readKeys = null;
  f.readIndex = null;
  for (let i = 0; i < r.length; i++) {
    const s = r[i]!, m = s.outReaders!;
    s.readers--;
    const n = m.get(keys[i]!)! - 1;
    if (n > 0) m.set(keys[i]!, n); else m.delete(keys[i]!);
  }
}

/** the batch whose result is being booked (its outputs posted, its CFs finished), if any */
let booking: Flight | null = null;

/**
 * Batch `id` of `book` is being booked: the raw values posted until batchDone are its outputs.
 * Nothing is settled meanwhile (a CF may let an input go before the output that shares its
 * buffer is posted). `null`: the booking was cut short (its runtime failed).
 */
export function batchBooking(book: FlightBook, id: number | null): void {
  booking = id === null ? null : book.get(id) ?? null;
}

/**
 * For a batch of `tasks` going to worker thread `thread`, the buffers to go with it into its pool:
 * the freed ones it made itself (homes), and from the system thread's pool those its tasks'
 * outputs will likely take (by what their ucodes made last). Handing over more let a worker's pool
 * fill with sizes another lane made (a chain alternating lanes peaked 215–443 MiB).
 */
export function buffersFor(tasks: readonly { imp: number }[], thread: number): SharedArrayBuffer[] | undefined {
  let out: SharedArrayBuffer[] | undefined;
  const home = homes.get(thread);
  if (home !== undefined && home.list.length > 0) {
    out = home.list;
    home.list = [];
    home.bytes = 0;
  }
  if (pooledNow() === 0) return out;
  for (let i = 0; i < tasks.length; i++) {
    const sizes = madeBy.get(tasks[i]!.imp);
    if (sizes === undefined) continue;
    for (let j = 0; j < sizes.length; j++) {
      const b = takePooled(sizes[j]!);
      if (b !== undefined) (out ??= []).push(b);
    }
  }
  // sizes no ucode asked for again (a subdomain's particles change by a few records a step)
  // would fill the pool and be dropped: past half of it, a quarter goes along
  if (pooledNow() > POOL_BYTES / 2) {
    const more = drainPool(POOL_BYTES / 4);
    if (more !== undefined) out = out === undefined ? more : out.concat(more);
  }
  return out;
}

/**
 * Batch `id` of `book` finished and its result (`outs`, per task) was booked — its outputs
 * posted, its CFs finished: only then, since an output may share an input's buffer (copy()) and
 * is counted from its post on. What its ucodes made is remembered, and buffers nothing can read
 * any more go to the pool.
 */
export function batchDone(book: FlightBook, id: number, outs: readonly (readonly ({ t: number; v: unknown } | null)[])[]): void {
  const f = book.get(id);
  booking = null;
  if (f !== undefined) {
    book.delete(id);
    if (book.size === 0) books.delete(book);
    landed(f);
    for (let i = 0; i < outs.length && i < f.imps.length; i++) {
      const o = outs[i]!;
      let sizes: number[] | undefined;
      for (let j = 0; j < o.length; j++) {
        const v = o[j];
        if (v === null || v === undefined || v.t !== T_RAW) continue;
        const u = v.v as Uint8Array;
        const bid = idOf(u);
        if (bid < 0) continue;
        (sizes ??= []).push(u.buffer.byteLength);
        // which of its outputs the buffer backs (two when one is a copy() of the other)
        const m = f.outBufs ??= new Map();
        const ks = m.get(bid);
        if (ks === undefined) m.set(bid, [outKey(i, j)]); else ks.push(outKey(i, j));
      }
      if (sizes !== undefined) madeBy.set(f.imps[i]!, sizes);
    }
  }
  recycleSettled();
}

/**
 * The runtime owning `book` books no more results (it failed, or a rehearsal was cut): its
 * batches no longer hold back the buffers let go after them.
 */
export function batchesDropped(book: FlightBook): void {
  for (const f of book.values()) { if (f === booking) booking = null; landed(f); }
  ahead.delete(book);
  book.clear();
  books.delete(book);
  recycleSettled();
}

/**
 * Whether buffer `h`, let go, may still be read by a batch in flight: one that posted it and is not
 * booked, one forwarding from such a batch, or one an output of which may share it (via). It
 * waits for no batch the rule before (every batch sent before its let) did not. `oldest` /
 * `oldestWild`: the sequence of the oldest batch in flight, and of the oldest whose forwards were
 * not all resolved.
 */
function mayBeRead(h: Held, oldest: number, oldestWild: number): boolean {
  if (h.awaited ? h.seq > oldest : h.seq > oldestWild) return true;
  const src = h.src, via = h.via;
  if (src !== null) for (let i = 0; i < src.length; i++) {
    const f = src[i]!;
    if (!f.done) return true;
    if (f.readers === 0) continue;
    // read only through the outputs it backs; posted as none of them, through any
    const ks = f.outBufs?.get(h.id);
    if (ks === undefined) return true;
    const m = f.outReaders!;
    for (let k = 0; k < ks.length; k++) if (m.has(ks[k]!)) return true;
  }
  if (via !== null) for (let i = 0; i < via.length; i++) if (!via[i]!.done) return true;
  return false;
}

/** recycleSettled is running: a collection it forces (a buffer dropped) must not settle the list it compacts */
let settling = false;

/** Move the buffers of the limbo that no batch in flight can read into this thread's pool. */
export function recycleSettled(): void {
  if (limbo.length === 0 || booking !== null || settling) return;
  settling = true;
  try { settle(); } finally { settling = false; }
}

function settle(): void {
  let oldest = sendSeq, oldestWild = sendSeq;
  for (const m of books) for (const f of m.values()) {
    if (f.seq < oldest) oldest = f.seq;
    if (f.wild > 0 && f.seq < oldestWild) oldestWild = f.seq;
  }
  let kept = 0;
  for (let k = 0; k < limbo.length; k++) {
    const h = limbo[k]!;
    // held again since (it comes back when let go again), or settled
    if (h.seq < 0 || h.n > 0 || h.buffer === null) { h.waiting = false; continue; }
    if (mayBeRead(h, oldest, oldestWild)) { limbo[kept++] = h; continue; }
    const b = h.buffer;
    const home = isPinnedBuffer(b) ? undefined : homes.get(makerOf(b));
    if (b.byteLength >= 1048576) {
      const w = performance.now() - h.letAt;
      recycling.limboMs += w;
      if (w > recycling.limboMaxMs) recycling.limboMaxMs = w;
    }
    h.waiting = false;
    h.buffer = null;
    held.delete(h.id);
    // sent to another node after its last holder let it go (a request served from the store)
    if (isPinnedBuffer(b)) { recycling.pinned++; sharedBytesChurned(b.byteLength); continue; }
    if (home !== undefined) {
      // at most a pool's worth waits for a worker that gets no batch
      if (home.bytes + b.byteLength > POOL_BYTES) { recycling.homeDropped++; sharedBytesChurned(b.byteLength); continue; }
      home.list.push(b);
      home.bytes += b.byteLength;
      recycling.homed++;
      recycling.recycled++; recycling.recycledBytes += b.byteLength;
      if (h.sent) recycling.sentRecycled++;
      continue;
    }
    if (poolRaw(b)) { recycling.recycled++; recycling.recycledBytes += b.byteLength; if (h.received) recycling.receivedRecycled++; if (h.sent) recycling.sentRecycled++; }
  }
  limbo.length = kept;
}


// ------------------------------------------------------------------ the C heap, sampled

type HeapStats = { arena: number; inUse: number; free: number; keep: number; mmapped: number; mmaps: number };
type HeapAddon = { heapStats?(): HeapStats | undefined; heapInfo?(): string | undefined };

/** One arena of malloc_info(): its number, bytes held from the kernel, bytes free in it. */
export type ArenaSample = { nr: number; held: number; free: number };

/** The arenas in malloc_info()'s XML (glibc): free is its fast bins' and other bins' bytes. */
export function parseArenas(xml: string): ArenaSample[] {
  const out: ArenaSample[] = [];
  for (const m of xml.matchAll(/<heap nr="(\d+)">([\s\S]*?)<\/heap>/g)) {
    const body = m[2]!;
    const num = (re: RegExp): number => Number(re.exec(body)?.[1] ?? 0);
    out.push({
      nr: Number(m[1]),
      held: num(/<system type="current" size="(\d+)"/),
      free: num(/<total type="fast" count="\d+" size="(\d+)"/) + num(/<total type="rest" count="\d+" size="(\d+)"/),
    });
  }
  return out;
}

/** The process's C heap (glibc), or undefined without the addon or elsewhere. */
export function heapStats(): HeapStats | undefined {
  return loadAddon<HeapAddon>('luna_memory')?.heapStats?.();
}

/**
 * `LUNA_HEAP_LOG=<file>`: the system thread samples, every `LUNA_HEAP_LOG_MS` (default 100 ms)
 * and at exit, the process's resident bytes and C heap (mallinfo2, all arenas: what the arenas
 * hold, in use, free; mmapped blocks) and each arena's held/free bytes (malloc_info), and writes
 * the lines to the file at exit: whether a rising RSS is memory in use, free memory an arena
 * keeps, or mappings (docs/runtime.md, "The C heap"). A diagnostic: nothing else reads it.
 * Without the addon the header says so and the lines carry RSS only. The counts are the whole
 * process's (bin/luna runs every thread in one arena), sampled from the system thread's timers,
 * so a long turn of its own delays a sample.
 */
export function startHeapLog(): void {
  const file = process.env.LUNA_HEAP_LOG;
  if (!file) return;
  const ms = Number(process.env.LUNA_HEAP_LOG_MS);
  const every = ms > 0 ? ms : 100;
  const addon = loadAddon<HeapAddon>('luna_memory');
  const t0 = performance.now();
  const mb = (n: number): string => (n / 1048576).toFixed(1);
  const lines: string[] = [addon?.heapStats ? 't_ms rss_mb arena_mb inuse_mb free_mb mmap_mb arenas(nr:held/free)' : 't_ms rss_mb (no heap counts: the memory addon is not built)'];
  const sample = (): void => {
    const rss = process.memoryUsage.rss();
    const s = addon?.heapStats?.();
    const arenas = s && addon?.heapInfo ? parseArenas(addon.heapInfo() ?? '').map((a) => `${a.nr}:${mb(a.held)}/${mb(a.free)}`).join(' ') : '';
    lines.push(`${Math.round(performance.now() - t0)} ${mb(rss)}${s ? ` ${mb(s.arena)} ${mb(s.inUse)} ${mb(s.free)} ${mb(s.mmapped)} ${arenas}` : ''}`);
  };
  const timer = setInterval(sample, every);
  timer.unref();
  process.once('exit', () => {
    sample();
    try { writeFileSync(file, lines.join('\n') + '\n'); } catch (e) { process.stderr.write(`luna: LUNA_HEAP_LOG: cannot write ${file}: ${(e as Error).message}\n`); }
  });
}
