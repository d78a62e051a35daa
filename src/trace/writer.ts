// Per-thread trace writer: records into a preallocated buffer, spilled to the thread's own file
// with fs.writeSync when full and on flush/close (seed 000 §4.1: RAM buffer, disk spill). One
// method per record kind, generated from schema.ts when this module loads: each is a
// straight-line function of DataView stores, with no allocation per event. A crash loses at
// most the unflushed buffer; what reached the file is a valid prefix.
//
// A worker thread's writer records into shared memory (sharedTraceBuffer) that it lends to the
// system thread while it runs a ucode or sleeps: the system thread then spills it periodically
// (a run killed with SIGKILL loses about a second) and, when the run ends or is interrupted,
// salvages what a worker stuck in a ucode (a C++ loop that Worker.terminate cannot stop)
// recorded before it.
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { cpuClockExact } from './clock.js';
import { encodeHeader, traceFileName } from './format.js';
import { fieldBytes, MAX_INTS, MAX_RECORD_BYTES, MAX_STRING_BYTES, NAMING_KINDS, RECORDS, fixedSize, rawMethod, type NamingKind, type RecordDef, type RecordMethods, type TraceSink } from './schema.js';

export interface WriterOptions {
  /** RAM buffer size in bytes (default 1 MiB, minimum 8 KiB). */
  bufferBytes?: number;
  /** Recorded in the header; default: whether this thread has the exact CPU clock. */
  cpuExact?: boolean;
  /** The file was created with its header by `prepare` (by another thread): append to it. */
  prepared?: boolean;
  /** record into this buffer of sharedTraceBuffer(), which the system thread may spill (see lend) */
  shared?: SharedArrayBuffer;
}

// The header of a shared trace buffer: a state word and the length of the records not spilled.
const STATE = 0, TAIL = 1, SHARED_HEADER = 16;
/** the writer's thread records into the buffer */
const OWNED = 0;
/** lent: the system thread may spill it */
const LENT = 1;
/** the system thread is spilling it */
const SPILLING = 2;
/** closed by its writer, or salvaged for good: nobody records into it any more */
const DONE = 3;

/** A shared buffer for a writer on another thread (WriterOptions.shared), of `bytes` record bytes. */
export function sharedTraceBuffer(bytes = 1 << 20): SharedArrayBuffer {
  return new SharedArrayBuffer(SHARED_HEADER + Math.max(bytes, 8192, 2 * MAX_RECORD_BYTES));
}

/**
 * The system thread's side of a shared buffer: append what its writer lent to the file at
 * `path` (the writer's own file: both append). `final`: the writer will never record again (its
 * thread is being stopped in the middle of a ucode). Returns the bytes written; 0 when the
 * writer holds the buffer (it is recording, or it has closed it).
 */
export function spillSharedTrace(buf: SharedArrayBuffer, path: string, final = false): number {
  const h = new Int32Array(buf, 0, 2);
  if (Atomics.compareExchange(h, STATE, LENT, SPILLING) !== LENT) return 0;
  const n = h[TAIL]!;
  try {
    if (n > 0) {
      const fd = openSync(path, 'a');
      try {
        const bytes = new Uint8Array(buf, SHARED_HEADER, n);
        for (let off = 0; off < n;) off += writeSync(fd, bytes, off, n - off);
      } finally { closeSync(fd); }
    }
    h[TAIL] = 0;
  } finally {
    Atomics.store(h, STATE, final ? DONE : LENT);
    Atomics.notify(h, STATE);
  }
  return n;
}

const encoder = new TextEncoder();

/** DF names (and call sites) a writer keeps numbered per generation (see Names) */
export const DF_IDS_KEPT = 4096;

/**
 * The numbers a file gives the strings of one naming kind (DF keys, call sites). Only recently
 * used names are kept (two generations of DF_IDS_KEPT): a run of millions of DFs would otherwise
 * hold every name it ever traced (a 200 000-link chain traced 1.7 → 1.5 s). A name evicted from
 * both is named again under a new number; readers resolve numbers to names, so both mean the same.
 */
class Names {
  private next = 0;
  private ids = new Map<string, number>();
  private old = new Map<string, number>();
  constructor(private readonly write: (id: number, name: string) => void) {}
  id(name: string): number {
    let id = this.ids.get(name);
    if (id !== undefined) return id;
    id = this.old.get(name);
    if (id === undefined) {
      id = this.next++;
      this.write(id, name);
    }
    if (this.ids.size >= DF_IDS_KEPT) { this.old = this.ids; this.ids = new Map(); }
    this.ids.set(name, id);
    return id;
  }
}

const SETTER: Record<string, string> = { time: 'setFloat64', f64: 'setFloat64', u8: 'setUint8', u16: 'setUint16', u32: 'setUint32', i32: 'setInt32' };

