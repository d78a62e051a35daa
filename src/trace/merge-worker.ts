// The worker thread's side of readTraceColumnsThreaded (merge-threaded.ts): it opens the trace
// directory, decodes and merges it (merge.ts), and posts the merged rows in batches of columns,
// their typed arrays transferred; the reader's new warnings and damage ride with each batch, so
// the reading thread replays them in the order the rows arrive.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { RecordBatch, NUM_COLS } from './columns.js';
import { readTraceColumns, type ReadTraceOptions } from './merge.js';
import { TraceDamage, type DamageKind } from './damage.js';

/** What the worker is told: the directory, the read options, its port and the shared counters. */
export interface MergeWorkerData {
  dir: string;
  opts: Omit<ReadTraceOptions, 'warnings' | 'damage'>;
  port: MessagePort;
  /** [0] batches posted, [1] batches taken by the reader */
  ctrl: SharedArrayBuffer;
  batch: number;
  inFlight: number;
}

/** One batch of merged rows; strings and int lists only for the rows that have them. */
export interface RowsMessage {
  kind: 'rows';
  n: number;
  code: Uint8Array;
  node: Uint32Array;
  thread: Uint32Array;
  t: Float64Array;
  f: Float64Array[];
  sAt: number[];
  s: string[];
  xAt: number[];
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
    let out = new RecordBatch(d.batch);
    const post = (): void => {
      const n = out.n, sAt: number[] = [], s: string[] = [], xAt: number[] = [], x: number[][] = [];
      for (let i = 0; i < n; i++) {
        if (out.s[i] !== '') { sAt.push(i); s.push(out.s[i]!); }
        const xi = out.x[i];
        if (xi) { xAt.push(i); x.push(xi); }
      }
      const f = out.f.slice(0, NUM_COLS);
      const msg: MergeMessage = { kind: 'rows', n, code: out.code, node: out.node, thread: out.thread, t: out.t, f, sAt, s, xAt, x, ...news() };
      // the reader waits on [0]; hold back while it has `inFlight` batches to take
      const posted = Atomics.load(ctrl, 0);
      while (posted - Atomics.load(ctrl, 1) >= d.inFlight) Atomics.wait(ctrl, 1, Atomics.load(ctrl, 1), 100);
      d.port.postMessage(msg, [out.code.buffer, out.node.buffer, out.thread.buffer, out.t.buffer, ...f.map((a) => a.buffer)] as ArrayBuffer[]);
      Atomics.add(ctrl, 0, 1);
      Atomics.notify(ctrl, 0);
      out = new RecordBatch(d.batch);
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
  Atomics.add(ctrl, 0, 1);
  Atomics.notify(ctrl, 0);
  d.port.close();
}

if (parentPort && (workerData as MergeWorkerData | undefined)?.ctrl) run(workerData as MergeWorkerData);
