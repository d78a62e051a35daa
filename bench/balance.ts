// The balancing step of `luna balance` on a trace of 10^6 fragments (BENCH_BALANCE_CFS overrides):
// a generated trace (src/analysis/sim/synthetic.ts: chains on 4 nodes × 4 lanes) whose placement is
// then skewed — 60 % of the fragments put on node 0 — so the seed's algorithm has moves to make.
//   decodeMs        reading the trace into a profile (readProfile), reported apart
//   seedStepMs      the seed's algorithm at a fixed quantum (a hundredth of the run): weights,
//                   quanta, formula 6, the file's entries — the step the targets are about; in a
//                   fresh process (seedStepCpuMs: its CPU time, steadier on a shared machine)
//   seedStepMiB     its peak memory above a process that only loads the profile
//   defaultStepMs   what `luna balance` does by default (automatic quantum over 11 predictions of
//                   the whole graph, the guard; no local search above 10^5 fragments)
//   xBaseline       seedStepMs ÷ one pass over the profile's columns (per-node sums), the floor
// The three processes (load, seed, default) are alternated and repeated; medians.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { readProfile } from '../src/analysis/balance/profile.js';
import { loadStats } from '../src/analysis/balance/balance.js';
import { syntheticEvents, syntheticManifest, type SyntheticOptions } from '../src/analysis/sim/synthetic.js';
import { writeSimTrace } from '../src/analysis/sim/write.js';
import { median, roundOrder, sig, type Ctx, type SuiteOutput } from './common.js';

interface Step { ms: number; cpuMs: number; peakRssMiB: number; moved: number }

function step(file: string, mode: string): Step {
  const out = execFileSync(process.execPath, ['--max-old-space-size=4096', join(import.meta.dirname, 'balance-step.js'), file, mode], { encoding: 'utf8', timeout: 600_000 });
  return JSON.parse(out) as Step;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const want = Number(process.env.BENCH_BALANCE_CFS ?? (ctx.quick ? 1e5 : 1e6));
  const reps = ctx.quick ? 1 : Math.max(3, ctx.reps);
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-balance-'));
  try {
    // about 9 records per fragment in the generated trace
    const o: SyntheticOptions = { events: Math.round(want * 9.2), nodes: 4, threads: 4, seed: 5 };
    ctx.log(`balance: generating a trace of ~${want.toExponential(0)} fragments`);
    writeSimTrace(join(dir, 'trace'), syntheticManifest(o), syntheticEvents(o));
    const t0 = performance.now();
    const p = readProfile(join(dir, 'trace'));
    const decodeMs = performance.now() - t0;
    for (let c = 0; c < p.n; c++) if (c % 5 < 3) p.node[c] = 0;
    const file = join(dir, 'profile.bin');
    writeFileSync(file, serialize(p));
    // the floor: one pass over the columns
    const base: number[] = [];
    const samples: Record<string, Step[]> = { load: [], seed: [], default: [] };
    for (let r = 0; r < reps; r++) {
      for (const k of roundOrder(['load', 'seed', 'default'], r)) samples[k]!.push(step(file, k));
      const b0 = performance.now();
      loadStats(p, p.node, p.nodes);
      base.push(performance.now() - b0);
    }
    const med = (k: string, f: (s: Step) => number) => median(samples[k]!.map(f));
    const seedMs = med('seed', (s) => s.ms), defMs = med('default', (s) => s.ms), seedCpuMs = med('seed', (s) => s.cpuMs);
    const seedMiB = Math.max(0, med('seed', (s) => s.peakRssMiB) - med('load', (s) => s.peakRssMiB));
    const f: Record<string, number> = {
      fragments: p.n, decodeMs: sig(decodeMs), seedStepMs: sig(seedMs), seedStepCpuMs: sig(seedCpuMs), seedStepMiB: sig(seedMiB), seedMoved: samples.seed![0]!.moved,
      defaultStepMs: sig(defMs), decodePlusSeedMs: sig(decodeMs + seedMs), baselineMs: sig(median(base)), xBaseline: sig(seedMs / Math.max(1e-3, median(base))),
    };
    const units: Record<string, string> = { decodeMs: 'ms', seedStepMs: 'ms', seedStepCpuMs: 'ms', seedStepMiB: 'MiB', defaultStepMs: 'ms', decodePlusSeedMs: 'ms', baselineMs: 'ms', xBaseline: '×' };
    return {
      status: 'ok', figures: f, units,
      targets: [
        { key: 'seedStepMs', op: '<=', value: 2000, label: 'balancing step, 10^6 fragments' },
        { key: 'seedStepMiB', op: '<=', value: 256, label: 'balancing step memory' },
        { key: 'decodePlusSeedMs', op: '<=', value: 10_000, label: 'with the trace decoding' },
      ],
      notes: [`${p.n} fragments on ${p.nodes} nodes × ${p.threads} lanes, 60 % put on node 0; fresh process per step, ${reps} alternated repetition(s), medians; decoding measured once in the suite's process`],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
