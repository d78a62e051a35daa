// Where a short program's fixed cost goes: the chain of the side-by-side (bench/original, C++
// ucodes, 1 thread) at 1 000, 20 000 and 200 000 fragments, the system thread's CPU per
// fragment over each (`luna run --timing`), and the fixed cost of a short run over a long run's
// rate; the same with V8's own tiering budget (LUNA_V8_BUDGET=default, bin/luna) beside
// luna's; the link of a chain at which V8 marks and optimises each of the runtime's hot functions
// (`--trace-opt`, a count that the machine's load changes little, unlike the CPU figures); the
// bytes the system thread allocates per fragment and where (V8's sampling heap profiler, every
// allocation counted whether it survives or not: load-independent too); what a pingpong step
// across 2 processes sends besides its value (frames, socket writes, termination waves); the empty program's
// start-up (spawn to its first ucode) and what its memory is made of.
//
//   node dist/bench/run.js startup [--reps N] [--no-save]
//
// CPU figures are per run of the system thread (thread CPU clock), the medians of runs
// alternated A B A B; they hold under moderate load but the tiering comparison does not: V8
// optimises on a background thread, which a loaded machine starves (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt, LUNA, LUNA_NODE_ENV, LUNA_NODE_FLAGS, median, prog, retry, ROOT, section, sig, table, type Ctx, type SuiteOutput } from './common.js';
import { writeProgram } from './original/programs.js';
import { CXXFLAGS } from './original/runner.js';
import { SPAN_TAG } from './original/spans.js';

/** The chain lengths whose CPU per fragment is compared: warm-up, the side-by-side's short row, its long row. */
const LENGTHS = [1_000, 20_000, 200_000] as const;
/** The tiering budgets compared: luna's (bin/luna) and V8's own. */
const BUDGETS = { luna: {}, v8: { LUNA_V8_BUDGET: 'default' } } as const;
type Budget = keyof typeof BUDGETS;

/** Prints, as the process exits, its peak and resident memory by kind and its V8 heap (a `--import` probe). */
const MEMORY_PROBE = `import { readFileSync, writeSync } from 'node:fs';
import v8 from 'node:v8';
process.on('exit', () => {
  const kb = (k) => Number(/^\\S+:\\s+(\\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8').split('\\n').find((l) => l.startsWith(k + ':')) ?? '')?.[1] ?? NaN);
  const h = v8.getHeapStatistics();
  writeSync(2, 'luna-memory ' + JSON.stringify({ hwmKB: kb('VmHWM'), anonKB: kb('RssAnon'), fileKB: kb('RssFile'), heapKB: Math.round(h.total_physical_size / 1024), codeKB: Math.round((v8.getHeapCodeStatistics().code_and_metadata_size + v8.getHeapCodeStatistics().bytecode_and_metadata_size) / 1024) }) + '\\n');
});
`;

/** The chain's ucodes, the step printing every LINK_EVERY-th link on stdout, where V8's --trace-opt writes. */
const LINK_EVERY = 250;
const LINKED_CHAIN = `#include "ucenv.h"
#include <cstdio>
using namespace luna::ucenv;
extern "C" {
void c_start(OutputDF &x) { x = 0; }
void c_step(const InputDF &prev, int us, OutputDF &next) { (void)us; int v = prev.get_int(); if (v % ${LINK_EVERY} == 0) { std::printf("luna-link %d\\n", v); std::fflush(stdout); } next = v + 1; }
void c_check(int n, const InputDF &last) { if (last.get_int() != n) ABORT("chain: x[n] is not n"); }
}
`;
/** The runtime's functions on a chain's per-fragment path, in the order V8 11 marks them with its default budget. */
const HOT = ['callUcode', 'call', 'inlineable', 'runInline', 'examine', 'post', 'newCf', 'read', 'pumpFifo'];

