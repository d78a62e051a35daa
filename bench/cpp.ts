// C++ ucodes benchmark, every figure against a baseline measured in the same run:
//   (a) system cost per CF of a trivial C++ fragment vs a trivial TypeScript one, on a chain
//       (examples/chain) and on independent CFs (examples/independent), interleaved ABAB;
//   (b) block matrix multiplication (examples/matmul-cpp, 1600² in 10×10 blocks of 160) with
//       C++ kernels on 1 and 2 threads vs a sequential C++ loop over the same kernel (kernel.h)
//       compiled with the same compiler and flags, and vs the TypeScript kernel
//       (examples/matmul/ucodes.ts) on the same graph.
// Runs in this process through the library (loadProgram + runSingleNode), so process start-up
// and compilation are not counted. Flags: LUNA_CXXFLAGS, else -O3 (the optimisation the
// original LuNA's reference figures were measured with). BENCH_QUICK=1: smaller sizes.
// Run: node dist/bench/cpp.js  (or import { run }).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadProgram, type Loaded } from '../src/program/load.js';
import { runSingleNode } from '../src/runtime/run.js';
import { cxxFlags, findCompiler, runProgram } from '../src/ucode/cpp/compiler.js';

const quick = process.env.BENCH_QUICK === '1';
const ROOT = resolve('.');
const CHAIN_N = quick ? 20_000 : 200_000;
const INDEP_N = quick ? 20_000 : 200_000;
const MATMUL: [number, number] = quick ? [640, 8] : [1600, 10];
const REPS = quick ? 2 : 3;
const FLAGS = process.env.LUNA_CXXFLAGS ?? '-O3';

const p = (...parts: string[]): string => join(ROOT, ...parts);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function load(file: string, ucodes: string[]): Promise<Loaded> {
  const l = await loadProgram(file, { ucodes, cxxflags: FLAGS });
  if (!l.program) throw new Error(`cannot load ${file}:\n${l.text}`);
  return l;
}

/** Wall seconds of one in-process run. */
async function timeRun(l: Loaded, args: (string | number)[], threads: number): Promise<number> {
  const t0 = performance.now();
  const r = await runSingleNode({ program: l.program!, bundle: l.bundle, args: args.map(String), threads });
  const t = (performance.now() - t0) / 1000;
  if (!r.ok) throw new Error(`run failed: ${r.message}`);
  return t;
}

/** Medians of interleaved runs (A B A B …), so drift and noise hit every variant alike. */
async function interleaved(variants: Record<string, () => Promise<number>>): Promise<Record<string, number>> {
  const times: Record<string, number[]> = {};
  for (const k of Object.keys(variants)) { times[k] = []; await variants[k]!(); } // warm-up
  for (let r = 0; r < REPS; r++) for (const [k, f] of Object.entries(variants)) times[k]!.push(await f());
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

/** Seconds of the sequential C++ block product (bench/programs/matmul_seq.cpp), same flags. */
async function sequentialSeconds(n: number, nb: number): Promise<number> {
  const c = findCompiler();
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-cpp-'));
  try {
    const exe = join(dir, 'matmul_seq');
    const cc = await runProgram(c.argv[0]!, [...c.argv.slice(1), ...cxxFlags(FLAGS), '-I', p('examples', 'matmul-cpp'), p('bench', 'programs', 'matmul_seq.cpp'), '-o', exe]);
    if (cc.code !== 0) throw new Error(`cannot compile the sequential baseline:\n${cc.stderr}`);
    const secs: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const out = await runProgram(exe, [String(n), String(nb)]);
      if (out.code !== 0) throw new Error(`matmul_seq failed: ${out.stderr}`);
      secs.push(Number(out.stdout.split(' ')[0]));
    }
    return median(secs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<Record<string, number>> {
  const threads = 2;
  // (a) trivial fragments
  const chainTs = await load(p('examples', 'chain', 'chain.fa'), [p('examples', 'chain', 'ucodes.ts')]);
  const chainCpp = await load(p('examples', 'chain', 'chain.fa'), [p('bench', 'programs', 'cpp', 'trivial.cpp'), p('bench', 'programs', 'cpp', 'check.ts')]);
  const indepTs = await load(p('examples', 'independent', 'independent.fa'), [p('examples', 'independent', 'ucodes.ts')]);
  const indepCpp = await load(p('examples', 'independent', 'independent.fa'), [p('bench', 'programs', 'cpp', 'trivial.cpp')]);
  const trivial = await interleaved({
    chainTs: () => timeRun(chainTs, [CHAIN_N, 0], threads),
    chainCpp: () => timeRun(chainCpp, [CHAIN_N, 0], threads),
    indepTs: () => timeRun(indepTs, [INDEP_N, 0], threads),
    indepCpp: () => timeRun(indepCpp, [INDEP_N, 0], threads),
  });
  // (b) block matmul
  const [n, nb] = MATMUL;
  const mmFile = p('examples', 'matmul-cpp', 'matmul.fa');
  const mmCpp = await load(mmFile, [p('examples', 'matmul-cpp', 'ucodes.ts'), p('examples', 'matmul-cpp', 'ucodes.cpp')]);
  const mmTs = await load(mmFile, [p('examples', 'matmul', 'ucodes.ts')]);
  const seq = await sequentialSeconds(n, nb);
  const mm = await interleaved({
    cpp1: () => timeRun(mmCpp, [n, nb], 1),
    cpp2: () => timeRun(mmCpp, [n, nb], 2),
  });
  const ts = await interleaved({
    ts1: () => timeRun(mmTs, [n, nb], 1),
    ts2: () => timeRun(mmTs, [n, nb], 2),
  });
  const out: Record<string, number> = {
    chainUsPerCfTs: (trivial.chainTs! / CHAIN_N) * 1e6,
    chainUsPerCfCpp: (trivial.chainCpp! / CHAIN_N) * 1e6,
    chainCppVsTs: trivial.chainCpp! / trivial.chainTs!,
    independentUsPerCfTs: (trivial.indepTs! / INDEP_N) * 1e6,
    independentUsPerCfCpp: (trivial.indepCpp! / INDEP_N) * 1e6,
    independentCppVsTs: trivial.indepCpp! / trivial.indepTs!,
    matmulSeqCppSec: seq,
    matmulCpp1ThreadSec: mm.cpp1!,
    matmulCpp2ThreadsSec: mm.cpp2!,
    matmulCpp1VsSeq: mm.cpp1! / seq,
    matmulCpp2VsSeq: mm.cpp2! / seq,
    matmulTs1ThreadSec: ts.ts1!,
    matmulTs2ThreadsSec: ts.ts2!,
    matmulTsVsCpp1Thread: ts.ts1! / mm.cpp1!,
    matmulTsVsCpp2Threads: ts.ts2! / mm.cpp2!,
  };
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run().then((r) => {
    const [n, nb] = MATMUL;
    console.log(`C++ ucodes (flags ${FLAGS}; chain/independent n=${CHAIN_N}, 2 threads; matmul ${n}² in ${nb}×${nb} blocks; medians of ${REPS})`);
    for (const [k, v] of Object.entries(r)) console.log(`  ${k.padEnd(24)} ${v.toFixed(3)}`);
  }).catch((e: unknown) => { console.error(e); process.exit(1); });
}
