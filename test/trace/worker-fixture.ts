// Body of the worker threads started by threads.test.ts. Harmless when node --test runs it as a
// file of its own (it does nothing on the main thread).
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { cpuClockExact, setRunOrigin, threadCpuNs, wallNs } from '../../src/trace/clock.js';
import { ThreadTraceWriter } from '../../src/trace/writer.js';

interface Job { mode: 'write' | 'busy' | 'sleep'; dir: string; node: number; thread: number; n: number; origin: string }

if (!isMainThread && parentPort) {
  const job = workerData as Job;
  setRunOrigin(job.origin);
  if (job.mode === 'write') {
    const w = ThreadTraceWriter.open(job.dir, job.node, job.thread, { bufferBytes: 16384 });
    for (let i = 0; i < job.n; i++) {
      const cf = job.thread * 1_000_000 + i;
      w.cfReady(wallNs(), cf);
      w.cfStart(wallNs(), threadCpuNs(), cf, job.thread);
      w.cfFinish(wallNs(), threadCpuNs(), cf, job.thread);
    }
    w.close();
    parentPort.postMessage({ records: w.records });
  } else if (job.mode === 'busy') {
    const samples: number[] = [];
    const w0 = wallNs();
    const c0 = threadCpuNs();
    let x = 0;
    for (let k = 0; k < 20; k++) {
      for (let i = 0; i < 2e5; i++) x += Math.sqrt(i + k);
      samples.push(threadCpuNs());
    }
    parentPort.postMessage({ exact: cpuClockExact, samples, cpu: threadCpuNs() - c0, wall: wallNs() - w0, x });
  } else {
    const c0 = threadCpuNs();
    const w0 = wallNs();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    parentPort.postMessage({ exact: cpuClockExact, cpu: threadCpuNs() - c0, wall: wallNs() - w0 });
  }
}
