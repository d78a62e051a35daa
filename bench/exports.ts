// Exports of a trace against the analysis of the same trace, measured in the same run on a
// generated trace directory of BENCH_EXPORT_EVENTS events (default 10^6; real trace files written
// by the trace writer, kept under the temporary directory between runs, keyed by its parameters): the SLOW analysis (one model pass: the baseline), the Perfetto JSON, the
// Perfetto protobuf, the OTF2 archive (when its helper is built), the tables as CSV and as Parquet (BENCH_EXPORT_EVENTS=1.2e7 gives ~10^6 fragments: 12 events each,
// the size the targets speak of: protobuf ≤ 1.5× the binary trace, each export ≤ 10 s). Ratios are export time / analysis time; sizes in bytes per CF.
// Two floors every export stands on are measured apart: decodeMs / decodeCpuMs (reading and merging the records
// as columns, nothing resolved) and modelMs (one bare pass of the trace model, no listener;
// modelRecyclingMs: the same reusing fragment records, as the protobuf and OTF2 exports read).
// Each also in CPU ms of the whole process (…CpuMs, a reading worker's thread included): the
// worker is worth its default only where it saves wall time without costing more CPU than it saves.
// The targets speak of the command: `luna export perfetto` and `luna export otf2` are also run as
// the user runs them (bin/luna, its node flags) with the export's young generation (what a trace
// over 16 MiB gets, src/cli/export-heap.ts; LUNA_EXPORT_HEAP=1 at any size): cliPerfettoProtoMs,
// cliOtf2Ms, their CPU time (the children's, the OTF2 helper's included) and, as the baseline of
// the same run, the same commands with LUNA_EXPORT_HEAP=0 (the 2 MiB semi-space bin/luna starts with).
// decodeCpuMs and phase…CpuMs split an export's CPU into decoding, resolving and writing
// (differences of the passes above, each on the calling thread: comparable under load, where wall
// times are not; meaningful at 10^6 fragments: on small traces the first pass's JIT warm-up dominates).
// Run: node dist/bench/exports.js  (or import { run }).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeSlowTrace } from '../src/analysis/slow/index.js';
import type { SyntheticOptions } from '../src/analysis/sim/synthetic.js';
import { exportPerfetto } from '../src/trace/export/perfetto.js';
import { exportPerfettoProto } from '../src/trace/export/perfetto-proto.js';
import { exportTables } from '../src/trace/export/tables.js';
import { exportOtf2 } from '../src/trace/export/otf2.js';
import { builtFile } from '../src/core/addon.js';
import { readTraceColumns } from '../src/trace/merge.js';
import { readModel } from '../src/trace/read.js';
import { cachedSyntheticTrace, LUNA } from './common.js';

function size(path: string): number {
  const s = statSync(path);
  return s.isDirectory() ? readdirSync(path).reduce((a, f) => a + size(join(path, f)), 0) : s.size;
}

/** Wall ms of f, and the CPU ms of the whole process meanwhile (every thread: a reading worker's too). */
function measure<T>(f: () => T): { ms: number; cpuMs: number; value: T } {
  const t0 = performance.now(), c0 = process.cpuUsage();
  const value = f();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000, value };
}

/** CPU ms of this process's waited-for children (Linux: /proc/self/stat cutime + cstime; NaN elsewhere). */
function childrenCpuMs(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ').map(Number);
    return (rest[16 - 3]! + rest[17 - 3]!) * 10; // USER_HZ = 100
  } catch { return NaN; }
}

