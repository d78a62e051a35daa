// Tracing suite, in-process with runSingleNode on 2 worker threads:
//  - traced / untraced wall-time ratio (medians of interleaved runs) for the chain, independent
//    and matmul-shaped (matmul_spin.fa) programs with busy-spin CFs of ~100 µs and ~1 ms
//    (target ≤ 1.03 at 100 µs), plus empty CFs (worst case, no target);
//  - bytes per event of the produced traces: sum of the trace file sizes / events counted by
//    readTrace(dir);
//  - read + merge throughput of readTrace on the largest trace of the run (events/s).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { version } from '../src/cli/version.js';
import { cpuClockExact, listTraceFiles, newRunOrigin, openTraceDir, readTrace, TRACE_FORMAT_VERSION, writeManifest, type TraceManifest } from '../src/trace/index.js';
import type { Loaded } from '../src/program/load.js';
import { load, median, nowMs, prog, runInProc, section, sig, type Ctx, type SuiteOutput, type Target } from './common.js';

const THREADS = 2;

interface Case { name: string; file: string; args: (us: number) => (string | number)[]; us: number }

/** One traced run into a fresh directory, as `luna run --trace` does it. */
async function tracedRun(l: Loaded, args: (string | number)[], dir: string): Promise<number> {
  const manifest: TraceManifest = {
    format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: l.file, args: args.map(String),
    nodes: 1, threads: THREADS, codes: l.program!.codes,
    clock: { cpuExact: cpuClockExact, offsets: [0] },
    startedAt: new Date().toISOString(), versions: { lunaTs: version(), node: process.version }, files: [],
  };
  openTraceDir(dir, manifest);
  const ms = await runInProc(l, args, { threads: THREADS, traceDir: dir, traceOrigin: String(newRunOrigin()) });
  writeManifest(dir, { ...manifest, files: listTraceFiles(dir) });
  return ms;
}

function traceStats(dir: string): { bytes: number; events: number; readMs: number; warnings: string[] } {
  const t0 = nowMs();
  const tr = readTrace(dir);
  let events = 0;
  for (const _ of tr.events) events++;
  const readMs = nowMs() - t0;
  let bytes = 0;
  for (const f of tr.manifest.files) bytes += statSync(join(dir, f.path)).size;
  return { bytes, events, readMs, warnings: tr.warnings };
}

export async function run(ctx: Ctx): Promise<SuiteOutput> {
  const q = ctx.quick;
  const reps = Math.max(3, q ? ctx.reps : ctx.reps + 2);
  const f: Record<string, number> = {};
  const units: Record<string, string> = {};
  const targets: Target[] = [];
  const notes: string[] = [`${THREADS} worker threads, in-process runs, median of ${reps} interleaved untraced/traced runs${q ? '' : ' after a warm-up run'}`];
  const chain = prog('chain/chain.fa');
  const ind = prog('independent/independent.fa');
  const mm = prog('matmul/matmul_spin.fa');
  const cases: Case[] = [
    { name: 'chain.100us', file: chain, us: 100, args: (us) => [q ? 2000 : 8000, us] },
    { name: 'independent.100us', file: ind, us: 100, args: (us) => [q ? 4000 : 16_000, us] },
    { name: 'matmul.100us', file: mm, us: 100, args: (us) => [q ? 10 : 16, us] },
    { name: 'chain.1ms', file: chain, us: 1000, args: (us) => [q ? 200 : 800, us] },
    { name: 'independent.1ms', file: ind, us: 1000, args: (us) => [q ? 400 : 1600, us] },
    { name: 'matmul.1ms', file: mm, us: 1000, args: (us) => [q ? 5 : 8, us] },
    { name: 'chain.empty', file: chain, us: 0, args: (us) => [q ? 10_000 : 50_000, us] },
    { name: 'independent.empty', file: ind, us: 0, args: (us) => [q ? 10_000 : 50_000, us] },
  ];
  const root = mkdtempSync(join(tmpdir(), 'luna-bench-trace-'));
  let totalBytes = 0, totalEvents = 0, bestRead = { events: 0, ms: 0 };
  try {
    for (const c of cases) {
      if (c.us === 100) targets.push({ key: `${c.name}.ratio`, op: '<=', value: 1.03, label: 'traced/untraced at 100 µs' });
      targets.push({ key: `${c.name}.bytesPerEvent`, op: '<=', value: 32, label: 'bytes per event' });
      await section(ctx, notes, `tracing ${c.name}`, async () => {
        ctx.log(`tracing: ${c.name} (${c.args(c.us).join(' ')})`);
        const l = await load(c.file);
        const args = c.args(c.us);
        const dir = join(root, c.name);
        const plain: number[] = [];
        const traced: number[] = [];
        if (!q) await runInProc(l, args, { threads: THREADS }); // warm-up
        for (let r = 0; r < reps; r++) {
          // alternate the order so drifts of a noisy machine do not favour one side
          if (r % 2 === 0) {
            plain.push(await runInProc(l, args, { threads: THREADS }));
            traced.push(await tracedRun(l, args, dir));
          } else {
            traced.push(await tracedRun(l, args, dir));
            plain.push(await runInProc(l, args, { threads: THREADS }));
          }
        }
        const s = traceStats(dir);
        if (s.warnings.length) notes.push(`${c.name}: reader warnings: ${s.warnings.slice(0, 3).join('; ')}`);
        f[`${c.name}.untracedMs`] = sig(median(plain));
        f[`${c.name}.tracedMs`] = sig(median(traced));
        f[`${c.name}.ratio`] = sig(median(traced) / median(plain), 4);
        if (c.us === 0) {
          // empty CFs: the difference is the trace's own cost per CF, a figure the machine's noise
          // does not hide as it hides a few percent of a run of 100 µs CFs
          f[`${c.name}.usPerCf`] = sig(((median(traced) - median(plain)) * 1000) / Number(args[0]));
          units[`${c.name}.usPerCf`] = 'µs';
        }
        f[`${c.name}.bytesPerEvent`] = sig(s.bytes / s.events);
        f[`${c.name}.events`] = s.events;
        units[`${c.name}.untracedMs`] = units[`${c.name}.tracedMs`] = 'ms';
        units[`${c.name}.ratio`] = '×';
        units[`${c.name}.bytesPerEvent`] = 'B';
        totalBytes += s.bytes;
        totalEvents += s.events;
        if (s.events > bestRead.events) bestRead = { events: s.events, ms: s.readMs };
        rmSync(dir, { recursive: true, force: true });
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  f['all.bytesPerEvent'] = sig(totalBytes / totalEvents);
  f['readMerge.eventsPerS'] = sig((bestRead.events * 1000) / bestRead.ms);
  f['readMerge.events'] = bestRead.events;
  units['all.bytesPerEvent'] = 'B';
  units['readMerge.eventsPerS'] = 'events/s';
  targets.push({ key: 'all.bytesPerEvent', op: '<=', value: 32, label: 'bytes per event, all traces' });
  notes.push('readMerge = readTrace(dir) iterated to the end on the largest trace of the suite (one pass, cold start included)');
  return { status: 'ok', figures: f, units, targets, notes };
}
