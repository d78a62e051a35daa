// Wire framing: [u32 frameLen][u8 flags][u32 tag][u32 bodyLen][body][payload], little-endian.
// frameLen counts the bytes after itself, so payloadLen = frameLen - 9 - bodyLen.
// Writer: small frames are copied into one growable buffer per peer and flushed once per
// tick; large payloads are queued as their own segment and reach the socket uncopied.
// Parser: whole frames inside one chunk are decoded in place; a frame spanning chunks is
// copied once into buffers of its final size (no re-concatenation, linear in frame size).

export const HEADER_BYTES = 13;
export const FLAG_PAYLOAD = 1;
export const FLAG_CONTROL = 2;
/** Payloads at least this big are written as their own segment instead of being copied. */
const LARGE_PAYLOAD = 16 * 1024;
const CHUNK = 64 * 1024;

/** One whole frame without payload, as its own bytes (for a thread that writes a socket itself, see DirectLink). */
export function encodeFrame(tag: number, body: Uint8Array): Uint8Array {
  const b = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  b.writeUInt32LE(9 + body.length, 0);
  b[4] = 0;
  b.writeUInt32LE(tag >>> 0, 5);
  b.writeUInt32LE(body.length, 9);
  b.set(body, HEADER_BYTES);
  return b;
}

export class FrameWriter {
  private cur: Buffer = Buffer.allocUnsafe(0);
  private start = 0; // first byte of cur not yet handed to parts
  private pos = 0;
  private parts: Uint8Array[] = [];
  /** the payloads queued uncopied since the last take that their senders want back, and to whom */
  private held: Uint8Array[] = [];
  private releases: ((payload: Uint8Array) => void)[] = [];
  frames = 0;

  get empty(): boolean {
    return this.parts.length === 0 && this.pos === this.start;
  }

  /**
   * Queue a frame; whether its payload was copied (none, or a small one: a large one is kept as
   * it is until written, and then `released`: see takeReleased).
   */
  append(flags: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined, released?: (payload: Uint8Array) => void): boolean {
    const payloadLen = payload ? payload.length : 0;
    const inline = payload !== undefined && payloadLen < LARGE_PAYLOAD;
    const frameLen = 9 + body.length + payloadLen;
    if (frameLen > 0xffffffff) throw new RangeError(`message too large: ${frameLen} bytes (limit 4 GiB)`);
    this.reserve(HEADER_BYTES + body.length + (inline ? payloadLen : 0));
    const b = this.cur;
    let p = this.pos;
    b.writeUInt32LE(frameLen, p);
    b[p + 4] = flags | (payload ? FLAG_PAYLOAD : 0);
    b.writeUInt32LE(tag >>> 0, p + 5);
    b.writeUInt32LE(body.length, p + 9);
    p += HEADER_BYTES;
    b.set(body, p);
    p += body.length;
    if (inline) {
      b.set(payload, p);
      p += payloadLen;
    }
    this.pos = p;
    if (payload && !inline) {
      this.seal();
      this.parts.push(payload);
      if (released !== undefined) { this.held.push(payload); this.releases.push(released); }
    }
    this.frames++;
    return payload === undefined || inline;
  }

  /** Segments to write now; the writer keeps using the untouched tail of its buffer. */
  take(): Uint8Array[] {
    this.seal();
    const parts = this.parts;
    this.parts = [];
    return parts;
  }

  /** What to call once the segments taken so far are written: it releases their uncopied payloads (null: none to release). */
  takeReleased(): (() => void) | null {
    if (this.held.length === 0) return null;
    const held = this.held, rel = this.releases;
    this.held = [];
    this.releases = [];
    return () => { for (let i = 0; i < held.length; i++) rel[i]!(held[i]!); };
  }

  private seal(): void {
    if (this.pos > this.start) this.parts.push(this.cur.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.cur.length) return;
    this.seal();
    this.cur = Buffer.allocUnsafe(Math.max(CHUNK, n));
    this.start = this.pos = 0;
  }
}

export type FrameHandler = (flags: number, tag: number, body: Uint8Array, payload: Uint8Array | undefined) => void;

export class FrameError extends Error {
  override name = 'FrameError';
}

export class FrameParser {
  /** Largest frameLen accepted; kept small until the peer has authenticated. */
  maxFrame: number;
  private hdr = Buffer.allocUnsafe(HEADER_BYTES);
  private hdrFill = 0;
  private flags = 0;
  private tag = 0;
  private body: Uint8Array | null = null;
  private bodyFill = 0;
  private payload: Uint8Array | null = null;
  private payloadFill = 0;
  private inFrame = false;
  /** Set to stop delivering frames (e.g. after the connection is rejected). */
  stopped = false;

