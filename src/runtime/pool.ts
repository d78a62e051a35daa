// The worker-thread pool of one node, seen from its system thread: start, send a batch to a
// worker (waking it only if it sleeps), receive results as events.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { ImportDef } from '../program/compile.js';
import { AWAKE, SLEEPING, type Batch, type BatchResult, type WorkerInit } from './protocol.js';
import { decodeResult, encodeBatch, type WireResult } from './batchcodec.js';

const WORKER_FILE = fileURLToPath(new URL('./worker.js', import.meta.url));

export interface PoolOptions {
  threads: number;
  bundle?: string;
  imports: ImportDef[];
  trace?: WorkerInit['trace'];
  onResult: (r: BatchResult) => void;
  onFatal: (worker: number, message: string) => void;
}

export class WorkerPool {
  readonly size: number;
  private workers: Worker[] = [];
  private ports: MessagePort[] = [];
  private states: Int32Array;
  /** batches sent and not yet answered, per worker */
  readonly inflight: number[];
  private stopped = false;

  constructor(private opts: PoolOptions) {
    this.size = opts.threads;
    // one sleep flag per worker, then the abort flag (checked by workers between CFs)
    const sab = new SharedArrayBuffer(4 * (opts.threads + 1));
    this.states = new Int32Array(sab);
    this.inflight = new Array(opts.threads).fill(0);
  }

  async start(): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < this.size; i++) {
      const ch = new MessageChannel();
      const init: WorkerInit = {
        index: i, bundle: this.opts.bundle, states: this.states.buffer as SharedArrayBuffer, port: ch.port2, trace: this.opts.trace,
        imports: this.opts.imports.map((m) => ({ symbol: m.symbol, alias: m.alias, params: m.params })),
      };
      const w = new Worker(WORKER_FILE, { workerData: init, transferList: [ch.port2], stdout: false, stderr: false });
      this.workers.push(w);
      this.ports.push(ch.port1);
      ready.push(new Promise<void>((resolve, reject) => {
        const onMsg = (m: unknown) => {
          const msg = m as { ready?: number; fatal?: string; worker?: number } & WireResult;
          if (msg.ready !== undefined) { resolve(); return; }
          if (msg.fatal !== undefined) { reject(new Error(msg.fatal)); this.opts.onFatal(i, msg.fatal); return; }
          this.inflight[msg.worker]!--;
          const r: BatchResult = { worker: msg.worker, batch: msg.batch, outs: decodeResult(msg) };
          if (msg.error) r.error = msg.error;
          if (msg.fin) r.fin = msg.fin;
          this.opts.onResult(r);
        };
        w.on('message', onMsg);
        w.on('error', (e) => { if (!this.stopped) this.opts.onFatal(i, e.message); reject(e); });
        w.on('exit', (code) => { if (!this.stopped) this.opts.onFatal(i, `worker thread ${i} exited with code ${code}`); });
      }));
    }
    await Promise.all(ready);
  }

  send(w: number, batch: Batch): void {
    this.inflight[w]!++;
    this.ports[w]!.postMessage(encodeBatch(batch.id, batch.tasks));
    if (Atomics.load(this.states, w) === SLEEPING) {
      Atomics.store(this.states, w, AWAKE);
      Atomics.notify(this.states, w);
    }
  }

  busy(): boolean { return this.inflight.some((n) => n > 0); }

  /** Tell workers to drop the rest of their batches (the run failed). */
  abort(): void { Atomics.store(this.states, this.size, 1); }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exits = this.workers.map((w) => new Promise<void>((r) => w.once('exit', () => r())));
    for (let i = 0; i < this.size; i++) {
      this.ports[i]!.postMessage({ stop: true });
      Atomics.store(this.states, i, AWAKE);
      Atomics.notify(this.states, i);
    }
    const timeout = new Promise<void>((r) => setTimeout(r, 2000).unref());
    await Promise.race([Promise.all(exits), timeout]);
    for (const w of this.workers) void w.terminate();
  }

  /** Stop immediately (errors): do not wait for running ucodes. */
  async kill(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
