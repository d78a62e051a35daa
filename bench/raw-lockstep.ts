// The floor of Task Bench stencil_1d on 1 node × 2 threads on this machine: two bare worker
// threads, each running the same compute_bound kernel `iters` iterations per step and then
// waiting for the other's step (a shared counter: spin 20 µs, then Atomics.wait — what a luna
// worker does for a fed value), `steps` times — the graph without a runtime. `free`: no waiting
// (the trivial pattern, for the kernel's peak). `cpp`: the kernel is Task Bench's C++ ucode,
// compiled as `luna run --cxxflags="-O3 -march=native"` compiles it and called through the
// native addon exactly as a luna worker calls it (bindNative's direct call), so the figure is
// what a Node design with C++ kernels allows. Prints µs per step from the moment both threads
// have loaded the kernel to the last one's end (a luna run's `--warm-start` span), then each
// thread's time in the kernel over that span: the lanes-busy share a design with no runtime
// reaches on this machine (what the other tenant's preemption alone leaves of a lane).
//   [RAW_SPIN_US=µs|Infinity] node dist/bench/raw-lockstep.js <iters> <steps> [free|lockstep] [ts|cpp [cache directory]]
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computeBound, warmKernel } from './taskbench/kernel.js';
import { ucodesCpp } from './taskbench/generate.js';
import { buildCppUcodes, scanSources } from '../src/ucode/cpp/build.js';
import { bindNative, type NativeUcodes } from '../src/ucode/cpp/native.js';
import type { DfValue } from '../src/ucode/value.js';
import { cpuClockExact, threadCpuNs } from '../src/trace/clock.js';

const SELF = fileURLToPath(import.meta.url);
/**
 * how long a waiting thread spins before it sleeps (RAW_SPIN_US, µs; default 20, as a luna worker
 * first spun; `Infinity`: it never sleeps — the floor of waiting when both threads have a core)
 */
const SPIN_MS = Number(process.env.RAW_SPIN_US ?? 20) / 1000;
/** slots of the shared counters: each thread's last finished step, then the start barrier */
const BARRIER = 2;
/** as Task Bench builds its C++ ucodes (bench/taskbench.ts) */
const CPP_FLAGS = '-O3 -march=native';

interface Job { sab: SharedArrayBuffer; me: number; iters: number; steps: number; sync: boolean; native?: NativeUcodes }
interface Span { start: number; end: number; sink: number; busy: number; cpuNs: number }

/** The step's kernel: the TypeScript compute_bound, or the C++ ucode `c_task0(iters, out)` through the addon. */
function kernel(job: Job): (iters: number) => number {
  if (!job.native) return computeBound;
  const direct = bindNative(job.native, { symbol: 'c_task0', alias: 'task0', params: ['int', 'name'] }).direct!;
  const args: unknown[] = [0, null], keys = ['', ''], outs: (DfValue | null)[] = [null];
  return (iters) => {
    args[0] = iters;
    direct(args, keys, String, outs);
    return outs[0]!.v as number;
  };
}

function worker(job: Job): Span {
  const f = new Int32Array(job.sab), other = 1 - job.me;
  // loaded (the library opened, the call bound; the TypeScript kernel optimised and its fastest
  // compile kept, as a Task Bench program's ucode module does it) before the span starts
  if (!job.native) warmKernel();
  const run = kernel(job);
  if (job.native) run(1);
  Atomics.add(f, BARRIER, 1);
  Atomics.notify(f, BARRIER);
  while (Atomics.load(f, BARRIER) < 2) Atomics.wait(f, BARRIER, 1, 1);
  const start = performance.timeOrigin + performance.now();
  let sink = 0, busy = 0, cpuNs = 0;
  for (let k = 1; k <= job.steps; k++) {
    const t0 = performance.now(), c0 = threadCpuNs();
    sink += run(job.iters);
    cpuNs += threadCpuNs() - c0;
    busy += performance.now() - t0;
    if (!job.sync) continue;
    Atomics.store(f, job.me, k);
    Atomics.notify(f, job.me);
    const until = performance.now() + SPIN_MS;
    for (let seen = Atomics.load(f, other); seen < k; seen = Atomics.load(f, other)) {
      if (performance.now() > until) Atomics.wait(f, other, seen, 1);
    }
  }
  return { start, end: performance.timeOrigin + performance.now(), sink, busy, cpuNs };
}

/** Build the C++ ucode library of Task Bench's kernels from `dir` (the luna build cache `cache` reuses it). */
async function buildCpp(dir: string, cache: string): Promise<NativeUcodes> {
  const src = join(dir, 'ucodes.cpp');
  writeFileSync(src, ucodesCpp([0]));
  const b = await buildCppUcodes({
    sources: [src], scans: scanSources([src]), tsImports: [], cacheDir: cache, cxxflags: CPP_FLAGS,
    imports: [{ alias: 'task0', symbol: 'c_task0', params: ['int', 'name'] }],
  });
  if (!b.native) throw new Error(`the C++ kernel did not build: ${b.diagnostics.map((d) => d.message).join('; ')}`);
  return b.native;
}

async function main(): Promise<void> {
  const iters = Number(process.argv[2] ?? 1024), steps = Number(process.argv[3] ?? 1000), sync = process.argv[4] !== 'free';
  const cpp = process.argv[5] === 'cpp';
  // a sweep passes its own directory, so the library is compiled once for all its points
  const keep = process.argv[6];
  const dir = cpp ? keep ?? mkdtempSync(join(tmpdir(), 'luna-lockstep-')) : undefined;
  try {
    const native = dir ? await buildCpp(dir, join(dir, 'cache')) : undefined;
    const sab = new SharedArrayBuffer(4 * (BARRIER + 1));
    const spans = await Promise.all([0, 1].map((me) => new Promise<Span>((res, rej) => {
      const w = new Worker(SELF, { workerData: { sab, me, iters, steps, sync, native } satisfies Job });
      w.once('message', (s: Span) => { res(s); void w.terminate(); });
      w.once('error', rej);
    })));
    if (!spans.every((s) => Number.isFinite(s.sink))) throw new Error('kernel');
    const ms = Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start));
    const busy = spans.map((s) => ((100 * s.busy) / ms).toFixed(1)).join(' / ');
    // the kernel's thread CPU per call, both threads: its own speed, apart from the host's preemption
    const kernelUs = cpuClockExact ? `; the kernel's thread CPU ${((spans[0]!.cpuNs + spans[1]!.cpuNs) / 1000 / (2 * steps)).toFixed(1)} µs per task` : '';
    console.log(`${((ms * 1000) / steps).toFixed(2)} µs per step (${iters} iterations, ${steps} steps, ${sync ? 'lockstep' : 'free'}, ${cpp ? 'C++' : 'TypeScript'} kernel); lanes busy ${busy} % of the span${kernelUs}`);
  } finally {
    if (dir && keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread) {
  if (process.argv[1] === SELF) await main();
} else {
  parentPort!.postMessage(worker(workerData as Job));
}
