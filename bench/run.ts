// `npm run bench` — the benchmark harness of luna-ts (docs/benchmarks.md).
//
//   node dist/bench/run.js [suite…] [--quick] [--reps N] [--compare FILE] [--no-save]
//
// Suites run in the order of SUITES below. Own suites (bench/<suite>.ts, run(ctx)) take the
// harness's context; foreign ones belong to their layers and export `run(): Promise<Record<string,
// number>>` (reported "missing" when absent). Every suite prints a table of its figures with their
// targets (met / NOT MET); all figures go to bench/results/<ISO date>-<git sha>.json and
// bench/results/latest.json. --compare FILE prints the deltas against an earlier JSON.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { schedLine } from './sched.js';
import { join } from 'node:path';
import { wakeupLine, type WakeupProbe } from './raw-wakeup.js';
import { tieringLine, type TieringProbe } from './raw-tiering.js';
import { BenchSettingError, fmt, incidents, LUNA_NODE_ENV, LUNA_NODE_FLAGS, ROOT, table, targetMet, type Ctx, type SuiteOutput, type Target } from './common.js';

type OwnSuite = (ctx: Ctx) => Promise<SuiteOutput>;
type ForeignSuite = () => Promise<Record<string, number>>;

interface SuiteDef {
  name: string;
  /** module beside this file */
  module: string;
  own: boolean;
  what: string;
  /** targets from the issues for foreign suites, matched by figure key */
  targets?: Target[];
}

