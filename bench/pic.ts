// The particle-in-cell benchmark: examples/pic3d (the self-gravitating dust cloud of seeds 000 and
// 003) at a small size and, without --quick, at the seed's parameters (100³ grid, 10⁶ particles,
// 10 steps, 4×4×4 subdomains), with TypeScript kernels and with C++ kernels (examples/pic3d-cpp):
//   - particle-steps per second of the program (luna run --timing: loading excluded) on 1 node ×
//     1 thread, 1 node × 2 threads and 2 nodes × 1 thread (x-slabs split between the nodes);
//   - the sequential baseline with the same kernels in the same run, interleaved with them: the
//     F³ subdomains one after another in a plain loop (examples/pic3d/sequential.ts in a fresh
//     process, bench/programs/pic3d-seq.ts; bench/programs/pic3d_seq.cpp compiled with the same flags),
//     under the C library tunables bin/luna's runs get (one malloc arena, huge pages: the harness
//     runs as bin/luna does); and the same programs under the C library's defaults (xSeqPlain,
//     seqPlainMps);
//   - 1 × 2's xSeq from pairs (pic-xseq.ts): LUNA_PIC_XSEQ_PAIRS (default 5) 1 × 2 runs, each beside
//     a sequential run, the order swapped every pair; the median of the pairs' ratios, with their
//     spread and the sequential reference's (xSeqMin/Max, seqMpsMin/Max; xSeqOfMedians: the ratio
//     of the medians, as xSeq was read before);
//   - every timed run (luna's and the baselines') right after 1 GiB touched and let go
//     (LUNA_PIC_WARM_MB), so each finds pages the host backs: this virtual machine reports freed
//     pages to its host, and a page it took back costs a host fault on first touch (the two
//     speeds measured first: firstTouchColdGiBps, firstTouchWarmGiBps);
//   - the CFs per step and the system thread's CPU per CF (counts that hold on a loaded machine);
//   - the machine's two-core ceiling for the kernels (pairCeiling): two sequential copies run at
//     once, 2 × the time alone ÷ the slower copy's — what 1 × 2 could reach with no runtime at all;
//   - the C++ kernels hand-parallelized with OpenMP on two threads (ompXSeq, bench/programs/pic3d_omp.cpp):
//     what a shared-memory design with no runtime reaches, phases and all; and luna-ts's C++ 1 × 2
//     time over that program's in the same rounds (cpp.1x2.vsOmp: the runtime's cost, 1 = none);
//   - the SLOU characteristics of a traced run per configuration (luna analyze slow), the rows of
//     seed 003's Table 1 (docs/pic.md), and on 1 × 2 the bound with no overhead (xSeqBound: the
//     sequential CPU time over the larger of half the CFs' CPU time and the critical path);
//   - on 2 × 1, the DFs and bytes that cross between the nodes (the traced run's dfSendStart) and
//     the transport's time for them at its speed measured in the same run (bench/transport.ts:
//     1 MiB payloads, half a round trip a DF), and 2 × 1 ÷ (1 × 1 + that time), the target's figure;
//   - the particle exchange's share of a step with the particles in dynamic arrays (pic3d_dda.fa,
//     TypeScript kernels, and C++ ones on 1 × 2 and 2 × 1), from the trace's ddaOp spans (pic-share.ts), on 1 × 2, 2 × 1 and on
//     one node with no particle leaving; and the same traced run's SLOU and particle-steps/s
//     (`<size>.dda.<row>.slou.*`, `.tracedMps`: pic3d_dda's table, docs/pic.md).
// The seed's figures (the original LuNA, 1 node × 16 threads): 10⁷ particle-steps in 9.99 s, P_U
// 8.2 %, P_O 69.2 %; on 4 nodes 16× slower.
//   npm run bench -- pic [--quick]     LUNA_CXXFLAGS (default -O3) for both C++ sides
//   LUNA_PIC_ROWS=seed:1x2 node dist/bench/run.js pic --no-save   only those rows: a size (small,
//   seed) and the configurations (1x1, 1x2, 2x1, comma-separated), with their baselines and SLOU,
//   without the exchange-share runs (an A/B of one row in minutes, not the whole suite)
//   LUNA_PIC_DEFINES=SUBDOMAIN_SWEEPS …   -D macros for pic3d.fa (there: the Poisson sweeps on the
//   subdomains with deep halos, not on slabs of the grid; WHOLE_SLABS: slabs on several nodes read
//   whole, not their edges)
//   LUNA_PIC_SHARES=small:cpp.2x1 node dist/bench/run.js pic --reps 6 --no-save   only those
//   exchange-share rows (1x2, 2x1, 1x1.noneLeave, cpp.1x2, cpp.2x1) at that size, each traced
//   --reps times in rotated rounds: the median, and every run's share with the load beside it
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSlowTrace } from '../src/analysis/slow/index.js';
import { cxxFlags, findCompiler, runProgram } from '../src/ucode/cpp/compiler.js';
import { keepFreedMb } from '../src/runtime/exec/shm.js';
import { type Params } from '../examples/pic3d/model.js';
import { BenchSettingError, interleavedTimed, ROOT, roundOrder, runTimed, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';
import { readTrace } from '../src/trace/merge.js';
import { exchangeShare, type ExchangeShare } from './pic-share.js';
import { run as measureTransport } from './transport.js';
import { alternatePairs, pairsNote, summarize, type XSeqPair } from './pic-xseq.js';

const FLAGS = process.env.LUNA_CXXFLAGS ?? '-O3';
const SMALL: Params = { N: 40, F: 4, NP: 100_000, NT: 10, K: 10 };
const SEED: Params = { N: 100, F: 4, NP: 1_000_000, NT: 10, K: 10 };
/** The original's figures (seed 003, Table 1: 1 node × 16 threads). */
const ORIGINAL = { mps: 1e7 / 9.99 / 1e6, pU: 8.2, pO: 69.21 };

const CONFIGS = { '1x1': [1, 1], '1x2': [1, 2], '2x1': [2, 1] } as const;
type Config = keyof typeof CONFIGS;

/** LUNA_PIC_ROWS (`size:cfg,cfg`): the rows to run; undefined: every row. */
function rows(): { size: string; configs: Config[] } | undefined {
  const v = process.env.LUNA_PIC_ROWS;
  if (v === undefined || v.trim() === '') return undefined;
  const m = /^(small|seed):((?:1x1|1x2|2x1)(?:,(?:1x1|1x2|2x1))*)$/.exec(v.trim());
  if (!m) throw new BenchSettingError(`LUNA_PIC_ROWS must be <small|seed>:<1x1|1x2|2x1>[,…], e.g. seed:1x2; got ${JSON.stringify(v)}`);
  return { size: m[1]!, configs: [...new Set(m[2]!.split(',') as Config[])] };
}

/** The exchange-share rows: their label, configuration, and program (dda: TypeScript kernels, dda-cpp: C++). */
const SHARES = ['1x2', '2x1', '1x1.noneLeave', 'cpp.1x2', 'cpp.2x1'] as const;
type ShareRow = (typeof SHARES)[number];
const shareRow = (label: ShareRow, p: Params): [Config, Params, 'dda' | 'dda-cpp'] => {
  const cpp = label.startsWith('cpp.');
  // one node with no particle leaving: one subdomain, every particle stays
  if (label === '1x1.noneLeave') return ['1x1', { ...p, F: 1 }, 'dda'];
  return [(cpp ? label.slice(4) : label) as Config, p, cpp ? 'dda-cpp' : 'dda'];
};

/** LUNA_PIC_SHARES (`size:row,row`): only those exchange-share rows; undefined: not set. */
function shareRows(): { size: string; rows: ShareRow[] } | undefined {
  const v = process.env.LUNA_PIC_SHARES;
  if (v === undefined || v.trim() === '') return undefined;
  const m = /^(small|seed):([\w.]+(?:,[\w.]+)*)$/.exec(v.trim());
  const list = m ? m[2]!.split(',') : [];
  if (!m || list.some((r) => !(SHARES as readonly string[]).includes(r))) throw new BenchSettingError(`LUNA_PIC_SHARES must be <small|seed>:<${SHARES.join('|')}>[,…], e.g. small:cpp.2x1; got ${JSON.stringify(v)}`);
  return { size: m[1]!, rows: [...new Set(list as ShareRow[])] };
}

/**
 * LUNA_PIC_XSEQ_PAIRS: how many sequential / 1 × 2 pairs xSeq is the median of (0: the ratio of the
 * medians of the interleaved rounds, as before). 5 costs ~60 s at the seed's parameters (load 9,
 * shielded) and a disturbed pair or two leave the median alone: over 6 bench runs at load 7–12 the
 * C++ xSeq read 1.49–1.74, where main's one ratio a run read 0.92–1.72 over 6 runs alternated with them.
 */
function xSeqPairs(quick: boolean): number {
  const v = process.env.LUNA_PIC_XSEQ_PAIRS;
  if (v === undefined || v.trim() === '') return quick ? 2 : 5;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 100) throw new BenchSettingError(`LUNA_PIC_XSEQ_PAIRS must be a whole number of pairs from 0 to 100, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * LUNA_PIC_WARM_MB: the MiB of memory touched and let go just before every timed run (the
 * sequential, OpenMP and paired baselines' too), so that each run finds the guest's free pages
 * backed by the host (bench/programs/touch_pages.cpp); 0: none, each run meets the pages the one
 * before it left. 1 024 covers the largest footprint here, two processes of ~400 MB (2 × 1, the
 * pair of sequential copies).
 */
function warmMb(): number {
  const v = process.env.LUNA_PIC_WARM_MB;
  if (v === undefined || v.trim() === '') return 1024;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65536) throw new BenchSettingError(`LUNA_PIC_WARM_MB must be a whole number of MiB from 0 to 65536, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * How long the kernel waits before it reports freed pages to the host (2 s in Linux's
 * page_reporting), with a margin: after this long idle, a touch meets pages the host took back.
 */
const REPORTED_AFTER_MS = 5000;

/**
 * How this (virtual) machine gives freed pages back to its host, from the page_reporting module's
 * parameters (virtio-balloon free page reporting); undefined where it has none. min_free_ms is how
 * long a page must stay free before it is reported (0: at once, so a run's pages are taken back
 * between runs); `echo 30000 > …/min_free_ms` as root holds them for 30 s.
 */
function pageReporting(): string | undefined {
  const dir = '/sys/module/page_reporting/parameters';
  const read = (f: string): string | undefined => { try { return readFileSync(join(dir, f), 'utf8').trim(); } catch { return undefined; } };
  const order = read('page_reporting_order');
  if (order === undefined) return undefined;
  const minFree = read('min_free_ms');
  return `free blocks of order ${order} (${(4 << Number(order)) / 1024} MiB)${minFree !== undefined ? `, once free for ${minFree} ms (${dir}/min_free_ms)` : ''}`;
}

/** The suite's settings checked before anything is measured (bench/run.ts calls it first). */
export function settings(): void { rows(); shareRows(); xSeqPairs(false); warmMb(); }

/** LUNA_PIC_DEFINES (`NAME[=value],…`): -D macros for every pic3d.fa run, e.g. SUBDOMAIN_SWEEPS (the sweeps on the subdomains, not on slabs of the grid) */
const DEFINES = (process.env.LUNA_PIC_DEFINES ?? '').split(',').map((d) => d.trim()).filter((d) => d !== '');

/** ts, cpp: pic3d.fa with those kernels; dda, dda-cpp: pic3d_dda.fa (particles in dynamic arrays) with TypeScript, C++ kernels */
const argv = (lang: 'ts' | 'cpp' | 'dda' | 'dda-cpp', p: Params, c: Config, extra: string[] = []): string[] => {
  const [nodes, threads] = CONFIGS[c];
  const file = join(ROOT, 'examples', lang === 'cpp' || lang === 'dda-cpp' ? 'pic3d-cpp' : 'pic3d', lang.startsWith('dda') ? 'pic3d_dda.fa' : 'pic3d.fa');
  const defines = lang.startsWith('dda') ? [] : DEFINES.flatMap((d) => ['-D', d]);
  return [...(nodes > 1 ? ['--nodes', String(nodes)] : []), '--threads', String(threads), '--cxxflags', FLAGS, ...defines, ...extra,
    file, ...[p.N, p.F, p.NP, p.NT, p.K, 0, nodes].map(String)];
};

/**
 * The environment of a baseline run under the C library's defaults (xSeqPlain): the harness runs
 * as bin/luna does (run.ts asLuna), so every other baseline gets bin/luna's tunables (one malloc
 * arena, huge pages for the heap), as luna's runs do.
 */
function plainEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.GLIBC_TUNABLES;
  return env;
}

/**
 * The environment of every other baseline run (the sequential programs, two copies at once, the
 * OpenMP program): bin/luna's tunables (inherited) and the memory policy a luna run sets at its
 * start (exec/shm.ts keepFreedMemory: no mmap for large blocks, freed memory kept up to
 * LUNA_KEEP_FREED_MB), here as the C library's tunables of the same meaning. Without it the
 * sequential C++ program spent ~25 % of its time faulting in pages that luna's runs reuse
 * (0.92 against 0.69 s, 6 alternated pairs, docs/pic.md).
 */
function baselineEnv(): NodeJS.ProcessEnv {
  const mb = keepFreedMb();
  if (!(mb > 0)) return process.env;
  const keep = `glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=${Math.min(mb * 1024 * 1024, 2 ** 31 - 1)}`;
  const t = process.env.GLIBC_TUNABLES?.replace(/:+$/, '');
  return { ...process.env, GLIBC_TUNABLES: t ? `${t}:${keep}` : keep };
}

/** The sequential TypeScript baseline's program (it prints Σx over its final particles: the TypeScript and C++ baselines must agree). */
const SEQ_TS = join(ROOT, 'dist', 'bench', 'programs', 'pic3d-seq.js');

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const reps = ctx.quick ? 1 : ctx.reps;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [];
  const sharesOnly = shareRows();
  if (sharesOnly) return shareRuns(ctx, sharesOnly, f, units, targets, notes);
  notes.push(`fresh process per luna run (program time, loading excluded), median of ${reps} interleaved with the sequential baselines; C++ flags ${FLAGS}; the baselines run under bin/luna's C library tunables and a luna run's memory policy (GLIBC_TUNABLES=${baselineEnv().GLIBC_TUNABLES ?? ''}), xSeqPlain's without any`);
  const only = rows();
  if (only) notes.push(`LUNA_PIC_ROWS: ${only.size} size, ${only.configs.join(', ')} only`);
  if (DEFINES.length) notes.push(`LUNA_PIC_DEFINES: pic3d.fa with -D ${DEFINES.join(' -D ')}`);
  const configs: Config[] = only ? only.configs : (Object.keys(CONFIGS) as Config[]);
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-pic-'));
  try {
    // the sequential C++ baseline
    const c = findCompiler();
    const exe = join(dir, 'pic3d_seq');
    const cc = await runProgram(c.argv[0]!, [...c.argv.slice(1), ...cxxFlags(FLAGS), '-I', join(ROOT, 'examples', 'pic3d-cpp'), join(ROOT, 'bench', 'programs', 'pic3d_seq.cpp'), '-o', exe]);
    if (cc.code !== 0) throw new Error(`cannot compile the sequential C++ baseline:\n${cc.stderr}`);
    // the same kernels hand-parallelized with OpenMP (a compiler without it leaves the row out, saying so)
    const ompExe = join(dir, 'pic3d_omp');
    const oc = await runProgram(c.argv[0]!, [...c.argv.slice(1), ...cxxFlags(FLAGS), '-fopenmp', '-I', join(ROOT, 'examples', 'pic3d-cpp'), join(ROOT, 'bench', 'programs', 'pic3d_omp.cpp'), '-o', ompExe]);
    if (oc.code !== 0) notes.push(`ompXSeq left out: bench/programs/pic3d_omp.cpp does not compile with -fopenmp here: ${oc.stderr.split('\n')[0]}`);
    // every timed run meets pages the host backs (warmMb)
    const mb = warmMb();
    const touchExe = join(dir, 'touch_pages');
    if (mb > 0) {
      const tc = await runProgram(c.argv[0]!, [...c.argv.slice(1), '-O2', join(ROOT, 'bench', 'programs', 'touch_pages.cpp'), '-o', touchExe]);
      if (tc.code !== 0) throw new Error(`cannot compile bench/programs/touch_pages.cpp:\n${tc.stderr}`);
    }
    /** `mb` MiB touched and let go: the GiB/s of the touch */
    const touch = async (): Promise<number> => {
      const out = await runProgram(touchExe, [String(mb)]);
      if (out.code !== 0) throw new Error(`touch_pages: ${out.stderr}`);
      const [m, secs] = out.stdout.trim().split(' ').map(Number) as [number, number];
      return m / 1024 / secs;
    };
    const warm = async (): Promise<void> => { if (mb > 0) await touch(); };
    const reporting = pageReporting();
    if (reporting) notes.push(`this machine reports freed pages to its host: ${reporting}`);
    if (mb > 0 && !ctx.quick) {
      // the machine's two speeds of first touch: pages the host took back, then pages it backs
      await new Promise((done) => setTimeout(done, REPORTED_AFTER_MS));
      f.firstTouchColdGiBps = sig(await touch());
      f.firstTouchWarmGiBps = sig(await touch());
      units.firstTouchColdGiBps = units.firstTouchWarmGiBps = 'GiB/s';
      notes.push(`firstTouchColdGiBps / firstTouchWarmGiBps: ${mb} MiB of huge pages touched after ${REPORTED_AFTER_MS / 1000} s idle (pages the host took back), then at once again (pages it backs); every timed run below follows a touch of ${mb} MiB (LUNA_PIC_WARM_MB, 0: none)`);
    } else if (mb === 0) notes.push('LUNA_PIC_WARM_MB=0: no touch before the timed runs, each meets the pages the run before it left (this machine: docs/pic.md, "Pages the host backs")');

    const all: [string, Params][] = ctx.quick ? [['small', SMALL]] : [['small', SMALL], ['seed', SEED]];
    const sizes = all.filter(([name]) => !only || only.size === name);
    for (const [name, p] of sizes) {
      await section(ctx, notes, name, async () => {
        const steps = p.NP * p.NT;
        const seq = { ts: [] as number[], cpp: [] as number[] };
        // the baselines' CPU time too: load stretches their wall time, not their CPU
        const seqCpu = { ts: [] as number[], cpp: [] as number[] };
        // the slower of two sequential copies run at once (see twice below)
        const pair = { ts: [] as number[], cpp: [] as number[] };
        // the C++ kernels on two OpenMP threads
        const omp: number[] = [];
        let sums: [number, number] = [NaN, NaN];
        // the sequential programs as shipped, under the C library's defaults (xSeqPlain)
        const seqPlain = { ts: [] as number[], cpp: [] as number[] };
        /** one sequential run with `lang`'s kernels (`plain`: without bin/luna's tunables): seconds, Σx, CPU seconds */
        const seqRun = async (lang: 'ts' | 'cpp', plain = false): Promise<[number, number, number]> => {
          const [cmd, args] = lang === 'ts' ? [process.execPath, [SEQ_TS, ...[p.N, p.F, p.NP, p.NT, p.K].map(String)]] : [exe, [p.N, p.F, p.NP, p.NT, p.K].map(String)];
          await warm();
          const out = await runProgram(cmd, args, undefined, plain ? plainEnv() : baselineEnv());
          if (out.code !== 0) throw new Error(`${lang === 'ts' ? 'pic3d-seq' : 'pic3d_seq'}: ${out.stderr}`);
          return out.stdout.trim().split(' ').map(Number) as [number, number, number];
        };
        /** one sequential run with `lang`'s kernels: its seconds (recorded with its CPU time and Σx) */
        const seqOnce = async (lang: 'ts' | 'cpp'): Promise<number> => {
          const [secs, sx, cpu] = await seqRun(lang);
          seq[lang].push(secs);
          seqCpu[lang].push(cpu);
          sums[lang === 'ts' ? 0 : 1] = sx;
          return secs;
        };
        const baseline = async (): Promise<void> => {
          await seqOnce('ts');
          await seqOnce('cpp');
          for (const lang of ['ts', 'cpp'] as const) {
            const [secs, sx] = await seqRun(lang, true);
            if (sx !== sums[lang === 'ts' ? 0 : 1]) throw new Error(`the sequential ${lang} program disagrees with itself under the C library's defaults: Σx ${sx}`);
            seqPlain[lang].push(secs);
          }
          // the machine's own two-core ceiling for these kernels: two sequential copies at once,
          // no runtime at all. Each copy's time over the time alone is what sharing the memory
          // system (and whatever else holds a CPU) costs two lanes of kernels; no design beats it
          const twice = async (lang: 'ts' | 'cpp'): Promise<void> => {
            const one = (): Promise<{ code: number | null; stdout: string; stderr: string }> => lang === 'ts'
              ? runProgram(process.execPath, [SEQ_TS, ...[p.N, p.F, p.NP, p.NT, p.K].map(String)], undefined, baselineEnv())
              : runProgram(exe, [p.N, p.F, p.NP, p.NT, p.K].map(String), undefined, baselineEnv());
            await warm();
            const both = await Promise.all([one(), one()]);
            for (const b of both) if (b.code !== 0) throw new Error(`two sequential ${lang} baselines at once: ${b.stderr}`);
            pair[lang].push(Math.max(...both.map((b) => Number(b.stdout.trim().split(' ')[0]))));
          };
          await twice('ts');
          await twice('cpp');
          // what a shared-memory design with no runtime reaches with these kernels on two threads
          if (oc.code === 0) {
            await warm();
            const out = await runProgram(ompExe, [p.N, p.F, p.NP, p.NT, p.K, 2].map(String), undefined, baselineEnv());
            if (out.code !== 0) throw new Error(`pic3d_omp: ${out.stderr}`);
            const [secs, sx] = out.stdout.trim().split(' ').map(Number) as [number, number];
            if (sx !== sums[1]) throw new Error(`pic3d_omp disagrees with the sequential C++ baseline: Σx ${sx} vs ${sums[1]}`);
            omp.push(secs);
          }
        };
        ctx.log(`pic: ${name} (N=${p.N}, F=${p.F}, NP=${p.NP}, NT=${p.NT}, K=${p.K}), ${reps} rounds`);
        const runs: Record<string, string[]> = {};
        for (const lang of ['ts', 'cpp'] as const) for (const cfg of configs) runs[`${lang}.${cfg}`] = argv(lang, p, cfg);
        const r = await interleavedTimed(reps, runs, baseline, warm);
        // 1 × 2's xSeq from pairs of runs side by side (pic-xseq.ts)
        const nPairs = configs.includes('1x2') ? xSeqPairs(ctx.quick) : 0;
        const pairs: Record<'ts' | 'cpp', XSeqPair[]> = { ts: [], cpp: [] };
        for (const lang of nPairs > 0 ? ['ts', 'cpp'] as const : []) {
          pairs[lang] = await alternatePairs(nPairs, () => seqOnce(lang), async () => { await warm(); return (await runTimed(argv(lang, p, '1x2'))).programMs / 1000; },
            () => loadavg()[0]!, (x, i) => ctx.log(`pic: ${name} ${lang} xSeq pair ${i + 1}/${nPairs}: sequential ${x.seqSecs.toFixed(3)} s, 1×2 ${x.runSecs.toFixed(3)} s, ${(x.seqSecs / x.runSecs).toFixed(2)}× (load ${x.load.toFixed(1)})`));
        }
        if (sums[0] !== sums[1]) throw new Error(`the sequential baselines disagree: Σx ${sums[0]} (TypeScript) vs ${sums[1]} (C++)`);
        const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
        for (const lang of ['ts', 'cpp'] as const) {
          const s = med(seq[lang]);
          f[`${name}.${lang}.seqMps`] = sig(steps / s / 1e6);
          units[`${name}.${lang}.seqMps`] = 'M/s';
          // what 1 × 2 could reach with no runtime at all: two halves of the work at the speed two
          // copies of the sequential program run at when they run at once
          f[`${name}.${lang}.pairCeiling`] = sig((2 * s) / med(pair[lang]));
          units[`${name}.${lang}.pairCeiling`] = '×';
          notes.push(`${name}.${lang}.pairCeiling: 2 × the sequential ${lang === 'cpp' ? 'C++' : 'TypeScript'} program alone (${s.toFixed(3)} s) ÷ the slower of two copies run at once (${med(pair[lang]).toFixed(3)} s): the machine's two-core ceiling for xSeq`);
          if (lang === 'cpp' && omp.length > 0) {
            f[`${name}.cpp.ompXSeq`] = sig(s / med(omp));
            units[`${name}.cpp.ompXSeq`] = '×';
            notes.push(`${name}.cpp.ompXSeq: the sequential C++ program (${s.toFixed(3)} s) ÷ the same kernels on two OpenMP threads, subdomains shared out dynamically, no runtime (bench/programs/pic3d_omp.cpp, median of ${omp.length}: ${med(omp).toFixed(3)} s): what a hand-written shared-memory design reaches here`);
            // what the runtime costs against that design, both on two threads in the same rounds
            if (configs.includes('1x2')) {
              const luna = r['cpp.1x2']!.programMs / 1000;
              f[`${name}.cpp.1x2.vsOmp`] = sig(luna / med(omp));
              units[`${name}.cpp.1x2.vsOmp`] = '×';
              notes.push(`${name}.cpp.1x2.vsOmp: the 1×2 median (${luna.toFixed(3)} s) ÷ the OpenMP program's (${med(omp).toFixed(3)} s), the same rounds: the runtime's time over a hand-written design's (1 would be no runtime cost)`);
            }
          }
          // against the sequential program as a user runs it, under the C library's defaults: the
          // reference of the figures read before the baselines ran under bin/luna's tunables
          if (configs.includes('1x2')) {
            const plain = med(seqPlain[lang]);
            f[`${name}.${lang}.seqPlainMps`] = sig(steps / plain / 1e6);
            units[`${name}.${lang}.seqPlainMps`] = 'M/s';
            f[`${name}.${lang}.1x2.xSeqPlain`] = sig(plain / (r[`${lang}.1x2`]!.programMs / 1000));
            units[`${name}.${lang}.1x2.xSeqPlain`] = '×';
            notes.push(`${name}.${lang}.1x2.xSeqPlain: the sequential program under the C library's defaults (median of ${seqPlain[lang].length}: ${plain.toFixed(3)} s, against ${s.toFixed(3)} s under bin/luna's tunables and memory policy) ÷ the 1×2 median`);
          }
          f[`${name}.${lang}.seqMpsMin`] = sig(steps / Math.max(...seq[lang]) / 1e6);
          f[`${name}.${lang}.seqMpsMax`] = sig(steps / Math.min(...seq[lang]) / 1e6);
          units[`${name}.${lang}.seqMpsMin`] = units[`${name}.${lang}.seqMpsMax`] = 'M/s';
          notes.push(`${name}.${lang}.seqMps: median of ${seq[lang].length} sequential runs, ${f[`${name}.${lang}.seqMpsMin`]}–${f[`${name}.${lang}.seqMpsMax`]} M/s`);
          for (const cfg of configs) {
            const secs = r[`${lang}.${cfg}`]!.programMs / 1000;
            f[`${name}.${lang}.${cfg}.Mps`] = sig(steps / secs / 1e6);
            units[`${name}.${lang}.${cfg}.Mps`] = 'M/s';
            f[`${name}.${lang}.${cfg}.xSeq`] = sig(s / secs);
            units[`${name}.${lang}.${cfg}.xSeq`] = '×';
            if (cfg === '1x2' && pairs[lang].length > 0) {
              const x = summarize(pairs[lang]), k = `${name}.${lang}.1x2`;
              f[`${k}.xSeqOfMedians`] = f[`${k}.xSeq`]!;
              f[`${k}.xSeq`] = sig(x.xSeq);
              f[`${k}.xSeqMin`] = sig(x.min);
              f[`${k}.xSeqMax`] = sig(x.max);
              f[`${k}.xSeqPairs`] = x.pairs;
              f[`${k}.xSeqOfFastest`] = sig(x.fastest);
              for (const m of ['xSeqOfMedians', 'xSeqMin', 'xSeqMax', 'xSeqOfFastest']) units[`${k}.${m}`] = '×';
              units[`${k}.xSeqPairs`] = 'pairs';
              notes.push(`${k}.xSeq: median of ${x.pairs} pairs' ratios (sequential ÷ 1×2 run beside it), ${x.min.toFixed(2)}–${x.max.toFixed(2)}; ` +
                `the sequential reference in them ${(steps / x.seqMaxSecs / 1e6).toFixed(2)}–${(steps / x.seqMinSecs / 1e6).toFixed(2)} M/s; the ratio of the medians ${f[`${k}.xSeqOfMedians`]}; the fastest sequential run ÷ the fastest 1×2 run ${x.fastest.toFixed(2)} (${x.seqMinSecs.toFixed(3)} ÷ ${x.runMinSecs.toFixed(3)} s); pairs in order: ${pairsNote(pairs[lang])}`);
            }
            // the fragment counts and the system thread's CPU per fragment, of node 0 (on 2 × 1 the
            // other node's are not counted): meaningful under load too
            const t = r[`${lang}.${cfg}`]!, cfs = t.inline + t.sent;
            f[`${name}.${lang}.${cfg}.cfsPerStep`] = sig(cfs / p.NT);
            units[`${name}.${lang}.${cfg}.cfsPerStep`] = 'CFs';
            f[`${name}.${lang}.${cfg}.sysUsPerCf`] = sig((1000 * t.systemCpuMs) / Math.max(1, cfs));
            units[`${name}.${lang}.${cfg}.sysUsPerCf`] = 'µs';
          }
          if (r[`${lang}.2x1`] && r[`${lang}.1x1`]) {
            f[`${name}.${lang}.2x1vs1x1`] = sig(r[`${lang}.2x1`]!.programMs / r[`${lang}.1x1`]!.programMs);
            units[`${name}.${lang}.2x1vs1x1`] = '×';
          }
        }
        if (name === 'seed' && configs.includes('1x2')) {
          f['seed.cpp.1x2.xOriginal'] = sig(f['seed.cpp.1x2.Mps']! / ORIGINAL.mps);
          units['seed.cpp.1x2.xOriginal'] = '×';
          targets.push(
            { key: 'seed.cpp.1x2.Mps', op: '>=', value: 3, label: 'PIC, seed size, C++ kernels, 1×2 (original: 1.0 M/s on 16 threads)' },
            { key: 'seed.ts.1x2.Mps', op: '>=', value: 1, label: 'PIC, seed size, TypeScript kernels, 1×2' },
            { key: 'seed.cpp.1x2.xSeq', op: '>=', value: 1.7, label: 'PIC 1×2 vs the sequential C++ kernels' },
            { key: 'seed.ts.1x2.xSeq', op: '>=', value: 1.7, label: 'PIC 1×2 vs the sequential TypeScript kernels' },
          );
        }
        // SLOU per configuration (seed 003, Table 1): of `reps` traced runs, the one of median
        // P_U, of an even count the lower middle one (a run whose second worker boots late loses
        // several points of P_U at its start)
        for (const lang of ['ts', 'cpp'] as const) {
          for (const cfg of configs) {
            const traced: { trace: string; rep: ReturnType<typeof analyzeSlowTrace> }[] = [];
            for (let t = 0; t < reps; t++) {
              const trace = join(dir, `${name}-${lang}-${cfg}-${t}`);
              await warm();
              await runTimed(argv(lang, p, cfg, ['--trace', trace]), 600_000);
              traced.push({ trace, rep: analyzeSlowTrace(trace) });
            }
            traced.sort((a, b) => a.rep.p.U - b.rep.p.U);
            const { trace, rep } = traced[(traced.length - 1) >> 1]!;
            const k = `${name}.${lang}.${cfg}.slou`;
            if (traced.length > 1) notes.push(`${k}: P_U of ${traced.length} traced runs ${traced.map((x) => x.rep.p.U.toFixed(1)).join(', ')} %; the median run's figures are given`);
            f[`${k}.wallS`] = sig(rep.tWall / 1e9);
            for (const x of ['S', 'L', 'O', 'W', 'U'] as const) { f[`${k}.P${x}`] = sig(rep.p[x]); units[`${k}.P${x}`] = '%'; }
            units[`${k}.wallS`] = 's';
            if (cfg === '1x2') {
              // the best 1 × 2 could do with a runtime that costs nothing: the graph's floor (the
              // run's graph replayed with the CFs' CPU times, docs/slow.md), or without it T_U
              // spread evenly over the two workers but not below the critical path — against the
              // sequential kernels' CPU time (both counts that load does not stretch much)
              const bound = Math.max(rep.t.U / 2, rep.criticalPath.length);
              const floor = (rep.floor?.ns ?? bound) / 1e9;
              f[`${name}.${lang}.1x2.xSeqBound`] = sig(med(seqCpu[lang]) / floor);
              units[`${name}.${lang}.1x2.xSeqBound`] = '×';
              notes.push(`${name}.${lang}.1x2.xSeqBound: sequential CPU ${med(seqCpu[lang]).toFixed(3)} s ÷ ` +
                (rep.floor ? `the graph's floor ${floor.toFixed(3)} s (${(100 * rep.floor.ofWall).toFixed(0)} % of T_wall; ` : '(') +
                `T_U ${(rep.t.U / 1e9).toFixed(3)} s / 2, critical path ${(rep.criticalPath.length / 1e9).toFixed(3)} s)`);
            }
            if (cfg === '2x1') {
              // what crosses between the nodes (counts: load does not move them) and the time the
              // transport needs for it at its speed measured in this run: the target's allowance
              const x = crossing(trace), tr = await transportSpeed();
              const secs = x.bytes / (tr.mibps * 1024 * 1024) + (x.dfs * tr.rttUs) / 2 / 1e6;
              f[`${name}.${lang}.2x1.crossMB`] = sig(x.bytes / 1e6);
              units[`${name}.${lang}.2x1.crossMB`] = 'MB';
              f[`${name}.${lang}.2x1.crossDfs`] = x.dfs;
              units[`${name}.${lang}.2x1.crossDfs`] = 'DFs';
              f[`${name}.${lang}.2x1.transferS`] = sig(secs);
              units[`${name}.${lang}.2x1.transferS`] = 's';
              notes.push(`${name}.${lang}.2x1.transferS: ${x.dfs} DFs of ${(x.bytes / 1e6).toFixed(1)} MB crossed (traced run) at the transport's ${tr.mibps.toFixed(0)} MiB/s (1 MiB payloads) and half its ${tr.rttUs.toFixed(1)} µs round trip a DF, measured in this run`);
              if (r[`${lang}.2x1`] && r[`${lang}.1x1`]) {
                const key = `${name}.${lang}.2x1vs1x1PlusTransfer`;
                f[key] = sig(r[`${lang}.2x1`]!.programMs / 1000 / (r[`${lang}.1x1`]!.programMs / 1000 + secs));
                units[key] = '×';
                targets.push({ key, op: '<=', value: 1, label: `PIC 2×1 time ÷ (1×1 time + the measured transfer time), ${name}, ${lang === 'cpp' ? 'C++' : 'TypeScript'} kernels` });
              }
            }
            notes.push(`${k}: T_wall ${(rep.tWall / 1e9).toFixed(3)} s, T_SLOU ${(rep.sum / 1e9).toFixed(2)} s (${(100 * rep.coverage).toFixed(2)} %), ` +
              (['S', 'L', 'O', 'W', 'U'] as const).map((x) => `T_${x} ${(rep.t[x] / 1e9).toFixed(2)} s (${rep.p[x].toFixed(2)} %)`).join(', '));
          }
        }
        if (name === 'seed' && configs.includes('1x2')) targets.push({ key: 'seed.cpp.1x2.slou.PU', op: '>=', value: 70, label: `P_U on 1×2 (original: ${ORIGINAL.pU} %, overhead ${ORIGINAL.pO} %)` });
        // the particle exchange's share of a step, one traced run per row (exchangeRun)
        if (only) return;
        for (const label of SHARES) {
          const x = await exchangeRun(dir, name, label, p);
          ddaFigures(f, units, name, label, x);
          notes.push(`${name}.dda.${label}.exchangeShare: ${shareNote(x)}`);
        }
        for (const label of SHARES) targets.push(shareTarget(name, label));
      });
    }
    if (ctx.quick) notes.push(`the seed's parameters (not run with --quick): npm run bench -- pic`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { status: 'ok', figures: f, units, targets, notes };
}

/** The target of an exchange-share row. */
function shareTarget(size: string, label: ShareRow): Target {
  const key = `${size}.dda.${label}.exchangeShare`;
  if (label === '1x1.noneLeave') return { key, op: '<=', value: 1, label: `exchange share, ${size}, one node, no particle leaving (one subdomain)` };
  const [cfg, , lang] = shareRow(label, SMALL);
  return { key, op: '<=', value: 10, label: `particle exchange share of a PIC step${lang === 'dda-cpp' ? ', C++ kernels' : ''}, ${size}, ${cfg.replace('x', '×')}` };
}

/**
 * The particle exchange's share of a step (pic3d_dda: particles in dynamic arrays, moved by the
 * destination form), from the ddaOp spans of a traced run; on one node with no particle leaving,
 * the protocol's fixed cost (and with C++ kernels, ucenv.h destinations(targets): a shorter
 * step, so a larger share).
 */
async function exchangeRun(dir: string, size: string, label: ShareRow, p: Params): Promise<DdaRun> {
  const [cfg, q, lang] = shareRow(label, p);
  const trace = join(dir, `${size}-dda-${label}`);
  rmSync(trace, { recursive: true, force: true });
  const load = loadavg()[0]!;
  await runTimed(argv(lang, q, cfg, ['--trace', trace]), 600_000);
  // the same traced run's SLOU and throughput: pic3d_dda's table (docs/pic.md)
  const rep = analyzeSlowTrace(trace);
  return { ...exchangeShare(readTrace(trace).events), load, slou: { wallS: rep.tWall / 1e9, p: rep.p }, particleSteps: q.NP * q.NT };
}

/** A traced pic3d_dda run: its exchange share, the load at its start, its SLOU and its particle-steps. */
type DdaRun = ExchangeShare & { load: number; slou: { wallS: number; p: Record<'S' | 'L' | 'O' | 'W' | 'U', number> }; particleSteps: number };

/** pic3d_dda's figures of row `label` from its traced run `x` (traced, so slower than an untraced run by the trace's cost). */
function ddaFigures(f: Record<string, number>, units: Record<string, string>, size: string, label: ShareRow, x: DdaRun): void {
  const k = `${size}.dda.${label}`;
  f[`${k}.exchangeShare`] = sig(x.share);
  units[`${k}.exchangeShare`] = '%';
  f[`${k}.tracedMps`] = sig(x.particleSteps / x.slou.wallS / 1e6);
  units[`${k}.tracedMps`] = 'M/s';
  f[`${k}.slou.wallS`] = sig(x.slou.wallS);
  units[`${k}.slou.wallS`] = 's';
  for (const c of ['S', 'L', 'O', 'W', 'U'] as const) { f[`${k}.slou.P${c}`] = sig(x.slou.p[c]); units[`${k}.slou.P${c}`] = '%'; }
}

function shareNote(x: ExchangeShare): string {
  return `${x.share.toFixed(2)} % of ${x.steps} steps (largest step ${x.maxStep.toFixed(2)} %), ${(x.exchangedBytes / 64).toFixed(0)} particles delivered by destination; ` +
    `an operation ${x.opMedianMs.toFixed(2)} ms (p90 ${x.opP90Ms.toFixed(2)})${Number.isNaN(x.outboundPct) ? '' : `, ${x.outboundPct.toFixed(0)} % of it until the other node had the LOCK`}`;
}

/** LUNA_PIC_SHARES: only those share rows, each traced ctx.reps times in rotated rounds. */
async function shareRuns(ctx: Ctx, only: { size: string; rows: ShareRow[] }, f: Record<string, number>, units: Record<string, string>, targets: Target[], notes: string[]): Promise<SuiteOutput> {
  const p = only.size === 'seed' ? SEED : SMALL;
  const reps = ctx.quick ? 1 : ctx.reps;
  notes.push(`LUNA_PIC_SHARES: ${only.size} size, ${only.rows.join(', ')}: ${reps} traced run(s) each in rotated rounds, the median; C++ flags ${FLAGS}`);
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-pic-'));
  try {
    const runs = new Map<ShareRow, DdaRun[]>(only.rows.map((r) => [r, []]));
    for (let r = 0; r < reps; r++) {
      for (const label of roundOrder(only.rows, r)) {
        const x = await exchangeRun(dir, only.size, label, p);
        runs.get(label)!.push(x);
        ctx.log(`pic: ${only.size} ${label} exchange share ${x.share.toFixed(2)} % (load ${x.load.toFixed(1)})`);
      }
    }
    for (const [label, xs] of runs) {
      const k = `${only.size}.dda.${label}.exchangeShare`;
      const sorted = [...xs].sort((a, b) => a.share - b.share);
      ddaFigures(f, units, only.size, label, sorted[sorted.length >> 1]!);
      targets.push(shareTarget(only.size, label));
      notes.push(`${k}: median of ${xs.length}; runs in order: ${xs.map((x) => `${x.share.toFixed(2)} % (load ${x.load.toFixed(1)})`).join(', ')}; the median run: ${shareNote(sorted[sorted.length >> 1]!)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { status: 'ok', figures: f, units, targets, notes };
}

/** The DFs and bytes that left a node in a traced run (dfSendStart). */
function crossing(trace: string): { dfs: number; bytes: number } {
  let dfs = 0, bytes = 0;
  for (const e of readTrace(trace).events) if (e.kind === 'dfSendStart') { dfs++; bytes += e.bytes; }
  return { dfs, bytes };
}

let transport: { mibps: number; rttUs: number } | undefined;
/** The transport between two node processes, measured once a run (bench/transport.ts): 1 MiB payloads' MiB/s, a small message's round trip. */
async function transportSpeed(): Promise<{ mibps: number; rttUs: number }> {
  if (!transport) {
    const t = await measureTransport();
    transport = { mibps: t.transport_1mib_mibps!, rttUs: t.transport_rtt_us! };
  }
  return transport;
}
