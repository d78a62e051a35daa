// The original C++/MPI LuNA beside luna-ts, in one run: the programs of the fine-grain and Task
// Bench comparisons, each with the same .fa and the same ucodes.cpp on both systems (C++ at -O3
// on both), alternated A B A B, medians, and the ratios luna-ts / original.
//
//   LUNA_ORIGINAL=/path/to/original-build npm run bench -- original
//   BENCH_ORIGINAL_ROWS=chain20k.t1,pingpong,metg.1x2 to choose rows (case ids, metg.1x2, metg.2x1)
//
// LUNA_ORIGINAL names the original's build (docs/benchmarks.md says how to make it, outside the
// repository). Each program is compiled once with its `bin/luna --compile-only` and its runtime
// run directly (`rts`; 2 ranks under mpirun over TCP), so its compilation is not timed; luna-ts
// runs `bin/luna run` once before the measured runs, so its C++ compile cache is warm. Timed:
// the in-program span, from the first ucode's CLOCK_MONOTONIC timestamp to the last one's, on
// both systems (the original pays 0.3–0.4 s of MPI start-up and shutdown outside it); the whole
// process's wall time and peak memory (GNU time) for the start-up and memory rows.
//
// Without LUNA_ORIGINAL the luna-ts side runs alone and the ratios are to the original's figures
// kept in bench/reference.ts (ORIGINAL_SIDE_BY_SIDE, from docs/benchmarks.md).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchSettingError, fmt, section, sig, table, type Ctx, type SuiteOutput } from './common.js';
import { writeProgram, writeTaskBench, type ProgramName } from './original/programs.js';
import { compileOriginal, CXXFLAGS, GNU_TIME, originalHome, runLunaTs, runOriginal, type OriginalBuild, type Placement } from './original/runner.js';
import { compare, ratio, type FigureDef, type Sample } from './original/spans.js';
import { ORIGINAL_SIDE_BY_SIDE } from './reference.js';
import { alternatedRuns, flops, LEVEL, machinePeak, metg, sweepPoints, type EfficiencyBy, type Point, type SpanRun, type SpanSample } from './taskbench/sweep.js';
import { bareCpp, bareCppFlops, buildBareCpp, type BareRun } from './taskbench/bare-cpp.js';
import { median } from './median.js';

/** One measured configuration: a program, its arguments and placement, the figures taken from its runs. */
export interface Case { id: string; program: ProgramName; args: number[]; at: Placement; figures: FigureDef[] }

const us = (id: string, what: string, per: number, label: string): FigureDef => ({ key: `${id}.${what}`, metric: 'spanMs', scale: 1000 / per, unit: 'µs', label });
const mb = (id: string, label: string): FigureDef => ({ key: `${id}.peakMB`, metric: 'maxRssKB', scale: 1 / 1024, unit: 'MB', label });

