// The worker thread's side of readTraceColumnsThreaded (merge-threaded.ts): it opens the trace
// directory, decodes and merges it (merge.ts), and writes the merged rows into a ring of batches
// whose columns are shared memory (made once by the reading thread: no typed array made, copied
// or transferred per batch). Strings and int lists live there too: a new string's UTF-16 units and
// a list's ints are copied into the slot's shared text and int pools (a structured clone of the
// strings and lists of a batch cost more than decoding them); what overflows the pools rides in
// the batch's message with the reader's new warnings and damage, which the reading thread
// replays in the order the rows arrive. Strings go by id: both sides keep the same table of the
// last STRING_IDS strings (a DF named on several nodes, a wait's resource), so a string seen
// lately crosses as a number and arrives as the very string object it was (its hash already
// computed for the model's maps).
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { osThreadId } from '../core/thread-id.js';
import { RecordBatch, NUM_COLS } from './columns.js';
import { readTraceColumns, type ReadTraceOptions } from './merge.js';
import { TraceDamage, type DamageKind } from './damage.js';

/** The shared columns of one batch of the ring (views made by each side over the same memory). */
export interface SharedSlot {
  code: SharedArrayBuffer;
  node: SharedArrayBuffer;
  thread: SharedArrayBuffer;
  t: SharedArrayBuffer;
  f: SharedArrayBuffer[];
  /** per row: 0 no string, 1 the string of table id sId, 2 a new one of sLen units in the text pool, 3 a new one in the message; new ones take id sId */
  sHas: SharedArrayBuffer;
  sId: SharedArrayBuffer;
  sLen: SharedArrayBuffer;
  /** UTF-16 units of the batch's new strings, one after another */
  text: SharedArrayBuffer;
  /** per row: its int list's length in the int pool (0: none; −1: in the message) */
  xLen: SharedArrayBuffer;
  xs: SharedArrayBuffer;
}

/** Shared memory of a ring of `slots` batches of `batch` rows (pools of `textUnits` string units and `ints` list ints). */
export function sharedSlots(slots: number, batch: number, textUnits = TEXT_UNITS, ints = XS_INTS): SharedSlot[] {
  return Array.from({ length: slots }, () => ({
    code: new SharedArrayBuffer(batch), node: new SharedArrayBuffer(4 * batch), thread: new SharedArrayBuffer(4 * batch),
    t: new SharedArrayBuffer(8 * batch), f: Array.from({ length: NUM_COLS }, () => new SharedArrayBuffer(8 * batch)),
    sHas: new SharedArrayBuffer(batch), sId: new SharedArrayBuffer(4 * batch), sLen: new SharedArrayBuffer(4 * batch),
    text: new SharedArrayBuffer(2 * textUnits), xLen: new SharedArrayBuffer(4 * batch), xs: new SharedArrayBuffer(4 * ints),
  }));
}

/** A batch whose typed columns are views of a slot's shared memory (its strings and lists stay its own). */
export function slotBatch(s: SharedSlot, batch: number): RecordBatch {
  const b = new RecordBatch(0);
  b.capacity = batch;
  b.code = new Uint8Array(s.code); b.node = new Uint32Array(s.node); b.thread = new Uint32Array(s.thread); b.t = new Float64Array(s.t);
  for (let c = 0; c < NUM_COLS; c++) b.f[c] = new Float64Array(s.f[c]!);
  for (let i = 0; i < batch; i++) { b.s.push(''); b.x.push(null); }
  return b;
}

/** Control words of the shared counter array. */
export const CTRL = {
  /** batches posted by the worker */
  posted: 0,
  /** batches the reading thread is done with (their slots free again) */
  taken: 1,
  /** the worker's OS thread id (Linux; −1 elsewhere; 0 until it runs), so that the reading thread can see it is alive without an event loop */
  tid: 2,
} as const;

/** What the worker is told: the directory, the read options, its port and the shared memory. */
export interface MergeWorkerData {
  dir: string;
  opts: Omit<ReadTraceOptions, 'warnings' | 'damage'>;
  port: MessagePort;
  ctrl: SharedArrayBuffer;
  slots: SharedSlot[];
  batch: number;
  /** strings kept by id (STRING_IDS; tests make it small to see ids reused) */
  stringIds: number;
}

/** Strings both sides keep by id (the ids are reused round-robin). */
export const STRING_IDS = 1 << 16;
/** UTF-16 units of new strings, and ints of lists, a slot holds (a batch of 16 384 rows has ~3 000 strings of ~10 units, ~1 500 lists of 1–3 ints). */
const TEXT_UNITS = 1 << 18;
const XS_INTS = 1 << 16;

/** One batch of merged rows in slot `slot`: the new strings and int lists that did not fit its pools, in row order. */
export interface RowsMessage {
  kind: 'rows';
  slot: number;
  n: number;
  s: string[];
  x: number[][];
  warnings: string[];
  damage: DamageAdd[];
}
export interface DamageAdd { kind: DamageKind; detail: string; file?: string; offset?: number }
export type MergeMessage =
  | { kind: 'open'; manifest: unknown }
  | RowsMessage
  | { kind: 'end'; warnings: string[]; damage: DamageAdd[] }
  | { kind: 'error'; message: string; opened: boolean };

