// How much of the JavaScript heap a big program may still take, so that the front end and the
// compiler refuse it with LUNA-P020 instead of V8 aborting the process.
//
// What a program's syntax tree and compiled form fill is V8's old generation. Its limit is not
// `heap_size_limit`: that adds the young generation's maximum, which differs between V8
// versions (with --max-old-space-size=64: 112 MB on Node 20, 256 MB on Node 24, whose default
// semi-spaces are 4 times larger). The limit is read from the flags when they set it, and
// otherwise is heap_size_limit less the largest default young generation.
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread, resourceLimits } from 'node:worker_threads';

const MB = 2 ** 20;
/** the largest default young generation of the supported V8 versions: 3 semi-spaces of 64 MB (Node 24; 16 MB on Node 20) */
const DEFAULT_YOUNG_BYTES = 3 * 64 * MB;

/** The last value of a V8 size flag (MB) in the process's flags or NODE_OPTIONS. */
function flagMb(name: string): number | undefined {
  const re = new RegExp(`^--${name.replace(/-/g, '[-_]')}=(\\d+)$`);
  let v: number | undefined;
  for (const a of [...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...process.execArgv]) {
    const m = re.exec(a);
    if (m) v = Number(m[1]);
  }
  return v;
}

/** Bytes the old generation may hold in this isolate. */
export function oldGenerationLimit(): number {
  if (!isMainThread && resourceLimits.maxOldGenerationSizeMb) return resourceLimits.maxOldGenerationSizeMb * MB;
  const flag = flagMb('max-old-space-size');
  if (flag !== undefined) return flag * MB;
  const limit = getHeapStatistics().heap_size_limit;
  const semi = flagMb('max-semi-space-size');
  const young = semi !== undefined ? 3 * semi * MB : DEFAULT_YOUNG_BYTES;
  return limit - Math.min(young, limit / 2);
}

/** Bytes the old generation can still take (garbage not yet collected counts as used). */
export function heapLeft(): number {
  return oldGenerationLimit() - getHeapStatistics().used_heap_size;
}

let collector: (() => void) | undefined;

/**
 * heapLeft() after a full collection: called only when an estimate says a program will not fit,
 * so that garbage of the stages before does not refuse a program that fits.
 */
export function heapLeftAfterGc(): number {
  if (!collector) {
    // `gc` is exposed to a new context only; the flag is turned back off for later contexts
    setFlagsFromString('--expose-gc');
    collector = runInNewContext('gc') as () => void;
    setFlagsFromString('--no-expose-gc');
  }
  collector();
  return heapLeft();
}

/** Whether `bytes` more fit in the heap: the quick reading, confirmed after a collection. */
export function fits(bytes: number): { ok: boolean; left: number } {
  let left = heapLeft();
  if (bytes > left) left = heapLeftAfterGc();
  return { ok: bytes <= left, left };
}

/**
 * Checked every `every` steps of a stage that grows the heap step by step: whether less than a
 * reserve (what is needed to stop and report) is left, confirmed after a collection. It catches
 * what an estimate made before the stage missed (a shape of program costlier than measured).
 */
export class HeapGuard {
  private n = 0;
  private readonly reserve = Math.max(16 * MB, oldGenerationLimit() / 16);
  /** after the last collection: the heap used, and what was left */
  private usedAfterGc = 0;
  private leftAfterGc = -1;
  constructor(private readonly every = 2048) {}

  exhausted(): boolean {
    if (++this.n < this.every) return false;
    this.n = 0;
    const used = getHeapStatistics().used_heap_size;
    if (oldGenerationLimit() - used >= this.reserve) return false;
    // what is live grew at most by what was allocated since the last collection: no new one
    // (a full collection of a big heap takes a second) while that still leaves the reserve
    if (this.leftAfterGc - (used - this.usedAfterGc) >= this.reserve) return false;
    this.leftAfterGc = heapLeftAfterGc();
    this.usedAfterGc = getHeapStatistics().used_heap_size;
    return this.leftAfterGc < this.reserve;
  }
}

/** Thrown by a stage its HeapGuard stopped; the caller reports LUNA-P020. */
export class HeapExhausted extends Error {
  constructor(readonly stage: string) { super(`the JavaScript heap ran short while ${stage}`); }
}

export function megabytes(bytes: number): number {
  return Math.ceil(bytes / MB);
}
