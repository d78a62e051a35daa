// What the side-by-side reads from a run, the same on both systems: the in-program span from the
// timestamps its ucodes print (CLOCK_MONOTONIC, one clock for every process of the machine), the
// whole process's wall time and peak memory from GNU time; and the ratios luna-ts / original.
// Pure functions: the unit tests check them without either system.
import { median } from '../median.js';
import { KERNEL_CPU_TAG } from '../taskbench/kernel.js';

/** Prefix of the timestamp lines the side-by-side ucodes print on stderr. */
export const SPAN_TAG = 'luna-span';
/**
 * Prefix of the lines `pid kernel-CPU-ns kernels` the Task Bench checks print (luna_kernel_report),
 * the same as the TypeScript kernel's (`key ns calls timed`, one key a thread).
 */
export const KERNEL_TAG = KERNEL_CPU_TAG;
/** Prefix of the line `/usr/bin/time -f` prints after the run. */
export const TIME_TAG = 'luna-time';
/** GNU time's format: elapsed seconds and peak resident KiB of the largest process it waited for. */
export const TIME_FORMAT = `${TIME_TAG} %e %M`;

/**
 * C++ the side-by-side ucodes include: `luna_span_begin()` in the first ucodes (only its first
 * call in a process prints), `luna_span_end()` in the last ones. fprintf + fflush on stderr, so
 * the line leaves at once, whatever the buffering of a pipe.
 */
export const SPAN_CPP = `#include <atomic>
#include <cstdio>
#include <time.h>
#include <unistd.h>
static std::atomic<bool> luna_span_begun{false};
static void luna_span_mark(const char *what) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  std::fprintf(stderr, "${SPAN_TAG} %s %lld\\n", what, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  std::fflush(stderr);
}
static inline void luna_span_begin() { if (!luna_span_begun.exchange(true)) luna_span_mark("begin"); }
static inline void luna_span_end() { luna_span_mark("end"); }
// The kernel's own thread CPU time, summed over the process's tasks: the METG's busy share reads
// it (the same on both systems; a thread CPU clock read costs ~0.7 µs here, twice per task).
static std::atomic<long long> luna_kernel_ns{0}, luna_kernel_n{0};
static inline long long luna_thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static inline void luna_kernel_add(long long ns) { luna_kernel_ns += ns; luna_kernel_n += 1; }
static void luna_kernel_report() {
  std::fprintf(stderr, "${KERNEL_TAG} %ld %lld %lld\\n", (long)getpid(), luna_kernel_ns.load(), luna_kernel_n.load());
  std::fflush(stderr);
}
`;

/**
 * The in-program span of a run's output, in ms: from the earliest `begin` to the latest `end`
 * (several processes or several first/last ucodes print theirs). Throws, naming what is missing,
 * when the output has no begin or no end, or an end before the begin.
 */
export function parseSpanMs(output: string): number {
  let begin = Infinity, end = -Infinity;
  const re = new RegExp(`^${SPAN_TAG} (begin|end) (\\d+)\\s*$`, 'gm');
  for (const m of output.matchAll(re)) {
    const ns = Number(m[2]);
    if (m[1] === 'begin') begin = Math.min(begin, ns);
    else end = Math.max(end, ns);
  }
  if (begin === Infinity) throw new Error(`no '${SPAN_TAG} begin' line in the run's output`);
  if (end === -Infinity) throw new Error(`no '${SPAN_TAG} end' line in the run's output`);
  if (end < begin) throw new Error(`'${SPAN_TAG} end' (${end}) before '${SPAN_TAG} begin' (${begin})`);
  return (end - begin) / 1e6;
}

/**
 * Mean kernel thread-CPU µs per task over a run's `luna-kernel` lines, or undefined without any:
 * per process (pid) the report with the most kernels counts (each check reports the running
 * total of its process, and the last tasks of another column may end after an early check).
 */
export function parseKernelUs(output: string): number | undefined {
  const byPid = new Map<string, { ns: number; n: number }>();
  for (const m of output.matchAll(new RegExp(`^${KERNEL_TAG} (\\d+) (\\d+) (\\d+)\\s*$`, 'gm'))) {
    const ns = Number(m[2]), n = Number(m[3]);
    const had = byPid.get(m[1]!);
    if (!had || n >= had.n) byPid.set(m[1]!, { ns, n });
  }
  let ns = 0, n = 0;
  for (const r of byPid.values()) { ns += r.ns; n += r.n; }
  return n > 0 ? ns / n / 1000 : undefined;
}

/** Wall seconds and peak KiB from GNU time's line (TIME_FORMAT); the last one counts. */
export function parseTime(output: string): { wallMs: number; maxRssKB: number } {
  const all = [...output.matchAll(new RegExp(`^${TIME_TAG} ([\\d.]+) (\\d+)\\s*$`, 'gm'))];
  const m = all.at(-1);
  if (!m) throw new Error(`no '${TIME_TAG}' line (GNU time) in the run's output`);
  return { wallMs: Number(m[1]) * 1000, maxRssKB: Number(m[2]) };
}

/** One run of one system; `kernelUs` where its ucodes report their kernel's CPU time. */
export interface Sample { spanMs: number; wallMs: number; maxRssKB: number; kernelUs?: number }

export function parseRun(output: string): Sample {
  const kernelUs = parseKernelUs(output);
  return { spanMs: parseSpanMs(output), ...parseTime(output), ...(kernelUs !== undefined ? { kernelUs } : {}) };
}

export type Metric = 'spanMs' | 'wallMs' | 'maxRssKB';

/** A figure of a row, from one metric of the run: value = metric × scale (e.g. span ms → µs per fragment). */
export interface FigureDef { key: string; metric: Metric; scale: number; unit: string; label: string }

export interface SideBySide { original: number; lunaTs: number; ratio: number }

/** Medians per system of one figure, and luna-ts / original (NaN where a side has no sample). */
export function compare(def: FigureDef, original: Sample[], lunaTs: Sample[]): SideBySide {
  const med = (s: Sample[]): number => (s.length ? median(s.map((x) => x[def.metric])) * def.scale : NaN);
  const o = med(original), l = med(lunaTs);
  return { original: o, lunaTs: l, ratio: ratio(l, o) };
}

/** luna-ts / original: NaN unless both are finite and the original's is positive. */
export function ratio(lunaTs: number, original: number): number {
  return Number.isFinite(lunaTs) && Number.isFinite(original) && original > 0 ? lunaTs / original : NaN;
}