/** Source of the writer method of one record kind. */
function methodSource(name: string, def: RecordDef): string {
  const fixed = fixedSize(def);
  const params = def.fields.map(([f]) => f);
  const variable = def.fields.some(([, t]) => t === 'str' || t === 'ints');
  const body: string[] = [];
  body.push(variable ? `const p = this._reserve(${def.code}, ${fixed}, true);` : `const p = this._reserve(${def.code}, ${fixed}, false);`);
  body.push('const v = this._view;');
  let off = 1;
  for (const [f, t] of def.fields) {
    if (t === 'str') body.push(`const len_${f} = this._str(${f}); v.setUint16(p + ${off}, len_${f}, true);`);
    else if (t === 'ints') body.push(`v.setUint8(p + ${off}, this._ints(${f}));`);
    else body.push(t === 'u8' ? `v.setUint8(p + ${off}, ${f});` : `v.${SETTER[t]}(p + ${off}, ${f}, true);`);
    off += fieldBytes(t);
  }
  const stamp = def.writtenAt ?? (def.fields.some(([f]) => f === 't') ? 't' : null);
  if (stamp) body.push(`this._lastT = ${stamp};`);
  return `return function ${name}(${params.join(', ')}) {\n  ${body.join('\n  ')}\n};`;
}

export interface ThreadTraceWriter extends Omit<RecordMethods, NamingKind> {}

export class ThreadTraceWriter implements TraceSink {
  readonly path: string;
  private readonly fd: number;
  private readonly _bytes: Uint8Array;
  protected readonly _view: DataView;
  /** end of the fixed part of the record being written: variable parts go here */
  private _pos = 0;
  private _tail = 0;
  protected _lastT = 0;
  /** numbers of the strings of each naming kind (DF keys, call sites) */
  private readonly names: Record<NamingKind, Names>;
  private closed = false;
  /** the state and tail words of a shared buffer */
  private readonly shared: Int32Array | undefined;
  /** Bytes handed to the file so far by this writer (header included; not what the system thread spilled). */
  written = 0;
  /** Records written so far. */
  records = 0;

  constructor(path: string, readonly node: number, readonly thread: number, opts: WriterOptions = {}) {
    this.path = path;
    if (opts.shared) {
      this.shared = new Int32Array(opts.shared, 0, 2);
      this._bytes = new Uint8Array(opts.shared, SHARED_HEADER);
    } else {
      const size = Math.max(opts.bufferBytes ?? 1 << 20, 8192, 2 * MAX_RECORD_BYTES);
      this._bytes = new Uint8Array(new ArrayBuffer(size));
    }
    this._view = new DataView(this._bytes.buffer, this._bytes.byteOffset, this._bytes.byteLength);
    const h = encodeHeader(node, thread, opts.cpuExact ?? cpuClockExact);
    if (opts.prepared) {
      this.fd = openSync(path, 'a');
    } else {
      // The header goes out at once: even a run that dies before its first spill leaves a valid file.
      this.fd = openSync(path, 'w');
      writeSync(this.fd, h);
    }
    this.written = h.length;
    const raw = this as unknown as Record<string, (id: number, name: string) => void>;
    this.names = Object.fromEntries(NAMING_KINDS.map((k) => {
      const write = raw[rawMethod(k)]!.bind(this);
      return [k, new Names(write)];
    })) as Record<NamingKind, Names>;
  }

  /**
   * Create `<dir>/node<N>.thread<T>.lt` holding only its header, for a writer that opens it later
   * with `prepared`. A worker thread stopped while it boots (the run ended before it was needed)
   * then still leaves a valid, empty file rather than a truncated one.
   */
  static prepare(dir: string, node: number, thread: number, cpuExact = cpuClockExact): void {
    const fd = openSync(join(dir, traceFileName(node, thread)), 'w');
    try { writeSync(fd, encodeHeader(node, thread, cpuExact)); } finally { closeSync(fd); }
  }

  /** Open `<dir>/node<N>.thread<T>.lt`. */
  static open(dir: string, node: number, thread: number, opts?: WriterOptions): ThreadTraceWriter {
    return new ThreadTraceWriter(join(dir, traceFileName(node, thread)), node, thread, opts);
  }

  /**
   * A writer whose records go nowhere (/dev/null): a rehearsal's, so that the traced paths are
   * optimised before a traced run's span. Kept for the process and never closed: closing sets
   * its `closed` field, which code optimised in the rehearsal may have taken for a constant.
   */
  static discarding(node: number, thread: number, shared?: SharedArrayBuffer): ThreadTraceWriter {
    return new ThreadTraceWriter('/dev/null', node, thread, { cpuExact: cpuClockExact, prepared: true, shared });
  }

