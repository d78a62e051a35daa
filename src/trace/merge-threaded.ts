// readTraceColumns with the decoding and merging in a worker thread (merge-worker.ts), so that on
// two cores the reader's work overlaps the model's resolvers on this thread. The result is the
// same merged stream, handed on synchronously: this thread blocks on a shared counter and takes
// each batch with receiveMessageOnPort, so callers stay synchronous. A directory the worker
// cannot open is opened again here, which throws the reader's own error.
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { RecordBatch, NUM_COLS } from './columns.js';
import { readTraceColumns, type ReadTraceOptions, type RunSink, type TraceColumns } from './merge.js';
import { TraceDamage } from './damage.js';
import type { TraceManifest } from './manifest.js';
import type { DamageAdd, MergeMessage, MergeWorkerData } from './merge-worker.js';

const WORKER_FILE = fileURLToPath(new URL('./merge-worker.js', import.meta.url));
/** Rows per posted batch, and batches the worker may run ahead (bounds the memory in flight). */
const BATCH = 16384;
const IN_FLIGHT = 8;

/**
 * Whether the exports read in a worker: only with LUNA_TRACE_WORKER=1 until a quiet measurement
 * at 10^6 fragments shows the overlap wins (under load it cost 1.1 s more CPU per 10^6 events).
 */
export const threadedReading = (): boolean => process.env.LUNA_TRACE_WORKER === '1';

export function readTraceColumnsThreaded(dir: string, opts: ReadTraceOptions = {}): TraceColumns {
  const warnings = opts.warnings ?? [];
  const damage = opts.damage ?? new TraceDamage();
  const ctrl = new SharedArrayBuffer(8);
  const count = new Int32Array(ctrl);
  const { port1, port2 } = new MessageChannel();
  const { warnings: _w, damage: _d, ...plain } = opts;
  const data: MergeWorkerData = { dir, opts: plain, port: port2, ctrl, batch: BATCH, inFlight: IN_FLIGHT };
  const worker = new Worker(WORKER_FILE, { workerData: data, transferList: [port2] });
  worker.unref();
  const next = (): MergeMessage => {
    for (;;) {
      const m = receiveMessageOnPort(port1);
      if (m) return m.message as MergeMessage;
      Atomics.wait(count, 0, Atomics.load(count, 0), 50);
    }
  };
  const replay = (w: string[], d: DamageAdd[]): void => {
    for (const x of w) warnings.push(x);
    for (const x of d) damage.add(x.kind, x.detail, x.file, x.offset);
  };
  const first = next();
  if (first.kind === 'error') {
    port1.close();
    void worker.terminate();
    return readTraceColumns(dir, opts); // throws the reader's own error (or reads here if it was the worker's)
  }
  if (first.kind !== 'open') throw new Error(`trace reading worker: unexpected ${first.kind} message`);
  const manifest = first.manifest as TraceManifest;
  let used = false;
  const runs = (sink: RunSink): void => {
    if (used) throw new Error('readTraceColumnsThreaded: the runs are one-shot');
    used = true;
    const b = new RecordBatch(BATCH); // its string and list columns stay; the typed ones come with each batch
    try {
      for (;;) {
        const m = next();
        if (m.kind === 'rows') {
          Atomics.add(count, 1, 1);
          Atomics.notify(count, 1);
          replay(m.warnings, m.damage);
          b.code = m.code; b.node = m.node; b.thread = m.thread; b.t = m.t;
          for (let c = 0; c < NUM_COLS; c++) b.f[c] = m.f[c]!;
          b.n = m.n;
          for (let k = 0; k < m.sAt.length; k++) b.s[m.sAt[k]!] = m.s[k]!;
          for (let k = 0; k < m.xAt.length; k++) b.x[m.xAt[k]!] = m.x[k]!;
          sink(b, 0, m.n);
          for (const i of m.sAt) b.s[i] = '';
          for (const i of m.xAt) b.x[i] = null;
        } else if (m.kind === 'end') { replay(m.warnings, m.damage); return; }
        else if (m.kind === 'error') throw new Error(`reading ${dir}: ${m.message}`);
      }
    } finally {
      port1.close();
      void worker.terminate();
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
