// The METG sweep of Task Bench, for one system or several alternated (luna-ts beside the
// original LuNA, bench/original.ts): each system runs the same graph at 2^k iterations per task,
// k falling, A B A B within each point (the order rotating from repetition to repetition), until
// its efficiency is well below the level; per point the median span.
import { median, roundOrder } from '../common.js';
import { FLOP_PER_ITERATION } from './kernel.js';

/**
 * `efficiency`: FLOP/s against the peak (Task Bench's); `busy`, where the kernels report their
 * thread CPU time: the share of the cores' span spent in the kernel (tasks × kernel CPU per task ÷
 * (cores × span)), which holds where the kernel's own speed does not (on this host it flips
 * between ~5 and ~10 GFLOP/s per thread within 100 ms, docs/benchmarks.md).
 */
/** `kernelUs`: the kernel's median thread CPU µs a task over the point's runs (where reported). */
export interface Point { iters: number; granularityUs: number; efficiency: number; spanMs: number; busy?: number; kernelUs?: number }

/** Which efficiency of a point a METG reads. */
export type EfficiencyBy = 'efficiency' | 'busy';

/** Efficiency of the METG. */
export const LEVEL = 0.5;

/**
 * METG from points sorted by falling granularity: the interpolated granularity at LEVEL between the
 * last point at or above it and the next one below; `bound` when even the smallest point is above
 * (the METG is at most that), NaN when even the largest is below.
 */
export function metg(points: Point[], level = LEVEL, by: EfficiencyBy = 'efficiency'): { us: number; bound: boolean } {
  const e = (p: Point): number => p[by] ?? NaN;
  if (points.some((p) => !Number.isFinite(e(p)))) return { us: NaN, bound: false };
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (e(p) >= level) continue;
    if (i === 0) return { us: NaN, bound: false };
    const q = points[i - 1]!;
    const us = p.granularityUs + ((level - e(p)) * (q.granularityUs - p.granularityUs)) / (e(q) - e(p));
    return { us, bound: false };
  }
  const last = points[points.length - 1];
  return last ? { us: last.granularityUs, bound: true } : { us: NaN, bound: false };
}

/** The median of several sweeps' METGs, a NaN one (efficiency below the level from the first point) counted above every other. */
export function medianMetg(xs: readonly number[]): number {
  const m = median(xs.map((x) => (Number.isNaN(x) ? Infinity : x)));
  return m === Infinity ? NaN : m;
}

/** One run: its program span, ms, and where the kernels report it their mean thread CPU µs per task. */
export interface SpanSample { spanMs: number; kernelUs?: number }

/** A system's run of the graph at `iters` iterations per task: its span (ms) or a SpanSample. */
export type SpanRun = (iters: number) => Promise<number | SpanSample>;

const sample = (r: number | SpanSample): SpanSample => (typeof r === 'number' ? { spanMs: r } : r);

/** Every system's runs at `iters`, `reps` each, alternated (the order rotating per repetition). */
export async function alternatedRuns<S extends string>(systems: Record<S, SpanRun>, iters: number, reps: number): Promise<Record<S, SpanSample[]>> {
  const names = Object.keys(systems) as S[];
  const runs = Object.fromEntries(names.map((s) => [s, [] as SpanSample[]])) as unknown as Record<S, SpanSample[]>;
  for (let r = 0; r < reps; r++) for (const s of roundOrder(names, r)) runs[s].push(sample(await systems[s](iters)));
  return runs;
}

/**
 * The peak of one run, as Task Bench takes the machine's: the best FLOP/s of the same kernel
 * measured in that run, bare or inside any system's trivial graph (undefined and non-finite
 * figures ignored); NaN when there is none.
 */
export function machinePeak(flopsBySource: Record<string, number | undefined>): number {
  const xs = Object.values(flopsBySource).filter((x): x is number => x !== undefined && Number.isFinite(x) && x > 0);
  return xs.length ? Math.max(...xs) : NaN;
}

/** FLOP/s of a run of `tasks` tasks at `iters` iterations that took `spanMs`. */
export function flops(tasks: number, iters: number, spanMs: number): number {
  return (tasks * iters * FLOP_PER_ITERATION) / (spanMs / 1000);
}

/**
 * The sweep from 2^fromK iterations down, each system against its own peak FLOP/s (a system
 * without a finite peak is left out); a system stops once its efficiency falls below 0.6 × LEVEL
 * (the METG is bracketed). `onPoint` hears every point.
 */
export async function sweepPoints<S extends string>(
  systems: Record<S, SpanRun>,
  o: { tasks: number; cores: number; fromK: number; reps: number; peak: Record<S, number>; onPoint?: (system: S, p: Point) => void },
): Promise<Record<S, Point[]>> {
  const names = Object.keys(systems) as S[];
  const points = Object.fromEntries(names.map((s) => [s, [] as Point[]])) as unknown as Record<S, Point[]>;
  let active = names.filter((s) => Number.isFinite(o.peak[s]));
  for (let k = o.fromK; k >= 0 && active.length > 0; k--) {
    const iters = 2 ** k;
    const runs = await alternatedRuns(Object.fromEntries(active.map((s) => [s, systems[s]])) as Record<S, SpanRun>, iters, o.reps);
    for (const s of active) {
      const span = median(runs[s].map((r) => r.spanMs));
      const busy = runs[s].every((r) => r.kernelUs !== undefined)
        ? median(runs[s].map((r) => (o.tasks * r.kernelUs!) / (o.cores * r.spanMs * 1000)))
        : undefined;
      const kernelUs = busy !== undefined ? median(runs[s].map((r) => r.kernelUs!)) : undefined;
      const p: Point = { iters, granularityUs: (span * 1000 * o.cores) / o.tasks, efficiency: flops(o.tasks, iters, span) / o.peak[s], spanMs: span, ...(busy !== undefined ? { busy, kernelUs } : {}) };
      points[s].push(p);
      o.onPoint?.(s, p);
    }
    // bracketed once below 0.6 × LEVEL by every efficiency measured
    active = active.filter((s) => { const p = points[s].at(-1)!; return Math.max(p.efficiency, p.busy ?? 0) >= LEVEL * 0.6; });
  }
  return points;
}
