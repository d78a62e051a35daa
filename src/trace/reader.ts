// Streaming reader of one per-thread trace file in bounded memory: the file is read in chunks
// (1 MiB by default) and decoded record by record into columns (columns.ts) by decoders generated
// from schema.ts; readThreadFile gives them as TraceEvent objects. A damaged file keeps its valid prefix: a record cut by the end of the file (a
// crashed run) or a record that cannot be valid (unknown kind byte, non-finite or impossible
// numbers) ends that file's stream with a warning that names the file, the byte offset and what
// was dropped. A wrong magic, version or file kind throws TraceFormatError at open time.
import { closeSync, fstatSync, readSync } from 'node:fs';
import { FileError, openRegular, reason } from '../core/files.js';
import { basename } from 'node:path';
import type { TraceDamage } from './damage.js';
import { decodeHeader, HEADER_BYTES, TraceFormatError, type ThreadFileHeader } from './format.js';
import { fieldBytes, fixedSize, KIND_BY_CODE, MAX_CODE, MAX_RECORD_BYTES, RECORDS, type RecordDef, type TraceEvent } from './schema.js';
import { DECODE_ROW, RecordBatch } from './columns.js';

export interface ReadOptions {
  /** Damage reports are pushed here (default: dropped). */
  warnings?: string[];
  /** Read chunk size in bytes (default 1 MiB). */
  chunkBytes?: number;
  /** What was dropped, by kind and offset (besides the warning text). */
  damage?: TraceDamage;
}

const LIMIT = 2 ** 53;

type Sizer = (v: DataView, p: number) => number;

/** Sizer source: the whole record's size from its fixed part. */
function sizerSource(def: RecordDef): string {
  const terms = [String(fixedSize(def))];
  let off = 1;
  for (const [, t] of def.fields) {
    if (t === 'str') terms.push(`v.getUint16(p + ${off}, true)`);
    else if (t === 'ints') terms.push(`4 * v.getUint8(p + ${off})`);
    off += fieldBytes(t);
  }
  return `return function (v, p) { return ${terms.join(' + ')}; };`;
}

const SIZE: (Sizer | undefined)[] = [];
const FIXED: number[] = [];
/** whether a kind has a variable part (a str or ints field): only those need their sizer called */
const VARIABLE: boolean[] = [];
/** offset of the field that says when the record was written (t, or a span's end); -1: untimed */
const WRITTEN_AT: number[] = [];
for (const def of Object.values(RECORDS) as RecordDef[]) {
  SIZE[def.code] = new Function(sizerSource(def))() as Sizer;
  FIXED[def.code] = fixedSize(def);
  VARIABLE[def.code] = def.fields.some(([, t]) => t === 'str' || t === 'ints');
  let off = 1, at = -1;
  const stamp = def.writtenAt ?? 't';
  for (const [f, t] of def.fields) { if (f === stamp) at = off; off += fieldBytes(t); }
  WRITTEN_AT[def.code] = at;
}
const T_OFFSET = 1; // every timed record has `t` first

/** An opened per-thread file: header already validated. */
export interface ThreadFile {
  path: string;
  header: ThreadFileHeader;
  size: number;
  events: Generator<TraceEvent, void, undefined>;
}