/** `luna export <argv…>` as a user runs it: wall ms and the command's CPU ms (its children's included). */
function command(argv: string[], env: Record<string, string> = {}): { ms: number; cpuMs: number } {
  const c0 = childrenCpuMs(), t0 = performance.now();
  const r = spawnSync(LUNA, ['export', ...argv], { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`luna export ${argv.join(' ')}: exit ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return { ms, cpuMs: childrenCpuMs() - c0 };
}

/** `f` with the exports reading the trace in a worker thread (LUNA_TRACE_WORKER=1) or on the calling thread. */
function reading<T>(where: 'worker' | 'caller', f: () => T): T {
  const before = process.env.LUNA_TRACE_WORKER;
  process.env.LUNA_TRACE_WORKER = where === 'worker' ? '1' : '0';
  try { return f(); } finally { if (before === undefined) delete process.env.LUNA_TRACE_WORKER; else process.env.LUNA_TRACE_WORKER = before; }
}

export async function run(): Promise<Record<string, number>> {
  const o: SyntheticOptions = { events: Number(process.env.BENCH_EXPORT_EVENTS ?? 1e6), nodes: 2, threads: 2, seed: 11 };
  const dir = mkdtempSync(join(tmpdir(), 'luna-bench-exports-'));
  try {
    // (kept between runs under the temporary directory: generating 10^6 fragments takes a minute)
    const trace = cachedSyntheticTrace(o);
    const decode = measure(() => readTraceColumns(trace).runs(() => {}));
    const model = measure(() => readModel(trace, () => {}));
    // the pass as the exports make it: fragment records reused (TraceModel.recycles)
    const modelRecycling = measure(() => readModel(trace, () => {}, undefined, { recycle: true }));
    // the same pass with decoding and merging in a worker thread (LUNA_TRACE_WORKER=1)
    const modelWorker = measure(() => reading('worker', () => readModel(trace, () => {}, undefined, { worker: true, recycle: true })));
    const an = measure(() => analyzeSlowTrace(trace));
    const cfs = an.value.cfs;
    const pf = measure(() => exportPerfetto(trace, join(dir, 'run.json')));
    const pb = measure(() => reading('worker', () => exportPerfettoProto(trace, join(dir, 'run.pftrace'))));
    // baseline of the same run: the protobuf export reading on the calling thread
    const pbCaller = measure(() => reading('caller', () => exportPerfettoProto(trace, join(dir, 'run0.pftrace'))));
    // OTF2 needs its helper (the OTF2 library at install time); without it the figures are absent
    const otf2 = builtFile('luna-otf2') ? measure(() => exportOtf2(trace, join(dir, 'otf2'))) : null;
    // the commands, alternated with their baseline (the young generation bin/luna starts with)
    // (LUNA_EXPORT_HEAP=1: the young generation a trace over 16 MiB gets, at any size)
    const cliPb = command(['perfetto', trace, '-o', join(dir, 'cli.pftrace')], { LUNA_EXPORT_HEAP: '1' });
    const cliPbSmall = command(['perfetto', trace, '-o', join(dir, 'cli0.pftrace')], { LUNA_EXPORT_HEAP: '0' });
    const cliOtf2 = otf2 ? command(['otf2', trace, '-o', join(dir, 'cli.otf2')], { LUNA_EXPORT_HEAP: '1' }) : null;
    const cliOtf2Small = otf2 ? command(['otf2', trace, '-o', join(dir, 'cli0.otf2')], { LUNA_EXPORT_HEAP: '0' }) : null;
    const csv = measure(() => exportTables(trace, join(dir, 'csv'), ['csv']));
    const pq = measure(() => exportTables(trace, join(dir, 'parquet'), ['parquet']));
    return {
      events: an.value.events,
      cfs,
      decodeMs: Math.round(decode.ms),
      decodeCpuMs: Math.round(decode.cpuMs),
      modelMs: Math.round(model.ms),
      modelCpuMs: Math.round(model.cpuMs),
      modelRecyclingMs: Math.round(modelRecycling.ms),
      modelRecyclingCpuMs: Math.round(modelRecycling.cpuMs),
      modelWorkerMs: Math.round(modelWorker.ms),
      modelWorkerCpuMs: Math.round(modelWorker.cpuMs),
      analyzeMs: Math.round(an.ms),
      perfettoMs: Math.round(pf.ms),
      perfettoProtoMs: Math.round(pb.ms),
      perfettoProtoCallerThreadMs: Math.round(pbCaller.ms),
      perfettoProtoWorkerVsCallerThread: +(pb.ms / pbCaller.ms).toFixed(2),
      perfettoProtoCpuMs: Math.round(pb.cpuMs),
      perfettoProtoCallerThreadCpuMs: Math.round(pbCaller.cpuMs),
      perfettoProtoWorkerVsCallerThreadCpu: +(pb.cpuMs / pbCaller.cpuMs).toFixed(2),
      // where an export's CPU goes, on one thread: decoding and merging (decodeCpuMs), resolving
      // (the bare recycling model pass less the decoding), writing (the export less the bare pass)
      phaseModelCpuMs: Math.round(modelRecycling.cpuMs - decode.cpuMs),
      phasePerfettoWriteCpuMs: Math.round(pbCaller.cpuMs - modelRecycling.cpuMs),
      traceBytes: size(trace),
      perfettoProtoBytes: size(join(dir, 'run.pftrace')),
      perfettoProtoVsTrace: +(size(join(dir, 'run.pftrace')) / size(trace)).toFixed(2),
      ...(otf2 ? {
        otf2Ms: Math.round(otf2.ms),
        otf2CpuMs: Math.round(otf2.cpuMs),
        // the collector and the record files (the helper, a child process, is in cliOtf2CpuMs)
        phaseOtf2WriteCpuMs: Math.round(otf2.cpuMs - modelRecycling.cpuMs),
        otf2Bytes: size(join(dir, 'otf2')),
        otf2VsTrace: +(size(join(dir, 'otf2')) / size(trace)).toFixed(2),
        otf2VsAnalyze: +(otf2.ms / an.ms).toFixed(2),
        otf2VsPerfettoProto: +(otf2.ms / pb.ms).toFixed(2),
        otf2BytesPerCf: Math.round(size(join(dir, 'otf2')) / cfs),
      } : {}),
      cliPerfettoProtoMs: Math.round(cliPb.ms),
      cliPerfettoProtoCpuMs: Math.round(cliPb.cpuMs),
      cliPerfettoProtoSmallYoungMs: Math.round(cliPbSmall.ms),
      cliPerfettoProtoSmallYoungCpuMs: Math.round(cliPbSmall.cpuMs),
      ...(cliOtf2 && cliOtf2Small ? {
        cliOtf2Ms: Math.round(cliOtf2.ms),
        cliOtf2CpuMs: Math.round(cliOtf2.cpuMs),
        cliOtf2SmallYoungMs: Math.round(cliOtf2Small.ms),
        cliOtf2SmallYoungCpuMs: Math.round(cliOtf2Small.cpuMs),
      } : {}),
      tablesCsvMs: Math.round(csv.ms),
      tablesParquetMs: Math.round(pq.ms),
      perfettoVsAnalyze: +(pf.ms / an.ms).toFixed(2),
      perfettoProtoVsAnalyze: +(pb.ms / an.ms).toFixed(2),
      tablesCsvVsAnalyze: +(csv.ms / an.ms).toFixed(2),
      tablesParquetVsAnalyze: +(pq.ms / an.ms).toFixed(2),
      perfettoBytesPerCf: Math.round(size(join(dir, 'run.json')) / cfs),
      perfettoProtoBytesPerCf: Math.round(size(join(dir, 'run.pftrace')) / cfs),
      tablesCsvBytesPerCf: Math.round(size(join(dir, 'csv')) / cfs),
      tablesParquetBytesPerCf: Math.round(size(join(dir, 'parquet')) / cfs),
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [k, v] of Object.entries(await run())) console.log(`${k.padEnd(24)} ${v}`);
}
