// Task Bench's compute_bound kernel: `iters` rounds of a multiply-add over a 64-element array of
// doubles (2 FLOP per element per round: 128 FLOP per iteration), as the reference does.

import { writeSync } from 'node:fs';

export const FLOP_PER_ITERATION = 128;

const A = new Float64Array(64);

export function computeBound(iters: number): number {
  const a = A;
  for (let j = 0; j < 64; j++) a[j] = 1.0 + j * 1e-3;
  for (let i = 0; i < iters; i++) {
    for (let j = 0; j < 64; j++) a[j] = a[j]! * 0.9999 + 1e-6;
  }
  let s = 0;
  for (let j = 0; j < 64; j++) s += a[j]!;
  return s;
}

/**
 * Optimise computeBound before anything is timed, as the C++ kernel is compiled before the span:
 * ~300 short calls (10–20 ms here) get it optimised as a whole. Called by a Task Bench program's
 * ucode module as it loads (a worker loads it before a `--warm-start` span) and by the bare
 * floor's threads before theirs (bench/raw-lockstep.ts), so both are timed with the same code.
 * Without it a lane's first call is long and V8 replaces it on the stack (OSR) inside the rounds'
 * loop, before the final sum's loop has run: that code deoptimises at the sum ('insufficient type
 * feedback for compare operation', 10–39 times a run), and calls run ~2–3× slower until the
 * function is optimised as a whole, tens to hundreds of calls later — 1–8 ms a lane on the first
 * task, ~12 ms of CPU over a run's first 300 tasks at 2^11 iterations (docs/benchmarks.md, "The
 * TypeScript kernel at METG sizes: where a lane's span goes, and its tier-up").
 */
export function warmKernel(): void {
  let s = 0;
  for (let i = 0; i < 300; i++) s += computeBound(8);
  if (!Number.isFinite(s)) throw new Error('kernel');
}

/** Prefix of the lines `key kernel-CPU-ns kernels` a timed kernel prints (bench/original/spans.ts parseKernelUs reads them). */
export const KERNEL_CPU_TAG = 'luna-kernel';
/**
 * One call in this many is timed: a thread CPU clock read costs 0.6–0.9 µs here, so timing every
 * call would add ~1.5 µs to each task, ~3 % of a task at the METG's sizes (50–100 µs), and the
 * timing would lower the very efficiency it is printed beside; one in 4 adds ~0.4 µs.
 */
const SAMPLE_EVERY = 4;
/** A thread prints its running totals every this many timed calls: one write to stderr per 64 tasks. */
const REPORT_EVERY = 16;

/**
 * computeBound with its thread CPU time sampled (`cpuNs`: this thread's CPU clock, ns), as the C++
 * kernels report theirs (generate.ts ucodesCpp): every REPORT_EVERY-th timed call the thread
 * writes `luna-kernel <key> <ns> <calls timed>` to stderr at once (a worker of luna blocks in its
 * lane until the run ends, so it cannot report at the end), each thread under its own `key`; the
 * harness reads the mean CPU a call from the last line of each key. The kernel's own speed
 * beside each point of a sweep: on this host it changes within a run (docs/benchmarks.md), and a
 * point's efficiency against a peak taken earlier carries that change.
 */
export function sampledKernel(cpuNs: () => number, key: number, write: (line: string) => void = (line) => writeSync(2, line)): (iters: number) => number {
  let calls = 0, timed = 0, ns = 0;
  return (iters: number): number => {
    if (++calls % SAMPLE_EVERY !== 0) return computeBound(iters);
    const c0 = cpuNs();
    const r = computeBound(iters);
    ns += cpuNs() - c0;
    if (++timed % REPORT_EVERY === 0) write(`${KERNEL_CPU_TAG} ${key} ${ns} ${timed}\n`);
    return r;
  };
}