/** The link at which each hot function was first marked for optimisation and first optimised, from a run's --trace-opt output. */
export function tieringLinks(out: string): { marked: Map<string, number>; optimised: Map<string, number> } {
  const marked = new Map<string, number>(), optimised = new Map<string, number>();
  let link = 0;
  for (const line of out.split('\n')) {
    const l = /^luna-link (\d+)/.exec(line);
    if (l) { link = Number(l[1]); continue; }
    const m = /^\[(marking|completed optimizing) \S+ <JSFunction (\w+) /.exec(line);
    if (!m || !HOT.includes(m[2]!)) continue;
    const into = m[1] === 'marking' ? marked : optimised;
    if (!into.has(m[2]!)) into.set(m[2]!, link);
  }
  return { marked, optimised };
}

/**
 * Samples every allocation of the process's main thread (V8's sampling heap profiler through the
 * inspector, objects collected since included) and prints, at exit, the sampled bytes per
 * allocating function.
 */
const ALLOCATION_PROBE = `import { Session } from 'node:inspector';
import { writeSync } from 'node:fs';
const s = new Session();
s.connect();
s.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
process.on('exit', () => s.post('HeapProfiler.stopSampling', (e, r) => {
  if (e) return;
  const by = new Map();
  const walk = (n) => { const k = n.callFrame.functionName || '(anonymous)'; if (n.selfSize) by.set(k, (by.get(k) ?? 0) + n.selfSize); n.children.forEach(walk); };
  walk(r.profile.head);
  writeSync(2, 'luna-allocated ' + JSON.stringify(Object.fromEntries(by)) + '\\n');
}));
`;

interface Run { cpuMs: number; firstMs: number; memory?: Record<string, number> }

/** One `luna run --timing` of a program with the C++ ucodes beside it, as bench/original runs it. */
function runOnce(fa: string, args: number[], env: Record<string, string>, probe?: string, nodeFlags: string[] = [], runFlags: string[] = []): Promise<Run & { out: string }> {
  return new Promise((res, rej) => {
    const argv = [...LUNA_NODE_FLAGS, ...nodeFlags, ...(probe ? ['--import', pathToFileURL(probe).href] : []), LUNA, 'run', '--timing', '--quiet', ...runFlags, '--threads', '1', '--ucodes', join(dirname(fa), 'ucodes.cpp'), fa, ...args.map(String)];
    const t0 = process.hrtime.bigint(); // CLOCK_MONOTONIC, the clock the ucodes' timestamps read
    const child = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...LUNA_NODE_ENV, LUNA_CXXFLAGS: CXXFLAGS, ...env } });
    let out = '';
    const keep = (d: Buffer): void => { if (out.length < 1 << 22) out += d.toString(); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', rej);
    child.on('close', (code) => {
      const timing = /luna: timing: (\{.*\})/.exec(out);
      const begin = new RegExp(`^${SPAN_TAG} begin (\\d+)`, 'm').exec(out);
      if (code !== 0 || !timing) { rej(new Error(`luna run ${args.join(' ')}: exit ${code}: ${out.trim().split('\n').slice(-4).join(' | ')}`)); return; }
      const memory = /^luna-memory (\{.*\})/m.exec(out);
      res({
        cpuMs: (JSON.parse(timing[1]!) as { systemCpuMs: number }).systemCpuMs,
        firstMs: begin ? Number(BigInt(begin[1]!) - t0) / 1e6 : NaN,
        out,
        ...(memory ? { memory: JSON.parse(memory[1]!) as Record<string, number> } : {}),
      });
    });
  });
}

