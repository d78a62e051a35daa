// Merge of a trace directory into one time-ordered stream in bounded memory.
// Each file is decoded lazily. Records are in time order within a file except spans (sysBusy,
// wait), written when they end but stamped with their start; a raw pre-pass (scanLateness) measures how far
// back any record goes, and each file holds back only the events that a later record could
// still precede (none for a file in order). A k-way heap merge then orders the files. Ties break
// by (node, thread) then file order, so the output is deterministic.

import { join } from 'node:path';
import { TIME_FIELDS, WRITTEN_AT, type TraceEvent } from './schema.js';
import type { TraceManifest } from './manifest.js';
import { listTraceFiles } from './dir.js';
import { readManifest } from './manifest-reader.js';
import { TraceDamage } from './damage.js';
import { TraceFormatError } from './format.js';
import { readThreadFile, scanLateness, type ReadOptions } from './reader.js';

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

/** Open every file of a trace directory (headers are checked now) and merge them lazily. */
export function readTrace(dir: string, opts: ReadTraceOptions = {}): Trace {
  const warnings = opts.warnings ?? [];
  const damage = opts.damage ?? new TraceDamage();
  const manifest = readManifest(dir, warnings);
  let files = manifest.files;
  if (files.length === 0) {
    files = listTraceFiles(dir);
    warnings.push(`manifest lists no files (the run did not finish?); using the ${files.length} files found`);
  }
  const sources: Source[] = [];
  for (const f of files) {
    let tf;
    try {
      tf = readThreadFile(join(dir, f.path), { warnings, chunkBytes: opts.chunkBytes, damage });
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
    const off = opts.applyOffsets === false ? 0 : manifest.clock?.offsets?.[tf.header.node] ?? 0;
    const late = scanLateness(tf.path, opts.chunkBytes);
    sources.push(new Source(tf.events, sources.length, off, late, opts.maxBuffered ?? 1 << 20, f.path, warnings));
  }
  return { manifest, events: { [Symbol.iterator]: () => mergeSources(sources) }, warnings, damage };
}

/** A file's events in time order: an event is released once no later record can precede it. */
class Source {
  private buf: TraceEvent[] = [];
  private head = 0;
  private done = false;
  private frontier = -Infinity; // latest time read from the file so far
  private lastOut = -Infinity;
  private warnedOrder = false;
  current: TraceEvent | undefined;

  constructor(
    private readonly it: Iterator<TraceEvent>,
    readonly index: number,
    private readonly offset: number,
    private readonly late: number,
    private readonly window: number,
    private readonly name: string,
    private readonly warnings: string[],
  ) {}

  /** Advance `current` to the next event in time order (undefined at the end). */
  advance(): void {
    // Any later record has t >= frontier - late, so the head is safe once frontier >= head.t + late.
    while (
      !this.done &&
      (this.head === this.buf.length || this.buf[this.head]!.t + this.late > this.frontier) &&
      this.buf.length - this.head < this.window
    ) {
      const r = this.it.next();
      if (r.done) {
        this.done = true;
        break;
      }
      this.insert(r.value);
    }
    if (this.head === this.buf.length) {
      this.current = undefined;
      return;
    }
    const e = this.buf[this.head++]!;
    if (this.head > 4096 && this.head * 2 > this.buf.length) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
    if (e.t < this.lastOut && !this.warnedOrder) {
      this.warnedOrder = true;
      this.warnings.push(`${this.name}: more than ${this.window} events within ${this.late} ns of a late record; merged order is approximate there`);
    }
    this.lastOut = e.t;
    this.current = e;
  }

  private insert(e: TraceEvent): void {
    const r = e as unknown as Record<string, number>;
    if (this.offset !== 0) for (const f of TIME_FIELDS[e.kind]) r[f]! += this.offset;
    // the file's order is the order of writing: a span is written when it ends
    const end = r[WRITTEN_AT[e.kind]]!;
    if (end > this.frontier) this.frontier = end;
    const b = this.buf;
    const n = b.length;
    if (n === this.head || b[n - 1]!.t <= e.t) {
      b.push(e);
      return;
    }
    // Out of order: binary search for the first element with a larger t (stable).
    let lo = this.head;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (b[mid]!.t <= e.t) lo = mid + 1;
      else hi = mid;
    }
    b.splice(lo, 0, e);
  }
}

const before = (a: Source, b: Source): boolean => {
  const ta = a.current!.t;
  const tb = b.current!.t;
  return ta < tb || (ta === tb && a.index < b.index);
};

function* mergeSources(sources: Source[]): Generator<TraceEvent, void, undefined> {
  // Binary min-heap of sources keyed by their current event.
  const heap: Source[] = [];
  for (const s of sources) {
    s.advance();
    if (s.current) heap.push(s);
  }
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(heap, i);
  while (heap.length > 0) {
    const s = heap[0]!;
    yield s.current!;
    s.advance();
    if (!s.current) {
      const last = heap.pop()!;
      if (heap.length === 0) break;
      heap[0] = last;
    }
    down(heap, 0);
  }
}

function down(h: Source[], i: number): void {
  const n = h.length;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) return;
    const r = l + 1;
    const m = r < n && before(h[r]!, h[l]!) ? r : l;
    if (!before(h[m]!, h[i]!)) return;
    const tmp = h[i]!;
    h[i] = h[m]!;
    h[m] = tmp;
    i = m;
  }
}
