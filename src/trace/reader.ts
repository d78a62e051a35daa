// Streaming reader of one per-thread trace file in bounded memory: the file is read in chunks
// (1 MiB by default) and decoded record by record into TraceEvent objects by decoders generated
// from schema.ts. A damaged file keeps its valid prefix: a record cut by the end of the file (a
// crashed run) or a record that cannot be valid (unknown kind byte, non-finite or impossible
// numbers) ends that file's stream with a warning that names the file, the byte offset and what
// was dropped. A wrong magic, version or file kind throws TraceFormatError at open time.
import { closeSync, fstatSync, readSync } from 'node:fs';
import { FileError, openRegular, reason } from '../core/files.js';
import { basename } from 'node:path';
import type { TraceDamage } from './damage.js';
import { decodeHeader, HEADER_BYTES, TraceFormatError, type ThreadFileHeader } from './format.js';
import { fieldBytes, fixedSize, KIND_BY_CODE, MAX_CODE, MAX_INTS, MAX_RECORD_BYTES, MAX_STRING_BYTES, RECORDS, type RecordDef, type TraceEvent } from './schema.js';

export interface ReadOptions {
  /** Damage reports are pushed here (default: dropped). */
  warnings?: string[];
  /** Read chunk size in bytes (default 1 MiB). */
  chunkBytes?: number;
  /** What was dropped, by kind and offset (besides the warning text). */
  damage?: TraceDamage;
}

const LIMIT = 2 ** 53;

/** Short ASCII strings (gids, DF keys) decode ~3x faster by hand than via Buffer.toString. */
function str(b: Buffer, s: number, e: number): string {
  if (e - s > 24) return b.toString('utf8', s, e);
  let r = '';
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c > 127) return b.toString('utf8', s, e);
    r += String.fromCharCode(c);
  }
  return r;
}

type Decoder = (b: Buffer, v: DataView, p: number, node: number, thread: number, lastT: number) => TraceEvent | undefined;
type Sizer = (v: DataView, p: number) => number;

const GETTER: Record<string, string> = { time: 'getFloat64', f64: 'getFloat64', u8: 'getUint8', u16: 'getUint16', u32: 'getUint32', i32: 'getInt32' };

/** Decoder source: reads, checks that the values can come from a writer, builds the event. */
function decoderSource(kind: string, def: RecordDef): string {
  const out: string[] = [];
  const props: string[] = [`kind: ${JSON.stringify(kind)}`, 'node', 'thread'];
  let off = 1;
  const timed = def.fields.some(([f]) => f === 't');
  if (!timed) props.push('t: lastT');
  for (const [f, t] of def.fields) {
    if (t === 'str') out.push(`const len_${f} = v.getUint16(p + ${off}, true); if (len_${f} > ${MAX_STRING_BYTES}) return undefined;`);
    else if (t === 'ints') out.push(`const n_${f} = v.getUint8(p + ${off});`);
    else {
      out.push(`const ${f} = v.${GETTER[t]}(p + ${off}${t === 'u8' ? '' : ', true'});`);
      if (t === 'time') out.push(`if (!(${f} > -${LIMIT} && ${f} < ${LIMIT})) return undefined;`);
      else if (t === 'f64') out.push(`if (!(${f} >= 0 && ${f} < ${LIMIT})${def.unmeasured?.includes(f) ? ` && ${f} === ${f}` : ''}) return undefined;`);
      else if (t === 'i32') out.push(`if (${f} < -1) return undefined;`);
    }
    props.push(f);
    off += fieldBytes(t);
  }
  if (def.writtenAt) out.push(`if (${def.writtenAt} < t) return undefined;`);
  out.push(`let q = p + ${off};`);
  for (const [f, t] of def.fields) {
    if (t === 'str') out.push(`const ${f} = str(b, q, q + len_${f}); q += len_${f};`);
    else if (t === 'ints') out.push(`const ${f} = new Array(n_${f}); for (let i = 0; i < n_${f}; i++) { ${f}[i] = v.getInt32(q, true); q += 4; }`);
  }
  out.push(`return { ${props.join(', ')} };`);
  return `return function decode_${kind}(b, v, p, node, thread, lastT) {\n  ${out.join('\n  ')}\n};`;
}

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

