// Trace records as columns: a batch of decoded records stored in typed arrays, one column per
// numeric field position, with no object per record. The layout follows schema.ts: a record's
// numeric fields other than `t`, in table order, go to columns f[0], f[1], … (COL names the column
// of each field of each kind); its `str` field (a kind has at most one) to `s`, its `ints` field
// to `x`. The reader decodes a file's records straight into a batch (decoders generated from the
// schema, which also check that the values can come from a writer), the merge copies them in time
// order into the batch it hands on, and the object view of a record (TraceEvent) is built from a
// row only where a caller still wants objects.
import { fieldBytes, KIND_BY_CODE, MAX_STRING_BYTES, RECORDS, type Field, type RecordDef, type RecordKind, type TraceEvent } from './schema.js';

/** Per kind, its fields' columns: numeric fields by position (`t` is the batch's own column). */
export type KindColumns = { [K in RecordKind]: { readonly [F in (typeof RECORDS)[K]['fields'][number] as F[0]]: number } };

const numericFields = (def: RecordDef): Field[] => (def.fields as readonly Field[]).filter(([n, t]) => n !== 't' && t !== 'str' && t !== 'ints');

/** The column of every field of every kind (numeric fields: f index; the str and ints fields: 0). */
export const COL = Object.fromEntries(
  Object.entries(RECORDS).map(([k, d]) => [k, Object.fromEntries(
    (d.fields as readonly Field[]).filter(([n]) => n !== 't').map(([n, t]) => [n, t === 'str' || t === 'ints' ? 0 : numericFields(d).findIndex(([m]) => m === n)]),
  )]),
) as unknown as KindColumns;

/** The kind byte of every kind. */
export const CODE = Object.fromEntries(Object.entries(RECORDS).map(([k, d]) => [k, d.code])) as { readonly [K in RecordKind]: (typeof RECORDS)[K]['code'] };

/** Numeric columns a batch has: the most numeric fields of any kind. */
export const NUM_COLS = Math.max(...Object.values(RECORDS).map((d) => numericFields(d).length));

/** Per kind code: how many f columns it uses, whether it has a str / ints field, its other time columns, the column of the time it was written at (-1: t). */
const NF: number[] = [];
const HAS_S: boolean[] = [];
const HAS_X: boolean[] = [];
export const TIME_COLS: (readonly number[])[] = [];
export const WRITTEN_COL: number[] = [];
for (const d of Object.values(RECORDS) as RecordDef[]) {
  const nums = numericFields(d);
  NF[d.code] = nums.length;
  HAS_S[d.code] = d.fields.some(([, t]) => t === 'str');
  HAS_X[d.code] = d.fields.some(([, t]) => t === 'ints');
  TIME_COLS[d.code] = nums.flatMap(([, t], i) => (t === 'time' ? [i] : []));
  WRITTEN_COL[d.code] = d.writtenAt ? nums.findIndex(([n]) => n === d.writtenAt) : -1;
}

/** Records in columns: row i is a record of kind code[i] written by (node[i], thread[i]) at t[i]. */
export class RecordBatch {
  n = 0;
  code: Uint8Array;
  node: Uint32Array;
  thread: Uint32Array;
  t: Float64Array;
  readonly f: Float64Array[];
  /** (as long as the typed columns: copyWithin moves only what lies within an array's length) */
  readonly s: string[];
  readonly x: (number[] | null)[];

  constructor(public capacity: number) {
    this.code = new Uint8Array(capacity);
    this.node = new Uint32Array(capacity);
    this.thread = new Uint32Array(capacity);
    this.t = new Float64Array(capacity);
    this.f = Array.from({ length: NUM_COLS }, () => new Float64Array(capacity));
    this.s = new Array<string>(capacity).fill('');
    this.x = new Array<number[] | null>(capacity).fill(null);
  }

