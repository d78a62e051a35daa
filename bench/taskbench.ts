// Task Bench suite (Slaughter et al., SC'20): METG(50 %) per dependence pattern, on 1 node × 2
// threads and 2 nodes × 1 thread, with the compute_bound kernel in TypeScript.
//
// Method, as Task Bench does it: a graph of width = cores × nodes and STEPS steps is generated as
// a LuNA program (taskbench/generate.ts); the kernel runs `iters` iterations of 128 FLOP per task,
// iters swept over powers of 2 downwards. For each run
//   efficiency  = achieved FLOP/s ÷ peak FLOP/s of the same kernel at the largest task size,
//   granularity = program span × cores ÷ tasks;
// METG(50 %) is the smallest granularity whose efficiency is ≥ 50 %, linearly interpolated
// between the last point above and the first below. Each run is a fresh `luna run --timing
// --warm-start`: as Task Bench times a graph after the runtime's initialisation, the span starts
// once the worker threads have booted and loaded the kernel; the median of the repetitions.
//
//   npm run bench -- taskbench [--quick]        BENCH_TASKBENCH_PATTERNS=stencil_1d,fft to choose
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nowMs, ROOT, runTimed, section, sig, table, fmt, type Ctx, type SuiteOutput, type Target, type Timed } from './common.js';
import { ORIGINAL, TASKBENCH_PEERS } from './reference.js';
import { generate, ucodes } from './taskbench/generate.js';
import { computeBound, FLOP_PER_ITERATION } from './taskbench/kernel.js';
import { graph, PATTERNS, widthAt, type Pattern } from './taskbench/patterns.js';

const STEPS = 1000;
/** Largest task: about this long, the peak of the kernel (the runtime's cost is negligible there). */
const PEAK_TASK_US = 2000;
/** Efficiency of the METG. */
const LEVEL = 0.5;

interface Config { name: string; nodes: number; threads: number }
const CONFIGS: Config[] = [
  { name: '1x2', nodes: 1, threads: 2 },
  { name: '2x1', nodes: 2, threads: 1 },
];

export interface Point { iters: number; granularityUs: number; efficiency: number; spanMs: number }

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

/** µs per kernel iteration on this thread (best of several, warm). */
function iterationUs(): number {
  let best = Infinity, sink = 0;
  for (let r = 0; r < 30; r++) {
    const t = nowMs();
    sink += computeBound(4096);
    best = Math.min(best, (nowMs() - t) * 1000 / 4096);
  }
  if (!Number.isFinite(sink)) throw new Error('kernel');
  return best;
}

interface Program { file: string; tasks: number }

function writeProgram(dir: string, p: Pattern, width: number): Program {
  const g = graph(p, width, STEPS);
  const { program, arities } = generate(g);
  const sub = join(dir, `${p}-w${width}`);
  const file = join(sub, 'taskbench.fa');
  const kernel = join(ROOT, 'bench', 'taskbench', 'kernel.ts');
  // one directory per program: `ucodes.ts` beside it is its ucode module
  mkdirSync(sub, { recursive: true });
  writeFileSync(file, program);
  writeFileSync(join(sub, 'ucodes.ts'), ucodes(arities, kernel));
  let tasks = 0;
  for (let t = 0; t < STEPS; t++) tasks += widthAt(g, t);
  return { file, tasks };
}

