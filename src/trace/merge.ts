// Merge of a trace directory into one time-ordered stream in bounded memory.
// Each file is decoded lazily. Records are in time order within a file except spans (sysBusy,
// wait), written when they end but stamped with their start; a raw pre-pass (scanLateness) measures how far
// back any record goes, and each file holds back only the events that a later record could
// still precede (none for a file in order). A k-way merge then orders the files. Ties break
// by (node, thread) then file order, so the output is deterministic. Records stay in columns
// (columns.ts) all the way: readTraceColumns hands on batches, readTrace objects made from them.

import { join } from 'node:path';
import type { TraceEvent } from './schema.js';
import { RecordBatch } from './columns.js';
import type { TraceManifest } from './manifest.js';
import { listTraceFiles } from './dir.js';
import { readManifest } from './manifest-reader.js';
import { TraceDamage } from './damage.js';
import { TraceFormatError } from './format.js';
import { openRecordFile, scanLateness, type ReadOptions, type RecordFile } from './reader.js';

export interface ReadTraceOptions extends ReadOptions {
  /** Add manifest.clock.offsets[node] to every time (default true). */
  applyOffsets?: boolean;
  /** Most events held back per file to sort late records (default 1 << 20). */
  maxBuffered?: number;
}

export interface Trace {
  manifest: TraceManifest;
  /** One-shot iterator over all events of all files in time order. */
  events: Iterable<TraceEvent>;
  /** Damage reports; complete once `events` has been iterated to the end. */
  warnings: string[];
  /** The same, counted by kind (shared with the model reading the events). */
  damage: TraceDamage;
}

/** Rows [from, to) of `rows`, in time order after every run given before; valid only during the call. */
export type RunSink = (rows: RecordBatch, from: number, to: number) => void;

/** The same merged records as columns: each batch is reused for the next, so read a batch before taking another. */
export interface TraceColumns {
  manifest: TraceManifest;
  batches: Iterable<RecordBatch>;
  /** The merge without copying: every record once, as runs of a file's rows (one-shot, like `batches`). */
  runs(sink: RunSink): void;
  warnings: string[];
  damage: TraceDamage;
}

/** Open every file of a trace directory (headers are checked now) and merge them lazily. */
export function readTrace(dir: string, opts: ReadTraceOptions = {}): Trace {
  const c = readTraceColumns(dir, opts);
  return { manifest: c.manifest, events: { [Symbol.iterator]: () => objects(c.batches) }, warnings: c.warnings, damage: c.damage };
}

function* objects(batches: Iterable<RecordBatch>): Generator<TraceEvent, void, undefined> {
  for (const b of batches) for (let i = 0; i < b.n; i++) yield b.event(i);
}

/** readTrace's records as batches of columns (no object per record). */
export function readTraceColumns(dir: string, opts: ReadTraceOptions = {}): TraceColumns {
  const warnings = opts.warnings ?? [];
  const damage = opts.damage ?? new TraceDamage();
  const manifest = readManifest(dir, warnings);
  let files = manifest.files;
  if (files.length === 0) {
    files = listTraceFiles(dir);
    warnings.push(`manifest lists no files (the run did not finish?); using the ${files.length} files found`);
  }
  const sources: Source[] = [];
  const step = decodeStep(files.length);
  for (const f of files) {
    let rf;
    try {
      rf = openRecordFile(join(dir, f.path), { warnings, chunkBytes: opts.chunkBytes, damage });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).message?.includes('ENOENT')) {
        warnings.push(`${f.path}: listed in the manifest but missing`);
        damage.add('missing-file', 'listed in the manifest but not in the directory', f.path);
        continue;
      }
      // one unreadable file (a header cut or overwritten) costs its records, not the analysis
      // (a file of another format version is not damage: the whole trace must be recorded again)
      if (e instanceof TraceFormatError && !/\bversion \d+\b/.test(e.message)) {
        const detail = e.message.slice(e.message.indexOf(': ') + 2);
        warnings.push(`${f.path}: ${detail}; its records are left out`);
        damage.add('corrupted', `${detail}; its records are left out`, f.path, 0);
        continue;
      }
      throw e;
    }
    const off = opts.applyOffsets === false ? 0 : manifest.clock?.offsets?.[rf.header.node] ?? 0;
    const late = scanLateness(rf.path, opts.chunkBytes);
    sources.push(new Source(rf, sources.length, off, late, opts.maxBuffered ?? 1 << 20, f.path, warnings, step));
  }
  return { manifest, batches: { [Symbol.iterator]: () => batches(sources) }, runs: (sink) => { const m = new Merger(sources); while (m.step(sink, ALL)); }, warnings, damage };
}

