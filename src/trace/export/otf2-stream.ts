// The two pieces under the OTF2 export: the per-location columns of what the trace model
// resolved (intervals and instants, sorted into emission order) and the buffered little-endian
// record files that native/otf2_writer.c reads.
import { readSync } from 'node:fs';
import { writeAll } from './write-all.js';
import { cfNameRoom, dfNameRoom, putCfName, putDfName, putText } from './text.js';

export const UNDEFINED_U32 = 0xffffffff;

export const K_INTERVAL = 0, K_SEND = 1, K_RECV = 2, K_METRIC = 3;

/** Items a location holds before its block is sorted and spilled (3 MiB of columns). */
export const SPILL_BLOCK = 1 << 16;
/** Items of a run read back at a time (48 KiB per run while merging). */
const READ_BLOCK = 1024;

/** The columns of items, in the order Items and Run keep them. */
interface Cols {
  kind: Uint8Array; t0: Float64Array; t1: Float64Array; ref: Uint32Array; tag: Uint32Array;
  num: Float64Array; s1: Uint32Array; s2: Uint32Array; cpu: Float64Array;
}
const COLS = ['kind', 't0', 't1', 'ref', 'tag', 'num', 's1', 's2', 'cpu'] as const;
const newCols = (n: number): Cols => ({
  kind: new Uint8Array(n), t0: new Float64Array(n), t1: new Float64Array(n), ref: new Uint32Array(n), tag: new Uint32Array(n),
  num: new Float64Array(n), s1: new Uint32Array(n), s2: new Uint32Array(n), cpu: new Float64Array(n),
});

/**
 * Emission order of item a of `x` against item b of `y`: by start, an interval before an instant
 * starting at the same tick, an enclosing interval before what it encloses (longer first). Equal
 * items keep the order they were added in (the caller's tie-break).
 */
const before = (x: Cols, a: number, y: Cols, b: number): number =>
  (x.t0[a]! - y.t0[b]!) || ((x.kind[a] === K_INTERVAL ? 0 : 1) - (y.kind[b] === K_INTERVAL ? 0 : 1)) || (y.t1[b]! - x.t1[a]!);

/**
 * Where the items of every location go once a location holds SPILL_BLOCK of them: sorted runs in
 * one temporary file, column after column, merged back per location when the archive is written.
 * The items come in the order the model resolves them (a CF at its finish, a transfer at its
 * arrival), not in the order of their starts, so a location's events can be written only when
 * none still to come can start before them; runs keep the memory of a trace of any length to a
 * block per location, where holding every item until the end took ~400 MiB at 10^6 fragments.
 */
export class Spill {
  /** bytes written (the file is written in sequence, read back at offsets) */
  private end = 0;
  private scratch: Cols | null = null;
  /** runs written */
  runs = 0;
  constructor(readonly fd: number, readonly block = SPILL_BLOCK) {}

  /** Write the first n items of `c` in the order `idx`, column after column; returns the run's file offset. */
  write(c: Cols, idx: Uint32Array, n: number): number {
    const at = this.end, to = (this.scratch ??= newCols(this.block));
    for (const k of COLS) {
      const a = c[k], b = to[k];
      for (let q = 0; q < n; q++) b[q] = a[idx[q]!]!;
      const bytes = new Uint8Array(b.buffer, b.byteOffset, n * b.BYTES_PER_ELEMENT);
      writeAll(this.fd, bytes);
      this.end += bytes.length;
    }
    this.runs++;
    return at;
  }
}

/** Growable columns of the items of one location (intervals and instants), 49 bytes an item, spilled in sorted runs past a block. */
export class Items implements Cols {
  /** items held (not spilled) */
  n = 0;
  /** items added, spilled ones included */
  total = 0;
  /** spilled runs: file offset, item count */
  readonly runs: number[] = [];
  kind: Uint8Array;
  t0: Float64Array;
  t1: Float64Array;
  /** region, peer node or metric */
  ref: Uint32Array;
  /** message tag */
  tag: Uint32Array;
  /** CF number, bytes or metric value */
  num: Float64Array;
  /** string attribute: gid, DF name or wait resource (UNDEFINED_U32: none) */
  s1: Uint32Array;
  /** instance name */
  s2: Uint32Array;
  cpu: Float64Array;

  /** (without a spill file every item is held) */
  constructor(private readonly spill: Spill | null = null) {
    const c = newCols(spill ? Math.min(256, spill.block) : 256);
    this.kind = c.kind; this.t0 = c.t0; this.t1 = c.t1; this.ref = c.ref; this.tag = c.tag;
    this.num = c.num; this.s1 = c.s1; this.s2 = c.s2; this.cpu = c.cpu;
  }

