// Binary codec for message bodies. Little-endian, no schema, no dependencies: the runtime
// writes fields in a fixed order and reads them back in the same order.
// Strings are varint byte length + UTF-8; bytes are varint length + raw bytes.

const utf8Enc = new TextEncoder();
const utf8Dec = new TextDecoder('utf-8', { fatal: true });

// Most strings on the wire are short ASCII (DF keys, CF ids, labels): they are copied byte by
// byte in JavaScript, with neither a view of the buffer nor a call into the UTF-8 codec, which
// cost more than the copy (a migrated CF carries several).
const SHORT = 32;
/** argument arrays of String.fromCharCode for each short length */
const CODES: number[][] = Array.from({ length: SHORT + 1 }, (_, n) => new Array<number>(n).fill(0));
// Numbers are read without a DataView per message: the bytes go through this scratch value.
const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class Encoder {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;

  constructor(initialCapacity = 256) {
    this.buf = new Uint8Array(Math.max(16, initialCapacity));
    this.view = new DataView(this.buf.buffer);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** Start a new message, keeping the allocated buffer. */
  reset(): this {
    this.pos = 0;
    return this;
  }

  /**
   * The encoded bytes as a view of the internal buffer: valid until the next reset() or write.
   * Transport.send copies the body synchronously, so `send(to, tag, enc.finish())` is safe.
   */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** The encoded bytes as an independent copy (for bodies kept beyond the next reset). */
  finishCopy(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  private ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  u32(v: number): this {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
    return this;
  }

  i32(v: number): this {
    this.ensure(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
    return this;
  }

  f64(v: number): this {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
    return this;
  }

  /** Unsigned LEB128 for non-negative safe integers (up to 2^53 - 1). */
  varint(v: number): this {
    if (!(v >= 0 && Number.isSafeInteger(v))) throw new RangeError(`varint: not a non-negative safe integer: ${v}`);
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  /** Zig-zag signed varint for any safe integer. */
  svarint(v: number): this {
    if (!Number.isSafeInteger(v)) throw new RangeError(`svarint: not a safe integer: ${v}`);
    return this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  string(s: string): this {
    // Worst case 3 bytes per UTF-16 unit; encode in place to avoid an intermediate array.
    const max = s.length * 3;
    this.ensure(max + 5);
    const n = s.length;
    if (n <= SHORT) {
      const buf = this.buf, start = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos = start + n;
        return this;
      }
    }
    if (s.length < 64) {
      // Short strings (names, labels): one length byte suffices when the encoding fits.
      const start = this.pos + 1;
      const { written } = utf8Enc.encodeInto(s, this.buf.subarray(start));
      if (written < 0x80) {
        this.buf[this.pos] = written;
        this.pos = start + written;
        return this;
      }
    }
    const bytes = utf8Enc.encode(s);
    return this.bytes(bytes);
  }

  bytes(b: Uint8Array): this {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }
}

export class DecodeError extends Error {
  override name = 'DecodeError';
}

export class Decoder {
  pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  /** Bytes not yet read. */
  get remaining(): number {
    return this.buf.length - this.pos;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) {
      throw new DecodeError(`message truncated: need ${n} byte(s) at offset ${this.pos} of ${this.buf.length}`);
    }
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  bool(): boolean {
    return this.u8() !== 0;
  }

  u32(): number {
    return this.i32() >>> 0;
  }

  i32(): number {
    this.need(4);
    const b = this.buf, p = this.pos;
    this.pos = p + 4;
    return b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24);
  }

  f64(): number {
    this.need(8);
    const b = this.buf, p = this.pos;
    if (LITTLE_ENDIAN) for (let i = 0; i < 8; i++) F64_BYTES[i] = b[p + i]!;
    else for (let i = 0; i < 8; i++) F64_BYTES[7 - i] = b[p + i]!;
    this.pos = p + 8;
    return F64[0]!;
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 0x80;
    }
    throw new DecodeError(`varint too long at offset ${this.pos}`);
  }

  svarint(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  string(): string {
    const n = this.varint();
    this.need(n);
    if (n <= SHORT) {
      const b = this.buf, p = this.pos, codes = CODES[n]!;
      let i = 0;
      for (; i < n; i++) {
        const c = b[p + i]!;
        if (c >= 0x80) break;
        codes[i] = c;
      }
      if (i === n) {
        this.pos = p + n;
        return String.fromCharCode.apply(null, codes);
      }
    }
    const s = utf8Dec.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }

  /** A view into the message (no copy); copy it if kept beyond the message handler. */
  bytes(): Uint8Array {
    const n = this.varint();
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}
