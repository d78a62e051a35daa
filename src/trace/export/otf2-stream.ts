// The two pieces under the OTF2 export: the per-location columns of what the trace model
// resolved (intervals and instants, sorted into emission order) and the buffered little-endian
// record files that native/otf2_writer.c reads.
import { writeAll } from './write-all.js';
import { cfNameRoom, putCfName, putText } from './text.js';

export const UNDEFINED_U32 = 0xffffffff;

export const K_INTERVAL = 0, K_SEND = 1, K_RECV = 2, K_METRIC = 3;

/** Growable columns of the items of one location (intervals and instants), 49 bytes an item. */
export class Items {
  n = 0;
  kind = new Uint8Array(256);
  t0 = new Float64Array(256);
  t1 = new Float64Array(256);
  /** region, peer node or metric */
  ref = new Uint32Array(256);
  /** message tag */
  tag = new Uint32Array(256);
  /** CF number, bytes or metric value */
  num = new Float64Array(256);
  /** string attribute: gid, DF name or wait resource (UNDEFINED_U32: none) */
  s1 = new Uint32Array(256);
  /** instance name */
  s2 = new Uint32Array(256);
  cpu = new Float64Array(256);

  add(kind: number, t0: number, t1: number, ref: number, tag: number, num: number, s1: number, s2: number, cpu: number): void {
    if (this.n === this.kind.length) this.grow();
    const i = this.n++;
    this.kind[i] = kind; this.t0[i] = t0; this.t1[i] = t1; this.ref[i] = ref; this.tag[i] = tag;
    this.num[i] = num; this.s1[i] = s1; this.s2[i] = s2; this.cpu[i] = cpu;
  }

  private grow(): void {
    const c = this.kind.length * 2;
    const g = <A extends Uint8Array | Uint32Array | Float64Array>(a: A): A => { const b = new (a.constructor as new (n: number) => A)(c); b.set(a); return b; };
    this.kind = g(this.kind); this.t0 = g(this.t0); this.t1 = g(this.t1); this.ref = g(this.ref); this.tag = g(this.tag);
    this.num = g(this.num); this.s1 = g(this.s1); this.s2 = g(this.s2); this.cpu = g(this.cpu);
  }

  /**
   * Item indices in emission order: by start, an enclosing interval before what it encloses
   * (longer first), an instant after an interval starting at the same tick.
   */
  order(): Uint32Array {
    const idx = new Uint32Array(this.n);
    for (let i = 0; i < this.n; i++) idx[i] = i;
    const { t0, t1, kind } = this;
    const cmp = (a: number, b: number): number => (t0[a] - t0[b]) || ((kind[a] === K_INTERVAL ? 0 : 1) - (kind[b] === K_INTERVAL ? 0 : 1)) || (t1[b] - t1[a]) || (a - b);
    let sorted = true;
    for (let i = 1; i < this.n && sorted; i++) if (cmp(i - 1, i) > 0) sorted = false;
    return sorted ? idx : idx.sort(cmp);
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
  flush(): void {
    if (this.len > 0) writeAll(this.fd, this.buf, 0, this.len);
    this.len = 0;
  }
}
