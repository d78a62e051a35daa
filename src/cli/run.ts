// `luna run`: load, check, run on 1..N nodes (local processes, or ranks of mpirun/srun),
// print faults and hangs; exit 0 / 1. Only rank 0 reports, so messages are not repeated.
import { loadProgram } from '../program/load.js';
import { defaultThreads, runClusterNode, runSingleNode, type RunResult } from '../runtime/run.js';
import { cpuClockExact, cpuClockWarningOnce, listTraceFiles, newRunOrigin, openTraceDir, writeManifest, TRACE_FORMAT_VERSION, type TraceManifest } from '../trace/index.js';
import { version } from './version.js';
import { detectLaunch } from '../runtime/launch/env.js';
import { startNode, type StartedNode } from '../runtime/launch/cluster.js';

export interface RunCliOptions {
  threads?: number;
  nodes?: number;
  define: Record<string, string>;
  ucodes?: string;
  trace?: string;
  quiet?: boolean;
  bind?: string;
}

export async function runCommand(file: string, args: string[], o: RunCliOptions): Promise<number> {
  const launch = detectLaunch();
  const loaded = await loadProgram(file, { defines: o.define, ucodes: o.ucodes?.split(',').filter(Boolean) });
  if (!loaded.program) {
    if (launch.rank === 0) process.stderr.write(loaded.text + '\n');
    return 1;
  }
  if (loaded.diagnostics.length > 0 && !o.quiet && launch.rank === 0) process.stderr.write(loaded.text + '\n');
  const threads = o.threads ?? defaultThreads();
  const nodes = launch.launcher === 'local' ? o.nodes ?? 1 : launch.size;
  let traceOrigin: string | undefined;
  let manifest: TraceManifest | undefined;
  if (o.trace) {
    // One clock origin for the run: the launcher's, inherited by local nodes; under mpirun/srun
    // every rank uses the raw host-wide monotonic clock (origin 0).
    traceOrigin = process.env.LUNA_TRACE_ORIGIN ?? (launch.launcher === 'local' ? String(newRunOrigin()) : '0');
    process.env.LUNA_TRACE_ORIGIN = traceOrigin;
    if (launch.rank === 0) {
      manifest = traceManifest(file, args, nodes, threads, loaded.program.codes);
      try { openTraceDir(o.trace, manifest); } catch (e) {
        process.stderr.write(`luna: error: cannot open trace directory ${o.trace}: ${(e as Error).message}\n`);
        return 1;
      }
      const warn = cpuClockWarningOnce();
      if (warn && !o.quiet) process.stderr.write(warn + '\n');
    }
  }
  const base = { program: loaded.program, bundle: loaded.bundle?.file, args, threads, traceDir: o.trace, traceOrigin, needGid: o.trace !== undefined };
  const finishTrace = (offsets?: number[]) => {
    if (!manifest || !o.trace) return;
    writeManifest(o.trace, { ...manifest, clock: { ...manifest.clock, offsets: offsets ?? manifest.clock.offsets }, files: listTraceFiles(o.trace) });
  };

  if (launch.launcher === 'local' && nodes === 1) {
    const res = await runSingleNode(base);
    finishTrace();
    return report(res);
  }
  let started: StartedNode;
  try {
    started = await startNode({ nodes: o.nodes, bind: o.bind, allocPayload: (n) => new Uint8Array(new SharedArrayBuffer(n)) });
  } catch (e) {
    process.stderr.write(`luna: error: cannot connect the nodes: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const { transport, children } = started;
  const res = await runClusterNode({ ...base, transport });
  if (children) {
    const timeout = new Promise<void>((r) => setTimeout(r, res.ok ? 5000 : 1000).unref());
    await Promise.race([children.exited(), timeout]);
    children.killAll();
  }
  finishTrace(res.clockOffsets);
  if (transport.rank !== 0) {
    if (res.message) process.stderr.write(`luna: error: node ${transport.rank}: ${res.message}\n`);
    return res.ok ? 0 : 1;
  }
  return report(res);
}

function report(res: RunResult): number {
  if (res.ok) return 0;
  if (res.message) process.stderr.write(`luna: error: ${res.message}\n`);
  return 1;
}

function traceManifest(file: string, args: string[], nodes: number, threads: number, codes: string[]): TraceManifest {
  return {
    format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: file, args, nodes, threads, codes,
    clock: { cpuExact: cpuClockExact, offsets: new Array<number>(nodes).fill(0) },
    startedAt: new Date().toISOString(), versions: { lunaTs: version(), node: process.version }, files: [],
  };
}