/** Open a file's records for decoding into columns; throws TraceFormatError as readThreadFile does. */
export function openRecordFile(path: string, opts: ReadOptions = {}): RecordFile {
  let fd: number;
  try {
    fd = openRegular(path, 'trace file');
  } catch (e) {
    throw new TraceFormatError(path, e instanceof FileError ? e.problem! : `cannot open: ${reason(e)}`);
  }
  let header: ThreadFileHeader;
  let size: number;
  try {
    size = fstatSync(fd).size;
    const hb = Buffer.alloc(HEADER_BYTES);
    const n = readSync(fd, hb, 0, HEADER_BYTES, 0);
    header = decodeHeader(path, hb.subarray(0, n));
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  const chunk = Math.max(opts.chunkBytes ?? 1 << 20, 4 * MAX_RECORD_BYTES);
  return new RecordFile(fd, path, header, size, chunk, opts.warnings, opts.damage);
}

/**
 * Open a per-thread trace file and return its header and a one-shot iterator of its events in
 * file order. Throws TraceFormatError (with the file name) for a file that is not a luna-ts
 * thread trace of this version.
 */
export function readThreadFile(path: string, opts: ReadOptions = {}): ThreadFile {
  const f = openRecordFile(path, opts);
  return { path, header: f.header, size: f.size, events: objects(f) };
}

function* objects(f: RecordFile): Generator<TraceEvent, void, undefined> {
  const b = new RecordBatch(4096);
  try {
    for (;;) {
      b.n = 0;
      if (f.read(b, b.capacity) === 0) return;
      for (let i = 0; i < b.n; i++) yield b.event(i);
    }
  } finally {
    f.close();
  }
}

/**
 * A per-thread file's records, decoded in chunks straight into columns. A damaged record ends the
 * file with a warning naming the file, the byte offset and what was dropped.
 */
export class RecordFile {
  private readonly name: string;
  private readonly buf: Buffer;
  private readonly v: DataView;
  private fileOff: number; // file offset of buf[0]
  private len = 0; // valid bytes in buf
  private p = 0; // next record in buf
  private eof = false;
  private ended = false;
  private lastT = 0;

  constructor(
    private readonly fd: number,
    readonly path: string,
    readonly header: ThreadFileHeader,
    readonly size: number,
    chunkBytes: number,
    private readonly warnings: string[] | undefined,
    private readonly damage: TraceDamage | undefined,
  ) {
    this.name = basename(path);
    this.buf = Buffer.allocUnsafe(chunkBytes);
    this.v = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.fileOff = header.headerBytes;
  }

  private warn(msg: string): void {
    this.warnings?.push(`${this.name}: ${msg}`);
  }

  /** The file's next records (at most `max`) appended to `into` (room for them given); 0 at its end. */
  read(into: RecordBatch, max: number): number {
    if (this.ended) return 0;
    const { buf, v, size, name } = this;
    const node = this.header.node, thread = this.header.thread;
    const first = into.n;
    let i = first;
    const stop = first + max;
    try {
      for (;;) {
        if (!this.eof && this.p === 0) {
          const n = readSync(this.fd, buf, this.len, buf.length - this.len, this.fileOff + this.len);
          if (n === 0) this.eof = true;
          this.len += n;
        }
        const len = this.len;
        let p = this.p;
        while (p < len && i < stop) {
          const code = buf[p]!;
          const at = this.fileOff + p;
          const dec = code <= MAX_CODE ? DECODE_ROW[code] : undefined;
          if (dec === undefined) {
            this.warn(`corrupted record at byte offset ${at}: unknown kind byte ${code}; ${size - at} bytes from there on ignored`);
            this.damage?.add('corrupted', `unknown kind byte ${code}; the ${size - at} bytes from there on are ignored`, name, at);
            return this.end(into, i, first);
          }
          const fixed = FIXED[code]!;
          const need = VARIABLE[code] && p + fixed <= len ? SIZE[code]!(v, p) : fixed;
          if (p + need > len) {
            if (this.eof) {
              this.warn(`truncated at byte offset ${at}: the last ${len - p} bytes (an incomplete ${KIND_BY_CODE[code]} record) were cut`);
              this.damage?.add('truncated', `the last ${len - p} bytes are an incomplete ${KIND_BY_CODE[code]} record`, name, at);
              return this.end(into, i, first);
            }
            break; // the record continues in the next chunk
          }
          if (!dec(buf, v, p, into, i, this.lastT)) {
            this.warn(`corrupted record at byte offset ${at} (a ${KIND_BY_CODE[code]} record): impossible field values; ${size - at} bytes from there on ignored`);
            this.damage?.add('corrupted', `a ${KIND_BY_CODE[code]} record with impossible field values; the ${size - at} bytes from there on are ignored`, name, at);
            return this.end(into, i, first);
          }
          into.node[i] = node;
          into.thread[i] = thread;
          i++;
          const w = WRITTEN_AT[code]!;
          if (w >= 0) this.lastT = v.getFloat64(p + w, true);
          p += need;
        }
        this.p = p;
        if (i === stop) break;
        if (this.eof && p >= len) return this.end(into, i, first);
        buf.copy(buf, 0, p, len); // move the unread tail to the front
        this.fileOff += p;
        this.len -= p;
        this.p = 0;
      }
    } catch (e) {
      this.close();
      throw e;
    }
    into.n = i;
    return i - first;
  }

  private end(into: RecordBatch, i: number, first: number): number {
    into.n = i;
    this.close();
    return i - first;
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    closeSync(this.fd);
  }
}

/** scanLateness's read buffer, shared by its calls (each reads its file to the end within the call) */
let scanBuf = Buffer.alloc(0);
let scanView = new DataView(new ArrayBuffer(0));

/**
 * How far back in time (ns) any record of the file goes behind the latest time recorded before
 * it: 0 for a file in time order; a span record (written when it ends, stamped with its start)
 * makes it up to that span's length. One cheap pass over the raw bytes, no objects; it stops
 * quietly at damage (the decoding pass reports it). The merge uses it to hold back only the
 * events that a later record could still precede.
 */
export function scanLateness(path: string, chunkBytes = 1 << 20): number {
  const fd = openRegular(path, 'trace file');
  try {
    const size = Math.max(chunkBytes, 4 * MAX_RECORD_BYTES);
    if (scanBuf.length !== size) { scanBuf = Buffer.allocUnsafe(size); scanView = new DataView(scanBuf.buffer, scanBuf.byteOffset, scanBuf.byteLength); }
    const buf = scanBuf, v = scanView;
    let fileOff = HEADER_BYTES;
    const hn = readSync(fd, buf, 0, HEADER_BYTES, 0);
    if (hn === HEADER_BYTES) fileOff = Math.max(HEADER_BYTES, v.getUint32(20, true));
    let len = 0;
    let frontier = -Infinity;
    let late = 0;
    for (;;) {
      const n = readSync(fd, buf, len, buf.length - len, fileOff + len);
      len += n;
      let p = 0;
      while (p < len) {
        const code = buf[p]!;
        if (code > MAX_CODE || DECODE_ROW[code] === undefined) return late;
        const fixed = FIXED[code]!;
        if (p + fixed > len) break;
        const need = VARIABLE[code] ? SIZE[code]!(v, p) : fixed;
        if (p + need > len) break;
        const w = WRITTEN_AT[code]!;
        if (w >= 0) {
          const t = v.getFloat64(p + T_OFFSET, true);
          if (!(t > -LIMIT && t < LIMIT)) return late;
          if (frontier - t > late) late = frontier - t;
          // most kinds are written at their t: the span's end is read only for spans
          const end = w === T_OFFSET ? t : v.getFloat64(p + w, true);
          if (end > frontier) frontier = end;
        }
        p += need;
      }
      if (n === 0) return late;
      buf.copy(buf, 0, p, len);
      fileOff += p;
      len -= p;
    }
  } finally {
    closeSync(fd);
  }
}