/** A TraceDamage that also keeps every addition until it is posted. */
class PostedDamage extends TraceDamage {
  pending: DamageAdd[] = [];
  override add(kind: DamageKind, detail: string, file?: string, offset?: number): void {
    super.add(kind, detail, file, offset);
    this.pending.push({ kind, detail, ...(file !== undefined ? { file } : {}), ...(offset !== undefined ? { offset } : {}) });
  }
}

function run(d: MergeWorkerData): void {
  const ctrl = new Int32Array(d.ctrl);
  // (−1 where the thread has no kernel id to check for liveness)
  Atomics.store(ctrl, CTRL.tid, osThreadId() ?? -1);
  const warnings: string[] = [];
  const damage = new PostedDamage();
  let told = 0;
  const news = (): { warnings: string[]; damage: DamageAdd[] } => {
    const w = warnings.slice(told);
    told = warnings.length;
    const g = damage.pending;
    damage.pending = [];
    return { warnings: w, damage: g };
  };
  let opened = false;
  try {
    const trace = readTraceColumns(d.dir, { ...d.opts, warnings, damage });
    opened = true;
    d.port.postMessage({ kind: 'open', manifest: trace.manifest } satisfies MergeMessage);
    Atomics.notify(ctrl, CTRL.posted);
    const ring = d.slots.map((s) => slotBatch(s, d.batch));
    const sHas = d.slots.map((s) => new Uint8Array(s.sHas)), sIds = d.slots.map((s) => new Int32Array(s.sId)), sLens = d.slots.map((s) => new Int32Array(s.sLen));
    const texts = d.slots.map((s) => new Uint16Array(s.text)), xLens = d.slots.map((s) => new Int32Array(s.xLen)), xss = d.slots.map((s) => new Int32Array(s.xs));
    const ids = new Map<string, number>(), table = new Array<string | undefined>(d.stringIds);
    let nextId = 0;
    let posted = 0;
    /** the slot being filled: wait until the reading thread is done with it */
    const claim = (): RecordBatch => {
      while (posted - Atomics.load(ctrl, CTRL.taken) >= ring.length) Atomics.wait(ctrl, CTRL.taken, Atomics.load(ctrl, CTRL.taken), 100);
      const b = ring[posted % ring.length]!;
      b.n = 0;
      return b;
    };
    let out = claim();
    const post = (): void => {
      const k = posted % ring.length, n = out.n, has = sHas[k]!, sid = sIds[k]!, slen = sLens[k]!, text = texts[k]!, s: string[] = [], x: number[][] = [];
      let tp = 0;
      for (let i = 0; i < n; i++) {
        const si = out.s[i]!;
        if (si === '') { has[i] = 0; continue; }
        out.s[i] = '';
        let id = ids.get(si);
        if (id !== undefined) { has[i] = 1; sid[i] = id; continue; }
        id = nextId;
        nextId = (nextId + 1) % d.stringIds;
        const old = table[id];
        if (old !== undefined) ids.delete(old);
        table[id] = si;
        ids.set(si, id);
        sid[i] = id;
        const len = si.length;
        if (tp + len > text.length) { s.push(si); has[i] = 3; continue; }
        for (let c = 0; c < len; c++) text[tp++] = si.charCodeAt(c);
        slen[i] = len;
        has[i] = 2;
      }
      const xlen = xLens[k]!, xs = xss[k]!;
      let xp = 0;
      for (let i = 0; i < n; i++) {
        const xi = out.x[i];
        if (!xi) { xlen[i] = 0; continue; }
        out.x[i] = null;
        if (xp + xi.length > xs.length) { x.push(xi); xlen[i] = -1; continue; }
        for (let c = 0; c < xi.length; c++) xs[xp++] = xi[c]!;
        xlen[i] = xi.length;
      }
      d.port.postMessage({ kind: 'rows', slot: k, n, s, x, ...news() } satisfies MergeMessage);
      posted++;
      Atomics.store(ctrl, CTRL.posted, posted);
      Atomics.notify(ctrl, CTRL.posted);
      out = claim();
    };
    trace.runs((rows, from, to) => {
      for (let i = from; i < to; i++) {
        out.copyRow(rows, i);
        if (out.n === d.batch) post();
      }
    });
    if (out.n > 0) post();
    d.port.postMessage({ kind: 'end', ...news() } satisfies MergeMessage);
  } catch (e) {
    d.port.postMessage({ kind: 'error', message: e instanceof Error ? e.message : String(e), opened } satisfies MergeMessage);
  }
  Atomics.add(ctrl, CTRL.posted, 1);
  Atomics.notify(ctrl, CTRL.posted);
  d.port.close();
}

if (parentPort && (workerData as MergeWorkerData | undefined)?.ctrl) run(workerData as MergeWorkerData);
