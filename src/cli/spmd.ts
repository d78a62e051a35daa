// `luna spmd prog.ts [--threads T] [--nodes N] [--trace DIR]`: run an SPMD/PGAS program on T
// ranks dealt to N node processes (spawned here, or the ranks of mpirun/srun), each node's ranks
// as worker threads. Exit 0 when every rank returned, 1 on a rank's error or a hang (reported by
// rank 0), 2 for a bad command line.
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { writeFileSync } from 'node:fs';
import { bundleSpmdProgram, ProgramBuildError } from '../spmd/bundle.js';
import { runSpmdNode, type SpmdRunResult } from '../spmd/run.js';
import { detectLaunch, ranksOnThisHost } from '../runtime/launch/env.js';
import { nodeCpus } from '../runtime/launch/binding.js';
import { cpuSet } from '../core/cpus.js';
import { newRunOrigin } from '../trace/clock.js';
import { openTraceDir, writeManifest, listTraceFiles } from '../trace/dir.js';
import { VERSION as TRACE_FORMAT_VERSION } from '../trace/format.js';
import type { TraceManifest } from '../trace/manifest.js';
import { cpuClockExact } from '../trace/clock.js';
import { thisMachine } from '../runtime/tracing.js';
import { version } from '../core/version.js';

export interface SpmdCliOptions {
  threads?: number;
  nodes?: number;
  trace?: string;
  bind?: string;
  quiet?: boolean;
}

export async function spmdCommand(file: string, args: string[], o: SpmdCliOptions): Promise<number> {
  const say = (t: string): void => { process.stderr.write(`${t}\n`); };
  const launch = detectLaunch(process.env);
  const nodes = launch.launcher === 'local' ? o.nodes ?? 1 : launch.size;
  const threads = o.threads ?? Math.max(nodes, Math.floor(availableParallelism() / nodes) * nodes);
  if (threads % nodes !== 0) { say(`luna: error: --threads ${threads} cannot be dealt to ${nodes} nodes equally: give a multiple of ${nodes}`); return 2; }
  let program: string;
  try {
    program = await bundleSpmdProgram(file, resolve(process.env.LUNA_CACHE_DIR || '.luna-cache'));
  } catch (e) {
    say(`luna: error: ${e instanceof ProgramBuildError ? e.message : String(e)}`);
    return 1;
  }
  let origin: string | undefined;
  let manifest: TraceManifest | undefined;
  if (o.trace) {
    origin = process.env.LUNA_TRACE_ORIGIN ?? (launch.launcher === 'local' ? String(newRunOrigin()) : '0');
    process.env.LUNA_TRACE_ORIGIN = origin;
    if (launch.rank === 0) {
      manifest = {
        format: 'luna-ts-trace', version: TRACE_FORMAT_VERSION, program: file, args: [...args], nodes, threads: threads / nodes, ranks: threads,
        cores: availableParallelism(), ...(nodes === 1 ? { machines: [thisMachine([0])] } : {}), codes: [], policy: 'spmd',
        clock: { cpuExact: cpuClockExact, offsets: new Array<number>(nodes).fill(0) },
        startedAt: new Date().toISOString(), status: 'running', versions: { lunaTs: version(), node: process.version }, files: [],
      };
      try { openTraceDir(o.trace, manifest); } catch (e) { say(`luna: error: cannot open trace directory ${o.trace}: ${e instanceof Error ? e.message : String(e)}`); return 1; }
    }
  }
  const finish = (res: SpmdRunResult): void => {
    if (manifest && o.trace) {
      writeManifest(o.trace, { ...manifest, clock: { ...manifest.clock, offsets: res.clockOffsets ?? manifest.clock.offsets }, status: res.status, ...(res.message ? { message: res.message } : {}), files: listTraceFiles(o.trace) });
    }
  };
  // the node's share of the machine's CPUs, as `luna run` counts it: its waits spin only within it
  const cpus = nodeCpus(launch, ranksOnThisHost(launch, nodes), cpuSet());
  const base = { program, args, threads, traceDir: o.trace, traceOrigin: origin, cpus };
  if (launch.launcher === 'local' && nodes === 1) {
    const res = await runSpmdNode(base);
    saveCounts(res, 0);
    finish(res);
    return report(res, say);
  }
  const { startNode } = await import('../runtime/launch/cluster.js');
  let started;
  try {
    started = await startNode({ nodes: o.nodes, bind: o.bind });
  } catch (e) {
    say(`luna: error: cannot connect the nodes: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const res = await runSpmdNode({ ...base, transport: started.transport });
  saveCounts(res, started.transport.rank);
  if (started.children) {
    await Promise.race([started.children.exited(), new Promise<void>((r) => setTimeout(r, 5000).unref())]);
    started.children.killAll();
  }
  if (started.transport.rank !== 0) return res.ok ? 0 : 1;
  finish(res);
  return report(res, say);
}

/**
 * $LUNA_SPMD_COUNTS names a directory: each node writes what its ranks cost there (node-N.json:
 * requests to its system thread, messages by tag, sleeps, socket writes), for tests and benchmarks.
 */
function saveCounts(res: SpmdRunResult, node: number): void {
  const dir = process.env.LUNA_SPMD_COUNTS;
  if (!dir || !res.counts) return;
  writeFileSync(join(dir, `node-${node}.json`), JSON.stringify({ ...res.counts, transport: res.transport }));
}

function report(res: SpmdRunResult, say: (t: string) => void): number {
  if (res.ok) return 0;
  if (res.message) say(`luna: error: ${res.message}`);
  return 1;
}