  add(kind: number, t0: number, t1: number, ref: number, tag: number, num: number, s1: number, s2: number, cpu: number): void {
    if (this.n === this.kind.length) {
      if (this.spill && this.n >= this.spill.block) this.spillBlock();
      else this.grow();
    }
    const i = this.n++;
    this.total++;
    this.kind[i] = kind; this.t0[i] = t0; this.t1[i] = t1; this.ref[i] = ref; this.tag[i] = tag;
    this.num[i] = num; this.s1[i] = s1; this.s2[i] = s2; this.cpu[i] = cpu;
  }

  private grow(): void {
    const c = this.spill ? Math.min(this.kind.length * 2, this.spill.block) : this.kind.length * 2;
    const g = <A extends Uint8Array | Uint32Array | Float64Array>(a: A): A => { const b = new (a.constructor as new (n: number) => A)(c); b.set(a); return b; };
    this.kind = g(this.kind); this.t0 = g(this.t0); this.t1 = g(this.t1); this.ref = g(this.ref); this.tag = g(this.tag);
    this.num = g(this.num); this.s1 = g(this.s1); this.s2 = g(this.s2); this.cpu = g(this.cpu);
  }

  /** The held items, sorted, as a run in the spill file. */
  private spillBlock(): void {
    const n = this.n;
    this.runs.push(this.spill!.write(this, this.order(), n), n);
    this.n = 0;
  }

  /**
   * Held item indices in emission order: by start, an enclosing interval before what it encloses
   * (longer first), an instant after an interval starting at the same tick.
   */
  order(): Uint32Array {
    const idx = new Uint32Array(this.n);
    for (let i = 0; i < this.n; i++) idx[i] = i;
    const cmp = (a: number, b: number): number => before(this, a, this, b) || (a - b);
    let sorted = true;
    for (let i = 1; i < this.n && sorted; i++) if (cmp(i - 1, i) > 0) sorted = false;
    return sorted ? idx : idx.sort(cmp);
  }

  /** Every item of the location in emission order (spilled runs merged with the held ones). */
  merged(): ItemMerge {
    const runs: Run[] = [];
    for (let r = 0; r < this.runs.length; r += 2) runs.push(Run.spilled(this.spill!.fd, this.runs[r]!, this.runs[r + 1]!));
    if (this.n > 0) runs.push(Run.held(this, this.order()));
    return new ItemMerge(runs);
  }
}

/** A sorted run of items: spilled (read back a block at a time) or held in memory. */
export class Run {
  /** the current item: cols' row p */
  p = 0;
  /** rows buffered in cols */
  n = 0;
  private next = 0;

  private constructor(
    readonly cols: Cols,
    private readonly fd: number,
    private readonly off: number,
    private readonly count: number,
  ) {}

  static spilled(fd: number, off: number, count: number): Run {
    const r = new Run(newCols(Math.min(READ_BLOCK, count)), fd, off, count);
    r.refill();
    return r;
  }

  static held(c: Cols, idx: Uint32Array): Run {
    const n = idx.length, cols = newCols(n);
    for (const k of COLS) { const from = c[k], to = cols[k]; for (let q = 0; q < n; q++) to[q] = from[idx[q]!]!; }
    const r = new Run(cols, -1, 0, n);
    r.n = n;
    r.next = n;
    return r;
  }

  get done(): boolean { return this.p >= this.n; }

  /** The next item; false at the run's end. */
  advance(): boolean {
    if (++this.p < this.n) return true;
    return this.next < this.count && this.refill();
  }

  private refill(): boolean {
    const m = Math.min(this.cols.kind.length, this.count - this.next);
    let at = this.off;
    for (const k of COLS) {
      const a = this.cols[k], w = a.BYTES_PER_ELEMENT;
      readAll(this.fd, new Uint8Array(a.buffer, a.byteOffset, m * w), at + this.next * w);
      at += this.count * w;
    }
    this.next += m;
    this.n = m;
    this.p = 0;
    return m > 0;
  }
}

/**
 * A k-way merge of sorted runs into emission order (a binary heap of runs by their current
 * items; equal items in run order, which is the order they were added in).
 */
export class ItemMerge {
  private readonly heap: Run[];
  private readonly rank = new Map<Run, number>();

  constructor(runs: Run[]) {
    runs.forEach((r, i) => this.rank.set(r, i));
    this.heap = runs.filter((r) => !r.done);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private less(a: Run, b: Run): boolean {
    const c = before(a.cols, a.p, b.cols, b.p);
    return c < 0 || (c === 0 && this.rank.get(a)! < this.rank.get(b)!);
  }

  private down(i: number): void {
    const h = this.heap, n = h.length;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < n && this.less(h[l]!, h[m]!)) m = l;
      if (r < n && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      const t = h[i]!; h[i] = h[m]!; h[m] = t;
      i = m;
    }
  }