/** The rows of the side-by-side table (docs/benchmarks.md), in the order they run. */
export const CASES: Case[] = [
  { id: 'startup', program: 'empty', args: [], at: { ranks: 1, threads: 1 }, figures: [
    { key: 'startup.wallS', metric: 'wallMs', scale: 1 / 1000, unit: 's', label: 'start-up, one-fragment program (whole process)' },
    { key: 'empty.peakMB', metric: 'maxRssKB', scale: 1 / 1024, unit: 'MB', label: "empty program's memory" },
  ] },
  { id: 'chain200k.t1', program: 'chain', args: [200_000, 0], at: { ranks: 1, threads: 1 }, figures: [us('chain200k.t1', 'usPerCf', 200_000, 'chain 1×200 000, 1 thread, µs per fragment'), mb('chain200k.t1', 'peak memory, chain 1×200 000, 1 thread')] },
  { id: 'chain200k.t2', program: 'chain', args: [200_000, 0], at: { ranks: 1, threads: 2 }, figures: [us('chain200k.t2', 'usPerCf', 200_000, 'chain 1×200 000, 2 threads'), mb('chain200k.t2', 'peak memory, chain 1×200 000, 2 threads')] },
  { id: 'chain20k.t1', program: 'chain', args: [20_000, 0], at: { ranks: 1, threads: 1 }, figures: [us('chain20k.t1', 'usPerCf', 20_000, 'chain 1×20 000, 1 thread')] },
  { id: 'chain20k.t2', program: 'chain', args: [20_000, 0], at: { ranks: 1, threads: 2 }, figures: [us('chain20k.t2', 'usPerCf', 20_000, 'chain 1×20 000, 2 threads')] },
  { id: 'chains8x20k.t2', program: 'chains', args: [8, 20_000], at: { ranks: 1, threads: 2 }, figures: [us('chains8x20k.t2', 'usPerCf', 160_000, '8 chains × 20 000, 2 threads')] },
  { id: 'chains8x2k.t2', program: 'chains', args: [8, 2_000], at: { ranks: 1, threads: 2 }, figures: [us('chains8x2k.t2', 'usPerCf', 16_000, '8 chains × 2 000, 2 threads')] },
  { id: 'matmul.t1', program: 'matmul', args: [1600, 10], at: { ranks: 1, threads: 1 }, figures: [{ key: 'matmul.t1.s', metric: 'spanMs', scale: 1 / 1000, unit: 's', label: 'matmul 1600 in 10×10 blocks, 1 thread' }] },
  { id: 'matmul.t2', program: 'matmul', args: [1600, 10], at: { ranks: 1, threads: 2 }, figures: [{ key: 'matmul.t2.s', metric: 'spanMs', scale: 1 / 1000, unit: 's', label: 'matmul 1600 in 10×10 blocks, 2 threads' }] },
  { id: 'stencil2k.t1', program: 'stencil', args: [2000, 0], at: { ranks: 1, threads: 1 }, figures: [us('stencil2k.t1', 'usPerTask', 4000, 'stencil_1d width 2, 2 000 steps, empty kernel, 1 thread, µs per task')] },
  { id: 'stencil2k.t2', program: 'stencil', args: [2000, 0], at: { ranks: 1, threads: 2 }, figures: [us('stencil2k.t2', 'usPerTask', 4000, 'stencil_1d width 2, 2 000 steps, empty kernel, 2 threads, µs per task')] },
  { id: 'stencil20k.t1', program: 'stencil20k', args: [20_000, 0], at: { ranks: 1, threads: 1 }, figures: [us('stencil20k.t1', 'usPerTask', 40_000, 'stencil_1d width 2, 20 000 steps, empty kernel, 1 thread, µs per task')] },
  { id: 'stencil20k.t2', program: 'stencil20k', args: [20_000, 0], at: { ranks: 1, threads: 2 }, figures: [us('stencil20k.t2', 'usPerTask', 40_000, 'stencil_1d width 2, 20 000 steps, empty kernel, 2 threads, µs per task')] },
  { id: 'pingpong', program: 'pingpong', args: [20_000, 8], at: { ranks: 2, threads: 1 }, figures: [us('pingpong', 'usPerStep', 20_000, 'pingpong across 2 processes, µs per step')] },
];

/** A cheap run of each program, to warm luna-ts's C++ compile cache before the measured runs. */
const WARM_ARGS: Record<ProgramName, number[]> = { empty: [], chain: [10, 0], chains: [2, 10], pingpong: [10, 8], matmul: [200, 2], stencil: [2000, 0], stencil20k: [20_000, 0] };

/**
 * A short row and a long row of the same program and placement: their two spans give each system's
 * steady cost per fragment, (long − short) ÷ (their fragments' difference), and its fixed cost, the
 * short span less its fragments at that rate (warm-up inside the span: tiering, first calls).
 */
export interface Split { id: string; short: string; long: string; label: string }

/** The splits of the side-by-side (ids of CASES: the short row, then the long one). */
export const SPLITS: Split[] = [
  { id: 'chain.t1', short: 'chain20k.t1', long: 'chain200k.t1', label: 'chain, 1 thread' },
  { id: 'chain.t2', short: 'chain20k.t2', long: 'chain200k.t2', label: 'chain, 2 threads' },
  { id: 'chains8.t2', short: 'chains8x2k.t2', long: 'chains8x20k.t2', label: '8 chains, 2 threads' },
  { id: 'stencil.t1', short: 'stencil2k.t1', long: 'stencil20k.t1', label: 'stencil_1d empty kernel, 1 thread' },
  { id: 'stencil.t2', short: 'stencil2k.t2', long: 'stencil20k.t2', label: 'stencil_1d empty kernel, 2 threads' },
];