/** The median of one figure over a configuration's runs. */
const med = (runs: Run[], f: (r: Run) => number): number => median(runs.map(f));

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const reps = ctx.quick ? 1 : ctx.reps;
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const notes: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'luna-startup-'));
  try {
    const chain = writeProgram(dir, 'chain');
    const empty = writeProgram(dir, 'empty');
    const probe = join(dir, 'memory-probe.mjs');
    writeFileSync(probe, MEMORY_PROBE);
    const timed = (fa: string, args: number[], env: Record<string, string>, p?: string): Promise<Run> => {
      let r: Run | undefined;
      return retry(`luna run ${args.join(' ')}`, async () => { r = await runOnce(fa, args, env, p); return r.cpuMs; }).then(() => r!);
    };
    // the C++ ucodes compiled once, outside the measured runs
    await timed(chain, [10, 0], {});
    await timed(empty, [], {});

    await section(ctx, notes, 'chain warm-up', async () => {
      const runs: Record<string, Run[]> = {};
      const configs = LENGTHS.flatMap((n) => (Object.keys(BUDGETS) as Budget[]).map((b) => ({ n, b, key: `${b}.${n}` })));
      for (let r = 0; r < reps; r++) {
        // rotate the order each round, so a slow phase of the machine hits every configuration
        const k = r % configs.length;
        for (const c of [...configs.slice(k), ...configs.slice(0, k)]) (runs[c.key] ??= []).push(await timed(chain, [c.n, 0], BUDGETS[c.b]));
      }
      const rows: string[][] = [];
      for (const b of Object.keys(BUDGETS) as Budget[]) {
        const cpu = (n: number): number => med(runs[`${b}.${n}`]!, (x) => x.cpuMs);
        // a long run's rate: what a fragment costs once the runtime is warm
        const rate = (cpu(200_000) - cpu(20_000)) / 180_000;
        const fixed = cpu(20_000) - 20_000 * rate;
        for (const n of LENGTHS) { f[`${b}.chain${n / 1000}k.cpuUsPerCf`] = sig((cpu(n) * 1000) / n); units[`${b}.chain${n / 1000}k.cpuUsPerCf`] = 'µs'; }
        f[`${b}.warmUsPerCf`] = sig(rate * 1000); units[`${b}.warmUsPerCf`] = 'µs';
        f[`${b}.chain20k.fixedMs`] = sig(fixed); units[`${b}.chain20k.fixedMs`] = 'ms';
        rows.push([b === 'luna' ? "luna's tiering budget" : "V8's default budget", ...LENGTHS.map((n) => fmt((cpu(n) * 1000) / n)), fmt(rate * 1000), fmt(fixed)]);
      }
      notes.push('chain, C++ ucodes, 1 thread: system-thread CPU per fragment (µs) over the whole run; warm = (CPU at 200 000 − at 20 000) / 180 000; fixed = CPU at 20 000 − 20 000 × warm (ms)');
      notes.push(table(rows, ['budget', ...LENGTHS.map((n) => `${n}`), 'warm', 'fixed ms']));
    });

    await section(ctx, notes, 'tiering links', async () => {
      const sub = join(dir, 'linked');
      mkdirSync(sub);
      const fa = join(sub, 'chain.fa');
      copyFileSync(prog('chain/chain.fa'), fa);
      writeFileSync(join(sub, 'ucodes.cpp'), LINKED_CHAIN);
      const rows: string[][] = [];
      for (const b of Object.keys(BUDGETS) as Budget[]) {
        const { marked, optimised } = tieringLinks((await runOnce(fa, [20_000, 0], BUDGETS[b], undefined, ['--trace-opt'])).out);
        const at = (m: Map<string, number>, k: string): number => m.get(k) ?? NaN;
        f[`${b}.pumpMarkedAtLink`] = at(marked, 'pumpFifo');
        f[`${b}.pumpOptimisedAtLink`] = at(optimised, 'pumpFifo');
        f[`${b}.lastMarkedAtLink`] = Math.max(...HOT.map((k) => at(marked, k)));
        rows.push([b === 'luna' ? "luna's budget" : "V8's default", ...HOT.map((k) => `${fmt(at(marked, k))} / ${fmt(at(optimised, k))}`)]);
      }
      notes.push(`chain 20 000, C++ ucodes, 1 thread: the link at which V8 marked / optimised each function (to within ${LINK_EVERY} links; the optimised link depends on the compiler thread's share of the machine, the marked one less so (the pump's turns end by the clock); NaN: not in this run)`);
      notes.push(table(rows, ['budget', ...HOT]));
    });

    await section(ctx, notes, 'allocations', async () => {
      const probeFile = join(dir, 'allocation-probe.mjs');
      writeFileSync(probeFile, ALLOCATION_PROBE);
      const bytes = async (n: number): Promise<Record<string, number>> => {
        const out = (await runOnce(chain, [n, 0], {}, probeFile)).out;
        const m = /^luna-allocated (\{.*\})/m.exec(out);
        if (!m) throw new Error(`the allocation probe printed nothing: ${out.trim().split('\n').slice(-3).join(' | ')}`);
        return JSON.parse(m[1]!) as Record<string, number>;
      };
      // per fragment: the difference of two lengths takes out what start-up and the end allocate
      const short = await bytes(20_000), long = await bytes(200_000);
      const names = new Set([...Object.keys(short), ...Object.keys(long)]);
      const at = (r: Record<string, number>, k: string): number => (Object.hasOwn(r, k) ? r[k]! : 0);
      const per = [...names].map((k) => [k, (at(long, k) - at(short, k)) / 180_000] as const).sort((a, b) => b[1] - a[1]);
      const total = per.reduce((t, [, v]) => t + v, 0);
      f['chain.allocatedBytesPerCf'] = sig(total); units['chain.allocatedBytesPerCf'] = 'B';
      notes.push(`chain, C++ ucodes, 1 thread: the system thread allocates ${fmt(total)} bytes a fragment (sampled, (200 000 − 20 000)-fragment difference); by function: ${per.slice(0, 10).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}`);
    });

    await section(ctx, notes, 'pingpong messages', async () => {
      // what a step across 2 processes costs besides its one value on the socket: counts, not times
      const pp = writeProgram(dir, 'pingpong');
      const hops = 4_000;
      const r = await runOnce(pp, [hops, 8], {}, undefined, [], ['--nodes', '2']);
      const t = JSON.parse(/luna: timing: (\{.*\})/.exec(r.out)![1]!) as Record<string, number>;
      // rank 0 runs every other hop: per hop of its own
      const own = hops / 2;
      for (const k of ['framesSent', 'socketWrites', 'waves'] as const) { f[`pingpong.${k}PerStep`] = sig((t[k] ?? NaN) / own); units[`pingpong.${k}PerStep`] = ''; }
      f['pingpong.cpuUsPerStep'] = sig((r.cpuMs * 1000) / own); units['pingpong.cpuUsPerStep'] = 'µs';
      notes.push(`pingpong across 2 processes, ${hops} hops, C++ ucodes, per hop of rank 0: ${fmt(f['pingpong.framesSentPerStep'])} frames in ${fmt(f['pingpong.socketWritesPerStep'])} socket writes, ${fmt(f['pingpong.wavesPerStep'])} termination waves (each a message to every node and its answer), system-thread CPU ${fmt(f['pingpong.cpuUsPerStep'])} µs`);
    });

    await section(ctx, notes, 'empty program', async () => {
      const runs: Run[] = [];
      for (let r = 0; r < reps; r++) runs.push(await timed(empty, [], {}, probe));
      const mem = (k: string): number => sig(med(runs, (x) => x.memory?.[k] ?? NaN) / 1024);
      f['empty.firstFragmentMs'] = sig(med(runs, (x) => x.firstMs)); units['empty.firstFragmentMs'] = 'ms';
      for (const [k, label] of [['hwmKB', 'peakMB'], ['anonKB', 'anonMB'], ['fileKB', 'fileMB'], ['heapKB', 'heapMB'], ['codeKB', 'codeMB']] as const) { f[`empty.${label}`] = mem(k); units[`empty.${label}`] = 'MB'; }
      notes.push(`empty program: spawn to its first ucode ${fmt(f['empty.firstFragmentMs'])} ms; peak ${fmt(f['empty.peakMB'])} MB = file-backed ${fmt(f['empty.fileMB'])} (mostly the node binary's pages) + anonymous ${fmt(f['empty.anonMB'])} (of which V8's heap ${fmt(f['empty.heapMB'])}, code and bytecode ${fmt(f['empty.codeMB'])})`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { status: 'ok', figures: f, units, notes };
}