const SUITES: SuiteDef[] = [
  { name: 'transport', module: './transport.js', own: false, what: 'raw node:net framing vs the luna transport, over the same kind of socket (a Unix socket between processes of one machine; TCP loopback with LUNA_LOCAL_SOCKETS=0)' },
  { name: 'runtime', module: './runtime.js', own: true, what: 'CF costs on one node, baselines, matmul speedup' },
  { name: 'cluster', module: './cluster.js', own: true, what: '2 node processes: throughput, seed 004 placement, efficiency, DF transfers' },
  { name: 'tracing', module: './tracing.js', own: true, what: 'tracing overhead and trace size on real runs' },
  {
    name: 'trace-format', module: './trace-format.js', own: false, what: 'trace writer/reader/merger micro-benchmark',
    targets: [{ key: 'bytesPerEvent', op: '<=', value: 32, label: 'bytes per event' }],
  },
  {
    name: 'frontend', module: './frontend.js', own: false, what: 'front end time and peak RSS per MB, 1 MB and 20 MB generated programs',
    targets: [{ key: 'linearityLargeVsSmall', op: '<=', value: 1.5, label: 'front end linear in program size' }],
  },
  {
    name: 'cpp', module: './cpp.js', own: false, what: 'C++ ucodes: trivial CF cost vs TypeScript, block matmul vs sequential C++ and the TS kernel',
    targets: [
      { key: 'chainCppVsTs', op: '<=', value: 1.0, label: 'trivial C++ CF vs TS (chain)' },
      { key: 'independentCppVsTs', op: '<=', value: 1.0, label: 'trivial C++ CF vs TS (independent)' },
    ],
  },
  { name: 'spmd', module: './spmd.js', own: true, what: 'SPMD layer: barrier, 8-byte get/put latency, 1 MiB memget/memput bandwidth, one node vs raw shared memory and 2 processes vs the raw transport' },
  { name: 'npb', module: './npb.js', own: true, what: 'NPB IS on the SPMD layer, classes W and A on 1, 2, 4 ranks: the UPC structure vs the fixed variants, and vs the C reference (NPB_IS_REFERENCE, NPB_IS_REFERENCE_MPI)' },
  { name: 'balance', module: './balance.js', own: true, what: 'luna balance: the balancing step on 10^6 fragments (the seed\'s algorithm; the default step), trace decoding apart' },
  { name: 'scheduling', module: './scheduling.js', own: true, what: 'policies: critical-path priorities vs FIFO and the bound; trace playback vs the default (system cost per fragment); what a CF and a DF reference cost the system thread' },
  { name: 'finegrain', module: './finegrain.js', own: true, what: 'the original LuNA\'s fine-grain programs: chains, pingpong, stencil, memory, ucode speed; ratios to its figures' },
  { name: 'pic', module: './pic.js', own: true, what: 'particle-in-cell (examples/pic3d): particle-steps/s and SLOU on 1×1, 1×2, 2×1, TypeScript and C++ kernels, vs the sequential kernels' },
  { name: 'taskbench', module: './taskbench.js', own: true, what: 'Task Bench METG(50 %) per dependence pattern, 1 node × 2 threads and 2 nodes × 1 thread' },
  { name: 'lanes', module: './lanes.js', own: true, what: 'why two worker lanes may run chains no faster than one: 1 and 2 independent chains of 70 µs C++ links on 1 and 2 lanes; system-thread CPU, batches and wake-ups per link, lanes busy share, chains overlap and stall' },
  { name: 'startup', module: './startup.js', own: true, what: "a short program's fixed cost: system-thread CPU per fragment over the first 1 000 / 20 000 / 200 000 fragments of a chain, luna's V8 tiering budget against V8's, the empty program's start-up and memory by kind" },
  { name: 'original', module: './original.js', own: true, what: 'the original LuNA beside luna-ts (LUNA_ORIGINAL: its build; else its kept figures): the same .fa and ucodes.cpp, alternated, ratios luna-ts / original' },
  {
    name: 'analysis', module: './analysis.js', own: false, what: 'SLOW analysis throughput and memory',
    targets: [{ key: 'eventsPerSecAnalysisOnly', op: '>=', value: 2e6, label: 'analysis throughput' }],
  },
  { name: 'patterns', module: './patterns.js', own: true, what: 'pattern engine throughput on a generated SPMD trace (10^7 events; 10^6 with --quick or --reps 1): end to end and the analysis pass alone' },
  {
    name: 'dda', module: './dda.js', own: false, what: 'dynamic array: add/remove against a plain typed array; rearrangement against the raw transport for the same bytes, f = 0.01…0.5, on 2 node processes (procs_: the target\'s) and on 2 in-process nodes (where the raw transport is one memory copy); compute on arrived blocks overlapping the migration of the rest, 4 and 16 blocks a node against one, the same bytes (overlap_, procs_overlap_)',
    targets: [
      { key: 'procs_rearrangeVsRaw_f0_05', op: '<=', value: 2, label: 'rearrangement vs raw transport at f = 0.05 (2 processes)' },
    ],
  },
  { name: 'exports', module: './exports.js', own: false, what: 'Perfetto JSON and protobuf, OTF2 and CSV/Parquet tables against the analysis of the same trace' },
  {
    name: 'report', module: './report.js', own: false, what: 'luna report of 10^5 and 10^6 generated fragments against the analysis of the same trace: time, size, bytes per fragment',
    targets: [{ key: 'sizeMB1M', op: '<=', value: 30, label: 'report of 10^6 fragments (MB)' }],
  },
];

interface Results {
  meta: {
    date: string; sha: string; dirty: boolean; quick: boolean; reps: number; suites: string[];
    node: string; cpus: number; cpuModel: string; seconds: number;
    /** 1-minute load average at the start and at the end (a busy machine skews every figure) */
    loadStart: number; loadEnd: number;
    /** failed or hung runs (retried up to 3 times, see common.ts) */
    incidents: string[];
    /** the wake-up probe (bench/raw-wakeup.ts), measured at the start: what a waiting thread costs here */
    wakeup?: WakeupProbe;
    /** the tiering probe (bench/raw-tiering.ts): the fixed cost of a short program any JS fragment runtime pays here */
    tiering?: TieringProbe;
  };
  suites: Record<string, SuiteOutput>;
}

interface Args { suites: string[]; quick: boolean; reps?: number; compare?: string; save: boolean; help: boolean }

