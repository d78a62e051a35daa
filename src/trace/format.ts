// The luna-ts binary trace files (docs/trace-format.md is the reference): one file per
// (node, thread), a 32-byte header, then records whose layout schema.ts defines.

export const MAGIC = 'LUNATRC\0';
/** Version 2: records derived from schema.ts (lanes, spawn sites, run status). */
export const VERSION = 2;
export const FILE_KIND_THREAD = 1;
export const HEADER_BYTES = 32;
/** header flags */
export const FLAG_CPU_EXACT = 1;

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
  if (version !== VERSION) throw new TraceFormatError(file, versionMessage(version));
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

/** Why a trace of another format version cannot be read, and what to do. */
export function versionMessage(version: unknown): string {
  if (typeof version === 'number' && version < VERSION) {
    return `trace format version ${version} was written by an older luna-ts; this one reads version ${VERSION}: record the run again with this luna-ts`;
  }
  return `trace format version ${String(version)} is not supported (this luna-ts reads version ${VERSION}; a newer luna-ts wrote it?)`;
}
