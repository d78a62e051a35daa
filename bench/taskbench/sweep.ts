// The METG sweep of Task Bench, for one system or several alternated (luna-ts beside the
// original LuNA, bench/original.ts): each system runs the same graph at 2^k iterations per task,
// k falling, A B A B within each point (the order rotating from repetition to repetition), until
// its efficiency is well below the level; per point the median span.
import { median, roundOrder } from '../common.js';
import { FLOP_PER_ITERATION } from './kernel.js';

export interface Point { iters: number; granularityUs: number; efficiency: number; spanMs: number }

/** Efficiency of the METG. */
export const LEVEL = 0.5;

/**
 * METG from points sorted by falling granularity: the interpolated granularity at LEVEL between the
 * last point at or above it and the next one below; `bound` when even the smallest point is above
 * (the METG is at most that), NaN when even the largest is below.
 */
export function metg(points: Point[], level = LEVEL): { us: number; bound: boolean } {
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (p.efficiency >= level) continue;
    if (i === 0) return { us: NaN, bound: false };
    const q = points[i - 1]!;
    const us = p.granularityUs + ((level - p.efficiency) * (q.granularityUs - p.granularityUs)) / (q.efficiency - p.efficiency);
    return { us, bound: false };
  }
  const last = points[points.length - 1];
  return last ? { us: last.granularityUs, bound: true } : { us: NaN, bound: false };
}

/** A system's run of the graph at `iters` iterations per task: its program span, ms. */
export type SpanRun = (iters: number) => Promise<number>;

/** Median spans (ms) of every system at `iters`, `reps` runs each, alternated. */
export async function alternatedSpans<S extends string>(systems: Record<S, SpanRun>, iters: number, reps: number): Promise<Record<S, number>> {
  const names = Object.keys(systems) as S[];
  const spans = Object.fromEntries(names.map((s) => [s, [] as number[]])) as unknown as Record<S, number[]>;
  for (let r = 0; r < reps; r++) for (const s of roundOrder(names, r)) spans[s].push(await systems[s](iters));
  return Object.fromEntries(names.map((s) => [s, median(spans[s])])) as Record<S, number>;
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
    const spans = await alternatedSpans(Object.fromEntries(active.map((s) => [s, systems[s]])) as Record<S, SpanRun>, iters, o.reps);
    for (const s of active) {
      const p: Point = { iters, granularityUs: (spans[s] * 1000 * o.cores) / o.tasks, efficiency: flops(o.tasks, iters, spans[s]) / o.peak[s], spanMs: spans[s] };
      points[s].push(p);
      o.onPoint?.(s, p);
    }
    active = active.filter((s) => points[s].at(-1)!.efficiency >= LEVEL * 0.6);
  }
  return points;
}