  /** Room for `capacity` rows, keeping rows [0, n). */
  grow(capacity: number): void {
    if (capacity <= this.capacity) return;
    const g = <A extends Uint8Array | Uint32Array | Float64Array>(a: A): A => { const b = new (a.constructor as new (n: number) => A)(capacity); b.set(a.subarray(0, this.n)); return b; };
    this.code = g(this.code); this.node = g(this.node); this.thread = g(this.thread); this.t = g(this.t);
    for (let c = 0; c < NUM_COLS; c++) this.f[c] = g(this.f[c]!);
    for (let i = this.capacity; i < capacity; i++) { this.s.push(''); this.x.push(null); }
    this.capacity = capacity;
  }

  /** Drop rows [0, from): row from becomes row 0. */
  shift(from: number): void {
    if (from === 0) return;
    const n = this.n;
    this.code.copyWithin(0, from, n); this.node.copyWithin(0, from, n); this.thread.copyWithin(0, from, n); this.t.copyWithin(0, from, n);
    for (let c = 0; c < NUM_COLS; c++) this.f[c]!.copyWithin(0, from, n);
    this.s.copyWithin(0, from, n);
    this.x.copyWithin(0, from, n);
    this.n = n - from;
  }

  /** Move row `from` to row `to` < from, rows [to, from) moving up by one (a late record into time order). */
  moveBack(from: number, to: number): void {
    const code = this.code[from]!, node = this.node[from]!, thread = this.thread[from]!, t = this.t[from]!, s = this.s[from]!, x = this.x[from]!;
    this.code.copyWithin(to + 1, to, from); this.code[to] = code;
    this.node.copyWithin(to + 1, to, from); this.node[to] = node;
    this.thread.copyWithin(to + 1, to, from); this.thread[to] = thread;
    this.t.copyWithin(to + 1, to, from); this.t[to] = t;
    for (let c = 0; c < NUM_COLS; c++) { const a = this.f[c]!, v = a[from]!; a.copyWithin(to + 1, to, from); a[to] = v; }
    this.s.copyWithin(to + 1, to, from); this.s[to] = s;
    this.x.copyWithin(to + 1, to, from); this.x[to] = x;
  }

  /** Append row i of `b` (its kind's columns only). */
  copyRow(b: RecordBatch, i: number): void {
    const j = this.n++;
    const code = b.code[i]!;
    this.code[j] = code; this.node[j] = b.node[i]!; this.thread[j] = b.thread[i]!; this.t[j] = b.t[i]!;
    const f = this.f, g = b.f;
    for (let c = NF[code]! - 1; c >= 0; c--) f[c]![j] = g[c]![i]!;
    if (HAS_S[code]) this.s[j] = b.s[i]!;
    if (HAS_X[code]) this.x[j] = b.x[i]!;
  }

  /** Add `dt` to every time of row i (a node's clock put on node 0's). */
  shiftTime(i: number, dt: number): void {
    this.t[i] += dt;
    for (const c of TIME_COLS[this.code[i]!]!) this.f[c]![i] += dt;
  }

  /** The time at which row i was written (a span's end, else t). */
  writtenAt(i: number): number {
    const c = WRITTEN_COL[this.code[i]!]!;
    return c < 0 ? this.t[i]! : this.f[c]![i]!;
  }

  kind(i: number): RecordKind {
    return KIND_BY_CODE[this.code[i]!]!;
  }

  /** Row i as a TraceEvent object (the object reader's view). */
  event(i: number): TraceEvent {
    return MATERIALIZE[this.code[i]!]!(this, i);
  }
}

// ------------------------------------------------------------------ generated from the schema

/**
 * Short strings (gids, DF keys) are nearly always ASCII, whose UTF-8 is its Latin-1: checked by
 * hand, then made in one piece. (Appending them a character at a time made a new string per
 * character: a fifth of all a model pass allocated at 10^6 CFs.)
 */
function str(b: Buffer, s: number, e: number): string {
  if (e - s > 24) return b.toString('utf8', s, e);
  for (let i = s; i < e; i++) if (b[i]! > 127) return b.toString('utf8', s, e);
  return latin1 ? latin1.call(b, s, e) : b.toString('latin1', s, e);
}
/**
 * Buffer's own Latin-1 slice (Node 20–24; not in the typings): toString's encoding and range checks
 * cost more than the slice on a ten-byte string, ~2·10^6 times per 10^6 CFs.
 */
const latin1 = (Buffer.prototype as unknown as { latin1Slice?: (this: Buffer, s: number, e: number) => string }).latin1Slice;

