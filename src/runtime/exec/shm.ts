// Memory of raw DFs (shared buffers). V8 does not count SharedArrayBuffer memory as GC pressure:
// a long run that makes and frees large raw DFs would grow without bound (2000 × 1 MiB chain →
// 2 GiB). Each thread counts the shared bytes it dropped (system thread) or created (worker) and
// forces a collection after every LIMIT bytes, so the freed buffers' memory is returned, and
// keepFreedMemory() lets the next large buffers reuse it rather than fault in fresh pages.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadAddon } from '../../core/addon.js';
import { tuned } from '../tuning.js';

/**
 * `LUNA_COLLECT_SHARED_MB` overrides it. Larger trades peak memory for fewer full collections
 * (quiet, the PIC at the seed's size, C++ kernels, 1 × 2, 3 alternated rounds: program 2.16–2.36 s,
 * peak RSS 508–564 MB at 64; 1.97–2.04 s, 651–687 MB at 128; 1.54–1.98 s, 738–832 MB at 256; a
 * chain of 2 000 freed 1 MiB DFs peaks at 251 / 357–378 / 513–564 MiB; measured while the
 * collections still ran where the limit was crossed). 64 keeps the memory.
 */
const LIMIT = (tuned('LUNA_COLLECT_SHARED_MB') ?? 64) * 1024 * 1024;

// The collector is made on first need: `gc` is reachable only from a new V8 context, which costs
// each thread 5–25 ms and ~1 MB, and most runs never churn LIMIT bytes.
let collector: (() => void) | undefined;
function collect(): void {
  collector ??= (() => {
    try {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as unknown;
      return typeof gc === 'function' ? (gc as () => void) : () => {};
    } catch { return () => {}; }
  })();
  collector();
}

let pending = 0;

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
  if (pending >= AT_ONCE * LIMIT) collectDue();
}

/** Collect now if LIMIT bytes were churned since the last collection. */
export function collectDue(): void {
  if (pending < LIMIT) return;
  pending = 0;
  collect();
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