/**
 * Records decoded per refill of a source: DECODED_ROWS shared among the sources, within
 * [MIN_STEP, MAX_STEP]. The merge reads the sources' rows interleaved, so what is decoded and not
 * yet read (~73 bytes a row over the columns) should stay in the core's cache: with 8 interleaved
 * files of a 10^6-event SPMD trace, refills of 1024 rows instead of 4096 cut `luna analyze patterns`
 * by 15–25 % of its CPU time (measured under load, alternated; 512 did as well as 1024).
 */
const DECODED_ROWS = 8192, MIN_STEP = 256, MAX_STEP = 4096;
const decodeStep = (sources: number): number => Math.max(MIN_STEP, Math.min(MAX_STEP, 2 ** Math.floor(Math.log2(DECODED_ROWS / Math.max(1, sources)))));
/** Records per merged batch. */
const BATCH = 8192;
/**
 * The budget of a merge step without a limit: a small integer, not Infinity (a double passed to a
 * call that is not inlined is boxed: a heap number per run of records, ~10^7 at 10^6 fragments).
 */
const ALL = 0x3fffffff;

/**
 * A file's records in time order, in columns: rows [head, n) of `rows` are decoded and sorted
 * by t (a late record moved back, stably); the head is released once no later record can precede it.
 */
class Source {
  readonly rows: RecordBatch;
  head = 0;
  /** the head row's time (Infinity past the end), kept by ready(): the merge heap compares it */
  headT = Infinity;
  private done = false;
  private frontier = -Infinity; // latest time read from the file so far
  private lastOut = -Infinity;
  private warnedOrder = false;

  constructor(
    private readonly file: RecordFile,
    readonly index: number,
    private readonly offset: number,
    private readonly late: number,
    private readonly window: number,
    private readonly name: string,
    private readonly warnings: string[],
    private readonly step: number,
  ) {
    this.rows = new RecordBatch(2 * step);
  }

  /** Whether a record can be released (decoding more as needed); false at the end. */
  ready(): boolean {
    // Any later record has t >= frontier - late, so the head is safe once frontier >= head.t + late.
    const r = this.rows;
    while (!this.done && (this.head === r.n || r.t[this.head]! + this.late > this.frontier) && r.n - this.head < this.window) this.decode(Math.min(this.step, this.window - (r.n - this.head)));
    const more = this.head < r.n;
    this.headT = more ? r.t[this.head]! : Infinity;
    return more;
  }

  /**
   * The end of the run that starts at the head (ready() said it can go): the rows after it that are
   * safe to release and precede (ht[i2], i2), the head of the next source in merge order (i2 < 0:
   * none; up to row max). (The time is read from the heap's array: a double argument is boxed.)
   */
  runEnd(ht: Float64Array, i2: number, max: number): number {
    const t2 = i2 < 0 ? Infinity : ht[i2]!;
    const r = this.rows, t = r.t, n = r.n, late = this.late, frontier = this.frontier, done = this.done, index = this.index;
    const first = t[this.head]!;
    if (first < this.lastOut && !this.warnedOrder) {
      this.warnedOrder = true;
      this.warnings.push(`${this.name}: more than ${this.window} events within ${this.late} ns of a late record; merged order is approximate there`);
    }
    let j = this.head + 1;
    for (const end = Math.min(n, max); j < end; j++) {
      const x = t[j]!;
      if ((!done && x + late > frontier) || !(x < t2 || (x === t2 && index < i2))) break;
    }
    this.lastOut = t[j - 1]!;
    return j;
  }