async function runAt(c: Config, prog: Program, iters: number, reps: number): Promise<Timed> {
  const samples: Timed[] = [];
  for (let r = 0; r < reps; r++) samples.push(await runTimed(['--nodes', c.nodes, '--threads', c.threads, '--warm-start', prog.file, STEPS, iters], 300_000));
  samples.sort((a, b) => a.programMs - b.programMs);
  return samples[samples.length >> 1]!;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const only = process.env.BENCH_TASKBENCH_PATTERNS?.split(',').map((s) => s.trim()).filter(Boolean);
  for (const p of only ?? []) if (!PATTERNS.includes(p as Pattern)) throw new Error(`BENCH_TASKBENCH_PATTERNS: no pattern ${p} (patterns: ${PATTERNS.join(', ')})`);
  const patterns: Pattern[] = only ? (only as Pattern[]) : ctx.quick ? ['stencil_1d', 'no_comm'] : [...PATTERNS];
  const reps = ctx.quick ? 1 : Math.max(1, Math.min(ctx.reps, 3));
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [];
  const usPerIter = iterationUs();
  const maxK = Math.max(4, Math.round(Math.log2(PEAK_TASK_US / usPerIter)));
  notes.push(`width = cores × nodes = 2, ${STEPS} steps, compute_bound (${FLOP_PER_ITERATION} FLOP per iteration, ${sig(usPerIter * 1000)} ns here), ` +
    `iterations 2^${maxK} (peak) then 2^${maxK - 1} downwards until efficiency < ${LEVEL * 100} %; median of ${reps}`);
  const dir = mkdtempSync(join(tmpdir(), 'luna-taskbench-'));
  const rows: string[][] = [];
  try {
    for (const c of CONFIGS) {
      const cores = c.nodes * c.threads;
      const progs = new Map<Pattern, Program>();
      for (const p of patterns) progs.set(p, writeProgram(dir, p, cores));
      // peak FLOP/s of the kernel at the largest task size, on the no-dependence graph
      let peak = NaN;
      await section(ctx, notes, `peak ${c.name}`, async () => {
        const prog = progs.get('trivial') ?? writeProgram(dir, 'trivial', cores);
        ctx.log(`taskbench ${c.name}: peak at 2^${maxK} iterations`);
        const t = await runAt(c, prog, 2 ** maxK, reps);
        peak = (prog.tasks * 2 ** maxK * FLOP_PER_ITERATION) / (t.programMs / 1000);
        f[`${c.name}.peakGflops`] = sig(peak / 1e9);
        units[`${c.name}.peakGflops`] = 'GFLOP/s';
      });
      if (!Number.isFinite(peak)) continue;
      for (const p of patterns) {
        await section(ctx, notes, `${p} ${c.name}`, async () => {
          const prog = progs.get(p)!;
          const points: Point[] = [];
          for (let k = maxK - 1; k >= 0; k--) {
            const iters = 2 ** k;
            const t = await runAt(c, prog, iters, reps);
            const efficiency = (prog.tasks * iters * FLOP_PER_ITERATION) / (t.programMs / 1000) / peak;
            points.push({ iters, granularityUs: (t.programMs * 1000 * cores) / prog.tasks, efficiency, spanMs: t.programMs });
            ctx.log(`taskbench ${c.name} ${p}: 2^${k} iterations: ${fmt(points.at(-1)!.granularityUs)} µs per task×core, efficiency ${(efficiency * 100).toFixed(0)} %`);
            if (efficiency < LEVEL * 0.6) break; // well below: the METG is bracketed
          }
          const m = metg(points);
          const key = `${c.name}.${p}.metgUs`;
          f[key] = sig(m.us);
          units[key] = 'µs';
          if (m.bound) notes.push(`${key}: efficiency stayed ≥ ${LEVEL * 100} % down to 1 iteration; the METG is at most this`);
          if (Number.isNaN(m.us) && points[0]) notes.push(`${key}: efficiency < ${LEVEL * 100} % already at ${fmt(points[0].granularityUs)} µs (2^${maxK - 1} iterations): the METG is above it`);
          rows.push([`  ${c.name} ${p}`, `${m.bound ? '≤ ' : ''}${fmt(m.us)}`, points.map((q) => `${fmt(q.granularityUs)}:${(q.efficiency * 100).toFixed(0)}%`).join(' ')]);
        });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const st = f['1x2.stencil_1d.metgUs'];
  if (st !== undefined && Number.isFinite(st)) {
    f['1x2.stencil_1d.xOriginal'] = sig(st / ORIGINAL.metgStencil);
    units['1x2.stencil_1d.xOriginal'] = '×';
    targets.push(
      { key: '1x2.stencil_1d.metgUs', op: '<=', value: ORIGINAL.metgStencil, label: 'stencil_1d METG ≤ the original LuNA (first milestone)' },
      { key: '1x2.stencil_1d.metgUs', op: '<=', value: 10, label: 'stencil_1d METG ≤ 10 µs (goal)' },
    );
    const peers = Object.entries(TASKBENCH_PEERS).map(([name, us]) => `${name} ${us} µs (${fmt(st / us)}×)`);
    notes.push(`stencil_1d METG on 1×2 against the official implementations measured here: ${peers.join(', ')}; the original LuNA ${ORIGINAL.metgStencil} µs`);
  }
  if (rows.length) notes.push('points (granularity µs : efficiency):\n' + table(rows, ['  config pattern', 'METG µs', 'sweep']));
  return { status: 'ok', figures: f, units, targets, notes };
}
