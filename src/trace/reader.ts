// Streaming reader of one per-thread trace file in bounded memory: the file is read in chunks
// (1 MiB by default) and decoded record by record into TraceEvent objects. A damaged file keeps
// its valid prefix: a record cut by the end of the file (a crashed run) or a record that cannot
// be valid (unknown kind byte, non-finite or impossible numbers) ends that file's stream with a
// warning that names the file, the byte offset and what was dropped. A wrong magic, version or
// file kind throws TraceFormatError at open time.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import type { TraceEvent } from './events.js';
import {
  decodeHeader,
  FIXED_SIZE,
  HEADER_BYTES,
  K,
  KIND_NAME,
  MAX_KIND,
  MAX_STRING_BYTES,
  TraceFormatError,
  type ThreadFileHeader,
} from './format.js';

export interface ReadOptions {
  /** Damage reports are pushed here (default: dropped). */
  warnings?: string[];
  /** Read chunk size in bytes (default 1 MiB). */
  chunkBytes?: number;
}

const LIMIT = 2 ** 53;
const MAX_NODE = 0xffff;
const isTime = (x: number): boolean => x > -LIMIT && x < LIMIT; // false for NaN too
const isCount = (x: number): boolean => x >= 0 && x < LIMIT && Math.floor(x) === x;

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
    fd = openSync(path, 'r');
  } catch (e) {
    throw new TraceFormatError(path, `cannot open: ${(e as Error).message}`);
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
  const chunk = Math.max(opts.chunkBytes ?? 1 << 20, 4 * (FIXED_SIZE[K.cfReceive]! + 2 * MAX_STRING_BYTES));
  return { path, header, size, events: decode(fd, path, header, size, chunk, opts.warnings) };
}

function* decode(
  fd: number,
  path: string,
  h: ThreadFileHeader,
  size: number,
  chunkBytes: number,
  warnings: string[] | undefined,
): Generator<TraceEvent, void, undefined> {
  const name = basename(path);
  const warn = (msg: string): void => {
    warnings?.push(`${name}: ${msg}`);
  };
  const buf = Buffer.allocUnsafe(chunkBytes);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const node = h.node;
  const thread = h.thread;
  let fileOff = h.headerBytes; // file offset of buf[0]
  let len = 0; // valid bytes in buf
  let eof = false;
  let lastT = 0;
  try {
    for (;;) {
      // Refill: keep the unread tail, append a chunk.
      if (!eof) {
        const n = readSync(fd, buf, len, buf.length - len, fileOff + len);
        if (n === 0) eof = true;
        len += n;
      }
      let p = 0;
      while (p < len) {
        const kind = buf[p]!;
        const at = fileOff + p;
        if (kind === 0 || kind > MAX_KIND) {
          warn(`corrupted record at byte offset ${at}: unknown kind byte ${kind}; ${size - at} bytes from there on ignored`);
          return;
        }
        const fixed = FIXED_SIZE[kind]!;
        let need = fixed;
        if (p + fixed <= len) {
          if (kind === K.cfCreated || kind === K.cfReceive) {
            need += v.getUint16(p + fixed - 4, true) + v.getUint16(p + fixed - 2, true);
          } else if (kind === K.dfName) {
            need += v.getUint16(p + fixed - 2, true);
          }
        }
        if (p + need > len) {
          if (eof) {
            warn(`truncated at byte offset ${at}: the last ${len - p} bytes (an incomplete ${KIND_NAME[kind]} record of ${p + fixed <= len ? need : `at least ${fixed}`} bytes) were cut`);
            return;
          }
          break; // record continues in the next chunk
        }
        const e = decodeRecord(buf, v, p, kind, fixed, node, thread, lastT);
        if (e === undefined) {
          warn(`corrupted record at byte offset ${at} (kind ${kind} = ${KIND_NAME[kind]}): impossible field values; ${size - at} bytes from there on ignored`);
          return;
        }
        if (kind !== K.cfInput && kind !== K.dfName) lastT = kind === K.sysBusy ? (e as { end: number }).end : e.t;
        p += need;
        yield e;
      }
      if (eof && p >= len) return;
      // Move the unread tail to the front.
      buf.copy(buf, 0, p, len);
      fileOff += p;
      len -= p;
    }
  } finally {
    closeSync(fd);
  }
}

// Short ASCII strings (gids, labels, DF names) decode ~3x faster by hand than via Buffer.toString.
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

