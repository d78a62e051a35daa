// Per-thread trace writer: fixed records into a preallocated buffer, spilled to the thread's own
// file with fs.writeSync when full and on flush/close (seed 000 §4.1: RAM buffer, disk spill).
// No allocation per event: numbers go through one DataView; ASCII strings are copied char by
// char (TextEncoder only for the rare non-ASCII string). A crash loses at most the unflushed
// buffer; what reached the file is a valid prefix.

import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceSink } from './sink.js';
import { cpuClockExact } from './clock.js';
import { encodeHeader, FIXED_SIZE, K, MAX_STRING_BYTES, traceFileName } from './format.js';

export interface WriterOptions {
  /** RAM buffer size in bytes (default 1 MiB, minimum 8 KiB). */
  bufferBytes?: number;
  /** Recorded in the header; default: whether this thread has the exact CPU clock. */
  cpuExact?: boolean;
}

const encoder = new TextEncoder();
// Largest record: the fixed part of cfReceive plus two maximal strings.
const MAX_RECORD = FIXED_SIZE[K.cfReceive]! + 2 * MAX_STRING_BYTES;

export class ThreadTraceWriter implements TraceSink {
  readonly path: string;
  private fd: number;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private pos = 0;
  private lastT = 0;
  private nextDf = 0;
  private readonly dfIds = new Map<string, number>();
  private closed = false;
  /** Bytes handed to the file so far (header included). */
  written = 0;
  /** Records written so far. */
  records = 0;

  constructor(path: string, readonly node: number, readonly thread: number, opts: WriterOptions = {}) {
    this.path = path;
    const size = Math.max(opts.bufferBytes ?? 1 << 20, 8192, MAX_RECORD);
    this.bytes = new Uint8Array(new ArrayBuffer(size));
    this.view = new DataView(this.bytes.buffer);
    this.fd = openSync(path, 'w');
    // Header goes out at once: even a run that dies before its first spill leaves a valid file.
    const h = encodeHeader(node, thread, opts.cpuExact ?? cpuClockExact);
    writeSync(this.fd, h);
    this.written = h.length;
  }

  /** Open `<dir>/node<N>.thread<T>.lt`. */
  static open(dir: string, node: number, thread: number, opts?: WriterOptions): ThreadTraceWriter {
    return new ThreadTraceWriter(join(dir, traceFileName(node, thread)), node, thread, opts);
  }

  // Reserve `n` bytes, spilling first if they do not fit; returns the record offset.
  private rec(kind: number, n: number): number {
    if (this.pos + n > this.bytes.length) this.flush();
    const p = this.pos;
    this.bytes[p] = kind;
    this.pos = p + n;
    this.records++;
    return p;
  }

  private timed(kind: number, t: number): number {
    const p = this.rec(kind, FIXED_SIZE[kind]!);
    this.view.setFloat64(p + 1, t, true);
    this.lastT = t;
    return p;
  }

