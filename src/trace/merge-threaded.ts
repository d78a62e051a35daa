// readTraceColumns with the decoding and merging in a worker thread (merge-worker.ts), so that on
// two cores the reader's work overlaps the model's resolvers on this thread. The result is the
// same merged stream, handed on synchronously: this thread blocks on a shared counter and takes
// each batch with receiveMessageOnPort, so callers stay synchronous. A directory the worker
// cannot open is opened again here, which throws the reader's own error.
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RecordBatch } from './columns.js';
import { readTraceColumns, type ReadTraceOptions, type RunSink, type TraceColumns } from './merge.js';
import { TraceDamage } from './damage.js';
import type { TraceManifest } from './manifest.js';
import { CTRL, STRING_IDS, sharedSlots, slotBatch, type DamageAdd, type MergeMessage, type MergeWorkerData } from './merge-worker.js';

const WORKER_FILE = fileURLToPath(new URL('./merge-worker.js', import.meta.url));
/** Rows per batch, and batches in the ring (how far the worker may run ahead: bounds the memory in flight). */
const BATCH = 16384;
const SLOTS = 8;
/** How often a reader waiting for rows checks that the worker still lives (ms), and how long it may take to start. */
const LIVENESS_MS = 50;
const START_MS = 60_000;

/**
 * Whether the exports read in a worker: only with LUNA_TRACE_WORKER=1 until a quiet measurement
 * at 10^6 fragments shows the overlap wins (under load it cost 1.1 s more CPU per 10^6 events).
 */
export const threadedReading = (): boolean => process.env.LUNA_TRACE_WORKER === '1';

/**
 * Test hooks: `onWorker` is told the worker as soon as it is started (a test kills it to see the
 * reader notice); `stringIds` shrinks the strings kept by id (to see ids reused), `pools` the
 * shared string and int pools of a batch (to see what overflows them go in the message).
 */
export interface ThreadedReadOptions extends ReadTraceOptions { onWorker?: (w: Worker) => void; stringIds?: number; pools?: { textUnits: number; ints: number } }

/** The string of `len` UTF-16 units at text[p] (short ones unit by unit: cheaper than a call through apply). */
function units(text: Uint16Array, p: number, len: number): string {
  if (len > 32) return String.fromCharCode.apply(null, text.subarray(p, p + len) as unknown as number[]);
  let s = '';
  for (let i = p; i < p + len; i++) s += String.fromCharCode(text[i]!);
  return s;
}

/**
 * Whether the worker's thread is gone. A reader blocked in Atomics.wait runs no event loop, so
 * the Worker's 'exit' event would never reach it: the worker says its OS thread id, and the
 * thread's entry under /proc/self/task is the sign of life (Linux; elsewhere no check is made).
 */
function gone(ctrl: Int32Array, since: number): boolean {
  const tid = Atomics.load(ctrl, CTRL.tid);
  if (tid === 0) return performance.now() - since > START_MS; // it never ran (its module failed to load)
  return tid > 0 && !existsSync(`/proc/self/task/${tid}`);
}