  /** The run whose current item comes next (null: all written); `pop` moves past it. */
  peek(): Run | null {
    return this.heap.length > 0 ? this.heap[0]! : null;
  }

  pop(): void {
    const h = this.heap;
    if (!h[0]!.advance()) { const last = h.pop()!; if (h.length === 0) return; if (last !== h[0]) h[0] = last; }
    this.down(0);
  }
}

/** Read exactly b.length bytes at `pos` (a short read is a spill file cut under us). */
function readAll(fd: number, b: Uint8Array, pos: number): void {
  for (let got = 0; got < b.length;) {
    const n = readSync(fd, b, got, b.length - got, pos + got);
    if (n === 0) throw new Error('OTF2 export: its temporary item file ended early');
    got += n;
  }
}

/**
 * Buffered little-endian record writer onto a file descriptor. Bytes go in through a DataView and
 * plain stores: Buffer's write methods validate every call, which at 10^7 records cost more than
 * the model pass that produced them.
 */
export class RecordFile {
  private buf = Buffer.allocUnsafe(1 << 20);
  private v = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  private len = 0;
  constructor(readonly fd: number) {}
  /**
   * Room for n more bytes: the unchecked writers (w8, w32, w64) that follow may then store up to
   * n bytes without a check each (the event loop writes 10^7 fixed-size records).
   */
  reserve(n: number): this { this.room(n); return this; }
  w8(v: number): this { this.buf[this.len++] = v; return this; }
  w32(v: number): this { this.v.setUint32(this.len, v >>> 0, true); this.len += 4; return this; }
  /** a non-negative integer below 2^53 */
  w64(v: number): this {
    this.v.setUint32(this.len, v % 0x100000000, true);
    this.v.setUint32(this.len + 4, Math.floor(v / 0x100000000), true);
    this.len += 8;
    return this;
  }
  private room(n: number): void {
    if (this.len + n > this.buf.length) this.flush();
    if (n > this.buf.length) {
      this.buf = Buffer.allocUnsafe(n);
      this.v = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    }
  }
  u8(v: number): this { this.room(1); this.buf[this.len++] = v; return this; }
  u32(v: number): this { this.room(4); this.v.setUint32(this.len, v >>> 0, true); this.len += 4; return this; }
  /** a non-negative integer below 2^53 */
  u64(v: number): this {
    this.room(8);
    this.v.setUint32(this.len, v % 0x100000000, true);
    this.v.setUint32(this.len + 4, Math.floor(v / 0x100000000), true);
    this.len += 8;
    return this;
  }
  /** a signed integer of magnitude below 2^53, two's complement */
  i64(v: number): this {
    return v >= 0 ? this.u64(v) : this.u32((v % 0x100000000 + 0x100000000) % 0x100000000).u32((Math.floor(v / 0x100000000) + 0x100000000) % 0x100000000);
  }
  /** OTF2's undefined 64-bit value */
  u64max(): this { return this.u32(UNDEFINED_U32).u32(UNDEFINED_U32); }
  bytes(b: Buffer): this { this.room(b.length); b.copy(this.buf, this.len); this.len += b.length; return this; }
  /**
   * A string as its UTF-8 byte count (u32) and bytes, encoded in place (ASCII unit by unit:
   * Buffer.write's checks cost more than the copy on a gid, one per CF).
   */
  utf8(s: string): this {
    this.room(4 + 3 * s.length);
    const at = this.len;
    this.len = putText(this.buf, at + 4, s);
    this.v.setUint32(at, this.len - at - 4, true);
    return this;
  }
  /** A CF's instance name (`link[5]`) as utf8() writes a string, never made into one. */
  utf8Cf(label: string, idx: readonly number[] | null): this {
    this.room(4 + cfNameRoom(label, idx));
    const at = this.len;
    this.len = putCfName(this.buf, at + 4, label, idx);
    this.v.setUint32(at, this.len - at - 4, true);
    return this;
  }
  /** A DF's display name (`x[3][4]`) from its key (`x#12.3.4`) as utf8() writes a string, never made into one. */
  utf8Df(key: string): this {
    this.room(4 + dfNameRoom(key));
    const at = this.len;
    this.len = putDfName(this.buf, at + 4, key);
    this.v.setUint32(at, this.len - at - 4, true);
    return this;
  }
  flush(): void {
    if (this.len > 0) writeAll(this.fd, this.buf, 0, this.len);
    this.len = 0;
  }
}