  constructor(
    private readonly onFrame: FrameHandler,
    maxFrame: number,
    /** the buffer a frame's payload of `n` bytes goes into, by the frame's tag (a received DF value may take a recycled one) */
    private readonly allocPayload: (n: number, tag: number) => Uint8Array = (n) => Buffer.allocUnsafeSlow(n),
  ) {
    this.maxFrame = maxFrame;
  }

  push(chunk: Buffer): void {
    let off = 0;
    const len = chunk.length;
    while (off < len && !this.stopped) {
      if (!this.inFrame && this.hdrFill === 0 && len - off >= HEADER_BYTES) {
        // Fast path: header (and maybe the whole frame) inside this chunk.
        const frameLen = chunk.readUInt32LE(off);
        const flags = chunk[off + 4]!;
        const tag = chunk.readUInt32LE(off + 5);
        const bodyLen = chunk.readUInt32LE(off + 9);
        this.check(frameLen, flags, bodyLen);
        const payloadLen = frameLen - 9 - bodyLen;
        const end = off + 4 + frameLen;
        if (end <= len) {
          const bStart = off + HEADER_BYTES;
          const body = chunk.subarray(bStart, bStart + bodyLen);
          let payload: Uint8Array | undefined;
          if (flags & FLAG_PAYLOAD) {
            payload = this.allocPayload(payloadLen, tag);
            payload.set(chunk.subarray(bStart + bodyLen, end));
          }
          off = end;
          this.onFrame(flags, tag, body, payload);
          continue;
        }
        this.begin(flags, tag, bodyLen, payloadLen);
        off += HEADER_BYTES;
        continue;
      }
      if (!this.inFrame) {
        const n = Math.min(HEADER_BYTES - this.hdrFill, len - off);
        chunk.copy(this.hdr, this.hdrFill, off, off + n);
        this.hdrFill += n;
        off += n;
        if (this.hdrFill < HEADER_BYTES) return;
        this.hdrFill = 0;
        const frameLen = this.hdr.readUInt32LE(0);
        const bodyLen = this.hdr.readUInt32LE(9);
        this.check(frameLen, this.hdr[4]!, bodyLen);
        this.begin(this.hdr[4]!, this.hdr.readUInt32LE(5), bodyLen, frameLen - 9 - bodyLen);
        continue;
      }
      off = this.fill(chunk, off);
    }
  }

  private check(frameLen: number, flags: number, bodyLen: number): void {
    const bad = frameLen < 9 || bodyLen > frameLen - 9 || (!(flags & FLAG_PAYLOAD) && frameLen !== 9 + bodyLen);
    if (bad) throw new FrameError(`malformed frame header (len ${frameLen}, body ${bodyLen})`);
    if (frameLen > this.maxFrame) throw new FrameError(`frame of ${frameLen} bytes exceeds the limit of ${this.maxFrame}`);
  }

  private begin(flags: number, tag: number, bodyLen: number, payloadLen: number): void {
    this.inFrame = true;
    this.flags = flags;
    this.tag = tag;
    this.body = Buffer.allocUnsafe(bodyLen);
    this.bodyFill = 0;
    this.payload = flags & FLAG_PAYLOAD ? this.allocPayload(payloadLen, tag) : null;
    this.payloadFill = 0;
    if (bodyLen === 0 && payloadLen === 0) this.complete();
  }

  private fill(chunk: Buffer, off: number): number {
    const body = this.body!;
    if (this.bodyFill < body.length) {
      const n = Math.min(body.length - this.bodyFill, chunk.length - off);
      body.set(chunk.subarray(off, off + n), this.bodyFill);
      this.bodyFill += n;
      off += n;
    }
    const payload = this.payload;
    if (payload && this.bodyFill === body.length && this.payloadFill < payload.length) {
      const n = Math.min(payload.length - this.payloadFill, chunk.length - off);
      payload.set(chunk.subarray(off, off + n), this.payloadFill);
      this.payloadFill += n;
      off += n;
    }
    if (this.bodyFill === body.length && (!payload || this.payloadFill === payload.length)) this.complete();
    return off;
  }

  private complete(): void {
    const { flags, tag, body, payload } = this;
    this.inFrame = false;
    this.body = this.payload = null;
    this.onFrame(flags, tag, body!, payload ?? undefined);
  }
}
