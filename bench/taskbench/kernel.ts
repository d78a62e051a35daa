// Task Bench's compute_bound kernel: `iters` rounds of a multiply-add over a 64-element array of
// doubles (2 FLOP per element per round: 128 FLOP per iteration), as the reference does.

import { writeSync } from 'node:fs';

export const FLOP_PER_ITERATION = 128;

const A = new Float64Array(64);

/**
 * The kernel as text: each compile of it (`compileKernel`) is a function of its own, which V8
 * optimises and places in its code space on its own.
 */
const KERNEL_JS = `return function computeBound(iters) {
  const a = A;
  for (let j = 0; j < 64; j++) a[j] = 1.0 + j * 1e-3;
  for (let i = 0; i < iters; i++) {
    for (let j = 0; j < 64; j++) a[j] = a[j] * 0.9999 + 1e-6;
  }
  let s = 0;
  for (let j = 0; j < 64; j++) s += a[j];
  return s;
}`;

let compiles = 0;

/**
 * A fresh function of the kernel's text over this thread's array. Each text is made distinct (a
 * numbered comment): V8 caches a `new Function` by its source, and compiles of one cached source
 * share their closures' feedback, so V8 no longer specialises the code to the one array: such
 * compiles ran 72 ns an iteration against 18–28.
 */
export function compileKernel(): (iters: number) => number {
  // the number inside the function's body, so that its own text differs too; and 0–5 guards that
  // never fire (iters is a count) ahead of the loops, so that each compile's loops start at
  // another offset of its code: with the same machine code, a worker of luna placed all 6
  // compiles slow or 5 of 6 in 2 of 16 workers (each compile's best call of 2^11 iterations at
  // 27.4–27.9 ns an iteration against 18.1–18.7; docs/benchmarks.md, "The TypeScript METG at
  // 2^11–2^12 iterations"), so that the fastest of them was no escape
  const n = ++compiles;
  const guards = Array.from({ length: n % 6 }, (_, j) => `if (iters === -${j + 1}) a[${j}] = 0;`).join(' ');
  return new Function('A', KERNEL_JS.replace('{', `{ /* compile ${n} */`).replace('const a = A;', `const a = A; ${guards}`))(A) as (iters: number) => number;
}

/** The kernel: `iters` rounds over the array, its sum returned. After warmKernel, the fastest of its compiles. */
export let computeBound: (iters: number) => number = compileKernel();

/**
 * How many compiles of the kernel warmKernel tries. On this host V8 places about one compile of
 * the kernel in three so that it runs 1.49× slower, for the life of that code (18.2–18.7 ns an
 * iteration against 27.0–28.0, thread CPU, bench/raw-kernel-compiles.ts: the same text over the
 * same array compiled ten times in one thread, ten processes: 34 of 100 slow; docs/benchmarks.md,
 * "The TypeScript kernel's speed follows where V8 places its code"), as the C++ kernel's loop ran
 * 1.75× slower at some placements until it was aligned. In one worker the compiles do not land
 * independently (a pattern fixed by where each lands: all 6 slow in 1 worker of 16), so each
 * compile also starts its loops at another offset of its code (compileKernel's guards): 3–4 of 6
 * fast in every worker then, against 1–3. The 6 cost 40–80 ms of a thread's start (before a
 * `--warm-start` span).
 */
const KERNEL_COMPILES = 6;

/**
 * Optimise the kernel before anything is timed, as the C++ kernel is compiled before the span,
 * and keep its fastest compile: every caller of computeBound then runs code placed where it runs
 * at the kernel's full speed, a lane of luna and the bare threads of the peak alike. Called by a
 * Task Bench program's ucode module as it loads (a worker loads it before a `--warm-start` span),
 * by the bare floor's threads before theirs (bench/raw-lockstep.ts) and by the per-CPU speed
 * probe (bench/raw-cpu-speed.ts), so all are timed with the same kernel speed. Each compile gets
 * ~300 short calls (10–20 ms here): without them a lane's first call is long and V8 replaces it on
 * the stack (OSR) inside the rounds' loop, before the final sum's loop has run: that code
 * deoptimises at the sum ('insufficient type feedback for compare operation', 10–39 times a run),
 * and calls run ~2–3× slower until the function is optimised as a whole, tens to hundreds of
 * calls later — 1–8 ms a lane on the first task, ~12 ms of CPU over a run's first 300 tasks at
 * 2^11 iterations (docs/benchmarks.md, "The TypeScript kernel at METG sizes: where a lane's span
 * goes, and its tier-up"). Then 15 calls of 2^11 iterations each (~0.6 ms a compile): the
 * shortest is its speed, the least touched by the host's preemption (`time`: how a compile is
 * warmed and timed).
 */
export function warmKernel(time: (f: (iters: number) => number) => number = warmAndTime): void {
  const compiles = [computeBound, ...Array.from({ length: KERNEL_COMPILES - 1 }, compileKernel)];
  computeBound = fastestOf(compiles, time);
}

/** Optimise one compile of the kernel and time it: its shortest call of 2^11 iterations, ms. */
function warmAndTime(f: (iters: number) => number): number {
  let s = 0, ms = Infinity;
  for (let i = 0; i < 300; i++) s += f(8);
  for (let r = 0; r < 15; r++) {
    const t0 = performance.now();
    s += f(2048);
    ms = Math.min(ms, performance.now() - t0);
  }
  if (!Number.isFinite(s)) throw new Error('kernel');
  return ms;
}

/** The candidate `time` finds fastest (the first of equals), each timed once, in order. */
export function fastestOf<F>(candidates: readonly F[], time: (f: F) => number): F {
  let best = Infinity, chosen: F = candidates[0]!;
  for (const f of candidates) {
    const t = time(f);
    if (t < best) { best = t; chosen = f; }
  }
  return chosen;
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
