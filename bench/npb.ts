// NPB IS suite: the integer sort of examples/npb-is on the SPMD layer, classes W and A (W alone
// with --quick), on 1, 2 and 4 ranks (worker threads of one process) and on 2 node processes of
// one rank each; the UPC structure ("original") against the fixed variant (allocation hoisted out
// of the loop, barriers removed) and the nosync one (no synchronisation at the collectives' exit
// either), alternated. The time is the benchmark's own: its timed iterations, the slowest rank's.
//
// The reference is NPB 3.4's C IS built outside the repository: NPB_IS_REFERENCE names a directory
// holding the serial is.W.x / is.A.x (NPB3.4-OMP built without OpenMP), NPB_IS_REFERENCE_MPI one
// holding the MPI build (run here as `mpirun -np 2`); both are run in the same rounds as ours.
// Without them the ratios are to the issue's figures measured on this machine (docs/benchmarks.md).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { interleaved, LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, ROOT, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';

const IS = join(ROOT, 'examples', 'npb-is', 'is.ts');
const RANKS = [1, 2, 4] as const;
const VARIANTS = ['original', 'fixed', 'nosync'] as const;

/** The C reference on this machine (the issue's figures, midpoints of its ranges), seconds. */
const ISSUE_FIGURES: Record<string, { serial: number; mpi2: number }> = {
  W: { serial: 0.045, mpi2: 0.025 },
  A: { serial: 0.38, mpi2: 0.22 },
};

const TARGETS: Target[] = [
  { key: 'isW1vsC', op: '<=', value: 10, label: 'IS class W, 1 rank vs serial C' },
  { key: 'isW2vsMpi', op: '<=', value: 10, label: 'IS class W, 2 ranks vs C on 2 MPI ranks' },
  { key: 'isA1vsC', op: '<=', value: 5, label: 'IS class A, 1 rank vs serial C' },
  { key: 'isA2vsMpi', op: '<=', value: 5, label: 'IS class A, 2 ranks vs C on 2 MPI ranks' },
];

/** The timed section's seconds from an NPB report: from "Mop/s total" (2 decimals of a large
 * number, where "Time in seconds" has only 2 decimals of a small one). */
function npbSeconds(out: string, keys: number, what: string): number {
  if (!/Verification\s+=\s+SUCCESSFUL/.test(out)) throw new Error(`${what}: not verified: ${out.trim().split('\n').slice(-4).join(' | ')}`);
  const mops = /Mop\/s total\s+=\s+([\d.]+)/.exec(out);
  if (!mops) throw new Error(`${what}: no Mop/s line`);
  return (10 * keys) / (Number(mops[1]) * 1e6);
}

function runOnce(cmd: string, args: string[], keys: number, env?: NodeJS.ProcessEnv): number {
  const what = `${cmd} ${args.join(' ')}`;
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: env ?? process.env });
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(0, 6).join(' | ')}`);
  return npbSeconds(r.stdout, keys, what);
}

const luna = (cls: string, ranks: number, variant: string, keys: number, nodes = 1): number =>
  runOnce(process.execPath, [...LUNA_NODE_FLAGS, LUNA, 'spmd', '--threads', String(ranks), '--nodes', String(nodes), IS, cls, variant], keys, { ...process.env, ...LUNA_NODE_ENV });

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const reps = Math.max(1, ctx.reps);
  const classes = ctx.quick ? ['W'] : ['W', 'A'];
  const serialDir = process.env.NPB_IS_REFERENCE, mpiDir = process.env.NPB_IS_REFERENCE_MPI;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const notes: string[] = [`median of ${reps} run(s) per configuration, alternated; time = the benchmark's timed iterations (slowest rank), from its Mop/s`];
  for (const cls of classes) {
    const keys = cls === 'W' ? 2 ** 20 : 2 ** 23;
    await section(ctx, notes, `class ${cls}`, async () => {
      const runs: Record<string, () => Promise<number>> = {};
      for (const t of RANKS) for (const v of VARIANTS) runs[`is${cls}${t}${v}`] = async () => luna(cls, t, v, keys);
      // 2 node processes of one rank each: the keys travel over the transport
      for (const v of VARIANTS) runs[`is${cls}2nodes${v}`] = async () => luna(cls, 2, v, keys, 2);
      const serial = serialDir && join(serialDir, `is.${cls}.x`), mpi = mpiDir && join(mpiDir, `is.${cls}.x`);
      if (serial && existsSync(serial)) runs[`c${cls}serial`] = async () => runOnce(serial, [], keys);
      if (mpi && existsSync(mpi)) runs[`c${cls}mpi2`] = async () => runOnce('mpirun', ['--allow-run-as-root', '--oversubscribe', '-np', '2', mpi], keys);
      const m = await interleaved(reps, runs);
      for (const [k, s] of Object.entries(m)) { f[k] = sig(s); units[k] = 's'; }
      for (const t of [...RANKS, '2nodes']) {
        const before = m[`is${cls}${t}original`]!;
        f[`is${cls}${t}gainPct`] = sig((100 * (before - m[`is${cls}${t}fixed`]!)) / before);
        f[`is${cls}${t}nosyncGainPct`] = sig((100 * (before - m[`is${cls}${t}nosync`]!)) / before);
      }
      const cSerial = m[`c${cls}serial`] ?? ISSUE_FIGURES[cls]!.serial, cMpi = m[`c${cls}mpi2`] ?? ISSUE_FIGURES[cls]!.mpi2;
      // ours at its best (the faster of the two fixed variants) against the C code
      const best = (t: number): number => Math.min(m[`is${cls}${t}fixed`]!, m[`is${cls}${t}nosync`]!);
      f[`is${cls}1vsC`] = sig(best(1) / cSerial);
      f[`is${cls}2vsMpi`] = sig(best(2) / cMpi);
      notes.push(`class ${cls}: C reference ${m[`c${cls}serial`] !== undefined ? `measured here (${serial})` : `the issue's figure (${cSerial} s serial; set NPB_IS_REFERENCE)`}, ${m[`c${cls}mpi2`] !== undefined ? `MPI measured here (${mpi})` : `the issue's figure for 2 MPI ranks (${cMpi} s; set NPB_IS_REFERENCE_MPI)`}`);
    });
  }
  notes.push('isC{T}gainPct: (original − fixed) / original, the seed\'s Δ column (its IS: +1.2 % on 1 thread, +2.6 % on 2, +9.3 % on 4); nosyncGainPct: the same for the nosync variant');
  return { status: 'ok', figures: f, units, targets: TARGETS, notes };
}