/**
 * Decode the record at b[p] into row i of `into` (node and thread are the caller's); false when its
 * values cannot come from a writer. `lastT` stamps an untimed record.
 */
export type RowDecoder = (b: Buffer, v: DataView, p: number, into: RecordBatch, i: number, lastT: number) => boolean;

const LIMIT = 2 ** 53;
const GETTER: Record<string, string> = { time: 'getFloat64', f64: 'getFloat64', u8: 'getUint8', u16: 'getUint16', u32: 'getUint32', i32: 'getInt32' };

/** Decoder source: reads and checks every field, then stores the row. */
function decoderSource(kind: string, def: RecordDef): string {
  const out: string[] = [];
  const store: string[] = [`o.code[i] = ${def.code};`];
  let off = 1;
  if (!def.fields.some(([f]) => f === 't')) store.push('o.t[i] = lastT;');
  const nums = numericFields(def);
  for (const [f, t] of def.fields) {
    if (t === 'str') out.push(`const len_${f} = v.getUint16(p + ${off}, true); if (len_${f} > ${MAX_STRING_BYTES}) return false;`);
    else if (t === 'ints') out.push(`const n_${f} = v.getUint8(p + ${off});`);
    else {
      out.push(`const ${f} = v.${GETTER[t]}(p + ${off}${t === 'u8' ? '' : ', true'});`);
      if (t === 'time') out.push(`if (!(${f} > -${LIMIT} && ${f} < ${LIMIT})) return false;`);
      else if (t === 'f64') out.push(`if (!(${f} >= 0 && ${f} < ${LIMIT})${def.unmeasured?.includes(f) ? ` && ${f} === ${f}` : ''}) return false;`);
      else if (t === 'i32') out.push(`if (${f} < -1) return false;`);
      store.push(f === 't' ? 'o.t[i] = t;' : `o.f[${nums.findIndex(([m]) => m === f)}][i] = ${f};`);
    }
    off += fieldBytes(t);
  }
  if (def.writtenAt) out.push(`if (${def.writtenAt} < t) return false;`);
  out.push(`let q = p + ${off};`);
  for (const [f, t] of def.fields) {
    if (t === 'str') out.push(`o.s[i] = str(b, q, q + len_${f}); q += len_${f};`);
    else if (t === 'ints') out.push(`if (n_${f} === 0) o.x[i] = null; else { const a = new Array(n_${f}); for (let k = 0; k < n_${f}; k++) { a[k] = v.getInt32(q, true); q += 4; } o.x[i] = a; }`);
  }
  return `return function decode_${kind}(b, v, p, o, i, lastT) {\n  ${out.join('\n  ')}\n  ${store.join('\n  ')}\n  return true;\n};`;
}

/** Object view source: the TraceEvent of a row, properties in the order the schema gives them. */
function eventSource(kind: string, def: RecordDef): string {
  const props: string[] = [`kind: ${JSON.stringify(kind)}`, 'node: o.node[i]', 'thread: o.thread[i]'];
  if (!def.fields.some(([f]) => f === 't')) props.push('t: o.t[i]');
  const nums = numericFields(def);
  for (const [f, t] of def.fields) {
    if (f === 't') props.push('t: o.t[i]');
    else if (t === 'str') props.push(`${f}: o.s[i]`);
    else if (t === 'ints') props.push(`${f}: o.x[i] === null ? [] : o.x[i].slice()`);
    else props.push(`${f}: o.f[${nums.findIndex(([m]) => m === f)}][i]`);
  }
  return `return function event_${kind}(o, i) { return { ${props.join(', ')} }; };`;
}

export const DECODE_ROW: (RowDecoder | undefined)[] = [];
const MATERIALIZE: ((b: RecordBatch, i: number) => TraceEvent)[] = [];
for (const [kind, def] of Object.entries(RECORDS) as [string, RecordDef][]) {
  DECODE_ROW[def.code] = new Function('str', decoderSource(kind, def))(str) as RowDecoder;
  MATERIALIZE[def.code] = new Function(eventSource(kind, def))() as (b: RecordBatch, i: number) => TraceEvent;
}