export function readTraceColumnsThreaded(dir: string, opts: ThreadedReadOptions = {}): TraceColumns {
  const warnings = opts.warnings ?? [];
  const damage = opts.damage ?? new TraceDamage();
  const ctrl = new Int32Array(new SharedArrayBuffer(4 * 4));
  const slots = sharedSlots(SLOTS, BATCH, opts.pools?.textUnits, opts.pools?.ints);
  const { port1, port2 } = new MessageChannel();
  const { warnings: _w, damage: _d, onWorker, stringIds = STRING_IDS, pools: _p, ...plain } = opts;
  const data: MergeWorkerData = { dir, opts: plain, port: port2, ctrl: ctrl.buffer as SharedArrayBuffer, slots, batch: BATCH, stringIds };
  const worker = new Worker(WORKER_FILE, { workerData: data, transferList: [port2] });
  worker.unref();
  onWorker?.(worker);
  const stop = (): void => { port1.close(); void worker.terminate(); };
  const started = performance.now();
  /** The next message; a worker that died without one is an error naming the trace, never a wait for ever. */
  const next = (): MergeMessage => {
    for (;;) {
      const seen = Atomics.load(ctrl, CTRL.posted);
      const m = receiveMessageOnPort(port1);
      if (m) return m.message as MergeMessage;
      if (Atomics.wait(ctrl, CTRL.posted, seen, LIVENESS_MS) === 'timed-out' && gone(ctrl, started)) {
        const last = receiveMessageOnPort(port1); // posted just before it ended
        if (last) return last.message as MergeMessage;
        stop();
        throw Object.assign(new Error(`reading the trace ${dir}: its reading worker thread ended without finishing (killed, or out of memory); nothing after the records already read was read`), { code: 'ETRACEWORKER' });
      }
    }
  };
  const replay = (w: string[], d: DamageAdd[]): void => {
    for (const x of w) warnings.push(x);
    for (const x of d) damage.add(x.kind, x.detail, x.file, x.offset);
  };
  let first: MergeMessage;
  try { first = next(); } catch (e) { stop(); throw e; }
  if (first.kind === 'error') {
    stop();
    return readTraceColumns(dir, opts); // throws the reader's own error (or reads here if it was the worker's)
  }
  if (first.kind !== 'open') { stop(); throw new Error(`trace reading worker: unexpected ${first.kind} message`); }
  const manifest = first.manifest as TraceManifest;
  let used = false;
  const runs = (sink: RunSink): void => {
    if (used) throw new Error('readTraceColumnsThreaded: the runs are one-shot');
    used = true;
    // the ring's batches, over the memory the worker writes (made once)
    const ring = slots.map((s) => slotBatch(s, BATCH));
    const sHas = slots.map((s) => new Uint8Array(s.sHas)), sIds = slots.map((s) => new Int32Array(s.sId)), sLens = slots.map((s) => new Int32Array(s.sLen));
    const texts = slots.map((s) => new Uint16Array(s.text)), xLens = slots.map((s) => new Int32Array(s.xLen)), xss = slots.map((s) => new Int32Array(s.xs));
    const table = new Array<string>(stringIds).fill(''); // the worker's strings by id, kept alike
    let taken = 0;
    try {
      for (;;) {
        const m = next();
        if (m.kind === 'rows') {
          replay(m.warnings, m.damage);
          const k = m.slot, b = ring[k]!, has = sHas[k]!, sid = sIds[k]!, slen = sLens[k]!, text = texts[k]!, n = m.n;
          b.n = n;
          for (let i = 0, tp = 0, ms = 0; i < n; i++) {
            const h = has[i]!;
            if (h === 1) b.s[i] = table[sid[i]!]!;
            else if (h === 2) { const len = slen[i]!; b.s[i] = table[sid[i]!] = units(text, tp, len); tp += len; }
            else if (h === 3) b.s[i] = table[sid[i]!] = m.s[ms++]!;
          }
          const xlen = xLens[k]!, xs = xss[k]!;
          for (let i = 0, xp = 0, mx = 0; i < n; i++) {
            const c = xlen[i]!;
            if (c === 0) continue;
            if (c < 0) { b.x[i] = m.x[mx++]!; continue; }
            const a = new Array<number>(c);
            for (let j = 0; j < c; j++) a[j] = xs[xp++]!;
            b.x[i] = a;
          }
          sink(b, 0, n);
          for (let i = 0; i < n; i++) if (has[i] !== 0) b.s[i] = '';
          for (let i = 0; i < n; i++) if (xlen[i] !== 0) b.x[i] = null;
          Atomics.store(ctrl, CTRL.taken, ++taken);
          Atomics.notify(ctrl, CTRL.taken);
        } else if (m.kind === 'end') { replay(m.warnings, m.damage); return; }
        else if (m.kind === 'error') throw new Error(`reading ${dir}: ${m.message}`);
      }
    } finally {
      stop();
    }
  };
  const batches = {
    *[Symbol.iterator](): Generator<RecordBatch, void, undefined> {
      // rarely used (tests, small tools): collect the runs into whole batches
      const all: RecordBatch[] = [];
      runs((rows, from, to) => { const c = new RecordBatch(to - from); for (let i = from; i < to; i++) c.copyRow(rows, i); all.push(c); });
      yield* all;
    },
  };
  return { manifest, batches, runs, warnings, damage };
}
