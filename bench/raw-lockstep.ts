// The floor of Task Bench stencil_1d on 1 node × 2 threads on this machine: two bare worker
// threads, each running the same compute_bound kernel `iters` iterations per step and then
// waiting for the other's step (a shared counter: spin 20 µs, then Atomics.wait — what a luna
// worker does for a fed value), `steps` times — the graph without a runtime. `free`: no waiting
// (the trivial pattern, for the kernel's peak). Prints µs per step from the moment both threads
// have loaded the kernel to the last one's end (a luna run's `--warm-start` span).
//   node dist/bench/raw-lockstep.js <iters> <steps> [free]
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { computeBound } from './taskbench/kernel.js';

const SELF = fileURLToPath(import.meta.url);
const SPIN_MS = 0.02;
/** slots of the shared counters: each thread's last finished step, then the start barrier */
const BARRIER = 2;

interface Job { sab: SharedArrayBuffer; me: number; iters: number; steps: number; sync: boolean }
interface Span { start: number; end: number; sink: number }

function worker(job: Job): Span {
  const f = new Int32Array(job.sab), other = 1 - job.me;
  Atomics.add(f, BARRIER, 1);
  Atomics.notify(f, BARRIER);
  while (Atomics.load(f, BARRIER) < 2) Atomics.wait(f, BARRIER, 1, 1);
  const start = performance.timeOrigin + performance.now();
  let sink = 0;
  for (let k = 1; k <= job.steps; k++) {
    sink += computeBound(job.iters);
    if (!job.sync) continue;
    Atomics.store(f, job.me, k);
    Atomics.notify(f, job.me);
    const until = performance.now() + SPIN_MS;
    for (let seen = Atomics.load(f, other); seen < k; seen = Atomics.load(f, other)) {
      if (performance.now() > until) Atomics.wait(f, other, seen, 1);
    }
  }
  return { start, end: performance.timeOrigin + performance.now(), sink };
}

async function main(): Promise<void> {
  const iters = Number(process.argv[2] ?? 1024), steps = Number(process.argv[3] ?? 1000), sync = process.argv[4] !== 'free';
  const sab = new SharedArrayBuffer(4 * (BARRIER + 1));
  const spans = await Promise.all([0, 1].map((me) => new Promise<Span>((res, rej) => {
    const w = new Worker(SELF, { workerData: { sab, me, iters, steps, sync } satisfies Job });
    w.once('message', (s: Span) => { res(s); void w.terminate(); });
    w.once('error', rej);
  })));
  if (!spans.every((s) => Number.isFinite(s.sink))) throw new Error('kernel');
  const ms = Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start));
  console.log(`${((ms * 1000) / steps).toFixed(2)} µs per step (${iters} iterations, ${steps} steps, ${sync ? 'lockstep' : 'free'})`);
}

if (isMainThread) {
  if (process.argv[1] === SELF) await main();
} else {
  parentPort!.postMessage(worker(workerData as Job));
}
