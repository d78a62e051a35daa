// Benchmark of the SLOW analysis: throughput (events/s) and peak memory on a generated trace of
// BENCH_ANALYSIS_EVENTS events (default 10^7), against merely iterating the same generated events
// in the same run. Run: node dist/bench/analysis.js   (or import { run }).

import { SlowAnalyzer } from '../src/analysis/slow/analyzer.js';
import { TraceModel } from '../src/trace/model/model.js';
import { finishReport } from '../src/analysis/slow/report.js';
import { syntheticEvents, syntheticManifest, type SyntheticOptions } from '../src/analysis/sim/synthetic.js';

function mib(x: number): number { return Math.round(x / 1048576); }

export async function run(): Promise<Record<string, number>> {
  const n = Number(process.env.BENCH_ANALYSIS_EVENTS ?? 1e7);
  const o: SyntheticOptions = { events: n, nodes: 4, threads: 4, seed: 7 };
  const manifest = syntheticManifest(o);

  // baseline: generate and touch every event
  const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
  let c0 = process.cpuUsage();
  let t = performance.now(), count = 0, sink = 0;
  for (const e of syntheticEvents(o)) { count++; sink += e.t; }
  const baseMs = performance.now() - t;
  const baseCpu = cpuMs(process.cpuUsage(c0));
  if (sink === -1) console.log(sink);

  // analysis over the same stream, sampling memory as it goes
  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peakRss = rss0, peakHeap = 0, i = 0;
  t = performance.now();
  c0 = process.cpuUsage();
  const model = new TraceModel(manifest);
  const an = new SlowAnalyzer(model, {});
  for (const e of syntheticEvents(o)) {
    model.push(e);
    if ((++i & 0x3ffff) === 0) {
      const m = process.memoryUsage();
      if (m.rss > peakRss) peakRss = m.rss;
      if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
    }
  }
  const report = finishReport(an);
  const anMs = performance.now() - t;
  const anCpu = cpuMs(process.cpuUsage(c0));
  const pureMs = Math.max(1e-3, anMs - baseMs);
  const pureCpu = Math.max(1e-3, anCpu - baseCpu);
  const res = {
    events: count,
    iterateMs: Math.round(baseMs),
    analyzeMs: Math.round(anMs),
    eventsPerSecIncludingGeneration: Math.round(count / (anMs / 1000)),
    eventsPerSecAnalysisOnly: Math.round(count / (pureMs / 1000)),
    ratioAnalyzeToIterate: +(anMs / baseMs).toFixed(2),
    // CPU time (user + system, all threads incl. GC helpers): steadier on a shared machine
    iterateCpuMs: Math.round(baseCpu),
    analyzeCpuMs: Math.round(anCpu),
    eventsPerCpuSecAnalysisOnly: Math.round(count / (pureCpu / 1000)),
    peakRssMiB: mib(peakRss),
    peakHeapUsedMiB: mib(peakHeap),
    coveragePct: +(100 * report.coverage).toFixed(3),
    cfs: report.cfs,
  };
  return res;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((r) => {
    console.log(JSON.stringify(r, null, 2));
    console.log(`analysis: ${(r.eventsPerSecAnalysisOnly / 1e6).toFixed(2)} M events/s wall, ` +
      `${(r.eventsPerCpuSecAnalysisOnly / 1e6).toFixed(2)} M per CPU-second (target ≥ 2), ` +
      `${r.ratioAnalyzeToIterate}× the time of merely iterating, peak RSS ${r.peakRssMiB} MiB`);
  }).catch((e) => { console.error(e); process.exit(1); });
}