  // Write a string at this.pos (room reserved by the caller); returns its byte length.
  private str(s: string): number {
    const b = this.bytes;
    let p = this.pos;
    const n = Math.min(s.length, MAX_STRING_BYTES);
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) break;
      b[p++] = c;
    }
    if (i === s.length) {
      this.pos = p;
      return n;
    }
    if (i === n) {
      // ASCII but too long: cut.
      this.pos = p;
      return n;
    }
    // Non-ASCII: encode the whole string, cut at a UTF-8 character boundary.
    const r = encoder.encodeInto(s, b.subarray(this.pos, this.pos + MAX_STRING_BYTES));
    this.pos += r.written;
    return r.written;
  }

  // Record with a fixed part followed by one or two strings; the fixed part ends with u16 lengths.
  private withStrings(kind: number, a: string, b: string | undefined): number {
    if (this.pos + FIXED_SIZE[kind]! + 2 * MAX_STRING_BYTES > this.bytes.length) this.flush();
    const p = this.rec(kind, FIXED_SIZE[kind]!);
    const lenAt = p + FIXED_SIZE[kind]! - (b === undefined ? 2 : 4);
    this.view.setUint16(lenAt, this.str(a), true);
    if (b !== undefined) this.view.setUint16(lenAt + 2, this.str(b), true);
    return p;
  }

  programStart(t: number): void {
    this.timed(K.programStart, t);
  }
  programFinish(t: number): void {
    this.timed(K.programFinish, t);
  }

  cfCreated(t: number, cf: number, parentCf: number, code: number, gid: string, label: string): void {
    const p = this.withStrings(K.cfCreated, gid, label);
    const v = this.view;
    v.setFloat64(p + 1, t, true);
    v.setUint32(p + 9, cf, true);
    v.setInt32(p + 13, parentCf, true);
    v.setUint32(p + 17, code, true);
    this.lastT = t;
  }

  cfMigrate(t: number, cf: number, toNode: number): void {
    const p = this.timed(K.cfMigrate, t);
    this.view.setUint32(p + 9, cf, true);
    this.view.setUint32(p + 13, toNode, true);
  }

  cfReceive(t: number, cf: number, fromNode: number, remoteCf: number, gid: string, code: number, label: string): void {
    const p = this.withStrings(K.cfReceive, gid, label);
    const v = this.view;
    v.setFloat64(p + 1, t, true);
    v.setUint32(p + 9, cf, true);
    v.setUint32(p + 13, fromNode, true);
    v.setUint32(p + 17, remoteCf, true);
    v.setUint32(p + 21, code, true);
    this.lastT = t;
  }

  cfReady(t: number, cf: number): void {
    const p = this.timed(K.cfReady, t);
    this.view.setUint32(p + 9, cf, true);
  }

  cfInput(cf: number, df: number): void {
    const p = this.rec(K.cfInput, FIXED_SIZE[K.cfInput]!);
    this.view.setUint32(p + 1, cf, true);
    this.view.setUint32(p + 5, df, true);
  }

  cfStart(t: number, cpu: number, cf: number): void {
    const p = this.timed(K.cfStart, t);
    this.view.setFloat64(p + 9, cpu, true);
    this.view.setUint32(p + 17, cf, true);
  }

  cfFinish(t: number, cpu: number, cf: number): void {
    const p = this.timed(K.cfFinish, t);
    this.view.setFloat64(p + 9, cpu, true);
    this.view.setUint32(p + 17, cf, true);
  }

  dfName(name: string): number {
    let id = this.dfIds.get(name);
    if (id !== undefined) return id;
    id = this.nextDf++;
    this.dfIds.set(name, id);
    const p = this.withStrings(K.dfName, name, undefined);
    this.view.setUint32(p + 1, id, true);
    return id;
  }

  dfComputed(t: number, df: number, producerCf: number, bytes: number): void {
    const p = this.timed(K.dfComputed, t);
    this.view.setUint32(p + 9, df, true);
    this.view.setInt32(p + 13, producerCf, true);
    this.view.setFloat64(p + 17, bytes, true);
  }

  dfSendStart(t: number, df: number, toNode: number, bytes: number): void {
    const p = this.timed(K.dfSendStart, t);
    this.view.setUint32(p + 9, df, true);
    this.view.setUint32(p + 13, toNode, true);
    this.view.setFloat64(p + 17, bytes, true);
  }

  dfSendEnd(t: number, df: number, toNode: number): void {
    const p = this.timed(K.dfSendEnd, t);
    this.view.setUint32(p + 9, df, true);
    this.view.setUint32(p + 13, toNode, true);
  }

  dfReceive(t: number, df: number, fromNode: number, bytes: number): void {
    const p = this.timed(K.dfReceive, t);
    this.view.setUint32(p + 9, df, true);
    this.view.setUint32(p + 13, fromNode, true);
    this.view.setFloat64(p + 17, bytes, true);
  }

  dfDeleted(t: number, df: number): void {
    const p = this.timed(K.dfDeleted, t);
    this.view.setUint32(p + 9, df, true);
  }

  sysBusy(t0: number, t1: number): void {
    const p = this.timed(K.sysBusy, t0);
    this.view.setFloat64(p + 9, t1, true);
    this.lastT = t1; // recorded at t1: later untimed records follow it
  }

  readyQueue(t: number, length: number): void {
    const p = this.timed(K.readyQueue, t);
    this.view.setUint32(p + 9, length, true);
  }

  liveBytes(t: number, bytes: number): void {
    const p = this.timed(K.liveBytes, t);
    this.view.setFloat64(p + 9, bytes, true);
  }

  /** Time stamp that untimed records (cfInput, dfName) inherit: the last recorded time. */
  get lastTime(): number {
    return this.lastT;
  }

  flush(): void {
    if (this.closed) {
      this.pos = 0; // records after close() are dropped rather than thrown at the runtime
      return;
    }
    if (this.pos === 0) return;
    let off = 0;
    while (off < this.pos) off += writeSync(this.fd, this.bytes, off, this.pos - off);
    this.written += this.pos;
    this.pos = 0;
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    closeSync(this.fd);
  }
}