  /** Decode up to `max` more records into the rows, each moved into time order. */
  private decode(max: number): void {
    const r = this.rows;
    if (this.head > 0 && (this.head === r.n || r.n + max > r.capacity)) { r.shift(this.head); this.head = 0; }
    if (r.n + max > r.capacity) r.grow(Math.max(2 * r.capacity, r.n + max));
    const from = r.n;
    if (this.file.read(r, max) === 0) { this.done = true; return; }
    const t = r.t, off = this.offset;
    for (let i = from; i < r.n; i++) {
      if (off !== 0) r.shiftTime(i, off);
      // the file's order is the order of writing: a span is written when it ends
      const end = r.writtenAt(i);
      if (end > this.frontier) this.frontier = end;
      const ti = t[i]!;
      if (i === this.head || t[i - 1]! <= ti) continue;
      // Out of order: binary search for the first row with a larger t (stable).
      let lo = this.head, hi = i;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (t[mid]! <= ti) lo = mid + 1;
        else hi = mid;
      }
      r.moveBack(i, lo);
    }
  }
}

/**
 * k-way merge of the sources by (t, source index). A binary heap orders the sources; the source
 * on top then gives every record that precedes the runner-up's head in one run, handed on as a
 * range of its rows: interleaved files cost a heap step per run, and no record is copied. The heap
 * holds source indices and compares head times kept in a typed array: when files interleave
 * record by record (an SPMD run's ranks), a heap step is paid for nearly every record.
 */
class Merger {
  private readonly heap: Int32Array;
  /** head time per source index (Infinity past its end) */
  private readonly ht: Float64Array;
  private size = 0;

  constructor(private readonly sources: Source[]) {
    this.heap = new Int32Array(sources.length);
    this.ht = new Float64Array(sources.length).fill(Infinity);
    for (const s of sources) if (s.ready()) { this.ht[s.index] = s.headT; this.heap[this.size++] = s.index; }
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Hand on the next `budget` records (fewer at the end); false once every record went. */
  step(sink: RunSink, budget: number): boolean {
    const heap = this.heap, ht = this.ht, sources = this.sources;
    let left = budget;
    while (this.size > 0 && left > 0) {
      const top = heap[0]!, s = sources[top]!, size = this.size;
      // the runner-up: the smaller of the top's children
      let t2 = Infinity, i2 = -1;
      if (size > 1) {
        const a = heap[1]!, b = size > 2 ? heap[2]! : a;
        const c = b !== a && (ht[b]! < ht[a]! || (ht[b] === ht[a] && b < a)) ? b : a;
        t2 = ht[c]!; i2 = c;
      }
      for (;;) {
        const from = s.head, to = s.runEnd(ht, i2, Math.min(from + left, ALL));
        sink(s.rows, from, to);
        left -= to - from;
        s.head = to;
        if (!s.ready() || left === 0) break;
        const t = s.headT;
        if (!(t < t2 || (t === t2 && top < i2))) break;
      }
      ht[top] = s.headT;
      if (s.head === s.rows.n) { // ready() said no: the file is done
        const last = heap[--this.size]!;
        if (this.size === 0) break;
        heap[0] = last;
      }
      this.down(0);
    }
    return this.size > 0;
  }

  private down(i: number): void {
    const h = this.heap, ht = this.ht, n = this.size;
    const x = h[i]!, tx = ht[x]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let m = l, mi = h[l]!, tm = ht[mi]!;
      if (l + 1 < n) {
        const ri = h[l + 1]!, tr = ht[ri]!;
        if (tr < tm || (tr === tm && ri < mi)) { m = l + 1; mi = ri; tm = tr; }
      }
      if (!(tm < tx || (tm === tx && mi < x))) break;
      h[i] = mi;
      i = m;
    }
    h[i] = x;
  }
}

/** The merged records copied into batches of BATCH rows (one batch object, refilled). */
function* batches(sources: Source[]): Generator<RecordBatch, void, undefined> {
  const m = new Merger(sources);
  const out = new RecordBatch(BATCH);
  const copy: RunSink = (rows, from, to) => { for (let i = from; i < to; i++) out.copyRow(rows, i); };
  for (;;) {
    out.n = 0;
    const more = m.step(copy, BATCH);
    if (out.n > 0) yield out;
    if (!more) return;
  }
}
