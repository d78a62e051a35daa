// The balancing step of `luna balance` on a trace of 10^6 fragments (BENCH_BALANCE_CFS overrides):
// a generated trace (src/analysis/sim/synthetic.ts: chains on 4 nodes × 4 lanes) whose placement is
// then skewed — 60 % of the fragments put on node 0 — so the seed's algorithm has moves to make.
//   decodeMs        reading the trace into a profile (readProfile: the columns straight from the
//                   merge, no trace model), reported apart, in a fresh process; decodeCpuMs its CPU
//   decodeFloorMs   the reader and merge alone (every row to an empty sink): what decodeMs cannot
//                   go below without a faster reader; decodeOverFloor the profile pass's share
//   decodeWorkerMs  readProfile with the merge in a worker thread (LUNA_TRACE_WORKER=1)
//   seedStepMs      the seed's algorithm at a fixed quantum (a hundredth of the run): weights,
//                   quanta, formula 6, the file's entries — the step the targets are about; in a
//                   fresh process (seedStepCpuMs: its CPU time, steadier on a shared machine)
//   seedStepMiB     its peak memory above a process that only loads the profile
//   defaultStepMs   what `luna balance` does by default (automatic quantum over 11 predictions —
//                   of a prefix of the run above SWEEP_WORK —, the pull, the guard's replays; no
//                   local search above 10^5 fragments); defaultStepCpuMs its CPU time,
//                   defaultStepMiB its peak memory above the loaded profile, default.* its phases
//                   (the step's own account, wall ms: strategy, sweep, search + pull, predictions)
//   xBaseline       seedStepMs ÷ one pass over the profile's columns (per-node sums), the floor
//   xStepTarget     seedStepMs ÷ 2 s, xTotalTarget (decodeMs + seedStepMs) ÷ 10 s: ≤ 1 meets them
//   test1.*         the seed's test_1 (examples/seed004: every CF on node 0) traced on 2 nodes,
//                   balanced by default for 2 and 4 nodes: the speedup the simulator predicts,
//                   and its ratio to the seed's measured 1.76× (2 nodes) and 2.83× (4 nodes) —
//                   a prediction, not a run (real runs: npm run experiments -- --only d)
// The three processes (load, seed, default) are alternated and repeated; medians.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { readProfile } from '../src/analysis/balance/profile.js';
import { balance, loadStats } from '../src/analysis/balance/balance.js';
import type { SyntheticOptions } from '../src/analysis/sim/synthetic.js';
import { median, ROOT, roundOrder, runCli, sig, writeSyntheticTrace, type Ctx, type SuiteOutput } from './common.js';

/** The seed's test_1 after one application, quantum 0.1 (docs/benchmarks.md): 72.08 → 41.058 s on 2 nodes, 73.401 → 25.941 s on 4. */
const SEED_TEST1 = { 2: 72.08 / 41.058, 4: 73.401 / 25.941 } as const;

/** test_1 traced on 2 nodes, balanced for 2 and 4: the predicted speedups and max/avg. */
async function test1(dir: string, quick: boolean): Promise<Record<string, number>> {
  const trace = join(dir, 'test1');
  await runCli(['--nodes', '2', '--threads', '1', '--trace', trace, join(ROOT, 'examples/seed004/seed004.fa'), ...(quick ? ['48', '16', '300'] : ['48', '24', '1000'])], 600_000);
  const p = readProfile(trace);
  const f: Record<string, number> = { 'test1.fragments': p.n };
  for (const nodes of [2, 4] as const) {
    const r = balance(p, { nodes, lanes: 1 });
    const x = r.predicted.current.makespan / r.predicted.next.makespan;
    f[`test1.predicted${nodes}x`] = sig(x);
    f[`test1.maxOverAvg${nodes}`] = sig(r.after.maxOverAvg);
    f[`test1.xSeed${nodes}`] = sig(x / SEED_TEST1[nodes]);
  }
  return f;
}

interface Step { ms: number; cpuMs: number; peakRssMiB: number; moved: number; phases?: Record<string, number> }

