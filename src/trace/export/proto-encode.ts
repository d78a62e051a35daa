// A protobuf wire-format encoder into a growable buffer, for the packets written once per event.
// Hand-written because an export of 10^6 fragments writes ~4·10^6 packets: protobufjs builds
// each one from a plain object (an object per message, a Writer op list per encode), which at
// that size cost more than the whole trace model; here a packet is a few varints written in
// place. The schema and the decoder stay protobufjs' (perfetto-proto.ts, the tests), so a field
// number or wire type written wrong here fails the read-back.

import { cfNameRoom, dfNameRoom, putCfName, putDfName, putInt } from './text.js';

const WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2;

/** A non-negative integer below 2^53 as a varint at b[p] (room for 8 bytes made); returns the position after it. */
export function putVarint(b: Buffer, p: number, v: number): number {
  while (v >= 0x80) {
    b[p++] = (v & 0x7f) | 0x80; // & takes v mod 2^32 first: the low 7 bits are kept
    v = Math.floor(v / 128);
  }
  b[p++] = v;
  return p;
}

export class ProtoBuf {
  buf: Buffer;
  len = 0;

  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size);
  }

  reset(): this {
    this.len = 0;
    return this;
  }

  /** Room for n more bytes. */
  room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.len + n));
    this.buf.copy(b, 0, 0, this.len);
    this.buf = b;
  }

  /** A non-negative integer below 2^53 as a varint. */
  varint(v: number): void {
    this.room(10);
    this.len = putVarint(this.buf, this.len, v);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  /** uint32 / uint64 / int32 / int64 field of a non-negative integer. */
  uint(field: number, v: number): void {
    this.tag(field, WIRE_VARINT);
    this.varint(v);
  }

  /** int64 field: negative values as their 64-bit two's complement (10 bytes). */
  int(field: number, v: number): void {
    if (v >= 0) { this.uint(field, v); return; }
    this.tag(field, WIRE_VARINT);
    let x = BigInt.asUintN(64, BigInt(v));
    this.room(10);
    while (x >= 0x80n) { this.buf[this.len++] = Number(x & 0x7fn) | 0x80; x >>= 7n; }
    this.buf[this.len++] = Number(x);
  }

  double(field: number, v: number): void {
    this.tag(field, WIRE_I64);
    this.room(8);
    this.buf.writeDoubleLE(v, this.len);
    this.len += 8;
  }

  /** A string field: its bytes written in place (a length over 127 bytes moves them once). */
  string(field: number, s: string): void {
    const at = this.open(field);
    this.text(s);
    this.close(at);
  }

  /**
   * The UTF-8 bytes of s, without tag or length: a string field written in pieces between
   * `open` and `close` (a list of names), so that the pieces are never joined into a new string.
   */
  text(s: string): void {
    const n = s.length;
    this.room(n);
    const b = this.buf;
    let p = this.len, i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      b[p++] = c;
    }
    this.len = p;
    if (i === n) return;
    const rest = i === 0 ? s : s.slice(i);
    this.room(Buffer.byteLength(rest));
    this.len += this.buf.write(rest, this.len);
  }

  /** A CF's instance name (`link[5]`) as text, never made into a string. */
  cfName(label: string, idx: readonly number[] | null): void {
    this.room(cfNameRoom(label, idx));
    this.len = putCfName(this.buf, this.len, label, idx);
  }

  /** A DF's display name (`x[3][4]`) from its key (`x#12.3.4`) as text, never made into a string. */
  dfName(key: string): void {
    this.room(dfNameRoom(key));
    this.len = putDfName(this.buf, this.len, key);
  }

  /** An integer in decimal as text. */
  decimal(v: number): void {
    this.room(24);
    this.len = putInt(this.buf, this.len, v);
  }

  /**
   * Open an embedded message written in place: its tag and a one-byte length slot; returns the
   * slot's position for `close`. Saves building the message aside and copying it in.
   */
  open(field: number): number {
    this.tag(field, WIRE_LEN);
    this.room(1);
    return this.len++;
  }

  /** Close the message opened at `slot`: its length in the slot (moving the body when it needs more bytes). */
  close(slot: number): void {
    const n = this.len - slot - 1;
    if (n < 0x80) { this.buf[slot] = n; return; }
    let extra = 0;
    for (let v = n; v >= 0x80; v = Math.floor(v / 128)) extra++;
    this.room(extra);
    this.buf.copyWithin(slot + 1 + extra, slot + 1, this.len);
    const end = this.len + extra;
    this.len = slot;
    this.varint(n);
    this.len = end;
  }

  /** An embedded message: field, length, then the bytes of `m`. */
  message(field: number, m: ProtoBuf): void {
    this.tag(field, WIRE_LEN);
    this.varint(m.len);
    this.bytes(m.buf, m.len);
  }

  /** The first n bytes of b, as they are. */
  bytes(b: Uint8Array, n: number): void {
    this.room(n);
    // packets and their parts are tens of bytes: a loop beats Buffer.copy's native call
    if (n < 256) { const o = this.buf; let p = this.len; for (let i = 0; i < n; i++) o[p++] = b[i]!; }
    else this.buf.set(b.subarray(0, n), this.len);
    this.len += n;
  }
}