const DECODE: (Decoder | undefined)[] = [];
const SIZE: (Sizer | undefined)[] = [];
const FIXED: number[] = [];
/** offset of the field that says when the record was written (t, or a span's end); -1: untimed */
const WRITTEN_AT: number[] = [];
for (const [kind, def] of Object.entries(RECORDS) as [string, RecordDef][]) {
  DECODE[def.code] = new Function('str', decoderSource(kind, def))(str) as Decoder;
  SIZE[def.code] = new Function(sizerSource(def))() as Sizer;
  FIXED[def.code] = fixedSize(def);
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

/**
 * Open a per-thread trace file and return its header and a one-shot iterator of its events in
 * file order. Throws TraceFormatError (with the file name) for a file that is not a luna-ts
 * thread trace of this version.
 */
export function readThreadFile(path: string, opts: ReadOptions = {}): ThreadFile {
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
  return { path, header, size, events: decode(fd, path, header, size, chunk, opts.warnings, opts.damage) };
}

function* decode(fd: number, path: string, h: ThreadFileHeader, size: number, chunkBytes: number, warnings: string[] | undefined, damage: TraceDamage | undefined): Generator<TraceEvent, void, undefined> {
  const name = basename(path);
  const warn = (msg: string): void => { warnings?.push(`${name}: ${msg}`); };
  const buf = Buffer.allocUnsafe(chunkBytes);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const node = h.node, thread = h.thread;
  let fileOff = h.headerBytes; // file offset of buf[0]
  let len = 0; // valid bytes in buf
  let eof = false;
  let lastT = 0;
  try {
    for (;;) {
      if (!eof) {
        const n = readSync(fd, buf, len, buf.length - len, fileOff + len);
        if (n === 0) eof = true;
        len += n;
      }
      let p = 0;
      while (p < len) {
        const code = buf[p]!;
        const at = fileOff + p;
        const dec = code <= MAX_CODE ? DECODE[code] : undefined;
        if (dec === undefined) {
          warn(`corrupted record at byte offset ${at}: unknown kind byte ${code}; ${size - at} bytes from there on ignored`);
          damage?.add('corrupted', `unknown kind byte ${code}; the ${size - at} bytes from there on are ignored`, name, at);
          return;
        }
        const fixed = FIXED[code]!;
        const need = p + fixed <= len ? SIZE[code]!(v, p) : fixed;
        if (p + need > len) {
          if (eof) {
            warn(`truncated at byte offset ${at}: the last ${len - p} bytes (an incomplete ${KIND_BY_CODE[code]} record) were cut`);
            damage?.add('truncated', `the last ${len - p} bytes are an incomplete ${KIND_BY_CODE[code]} record`, name, at);
            return;
          }
          break; // the record continues in the next chunk
        }
        const e = dec(buf, v, p, node, thread, lastT);
        if (e === undefined) {
          warn(`corrupted record at byte offset ${at} (a ${KIND_BY_CODE[code]} record): impossible field values; ${size - at} bytes from there on ignored`);
          damage?.add('corrupted', `a ${KIND_BY_CODE[code]} record with impossible field values; the ${size - at} bytes from there on are ignored`, name, at);
          return;
        }
        const w = WRITTEN_AT[code]!;
        if (w >= 0) lastT = v.getFloat64(p + w, true);
        p += need;
        yield e;
      }
      if (eof && p >= len) return;
      buf.copy(buf, 0, p, len); // move the unread tail to the front
      fileOff += p;
      len -= p;
    }
  } finally {
    closeSync(fd);
  }
}

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
    const buf = Buffer.allocUnsafe(Math.max(chunkBytes, 4 * MAX_RECORD_BYTES));
    const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
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
        if (code > MAX_CODE || DECODE[code] === undefined) return late;
        if (p + FIXED[code]! > len) break;
        const need = SIZE[code]!(v, p);
        if (p + need > len) break;
        const w = WRITTEN_AT[code]!;
        if (w >= 0) {
          const t = v.getFloat64(p + T_OFFSET, true);
          if (!(t > -LIMIT && t < LIMIT)) return late;
          if (frontier - t > late) late = frontier - t;
          const end = v.getFloat64(p + w, true);
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