function step(file: string, mode: string): Step {
  const worker = mode === 'decode-worker';
  const env = { ...process.env, LUNA_TRACE_WORKER: worker ? '1' : '0' };
  const out = execFileSync(process.execPath, ['--max-old-space-size=4096', join(import.meta.dirname, 'balance-step.js'), file, worker ? 'decode' : mode], { encoding: 'utf8', timeout: 600_000, env });
  return JSON.parse(out) as Step;
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const want = Number(process.env.BENCH_BALANCE_CFS ?? (ctx.quick ? 1e5 : 1e6));
  const reps = ctx.quick ? 1 : Math.max(3, ctx.reps);
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-balance-'));
  try {
    // about 12 records per fragment in the generated trace (9.2·10^6 records gave 766 672 fragments)
    const o: SyntheticOptions = { events: Math.round(want * 12), nodes: 4, threads: 4, seed: 5 };
    ctx.log(`balance: generating a trace of ~${want.toExponential(0)} fragments`);
    writeSyntheticTrace(join(dir, 'trace'), o);
    const trace = join(dir, 'trace');
    const dec: Record<string, Step[]> = { decode: [], floor: [], 'decode-worker': [] };
    for (let r = 0; r < reps; r++) for (const k of roundOrder(['decode', 'floor', 'decode-worker'], r)) dec[k]!.push(step(trace, k));
    const p = readProfile(trace);
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
    const dmed = (k: string, f: (s: Step) => number = (s) => s.ms) => median(dec[k]!.map(f));
    const decodeMs = dmed('decode'), floorMs = dmed('floor');
    const seedMs = med('seed', (s) => s.ms), defMs = med('default', (s) => s.ms), seedCpuMs = med('seed', (s) => s.cpuMs);
    const seedMiB = Math.max(0, med('seed', (s) => s.peakRssMiB) - med('load', (s) => s.peakRssMiB));
    const defMiB = Math.max(0, med('default', (s) => s.peakRssMiB) - med('load', (s) => s.peakRssMiB));
    const phases: Record<string, number> = {};
    for (const k of Object.keys(samples.default![0]!.phases ?? {})) phases[`default.${k}Ms`] = sig(med('default', (s) => s.phases![k]!));
    ctx.log('balance: the seed\'s test_1 traced on 2 nodes, balanced for 2 and 4');
    const seedApp = await test1(dir, ctx.quick);
    const f: Record<string, number> = {
      ...seedApp,
      fragments: p.n, decodeMs: sig(decodeMs), decodeCpuMs: sig(dmed('decode', (s) => s.cpuMs)), decodeFloorMs: sig(floorMs), decodeOverFloor: sig(decodeMs / floorMs), decodeWorkerMs: sig(dmed('decode-worker')), decodeMiB: sig(dmed('decode', (s) => s.peakRssMiB)), seedStepMs: sig(seedMs), seedStepCpuMs: sig(seedCpuMs), seedStepMiB: sig(seedMiB), seedMoved: samples.seed![0]!.moved,
      defaultStepMs: sig(defMs), defaultStepCpuMs: sig(med('default', (s) => s.cpuMs)), defaultStepMiB: sig(defMiB), ...phases, decodePlusDefaultMs: sig(decodeMs + defMs), decodePlusSeedMs: sig(decodeMs + seedMs), baselineMs: sig(median(base)), xBaseline: sig(seedMs / Math.max(1e-3, median(base))),
      xStepTarget: sig(seedMs / 2000), xTotalTarget: sig((decodeMs + seedMs) / 10_000),
    };
    const units: Record<string, string> = { 'test1.predicted2x': '×', 'test1.predicted4x': '×', 'test1.xSeed2': '×', 'test1.xSeed4': '×', decodeMs: 'ms', decodeCpuMs: 'ms', decodeFloorMs: 'ms', decodeOverFloor: '×', decodeWorkerMs: 'ms', decodeMiB: 'MiB', xStepTarget: '×', xTotalTarget: '×', seedStepMs: 'ms', seedStepCpuMs: 'ms', seedStepMiB: 'MiB', defaultStepMs: 'ms', defaultStepCpuMs: 'ms', defaultStepMiB: 'MiB', decodePlusDefaultMs: 'ms', ...Object.fromEntries(Object.keys(phases).map((k) => [k, 'ms'])), decodePlusSeedMs: 'ms', baselineMs: 'ms', xBaseline: '×' };
    return {
      status: 'ok', figures: f, units,
      targets: [
        { key: 'seedStepMs', op: '<=', value: 2000, label: 'balancing step, 10^6 fragments' },
        { key: 'seedStepMiB', op: '<=', value: 256, label: 'balancing step memory' },
        { key: 'decodePlusSeedMs', op: '<=', value: 10_000, label: 'with the trace decoding' },
        { key: 'defaultStepMs', op: '<=', value: 2000, label: 'the default step (automatic quantum, guard), 10^6 fragments' },
        { key: 'defaultStepMiB', op: '<=', value: 256, label: 'the default step\'s memory' },
        { key: 'decodePlusDefaultMs', op: '<=', value: 10_000, label: 'the default step with the trace decoding' },
        { key: 'test1.predicted4x', op: '>=', value: 3.6, label: 'test_1, 4 nodes, predicted (seed: 2.83× measured)' },
        { key: 'test1.maxOverAvg4', op: '<=', value: 1.05, label: 'test_1, 4 nodes, predicted max/avg' },
      ],
      notes: [`${p.n} fragments on ${p.nodes} nodes × ${p.threads} lanes, 60 % put on node 0; fresh process per step and per decoding, ${reps} alternated repetition(s), medians`],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
