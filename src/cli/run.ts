// `luna run`: load, check, run on 1..N nodes (local processes, or ranks of mpirun/srun), print
// faults and hangs; exit 0 / 1 (2 for a bad command line). Only rank 0 reports, so messages are
// not repeated.
import { loadProgram } from '../program/load.js';
import { ArgsError, parseMainArgs } from '../program/args.js';
import { defaultThreads, runNode, type RunResult } from '../runtime/run.js';
import { finishRunTrace, startRunTrace } from '../runtime/tracing.js';
import { cpuClockWarningOnce, newRunOrigin } from '../trace/clock.js';
import type { TraceManifest } from '../trace/manifest.js';
import { DefaultPolicy } from '../runtime/policy/default.js';
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
  const say = (text: string): void => { if (launch.rank === 0) process.stderr.write(text.endsWith('\n') ? text : text + '\n'); };
  const loaded = await loadProgram(file, { defines: o.define, ucodes: o.ucodes?.split(',').filter(Boolean) });
  if (!loaded.program) { say(loaded.text); return 1; }
  if (loaded.diagnostics.length > 0 && !o.quiet) say(loaded.text);
  try {
    parseMainArgs(loaded.program.main, args);
  } catch (e) {
    if (e instanceof ArgsError) { say(`luna: error: ${e.message}`); return 2; }
    throw e;
  }
  const threads = o.threads ?? defaultThreads();
  const nodes = launch.launcher === 'local' ? o.nodes ?? 1 : launch.size;
  const policy = new DefaultPolicy();
  let traceOrigin: string | undefined;
  let manifest: TraceManifest | undefined;
  if (o.trace) {
    // One clock origin for the run: the launcher's, inherited by local nodes; under mpirun/srun
    // every rank uses the raw host-wide monotonic clock (origin 0).
    traceOrigin = process.env.LUNA_TRACE_ORIGIN ?? (launch.launcher === 'local' ? String(newRunOrigin()) : '0');
    process.env.LUNA_TRACE_ORIGIN = traceOrigin;
    if (launch.rank === 0) {
      try {
        manifest = startRunTrace(o.trace, loaded.program, { program: file, args, nodes, threads, policy: policy.name, version: version() });
      } catch (e) {
        say(`luna: error: cannot open trace directory ${o.trace}: ${(e as Error).message}`);
        return 1;
      }
      const warn = cpuClockWarningOnce();
      if (warn && !o.quiet) say(warn);
    }
  }
  const base = { program: loaded.program, bundle: loaded.bundle, args, threads, traceDir: o.trace, traceOrigin, policy };
  const finishTrace = (res: RunResult): void => {
    if (manifest && o.trace) finishRunTrace(o.trace, manifest, { status: res.status, message: res.message, offsets: res.clockOffsets });
  };

  if (launch.launcher === 'local' && nodes === 1) {
    const res = await runNode(base);
    finishTrace(res);
    return report(res);
  }
  let started: StartedNode;
  try {
    started = await startNode({ nodes: o.nodes, bind: o.bind, allocPayload: (n) => new Uint8Array(new SharedArrayBuffer(n)) });
  } catch (e) {
    say(`luna: error: cannot connect the nodes: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const { transport, children } = started;
  const res = await runNode({ ...base, transport });
  if (children) {
    const timeout = new Promise<void>((r) => setTimeout(r, res.ok ? 5000 : 1000).unref());
    await Promise.race([children.exited(), timeout]);
    children.killAll();
  }
  finishTrace(res);
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
