// Worker thread: runs atomic CFs (ucodes) only. It pulls batches from its port synchronously
// and parks on an Atomics flag when idle, so the system thread wakes only sleepers and a busy
// worker never pays an event-loop round trip per batch.
import { receiveMessageOnPort, workerData, parentPort, type MessagePort } from 'node:worker_threads';
import { writeSync } from 'node:fs';
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { DF } from '../ucode/df.js';
import { displayKey } from '../program/compile.js';
import { T_RAW, type DfValue } from '../ucode/value.js';
import { sharedBytesChurned } from './shm.js';
import { ThreadTraceWriter, setRunOrigin, wallNs, threadCpuNs, cpuClockExact } from '../trace/index.js';
import { AWAKE, SLEEPING, type WorkerInit } from './protocol.js';
import { BatchKeys, decodeBatch, encodeResult, type WireBatch } from './batchcodec.js';

const init = workerData as WorkerInit;
// Ucode stack traces point into ucodes.ts (the bundle carries an inline source map).
process.setSourceMapsEnabled(true);
const states = new Int32Array(init.states);
const me = init.index;
// Tracing: this worker's own file (thread me+1); CF start/finish with wall and thread-CPU clocks.
let tw: ThreadTraceWriter | undefined;
if (init.trace) {
  setRunOrigin(init.trace.origin);
  tw = ThreadTraceWriter.open(init.trace.dir, init.trace.node, me + 1, { cpuExact: cpuClockExact });
}

// Ucode output goes straight to the file descriptors: ordered, unbuffered, never lost on abort.
const pause = new Int32Array(new SharedArrayBuffer(4));
/** Write all of `buf`; a pipe in non-blocking mode may refuse (EAGAIN) while its reader lags. */
function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) {
    try { off += writeSync(fd, buf, off); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
const syncStream = (fd: number) => new Writable({ write(chunk, _enc, cb) { writeAll(fd, chunk as Buffer); cb(); } });
const out = syncStream(1), err = syncStream(2);
globalThis.console = new Console({ stdout: out, stderr: err });
Object.defineProperty(process, 'stdout', { value: out, configurable: true });
Object.defineProperty(process, 'stderr', { value: err, configurable: true });

type Ucode = (...args: unknown[]) => unknown;

/** Outputs of the batch this worker ran last (a chain may continue from them). */
let prevOuts: (DfValue | null)[][] = [];

async function main(): Promise<void> {
  const fns: Ucode[] = [];
  if (init.bundle) {
    const mod = (await import(pathToFileURL(init.bundle).href)) as Record<string, unknown>;
    for (const imp of init.imports) {
      const f = mod[imp.symbol];
      fns.push(typeof f === 'function' ? (f as Ucode) : missing(imp.symbol));
    }
  } else for (const imp of init.imports) fns.push(missing(imp.symbol));
  parentPort!.postMessage({ ready: me });
  loop(fns);
}

function missing(symbol: string): Ucode {
  return () => { throw new Error(`the ucode module exports no function ${symbol}`); };
}

function loop(fns: Ucode[]): void {
  const port = init.port;
  for (;;) {
    const m = receiveMessageOnPort(port);
    if (m === undefined) {
      Atomics.store(states, me, SLEEPING);
      const again = receiveMessageOnPort(port); // a batch may have arrived before we slept
      if (again === undefined) { Atomics.wait(states, me, SLEEPING); continue; }
      Atomics.store(states, me, AWAKE);
      if (!run(again.message as WireBatch | { stop: true }, fns)) return;
      continue;
    }
    if (!run(m.message as WireBatch | { stop: true }, fns)) return;
  }
}

function run(msg: WireBatch | { stop: true }, fns: Ucode[]): boolean {
  if ('stop' in msg) { tw?.close(); port().close(); return false; }
  const tasks = decodeBatch(msg);
  const names = new BatchKeys(msg.keys);
  const nameOf = (k: string): string => displayKey(names.get(Number(k)));
  const outs: (DfValue | null)[][] = new Array(tasks.length);
  let error: { task: number; message: string; stack?: string } | undefined;
  const fin = tw ? new Float64Array(tasks.length) : undefined;
  const abortAt = states.length - 1;
  for (let ti = 0; ti < tasks.length; ti++) {
    if (states[abortAt] !== 0) { outs.length = ti; break; } // the run failed: drop the rest
    const t = tasks[ti]!;
    const imp = init.imports[t.imp]!;
    const params = imp.params;
    const args = t.args;
    if (t.fwd) {
      for (let k = 0; k < t.fwd.length; k += 3) {
        const task = t.fwd[k + 1]!;
        args[t.fwd[k]!] = (task >= 0 ? outs[task] : prevOuts[-1 - task])![t.fwd[k + 2]!];
      }
    }
    const call: unknown[] = new Array(params.length);
    const outDfs: DF[] = [];
    for (let i = 0; i < params.length; i++) {
      const p = params[i];
      if (p === 'value') call[i] = new DF(String(t.keys[i]), args[i] as DfValue, false, nameOf);
      else if (p === 'name') { const d = new DF(String(t.keys[i]), undefined, true, nameOf); outDfs.push(d); call[i] = d; }
      else call[i] = args[i];
    }
    if (tw) {
      const t0 = wallNs();
      if (t.fwd) tw.cfReady(t0, t.cf);
      tw.cfStart(t0, threadCpuNs(), t.cf);
    }
    try {
      fns[t.imp]!(...call);
      // CPU read inside the wall interval on both ends, so CPU time ≤ wall time per CF.
      if (tw) { const c1 = threadCpuNs(); const t1 = wallNs(); tw.cfFinish(t1, c1, t.cf); fin![ti] = t1; }
    } catch (e) {
      if (tw) { const c1 = threadCpuNs(); tw.cfFinish(wallNs(), c1, t.cf); tw.flush(); }
      const ex = e instanceof Error ? e : new Error(String(e));
      error = { task: ti, message: ex.message, stack: ex.stack };
      Atomics.store(states, abortAt, 1); // the run fails: other workers stop after their current CF
      outs.length = ti;
      break;
    }
    const o: (DfValue | null)[] = new Array(outDfs.length);
    for (let i = 0; i < outDfs.length; i++) {
      const v = outDfs[i]!.value ?? null;
      if (v !== null && v.t === T_RAW) sharedBytesChurned(v.v.byteLength);
      o[i] = v;
    }
    outs[ti] = o;
  }
  prevOuts = outs; // the next batch may continue a chain from these
  const result = encodeResult(me, msg.id, outs);
  if (error) result.error = error;
  if (fin) result.fin = fin;
  parentPort!.postMessage(result);
  return true;
}

function port(): MessagePort { return init.port; }

main().catch((e: unknown) => {
  const ex = e instanceof Error ? e : new Error(String(e));
  parentPort!.postMessage({ fatal: ex.message, worker: me });
});