/** Decode one complete record; undefined when its values cannot come from a writer. */
function decodeRecord(
  b: Buffer,
  v: DataView,
  p: number,
  kind: number,
  fixed: number,
  node: number,
  thread: number,
  lastT: number,
): TraceEvent | undefined {
  const t = kind === K.cfInput || kind === K.dfName ? lastT : v.getFloat64(p + 1, true);
  if (!isTime(t)) return undefined;
  switch (kind) {
    case K.programStart:
      return { kind: 'programStart', t, node, thread };
    case K.programFinish:
      return { kind: 'programFinish', t, node, thread };
    case K.cfCreated: {
      const parentCf = v.getInt32(p + 13, true);
      if (parentCf < -1) return undefined;
      const gl = v.getUint16(p + 21, true);
      const ll = v.getUint16(p + 23, true);
      if (gl > MAX_STRING_BYTES || ll > MAX_STRING_BYTES) return undefined;
      const s = p + fixed;
      return {
        kind: 'cfCreated', t, node, thread,
        cf: v.getUint32(p + 9, true), parentCf, code: v.getUint32(p + 17, true),
        gid: str(b, s, s + gl), label: str(b, s + gl, s + gl + ll),
      };
    }
    case K.cfMigrate: {
      const toNode = v.getUint32(p + 13, true);
      if (toNode > MAX_NODE) return undefined;
      return { kind: 'cfMigrate', t, node, thread, cf: v.getUint32(p + 9, true), toNode };
    }
    case K.cfReceive: {
      const fromNode = v.getUint32(p + 13, true);
      const gl = v.getUint16(p + 25, true);
      const ll = v.getUint16(p + 27, true);
      if (fromNode > MAX_NODE || gl > MAX_STRING_BYTES || ll > MAX_STRING_BYTES) return undefined;
      const s = p + fixed;
      return {
        kind: 'cfReceive', t, node, thread,
        cf: v.getUint32(p + 9, true), fromNode, remoteCf: v.getUint32(p + 17, true),
        gid: str(b, s, s + gl), code: v.getUint32(p + 21, true),
        label: str(b, s + gl, s + gl + ll),
      };
    }
    case K.cfReady:
      return { kind: 'cfReady', t, node, thread, cf: v.getUint32(p + 9, true) };
    case K.cfInput:
      return { kind: 'cfInput', t, node, thread, cf: v.getUint32(p + 1, true), df: v.getUint32(p + 5, true) };
    case K.cfStart:
    case K.cfFinish: {
      const cpu = v.getFloat64(p + 9, true);
      if (!isTime(cpu)) return undefined;
      return { kind: kind === K.cfStart ? 'cfStart' : 'cfFinish', t, node, thread, cpu, cf: v.getUint32(p + 17, true) };
    }
    case K.dfName: {
      const l = v.getUint16(p + 5, true);
      if (l > MAX_STRING_BYTES) return undefined;
      return { kind: 'dfName', t, node, thread, df: v.getUint32(p + 1, true), name: str(b, p + fixed, p + fixed + l) };
    }
    case K.dfComputed: {
      const producerCf = v.getInt32(p + 13, true);
      const bytes = v.getFloat64(p + 17, true);
      if (producerCf < -1 || !isCount(bytes)) return undefined;
      return { kind: 'dfComputed', t, node, thread, df: v.getUint32(p + 9, true), producerCf, bytes };
    }
    case K.dfSendStart: {
      const toNode = v.getUint32(p + 13, true);
      const bytes = v.getFloat64(p + 17, true);
      if (toNode > MAX_NODE || !isCount(bytes)) return undefined;
      return { kind: 'dfSendStart', t, node, thread, df: v.getUint32(p + 9, true), toNode, bytes };
    }
    case K.dfSendEnd: {
      const toNode = v.getUint32(p + 13, true);
      if (toNode > MAX_NODE) return undefined;
      return { kind: 'dfSendEnd', t, node, thread, df: v.getUint32(p + 9, true), toNode };
    }
    case K.dfReceive: {
      const fromNode = v.getUint32(p + 13, true);
      const bytes = v.getFloat64(p + 17, true);
      if (fromNode > MAX_NODE || !isCount(bytes)) return undefined;
      return { kind: 'dfReceive', t, node, thread, df: v.getUint32(p + 9, true), fromNode, bytes };
    }
    case K.dfDeleted:
      return { kind: 'dfDeleted', t, node, thread, df: v.getUint32(p + 9, true) };
    case K.sysBusy: {
      const end = v.getFloat64(p + 9, true);
      if (!isTime(end) || end < t) return undefined;
      return { kind: 'sysBusy', t, node, thread, end };
    }
    case K.readyQueue:
      return { kind: 'readyQueue', t, node, thread, value: v.getUint32(p + 9, true) };
    case K.liveBytes: {
      const value = v.getFloat64(p + 9, true);
      if (!isCount(value)) return undefined;
      return { kind: 'liveBytes', t, node, thread, value };
    }
  }
  return undefined;
}

/**
 * How far back in time (ns) any record of the file goes behind the latest time recorded before
 * it: 0 for a file in time order; a sysBusy record (written when its span ends, stamped with its
 * start) makes it up to that span's length. One cheap pass over the raw bytes, no objects; it
 * stops quietly at damage (the decoding pass reports it). The merge uses it to hold back only
 * the events that a later record could still precede.
 */
export function scanLateness(path: string, chunkBytes = 1 << 20): number {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.max(chunkBytes, 4 * (FIXED_SIZE[K.cfReceive]! + 2 * MAX_STRING_BYTES)));
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
        const kind = buf[p]!;
        if (kind === 0 || kind > MAX_KIND) return late;
        const fixed = FIXED_SIZE[kind]!;
        if (p + fixed > len) break;
        let need = fixed;
        if (kind === K.cfCreated || kind === K.cfReceive) need += v.getUint16(p + fixed - 4, true) + v.getUint16(p + fixed - 2, true);
        else if (kind === K.dfName) need += v.getUint16(p + fixed - 2, true);
        if (p + need > len) break;
        if (kind !== K.cfInput && kind !== K.dfName) {
          const t = v.getFloat64(p + 1, true);
          if (!isTime(t)) return late;
          if (frontier - t > late) late = frontier - t;
          const end = kind === K.sysBusy ? v.getFloat64(p + 9, true) : t;
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
