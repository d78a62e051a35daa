// The trace schema: the one table of record kinds. The writer's methods, the reader's decoders,
// the TraceEvent type and the TraceSink interface are all derived from RECORDS; adding a record
// kind is one entry here plus its consumers. docs/trace-format.md describes the encoding.
//
// Encoding of a record: the kind byte, then the fixed-size fields in table order (a `str` or
// `ints` field contributes its length there: u16 bytes for str, u8 count for ints), then the
// variable parts in table order (UTF-8 bytes; i32 values). Little-endian throughout.
// A record without a `t` field is stamped with the time of the previous record of its file.

export type FieldType =
  | 'time' // f64 ns on the run's clock
  | 'f64'
  | 'u8'
  | 'u16'
  | 'u32'
  | 'i32'
  | 'str' // u16 byte length + UTF-8 (cut at MAX_STRING_BYTES)
  | 'ints'; // u8 count + i32 values (at most MAX_INTS)

export type Field = readonly [name: string, type: FieldType];

export interface RecordDef {
  readonly code: number;
  readonly fields: readonly Field[];
  /** field holding the time at which the record was written, when it is not `t` (spans) */
  readonly writtenAt?: string;
  /**
   * A naming record: it gives the string `name` to the number in this field, which other records
   * of its file use instead of the string (dfName: DF keys; siteName: SPMD call sites). The
   * sink's method of the kind interns a string and returns its number; `write<Kind>` is the raw record.
   */
  readonly names?: string;
  /** f64 fields that may hold NaN: a quantity the writer could not measure (the reader accepts it) */
  readonly unmeasured?: readonly string[];
  readonly doc: string;
}

export const MAX_STRING_BYTES = 1024;
export const MAX_INTS = 255;

/**
 * Program end status recorded by programFinish (and in the manifest); programFinish stores the
 * index, so append, never reorder. `interrupted`: stopped by a signal (SIGINT, SIGTERM, SIGHUP)
 * or because its launcher vanished, the trace flushed up to that moment.
 */
export const STATUS = ['running', 'completed', 'failed', 'hung', 'lost', 'interrupted'] as const;
export type RunStatus = (typeof STATUS)[number];

/**
 * What a `wait` record waited for (its `kind` indexes this table; append, never reorder):
 * a reply of the node's system thread to a ucode's request, a dynamic array's descriptor
 * held by another fragment or by a rearrangement, a lock, a barrier, a collective operation,
 * a collective allocation, and a resource of the tests.
 */