/** The steady µs per fragment and the fixed ms of a span of `n1` fragments, from spans of `n1` and `n2` (ms). */
export function fixedAndSteady(span1Ms: number, n1: number, span2Ms: number, n2: number): { fixedMs: number; usPerCf: number } {
  const usPerCf = ((span2Ms - span1Ms) * 1000) / (n2 - n1);
  return { fixedMs: span1Ms - (n1 * usPerCf) / 1000, usPerCf };
}

/** The fragments a row's span covers: its per-fragment figure's divisor. */
const fragmentsOf = (c: Case): number => 1000 / c.figures[0]!.scale;

/** Task Bench graphs of the METG rows: width 2 (1 node × 2 threads, 2 nodes × 1 thread), as bench/taskbench.ts. */
const METG_STEPS = 1000;
/** The METG sweep starts where a task takes about this long (the kernel's peak). */
const PEAK_TASK_US = 2000;

/** The placements of the METG rows: 1 node × 2 threads, 2 nodes × 1 thread (column i on node i). */
const METG_PLACEMENTS: Placement[] = [{ ranks: 1, threads: 2 }, { ranks: 2, threads: 1 }];
const metgId = (at: Placement): string => `metg.${at.ranks}x${at.threads}`;

/** The systems of one row: the original (when built) and luna-ts. */
type SystemName = 'original' | 'lunaTs';

/** BENCH_ORIGINAL_ROWS: the rows asked for (undefined: every row); a row that does not exist is a BenchSettingError. */
function chosenRows(): string[] | undefined {
  const chosen = process.env.BENCH_ORIGINAL_ROWS?.split(',').map((x) => x.trim()).filter(Boolean);
  const ids = [...CASES.map((c) => c.id), ...METG_PLACEMENTS.map(metgId)];
  for (const x of chosen ?? []) if (!ids.includes(x)) throw new BenchSettingError(`BENCH_ORIGINAL_ROWS: no row ${x} (rows: ${ids.join(', ')})`);
  return chosen;
}