function parseArgs(argv: string[]): Args {
  const a: Args = { suites: [], quick: false, save: true, help: false };
  for (let i = 0; i < argv.length; i++) {
    const s = argv[i];
    if (s === '--quick') a.quick = true;
    else if (s === '--no-save') a.save = false;
    else if (s === '--help' || s === '-h') a.help = true;
    else if (s === '--reps') a.reps = Number(argv[++i]);
    else if (s.startsWith('--reps=')) a.reps = Number(s.slice(7));
    else if (s === '--compare') a.compare = argv[++i];
    else if (s.startsWith('--compare=')) a.compare = s.slice(10);
    else if (s.startsWith('-')) throw new Error(`unknown option ${s}`);
    else if (SUITES.some((d) => d.name === s)) a.suites.push(s);
    else throw new Error(`unknown suite ${s} (suites: ${SUITES.map((d) => d.name).join(', ')})`);
  }
  if (a.reps !== undefined && !(Number.isInteger(a.reps) && a.reps >= 1)) throw new Error('--reps needs a positive integer');
  if (a.compare && !existsSync(a.compare)) throw new Error(`--compare: no such file ${a.compare}`);
  return a;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

async function runSuite(d: SuiteDef, ctx: Ctx): Promise<SuiteOutput> {
  const t0 = performance.now();
  let mod: Record<string, unknown>;
  const url = new URL(d.module, import.meta.url);
  if (!existsSync(url)) return { status: 'missing', figures: {}, notes: [`bench/${d.module.slice(2, -3)}.ts is not there (not built or not written yet)`] };
  try {
    mod = (await import(url.href)) as Record<string, unknown>;
  } catch (e) {
    return { status: 'error', figures: {}, error: `cannot import ${d.module}: ${errText(e)}`, seconds: (performance.now() - t0) / 1000 };
  }
  if (typeof mod.run !== 'function') return { status: 'missing', figures: {}, notes: [`${d.module} exports no run()`] };
  try {
    let out: SuiteOutput;
    if (d.own) out = await (mod.run as OwnSuite)(ctx);
    else {
      const raw = await (mod.run as ForeignSuite)();
      const figures: Record<string, number> = {};
      for (const [k, v] of Object.entries(raw ?? {})) if (typeof v === 'number') figures[k] = v;
      out = { status: 'ok', figures, targets: (d.targets ?? []).filter((t) => t.key in figures) };
    }
    out.seconds = (performance.now() - t0) / 1000;
    return out;
  } catch (e) {
    return { status: 'error', figures: {}, error: errText(e), seconds: (performance.now() - t0) / 1000 };
  }
}

/** What is wrong with a suite's settings (its module's `settings()` threw a BenchSettingError), or undefined. */
async function settingsError(d: SuiteDef): Promise<string | undefined> {
  const url = new URL(d.module, import.meta.url);
  if (!existsSync(url)) return undefined;
  let mod: Record<string, unknown>;
  try { mod = (await import(url.href)) as Record<string, unknown>; } catch { return undefined; } // said by runSuite
  if (typeof mod.settings !== 'function') return undefined;
  try { (mod.settings as () => void)(); } catch (e) { if (e instanceof BenchSettingError) return e.message; throw e; }
  return undefined;
}

/** A machine probe in a fresh process (a failure is said, not fatal: a machine fact, not a suite). */
function machineProbe<T>(what: string, file: string, args: string[] = []): T | undefined {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', file), ...args], { encoding: 'utf8', timeout: 300_000 });
  try {
    if (r.status === 0) return JSON.parse(r.stdout) as T;
  } catch { /* said below */ }
  console.log(`machine: the ${what} probe failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout).trim().split('\n')[0] ?? ''}`);
  return undefined;
}

function errText(e: unknown): string {
  // a wrong setting is the user's to mend: its message; anything else is the bench's bug: its stack
  if (e instanceof BenchSettingError) return e.message;
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

function printSuite(name: string, s: SuiteOutput, what: string): void {
  console.log(`\n=== ${name} — ${what}${s.seconds !== undefined ? ` (${s.seconds.toFixed(1)} s)` : ''}`);
  if (s.status === 'missing') { console.log(`  missing: ${(s.notes ?? []).join('; ')}`); return; }
  if (s.status === 'error') { console.log(`  ERROR: ${s.error}`); return; }
  const byKey = new Map<string, Target[]>();
  for (const t of s.targets ?? []) byKey.set(t.key, [...(byKey.get(t.key) ?? []), t]);
  const rows = Object.entries(s.figures).map(([k, v]) => {
    const ts = byKey.get(k) ?? [];
    const tgt = ts.map((t) => `${t.op === '<=' ? '≤' : '≥'} ${fmt(t.value)}`).join(', ');
    const met = ts.map((t) => { const m = targetMet(t, s.figures); return m === undefined ? '?' : m ? 'met' : 'NOT MET'; }).join(', ');
    return ['  ' + k, fmt(v), s.units?.[k] ?? '', tgt, met];
  });
  console.log(table(rows, ['  figure', 'value', 'unit', 'target', '']));
  for (const n of s.notes ?? []) console.log(`  · ${n}`);
}

function printSummary(res: Results): void {
  const rows: string[][] = [];
  for (const [name, s] of Object.entries(res.suites)) {
    for (const t of s.targets ?? []) {
      const m = targetMet(t, s.figures);
      rows.push([`  ${name}.${t.key}`, fmt(s.figures[t.key]), `${t.op === '<=' ? '≤' : '≥'} ${fmt(t.value)}`, m === undefined ? '?' : m ? 'met' : 'NOT MET', t.label]);
    }
    if (s.status !== 'ok') rows.push([`  ${name}`, '—', '', s.status.toUpperCase(), '']);
  }
  console.log('\n=== targets');
  console.log(rows.length ? table(rows, ['  figure', 'value', 'target', '', 'what']) : '  (none)');
}

function printCompare(res: Results, file: string): void {
  const old = JSON.parse(readFileSync(file, 'utf8')) as Results;
  console.log(`\n=== compare with ${file} (${old.meta?.sha ?? '?'}, ${old.meta?.date ?? '?'}${old.meta?.quick ? ', quick' : ''})`);
  if (old.meta && old.meta.quick !== res.meta.quick) console.log('  note: one run is --quick and the other is not; sizes differ');
  const rows: string[][] = [];
  for (const [name, s] of Object.entries(res.suites)) {
    const o = old.suites?.[name];
    for (const [k, v] of Object.entries(s.figures)) {
      const ov = o?.figures?.[k];
      if (ov === undefined) { rows.push([`  ${name}.${k}`, '—', fmt(v), 'new', '']); continue; }
      const d = ov === 0 ? NaN : (100 * (v - ov)) / Math.abs(ov);
      const t = (s.targets ?? []).find((x) => x.key === k);
      const better = t ? ((t.op === '<=') === (v < ov) ? 'better' : 'worse') : '';
      rows.push([`  ${name}.${k}`, fmt(ov), fmt(v), Number.isFinite(d) ? `${d >= 0 ? '+' : ''}${d.toFixed(1)} %` : '', Math.abs(d) >= 5 ? better : '']);
    }
  }
  console.log(rows.length ? table(rows, ['  figure', 'before', 'now', 'delta', '']) : '  (nothing in common)');
}

async function main(): Promise<number> {
  let a: Args;
  try {
    a = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench: ${(e as Error).message}`);
    return 2;
  }
  if (a.help) {
    console.log('usage: node dist/bench/run.js [suite…] [--quick] [--reps N] [--compare FILE] [--no-save]');
    console.log(`suites: ${SUITES.map((d) => d.name).join(', ')} (default: all)`);
    return 0;
  }
  const selected = a.suites.length ? SUITES.filter((d) => a.suites.includes(d.name)) : SUITES;
  const reps = a.reps ?? 3;
  if (a.quick) {
    process.env.BENCH_QUICK = '1';
    process.env.BENCH_ANALYSIS_EVENTS ??= '1000000';
  }
  const started = new Date();
  const t0 = performance.now();
  const sha = git(['rev-parse', '--short', 'HEAD']) || 'nogit';
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  console.log(`luna-ts bench: ${selected.map((d) => d.name).join(', ')}${a.quick ? ' (quick)' : ''}, median of ${reps}, ` +
    `${sha}${dirty ? ' (uncommitted changes)' : ''}, Node ${process.version}, ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}`);
  const res: Results = {
    meta: {
      date: started.toISOString(), sha, dirty, quick: a.quick, reps, suites: selected.map((d) => d.name),
      node: process.version, cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? '?', seconds: 0,
      loadStart: loadavg()[0], loadEnd: 0, incidents,
    },
    suites: {},
  };
  // the suites' settings (variables naming rows) before the machine probes and the first suite:
  // a wrong one is said at once, not after a minute of measuring
  for (const d of selected) {
    const bad = await settingsError(d);
    if (bad !== undefined) { console.error(`bench: ${d.name}: ${bad}`); return 1; }
  }
  console.log(schedLine());
  res.meta.wakeup = machineProbe<WakeupProbe>('wake-up', 'raw-wakeup.js');
  if (res.meta.wakeup) console.log(`machine: ${wakeupLine(res.meta.wakeup)}`);
  // fresh processes, 4 a repetition: 3 under --quick (~10 s), 7 otherwise (~30 s)
  res.meta.tiering = machineProbe<TieringProbe>('tiering', 'raw-tiering.js', [String(a.quick ? 3 : 7)]);
  if (res.meta.tiering) console.log(`machine: ${tieringLine(res.meta.tiering)}`);
  const ctx: Ctx = {
    quick: a.quick, reps, previous: res.suites,
    log: (m) => process.stderr.write(`  [${((performance.now() - t0) / 1000).toFixed(0)} s] ${m}\n`),
  };
  for (const d of selected) {
    ctx.log(`suite ${d.name}`);
    const s = await runSuite(d, ctx);
    res.suites[d.name] = s;
    printSuite(d.name, s, d.what);
  }
  res.meta.seconds = Math.round((performance.now() - t0) / 100) / 10;
  res.meta.loadEnd = loadavg()[0];
  printSummary(res);
  console.log(`\ntotal ${res.meta.seconds} s; load average ${res.meta.loadStart.toFixed(1)} at the start, ${res.meta.loadEnd.toFixed(1)} at the end (${res.meta.cpus} cores)`);
  if (incidents.length) {
    console.log(`\n${incidents.length} incident(s) (failed or hung runs, retried):`);
    for (const i of incidents) console.log(`  ! ${i}`);
  }
  if (res.meta.loadStart > res.meta.cpus || res.meta.loadEnd > res.meta.cpus + 1)
    console.log('warning: the machine was busy with other work during the run; multi-thread and multi-node figures are pessimistic');
  if (a.save) {
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
    const file = join(dir, `${stamp}-${sha}${a.quick ? '-quick' : ''}.json`);
    const text = JSON.stringify(res, null, 2) + '\n';
    writeFileSync(file, text);
    writeFileSync(join(dir, 'latest.json'), text);
    console.log(`saved ${file} and bench/results/latest.json`);
  }
  if (a.compare) printCompare(res, a.compare);
  return Object.values(res.suites).some((s) => s.status === 'error') ? 1 : 0;
}

/**
 * The harness runs as `bin/luna` does, under its first line's environment and Node flags, so
 * that suites run in this process, and the raw baselines they compare with, see the process
 * policy a user's run sees (huge pages for the C heap, young generation, inlining budget).
 */
function asLuna(): number | undefined {
  if (process.env.LUNA_BENCH_AS_LUNA === '1') return undefined;
  const argv = [...LUNA_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)];
  const r = spawnSync(process.execPath, argv, { stdio: 'inherit', env: { ...process.env, ...LUNA_NODE_ENV, LUNA_BENCH_AS_LUNA: '1' } });
  return r.status ?? 1;
}

// exit explicitly: a hung in-process run may leave worker threads behind
process.exit(asLuna() ?? (await main()));
