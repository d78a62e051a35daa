// The luna-ts binary trace format, version 1 (docs/trace-format.md is the reference).
// One file per (node, thread): a 32-byte header, then records. Every record starts with a kind
// byte; its size is fixed by the kind, except the string-carrying kinds whose fixed part ends
// with u16 byte lengths followed by UTF-8 bytes. All numbers little-endian.

export const MAGIC = 'LUNATRC\0';
export const VERSION = 1;
export const FILE_KIND_THREAD = 1;
export const HEADER_BYTES = 32;
/** header flags */
export const FLAG_CPU_EXACT = 1;
/** Longer strings are cut to this many UTF-8 bytes by the writer (keeps records bounded). */
export const MAX_STRING_BYTES = 1024;

export const K = {
  programStart: 1,
  programFinish: 2,
  cfCreated: 3,
  cfMigrate: 4,
  cfReceive: 5,
  cfReady: 6,
  cfInput: 7,
  cfStart: 8,
  cfFinish: 9,
  dfName: 10,
  dfComputed: 11,
  dfSendStart: 12,
  dfSendEnd: 13,
  dfReceive: 14,
  dfDeleted: 15,
  sysBusy: 16,
  readyQueue: 17,
  liveBytes: 18,
} as const;
export const MAX_KIND = 18;

/** Fixed part of each record in bytes, including the kind byte (index = kind). */
export const FIXED_SIZE: readonly number[] = (() => {
  const s = new Array<number>(MAX_KIND + 1).fill(0);
  s[K.programStart] = 1 + 8;
  s[K.programFinish] = 1 + 8;
  s[K.cfCreated] = 1 + 8 + 4 + 4 + 4 + 2 + 2; // t cf parentCf code gidLen labelLen
  s[K.cfMigrate] = 1 + 8 + 4 + 4; // t cf toNode
  s[K.cfReceive] = 1 + 8 + 4 + 4 + 4 + 4 + 2 + 2; // t cf fromNode remoteCf code gidLen labelLen
  s[K.cfReady] = 1 + 8 + 4;
  s[K.cfInput] = 1 + 4 + 4; // cf df (time: that of the previous record)
  s[K.cfStart] = 1 + 8 + 8 + 4; // t cpu cf
  s[K.cfFinish] = 1 + 8 + 8 + 4;
  s[K.dfName] = 1 + 4 + 2; // df nameLen (time: that of the previous record)
  s[K.dfComputed] = 1 + 8 + 4 + 4 + 8; // t df producerCf(i32) bytes(f64)
  s[K.dfSendStart] = 1 + 8 + 4 + 4 + 8; // t df toNode bytes
  s[K.dfSendEnd] = 1 + 8 + 4 + 4; // t df toNode
  s[K.dfReceive] = 1 + 8 + 4 + 4 + 8; // t df fromNode bytes
  s[K.dfDeleted] = 1 + 8 + 4;
  s[K.sysBusy] = 1 + 8 + 8; // t0 t1
  s[K.readyQueue] = 1 + 8 + 4; // t length(u32)
  s[K.liveBytes] = 1 + 8 + 8; // t bytes(f64)
  return s;
})();

export const KIND_NAME: readonly string[] = (() => {
  const n = new Array<string>(MAX_KIND + 1).fill('?');
  for (const [name, k] of Object.entries(K)) n[k] = name;
  return n;
})();

/** A file that is not a luna-ts trace file of a version and kind this reader understands. */
export class TraceFormatError extends Error {
  constructor(readonly file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'TraceFormatError';
  }
}

export interface ThreadFileHeader {
  version: number;
  node: number;
  thread: number;
  cpuExact: boolean;
  headerBytes: number;
}

export function encodeHeader(node: number, thread: number, cpuExact: boolean): Uint8Array {
  const b = new Uint8Array(HEADER_BYTES);
  const v = new DataView(b.buffer);
  for (let i = 0; i < 8; i++) b[i] = MAGIC.charCodeAt(i);
  v.setUint16(8, VERSION, true);
  v.setUint16(10, FILE_KIND_THREAD, true);
  v.setUint32(12, node, true);
  v.setUint32(16, thread, true);
  v.setUint32(20, HEADER_BYTES, true);
  v.setUint32(24, cpuExact ? FLAG_CPU_EXACT : 0, true);
  return b;
}

/** Validate and decode a header; throws TraceFormatError naming the file. */
export function decodeHeader(file: string, b: Uint8Array): ThreadFileHeader {
  if (b.length < HEADER_BYTES) {
    for (let i = 0; i < Math.min(8, b.length); i++) {
      if (b[i] !== MAGIC.charCodeAt(i)) throw new TraceFormatError(file, 'not a luna-ts trace file (bad magic)');
    }
    throw new TraceFormatError(file, `truncated header (${b.length} of ${HEADER_BYTES} bytes)`);
  }
  for (let i = 0; i < 8; i++) {
    if (b[i] !== MAGIC.charCodeAt(i)) throw new TraceFormatError(file, 'not a luna-ts trace file (bad magic)');
  }
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const version = v.getUint16(8, true);
  if (version !== VERSION) {
    throw new TraceFormatError(file, `trace format version ${version} is not supported (this reader reads version ${VERSION})`);
  }
  const kind = v.getUint16(10, true);
  if (kind !== FILE_KIND_THREAD) {
    throw new TraceFormatError(file, `file kind ${kind} is not a per-thread event file (kind ${FILE_KIND_THREAD})`);
  }
  const headerBytes = v.getUint32(20, true);
  if (headerBytes < HEADER_BYTES || headerBytes > 4096) throw new TraceFormatError(file, `bad header size ${headerBytes}`);
  return {
    version,
    node: v.getUint32(12, true),
    thread: v.getUint32(16, true),
    cpuExact: (v.getUint32(24, true) & FLAG_CPU_EXACT) !== 0,
    headerBytes,
  };
}

/** Canonical file name of a thread's events inside a trace directory. */
export function traceFileName(node: number, thread: number): string {
  return `node${node}.thread${thread}.lt`;
}
export const TRACE_FILE_RE = /^node(\d+)\.thread(\d+)\.lt$/;
export const MANIFEST_NAME = 'manifest.json';