/** The suite's settings checked before anything is measured (bench/run.ts calls it first). */
export function settings(): void { chosenRows(); }

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const home = originalHome();
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} (GNU time) is needed for wall time and peak memory: apt-get install time`);
  const reps = ctx.quick ? 1 : ctx.reps;
  const chosen = chosenRows();
  const wanted = (id: string): boolean => !chosen || chosen.includes(id);
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const notes: string[] = [];
  const rows: string[][] = [];
  /** median in-program spans (ms) by row, for the splits */
  const spans = new Map<string, Record<SystemName, number>>();
  /** the original's compiled programs, by .fa */
  const builds = new Map<string, OriginalBuild>();
  const load0 = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'luna-original-'));
  const put = (key: string, unit: string, label: string, original: number, lunaTs: number): void => {
    f[`${key}.original`] = sig(original);
    f[`${key}.lunaTs`] = sig(lunaTs);
    f[`${key}.ratio`] = sig(ratio(lunaTs, original));
    units[`${key}.original`] = units[`${key}.lunaTs`] = unit;
    units[`${key}.ratio`] = '×';
    rows.push([`  ${label}`, fmt(original), fmt(lunaTs), fmt(ratio(lunaTs, original)), unit]);
  };
  const kept = (key: string): number => ORIGINAL_SIDE_BY_SIDE[key] ?? NaN;
  notes.push(home
    ? `the original LuNA at ${home} (LUNA_ORIGINAL) beside luna-ts, alternated, medians of ${reps}; in-program spans from the ucodes' CLOCK_MONOTONIC timestamps; C++ ucodes at -O3 on both`
    : `LUNA_ORIGINAL is not set: luna-ts alone (medians of ${reps}), ratios to the original's figures kept in docs/benchmarks.md (bench/reference.ts ORIGINAL_SIDE_BY_SIDE)`);
  try {
    // programs: written, compiled by the original once, run once by luna-ts (its compile cache)
    const fas = new Map<ProgramName, string>();
    const prepare = async (fa: string, warm: number[], at: Placement): Promise<void> => {
      if (home && !builds.has(fa)) builds.set(fa, await compileOriginal(home, fa, join(dir, 'build', String(builds.size))));
      await runLunaTs(fa, at, warm);
    };
    const programFa = async (name: ProgramName): Promise<string> => {
      let fa = fas.get(name);
      if (!fa) {
        ctx.log(`original: preparing ${name}`);
        fa = writeProgram(dir, name);
        await prepare(fa, WARM_ARGS[name], { ranks: 1, threads: 1 });
        fas.set(name, fa);
      }
      return fa;
    };
    for (const c of CASES.filter((x) => wanted(x.id))) {
      await section(ctx, notes, c.id, async () => {
        const fa = await programFa(c.program);
        const runs: Record<SystemName, () => Promise<Sample>> = {
          original: () => runOriginal(builds.get(fa)!, c.at, c.args),
          lunaTs: () => runLunaTs(fa, c.at, c.args),
        };
        const order: SystemName[] = home ? ['original', 'lunaTs'] : ['lunaTs'];
        const samples: Record<SystemName, Sample[]> = { original: [], lunaTs: [] };
        ctx.log(`original: ${c.id} (${c.program} ${c.args.join(' ')}, ${c.at.ranks}×${c.at.threads})`);
        for (let r = 0; r < reps; r++) for (const s of r % 2 ? [...order].reverse() : order) samples[s].push(await runs[s]());
        spans.set(c.id, { original: home ? median(samples.original.map((x) => x.spanMs)) : NaN, lunaTs: median(samples.lunaTs.map((x) => x.spanMs)) });
        for (const d of c.figures) {
          const v = compare(d, samples.original, samples.lunaTs);
          put(d.key, d.unit, d.label, home ? v.original : kept(d.key), v.lunaTs);
        }
      });
    }
    for (const sp of SPLITS) {
      const a = spans.get(sp.short), b = spans.get(sp.long);
      if (!a || !b) continue;
      const n1 = fragmentsOf(CASES.find((c) => c.id === sp.short)!), n2 = fragmentsOf(CASES.find((c) => c.id === sp.long)!);
      const o = fixedAndSteady(a.original, n1, b.original, n2), l = fixedAndSteady(a.lunaTs, n1, b.lunaTs, n2);
      put(`${sp.id}.steadyUsPerCf`, 'µs', `${sp.label}: steady cost per fragment (${sp.long} − ${sp.short})`, o.usPerCf, l.usPerCf);
      put(`${sp.id}.fixedMs`, 'ms', `${sp.label}: fixed cost in ${sp.short}'s span`, o.fixedMs, l.fixedMs);
    }
    const metgAt = METG_PLACEMENTS.filter((at) => wanted(metgId(at)) && (chosen || !ctx.quick || home));
    await metgRows(ctx, metgAt, { home, dir, reps, notes, put, kept, prepare, builds });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  notes.push(`load average ${load0.toFixed(1)} at the start of the suite, ${loadavg()[0].toFixed(1)} at its end (2 cores: above 2, the multi-thread and multi-process figures are pessimistic for both)`);
  notes.push('side by side (luna-ts / original):\n' + table(rows, ['  figure', home ? 'original' : 'original (kept)', 'luna-ts', 'ratio', 'unit']));
  return { status: 'ok', figures: f, units, notes };
}

interface MetgEnv {
  home: string | undefined;
  dir: string;
  reps: number;
  notes: string[];
  put: (key: string, unit: string, label: string, original: number, lunaTs: number) => void;
  kept: (key: string) => number;
  prepare: (fa: string, warm: number[], at: Placement) => Promise<void>;
  builds: Map<string, OriginalBuild>;
}