  /** Room for a record (plus its largest variable part), spilling first if needed; its offset. */
  protected _reserve(code: number, fixed: number, variable: boolean): number {
    if (this._tail + (variable ? MAX_RECORD_BYTES : fixed) > this._bytes.length) this.flush();
    const p = this._tail;
    this._bytes[p] = code;
    this._pos = p + fixed;
    this._tail = this._pos;
    this.records++;
    return p;
  }

  /** Append a string's UTF-8 bytes (cut at MAX_STRING_BYTES); returns their length. */
  protected _str(s: string): number {
    const b = this._bytes;
    let p = this._tail;
    const n = Math.min(s.length, MAX_STRING_BYTES);
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) break;
      b[p++] = c;
    }
    if (i === n) { this._tail = p; return n; } // ASCII (cut when too long)
    const r = encoder.encodeInto(s, b.subarray(this._tail, this._tail + MAX_STRING_BYTES));
    this._tail += r.written!;
    return r.written!;
  }

  /** Append int32 values (at most MAX_INTS); returns their count. */
  protected _ints(xs: readonly number[] | null): number {
    if (!xs) return 0;
    const n = Math.min(xs.length, MAX_INTS);
    for (let i = 0; i < n; i++) { this._view.setInt32(this._tail, xs[i]!, true); this._tail += 4; }
    return n;
  }

  /** The DF's number in this file, naming it first if needed (see Names). */
  dfName(name: string): number {
    return this.names.dfName.id(name);
  }

  /** The SPMD call site's number in this file, naming it first if needed. */
  siteName(name: string): number {
    return this.names.siteName.id(name);
  }


  /** Time stamp that untimed records (cfInput, dfName) inherit: the last recorded time. */
  get lastTime(): number {
    return this._lastT;
  }

  flush(): void {
    if (this.closed) {
      this._tail = 0; // records after close() are dropped rather than thrown at the runtime
      return;
    }
    if (this._tail === 0) return;
    let off = 0;
    while (off < this._tail) off += writeSync(this.fd, this._bytes, off, this._tail - off);
    this.written += this._tail;
    this._tail = 0;
  }

  close(): void {
    if (this.closed) return;
    if (this.shared && !this.reclaim()) return; // salvaged for good: reclaim() closed the file
    this.flush();
    this.closed = true;
    if (this.shared) Atomics.store(this.shared, STATE, DONE);
    closeSync(this.fd);
  }

  /**
   * Shared buffer: let the system thread spill what is recorded (before a ucode runs, before
   * sleeping). Nothing may be recorded until reclaim().
   */
  lend(): void {
    const h = this.shared;
    if (!h || this.closed) return;
    h[TAIL] = this._tail;
    Atomics.store(h, STATE, LENT);
  }

  /**
   * Record again after lend(), waiting while the system thread spills. False when it salvaged
   * the buffer for good (the run ended while this thread was in a ucode): records are dropped.
   */
  reclaim(): boolean {
    const h = this.shared;
    if (!h || this.closed) return !this.closed;
    for (;;) {
      const s = Atomics.compareExchange(h, STATE, LENT, OWNED);
      if (s === OWNED) return true;
      if (s === LENT) { this._tail = h[TAIL]!; return true; }
      if (s === DONE) { this.closed = true; this._tail = 0; closeSync(this.fd); return false; }
      Atomics.wait(h, STATE, SPILLING, 100);
    }
  }
}

export interface ThreadTraceWriter {
  /** the raw dfName record (dfName() interns) */
  writeDfName(df: number, name: string): void;
  /** the raw siteName record (siteName() interns) */
  writeSiteName(callSite: number, name: string): void;
}

for (const [name, def] of Object.entries(RECORDS) as [string, RecordDef][]) {
  const method = def.names !== undefined ? rawMethod(name as NamingKind) : name;
  // Generated once per record kind from the schema; see methodSource.
  (ThreadTraceWriter.prototype as unknown as Record<string, unknown>)[method] = new Function(methodSource(method, def))();
}

/**
 * The sink of a thread whose writer is lent while its ucode runs (worker threads): each record
 * takes the buffer back and lends it again, so the system thread may still spill or salvage it
 * between records. For the records a ucode or its request port writes, not for the hot path.
 */
export function reclaimingSink(w: ThreadTraceWriter): TraceSink {
  return new Proxy(w, {
    get(target, prop, receiver): unknown {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function' || prop === 'lend' || prop === 'reclaim') return v;
      return (...args: unknown[]): unknown => {
        if (!target.reclaim()) return undefined; // salvaged for good: the run ended
        try { return (v as (...a: unknown[]) => unknown).apply(target, args); } finally { target.lend(); }
      };
    },
  }) as unknown as TraceSink;
}