export const WAIT_KINDS = ['request', 'descriptor', 'lock', 'barrier', 'collective', 'alloc', 'test'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/**
 * The global operations of a dynamic array (ddaOp.op): at its global descriptor, then a node's
 * part of one (LOCK to UNLOCK), then one block of an array of several a node, from LOCK to the
 * arrival of its last part (free for CFs from then on; `array` is `P[j]`, `rearranged` the bytes
 * it received), then what a node told the array's descriptor on the other node between
 * operations (a count answered there takes it as the node's part; `exchanged`: the bytes it sent
 * ahead). Append, never reorder.
 */
export const DDA_OPS = ['count', 'rearrange', 'count (node)', 'rearrange (node)', 'rearrange (block)', 'sent ahead (node)'] as const;

/**
 * SPMD operations (the `op` of spmdEnter, spmdExit and spmdCExit indexes this; append, never
 * reorder). `region` is a code block the program names itself; the collectives, `barrier`,
 * `notify`, `wait` and `all_alloc` end with spmdCExit, every other operation with spmdExit.
 */
export const SPMD_OPS = [
  'region', 'barrier', 'notify', 'wait', 'broadcast', 'scatter', 'gather', 'gather_all', 'exchange', 'permute',
  'reduce', 'prefix_reduce', 'all_alloc', 'lock', 'unlock', 'lock_attempt', 'put', 'get', 'memput', 'memget', 'memcpy', 'fence',
] as const;
export type SpmdOp = (typeof SPMD_OPS)[number];

/**
 * Synchronisation modes of a collective (seed 001 §4, UPC's upc_flag_t): the `sync` field of
 * spmdCExit is IN + 4 · OUT, each indexing this table (IN_NOSYNC = 0, IN_MYSYNC = 1, IN_ALLSYNC = 2).
 */
export const SYNC_MODES = ['nosync', 'mysync', 'allsync'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

export const RECORDS = {
  programStart: { code: 1, fields: [['t', 'time']], doc: 'the node starts the program' },
  programFinish: { code: 2, fields: [['t', 'time'], ['status', 'u8']], doc: 'the node ends; status indexes STATUS' },
  cfCreated: {
    code: 3,
    fields: [['t', 'time'], ['cf', 'u32'], ['parentCf', 'i32'], ['site', 'i32'], ['gid', 'str'], ['labelIdx', 'ints']],
    doc: 'CF spawned here by local CF parentCf (-1: none) at spawn site `site` (-1: main); gid = its stable global id; labelIdx = its label indices when they are plain values',
  },
  cfMigrate: { code: 4, fields: [['t', 'time'], ['cf', 'u32'], ['toNode', 'u16']], doc: 'the CF left for another node (migration or steal)' },
  cfReceive: {
    code: 5,
    fields: [['t', 'time'], ['cf', 'u32'], ['fromNode', 'u16'], ['remoteCf', 'u32'], ['site', 'i32'], ['gid', 'str'], ['labelIdx', 'ints']],
    doc: 'a CF arrived; it was remoteCf on fromNode and is cf here',
  },
  cfReady: { code: 6, fields: [['t', 'time'], ['cf', 'u32']], doc: 'every input of the CF is present on this node' },
  cfInput: { code: 7, fields: [['cf', 'u32'], ['df', 'u32']], doc: 'the CF reads DF df — an argument, or a DF read through an expression (an `int` argument, an index, a rule) (untimed, before its start)' },
  cfStart: { code: 8, fields: [['t', 'time'], ['cpu', 'f64'], ['cf', 'u32'], ['lane', 'u16']], doc: 'lane (worker slot 1..T) starts the CF; cpu = thread CPU ns' },
  cfFinish: { code: 9, fields: [['t', 'time'], ['cpu', 'f64'], ['cf', 'u32'], ['lane', 'u16']], doc: 'the CF finished on its lane' },
  dfName: { code: 10, fields: [['df', 'u32'], ['name', 'str']], names: 'df', doc: 'DF number df of this file is the DF with key `name` (untimed)' },
  dfComputed: { code: 11, fields: [['t', 'time'], ['df', 'u32'], ['producerCf', 'i32'], ['bytes', 'f64']], doc: 'the DF got its value here, made by local CF producerCf' },
  dfSendStart: { code: 12, fields: [['t', 'time'], ['df', 'u32'], ['toNode', 'u16'], ['bytes', 'f64']], doc: 'the DF starts to leave for toNode' },
  dfSendEnd: { code: 13, fields: [['t', 'time'], ['df', 'u32'], ['toNode', 'u16']], doc: 'the DF was handed to the network' },
  dfReceive: { code: 14, fields: [['t', 'time'], ['df', 'u32'], ['fromNode', 'u16'], ['bytes', 'f64']], doc: 'the DF arrived from fromNode' },
  dfDeleted: { code: 15, fields: [['t', 'time'], ['df', 'u32']], doc: 'the DF was freed or destroyed here' },
  sysBusy: { code: 16, fields: [['t', 'time'], ['end', 'time']], writtenAt: 'end', doc: 'the system thread was busy on [t, end)' },
  readyQueue: { code: 17, fields: [['t', 'time'], ['value', 'u32']], doc: 'ready CFs not yet dispatched' },
  liveBytes: { code: 18, fields: [['t', 'time'], ['value', 'f64']], doc: 'bytes of DF values held by the node' },
  wait: {
    code: 19,
    fields: [['t', 'time'], ['end', 'time'], ['cpu', 'f64'], ['cf', 'i32'], ['rank', 'i32'], ['waitKind', 'u8'], ['resource', 'str']],
    writtenAt: 'end',
    unmeasured: ['cpu'],
    doc: 'the writing thread waited on [t, end) for `resource` (waitKind indexes WAIT_KINDS), inside local CF cf (-1: none) or as SPMD rank `rank` (-1: none); cpu = thread CPU ns it spent meanwhile (spinning; NaN: not measured)',
  },
  siteName: { code: 20, fields: [['callSite', 'u32'], ['name', 'str']], names: 'callSite', doc: 'SPMD call site number callSite of this file is `name` (`is.ts:120:5`; untimed)' },
  spmdEnter: {
    code: 21,
    fields: [['t', 'time'], ['rank', 'u32'], ['op', 'u8'], ['callSite', 'u32']],
    doc: 'SPMD rank `rank` enters operation op (indexes SPMD_OPS) called at callSite (siteName)',
  },
  spmdExit: { code: 22, fields: [['t', 'time'], ['rank', 'u32'], ['op', 'u8']], doc: 'the rank leaves the innermost operation it entered, op' },
  spmdCExit: {
    code: 23,
    fields: [['t', 'time'], ['rank', 'u32'], ['op', 'u8'], ['seq', 'u32'], ['root', 'i32'], ['sync', 'u8'], ['sent', 'f64'], ['recv', 'f64']],
    doc: 'the rank leaves collective op number seq (the k-th collective of every rank has seq k), rooted at rank root (-1: none), with synchronisation sync (IN + 4 · OUT, SYNC_MODES), having sent and received those bytes',
  },
  spmdAlock: { code: 24, fields: [['t', 'time'], ['rank', 'u32'], ['lock', 'u32']], doc: 'the rank acquired lock `lock` (inside its lock or lock_attempt operation)' },
  spmdRlock: { code: 25, fields: [['t', 'time'], ['rank', 'u32'], ['lock', 'u32']], doc: 'the rank released lock `lock` (inside its unlock operation)' },
  ddaOp: {
    code: 26,
    fields: [['t', 'time'], ['end', 'time'], ['op', 'u8'], ['exchanged', 'f64'], ['rearranged', 'f64'], ['array', 'str']],
    writtenAt: 'end',
    doc: 'a global operation of dynamic array `array` (op indexes DDA_OPS) ran on [t, end) at its global descriptor, moving `exchanged` bytes its CFs sent by destination and `rearranged` bytes of its new distribution; or (op 2, 3) this node took part in one on [t, end), locked from LOCK to UNLOCK, sending those bytes; or (op 4) block `array` = P[j] of this node received its parts of a rearrangement by `end` (`rearranged` bytes), free from then on; or (op 5) at `end` this node told the global descriptor on the other node, between operations, what its CFs changed, sending `exchanged` bytes ahead (a count answered there without a message is made of these and the descriptor node\'s own `count (node)`)',
  },
  dfUnspent: {
    code: 27,
    fields: [['t', 'time'], ['df', 'u32'], ['left', 'u32'], ['bytes', 'f64']],
    doc: 'at the end of the run the DF was still held here, its req_count not reached: `left` requests never came, and its `bytes` stayed held from its post to the end',
  },
} as const satisfies Record<string, RecordDef>;

export type RecordKind = keyof typeof RECORDS;

/** Kinds that name numbers of their file (RecordDef.names): their sink methods intern strings. */
export type NamingKind = { [K in RecordKind]: (typeof RECORDS)[K] extends { names: string } ? K : never }[RecordKind];
export const NAMING_KINDS = (Object.keys(RECORDS) as RecordKind[]).filter((k) => (RECORDS[k] as RecordDef).names !== undefined) as NamingKind[];
/** `dfName` → `writeDfName`: the writer's raw method of a naming kind. */
export const rawMethod = (k: NamingKind): string => `write${k[0]!.toUpperCase()}${k.slice(1)}`;

type JsType<T extends FieldType> = T extends 'str' ? string : T extends 'ints' ? readonly number[] | null : number;
type FieldsOf<K extends RecordKind> = (typeof RECORDS)[K]['fields'];
type Params<F extends readonly Field[]> = { -readonly [I in keyof F]: F[I] extends readonly [string, infer T extends FieldType] ? JsType<T> : never };
type Obj<F extends readonly Field[]> = { [P in F[number] as P[0]]: P[1] extends 'ints' ? number[] : JsType<P[1]> };

/** A decoded record: its fields, its kind, who wrote it (thread 0 = the node's system thread), and its time. */
export type TraceEvent = {
  [K in RecordKind]: { kind: K; node: number; thread: number; t: number } & Obj<FieldsOf<K>>;
}[RecordKind];

export type TraceEventKind = TraceEvent['kind'];

/** What the runtime tells the tracer: one method per record kind, parameters in field order. */
export type RecordMethods = { [K in RecordKind]: (...args: Params<FieldsOf<K>>) => void };

export interface TraceSink extends Omit<RecordMethods, NamingKind> {
  /** Intern a DF key; returns its number in this file (writes a dfName record the first time). */
  dfName(name: string): number;
  /** Intern an SPMD call site; returns its number in this file (writes a siteName record the first time). */
  siteName(name: string): number;
  /** Write buffered records to disk. */
  flush(): void;
  close(): void;
}

export const KIND_BY_CODE: readonly (RecordKind | undefined)[] = (() => {
  const a: (RecordKind | undefined)[] = [];
  for (const [k, d] of Object.entries(RECORDS)) a[d.code] = k as RecordKind;
  return a;
})();

export const MAX_CODE = KIND_BY_CODE.length - 1;

/**
 * Per kind, the times of a decoded record on its writer's clock (shifted together when a node's
 * clock is put on node 0's): `t` — its own field, or for an untimed record the time the reader
 * stamps it with — and its other fields of type `time`.
 */
export const TIME_FIELDS = Object.fromEntries(
  Object.entries(RECORDS).map(([k, d]) => [k, ['t', ...(d.fields as readonly Field[]).filter(([n, t]) => t === 'time' && n !== 't').map(([n]) => n)]]),
) as unknown as Record<RecordKind, readonly string[]>;

/** Per kind, the field holding the time at which a writer wrote the record (`t` unless the record is a span written when it ends). */
export const WRITTEN_AT = Object.fromEntries(
  Object.entries(RECORDS).map(([k, d]) => [k, (d as RecordDef).writtenAt ?? 't']),
) as unknown as Record<RecordKind, string>;

const FIXED_BYTES: Record<FieldType, number> = { time: 8, f64: 8, u8: 1, u16: 2, u32: 4, i32: 4, str: 2, ints: 1 };

/** Bytes of a record's fixed part, kind byte included. */
export function fixedSize(def: RecordDef): number {
  let n = 1;
  for (const [, t] of def.fields) n += FIXED_BYTES[t];
  return n;
}

export const fieldBytes = (t: FieldType): number => FIXED_BYTES[t];

/** Largest possible record (writers reserve this much before a record with variable parts). */
export const MAX_RECORD_BYTES = (() => {
  let max = 0;
  for (const d of Object.values(RECORDS) as RecordDef[]) {
    let n = fixedSize(d);
    for (const [, t] of d.fields) n += t === 'str' ? MAX_STRING_BYTES : t === 'ints' ? 4 * MAX_INTS : 0;
    max = Math.max(max, n);
  }
  return max;
})();