/**
 * Task Bench METG(50 %) of stencil_1d with the C++ kernel on 1 node × 2 threads and on 2 nodes ×
 * 1 thread (column i on node i): both systems against one peak, the C++ kernel run bare on as many threads at the
 * largest task, the sweeps alternated point by point. luna-ts starts its span once its workers
 * have booted (--warm-start), as the METG harness does; the original's threads are up before its
 * first ucode.
 */
async function metgRows(ctx: Ctx, placements: Placement[], e: MetgEnv): Promise<void> {
  for (const at of placements) {
    const name = `${at.ranks}x${at.threads}`;
    await section(ctx, e.notes, metgId(at), async () => {
      const cores = at.ranks * at.threads;
      const trivial = writeTaskBench(join(e.dir, 'metg'), 'trivial', 2, METG_STEPS, at.ranks);
      const stencil = writeTaskBench(join(e.dir, 'metg'), 'stencil_1d', 2, METG_STEPS, at.ranks);
      for (const p of [trivial, stencil]) await e.prepare(p.fa, [METG_STEPS, 1], at);
      const systems = (fa: string): Partial<Record<SystemName, SpanRun>> => ({
        ...(e.home ? { original: (iters: number) => runOriginal(e.builds.get(fa)!, at, [METG_STEPS, iters], 120_000) } : {}),
        lunaTs: (iters: number) => runLunaTs(fa, at, [METG_STEPS, iters], { warmStart: true, timeoutMs: 120_000 }),
      });
      // the kernel's speed (the same g++ -O3 code on both): one luna-ts run of the trivial graph
      // at tasks long enough (~0.5 ms) for the runtime's cost per task not to count
      const probeK = 14;
      const probe = (await runLunaTs(trivial.fa, at, [METG_STEPS, 2 ** probeK], { warmStart: true, timeoutMs: 120_000 })).spanMs;
      const usPerIter = (probe * 1000 * cores) / (trivial.tasks * 2 ** probeK);
      const peakK = Math.max(4, Math.round(Math.log2(PEAK_TASK_US / usPerIter)));
      ctx.log(`original: METG ${name}: peak at 2^${peakK} iterations`);
      const peakRuns = await alternatedRuns(systems(trivial.fa) as Record<SystemName, SpanRun>, 2 ** peakK, e.reps);
      const own = Object.fromEntries(Object.entries<SpanSample[]>(peakRuns).map(([s, rs]) => [s, flops(trivial.tasks, 2 ** peakK, median(rs.map((r) => r.spanMs)))])) as Record<SystemName, number>;
      // the kernel run bare on as many threads (bare-cpp.ts): the same text and g++ flags as the
      // ucodes of both systems (CXXFLAGS, which also fixes where the kernel's loop lands)
      const exe = buildBareCpp(e.dir, CXXFLAGS);
      const bareTasks = Math.ceil(trivial.tasks / cores);
      const bare: BareRun[] = [];
      for (let r = 0; r < Math.max(1, e.reps); r++) bare.push(bareCpp(exe, cores, bareTasks, 2 ** peakK));
      // one peak for both, as Task Bench takes the machine's: the best of the kernel's speeds in
      // this run, bare or in either system's trivial graph (a runtime that leaves a core idle or
      // shares it with a polling thread only lowers its own figure, never the peak)
      const bySource = { bare: median(bare.map((b) => b.flops)), ...own };
      const shared = machinePeak(bySource);
      const best = Object.entries(bySource).find(([, x]) => x === shared)?.[0] ?? '?';
      // the kernel's own speed per CPU-second on each side at the peak's tasks: equal when the
      // comparison is of runtimes (the kernels' thread CPU µs per task, medians)
      const kernelUs: Record<string, number> = { bare: median(bare.map((b) => b.kernelUs)) };
      for (const [s, rs] of Object.entries<SpanSample[]>(peakRuns)) if (rs.every((r) => r.kernelUs !== undefined)) kernelUs[s] = median(rs.map((r) => r.kernelUs!));
      e.put(`metg.${name}.kernelUs`, 'µs', `the kernel's thread CPU per task at 2^${peakK} iterations (bare: ${sig(kernelUs.bare!)} µs)`, kernelUs.original ?? NaN, kernelUs.lunaTs ?? NaN);
      e.notes.push(`METG ${name}: the kernel's thread CPU per task at 2^${peakK} iterations (g++ ${CXXFLAGS}): ${Object.entries(kernelUs).map(([s, us]) => `${s} ${sig(us)} µs`).join(', ')}; where these differ, the kernels differ, not the runtimes`);
      // how steady the kernel's own speed is on this host: 20 short bare runs (~0.1 s each)
      const flips = Array.from({ length: 20 }, () => bareCppFlops(exe, 1, Math.max(1, Math.round(100_000 / (usPerIter * 2 ** peakK))), 2 ** peakK) / 1e9).sort((a, b) => a - b);
      e.notes.push(`METG ${name}: the bare kernel on 1 thread over 20 runs of ~0.1 s: ${sig(flips[0]!)} / ${sig(median(flips))} / ${sig(flips[19]!)} GFLOP/s (min / median / max); where these differ 2×, efficiency against a peak is noise and the busy share (kernel thread CPU ÷ cores × span) is the figure to read`);
      const peak = Object.fromEntries(Object.keys(own).map((s) => [s, shared])) as Record<SystemName, number>;
      const points = await sweepPoints(systems(stencil.fa) as Record<SystemName, SpanRun>, {
        tasks: stencil.tasks, cores, fromK: peakK - 1, reps: e.reps, peak,
        onPoint: (s, q) => ctx.log(`original: METG ${name} ${s}: ${q.iters} iterations, ${fmt(q.granularityUs)} µs, efficiency ${(q.efficiency * 100).toFixed(0)} %`),
      });
      const by = (b: EfficiencyBy) => Object.fromEntries(Object.entries<Point[]>(points).map(([s, ps]) => [s, metg(ps, LEVEL, b)])) as Partial<Record<SystemName, ReturnType<typeof metg>>>;
      const m = by('efficiency'), busy = by('busy');
      const where = `${at.ranks} node${at.ranks > 1 ? 's' : ''} × ${at.threads} thread${at.threads > 1 ? 's' : ''}, C++ kernels`;
      const key = `metg.${name}.stencil_1d.us`, busyKey = `metg.${name}.stencil_1d.busyUs`;
      e.put(key, 'µs', `Task Bench METG(50 %) stencil_1d, ${where}`, e.home ? (m.original?.us ?? NaN) : e.kept(key), m.lunaTs?.us ?? NaN);
      e.put(busyKey, 'µs', `the same, 50 % of the cores busy in the kernel (its thread CPU time)`, e.home ? (busy.original?.us ?? NaN) : e.kept(busyKey), busy.lunaTs?.us ?? NaN);
      const pct = (x: number | undefined): string => (x === undefined ? '?' : (x * 100).toFixed(0));
      const sweep = (s: SystemName): string => ((points as Partial<Record<SystemName, Point[]>>)[s] ?? []).map((q) => `${fmt(q.granularityUs)}:${pct(q.efficiency)}/${pct(q.busy)}%`).join(' ');
      e.notes.push(`METG ${name}: ${width2(at)}, ${METG_STEPS} steps, compute_bound ${sig(usPerIter * 1000)} ns per iteration, sweep from 2^${peakK - 1}; shared peak ${sig(shared / 1e9)} GFLOP/s, the best of: the C++ kernel bare on ${cores} threads (${bareTasks} tasks each, median of ${bare.length}) ${sig(bySource.bare / 1e9)}, each system's own trivial graph ${Object.entries(own).map(([s, x]) => `${s} ${sig((x as number) / 1e9)}`).join(', ')} GFLOP/s (the best: ${best}); points (µs : efficiency against the peak / busy share) ${Object.keys(points).map((s) => `${s} ${sweep(s as SystemName)}${m[s as SystemName]?.bound ? ' (bound)' : ''}`).join('; ')}`);
    });
  }
}

const width2 = (at: Placement): string => (at.ranks > 1 ? 'column i on node i' : 'one node');
