// Run a loaded program on this process: one node of a run (N = 1 here; cluster.ts adds nodes).
import { availableParallelism } from 'node:os';
import type { CompiledProgram } from '../program/compile.js';
import { NodeRuntime, RunFault } from './node.js';
import { WorkerPool } from './pool.js';
import type { WorkerInit } from './protocol.js';
import { ThreadTraceWriter, cpuClockExact, runOrigin, setRunOrigin, wallNs } from '../trace/index.js';
import { faultText, hangText } from './report.js';
import type { Transport } from './transport/types.js';
import { ClusterNode, type ClusterResult } from './remote.js';

export interface RunOptions {
  program: CompiledProgram;
  /** record a trace into this directory (already opened by the launcher) */
  traceDir?: string;
  /** the run's clock origin (decimal ns string) shared by all nodes */
  traceOrigin?: string;
  bundle?: string;
  args: string[];
  threads?: number;
  needGid?: boolean;
}

export interface RunResult {
  ok: boolean;
  /** error text (fault or hang) when !ok */
  message?: string;
  kind?: 'fault' | 'hang' | 'lost';
}

export function defaultThreads(): number {
  return Math.max(1, availableParallelism());
}

/** The system thread's trace writer for this node, when tracing. */
function openTracing(opts: RunOptions, rank: number): { tr?: ThreadTraceWriter; worker?: WorkerInit['trace'] } {
  if (!opts.traceDir) return {};
  if (opts.traceOrigin) setRunOrigin(opts.traceOrigin);
  const tr = ThreadTraceWriter.open(opts.traceDir, rank, 0, { cpuExact: cpuClockExact });
  return { tr, worker: { dir: opts.traceDir, node: rank, origin: String(runOrigin()) } };
}

function closeTracing(tr: ThreadTraceWriter | undefined): void {
  tr?.close();
}

export async function runSingleNode(opts: RunOptions): Promise<RunResult> {
  const threads = opts.threads ?? defaultThreads();
  const tracing = openTracing(opts, 0);
  let rt!: NodeRuntime;
  let settle!: (r: RunResult) => void;
  const done = new Promise<RunResult>((r) => { settle = r; });
  const pool = new WorkerPool({
    threads, bundle: opts.bundle, imports: opts.program.imports, trace: tracing.worker,
    onResult: (r) => rt.onResult(r),
    onFatal: (w, msg) => settle({ ok: false, kind: 'fault', message: `worker thread ${w} failed: ${msg}` }),
  });
  rt = new NodeRuntime(opts.program, {
    rank: 0, size: 1, threads, inflight: pool.inflight, trace: tracing.tr, now: wallNs,
    sendBatch: (w, b) => pool.send(w, b),
  }, { needGid: opts.needGid });
  rt.onFault = (f) => { pool.abort(); settle({ ok: false, kind: 'fault', message: faultText(rt, f) }); };
  rt.onIdle = () => {
    if (rt.live === 0) settle({ ok: true });
    else settle({ ok: false, kind: 'hang', message: hangText(rt, 0) });
  };
  try {
    await pool.start();
  } catch (e) {
    await pool.kill();
    return { ok: false, kind: 'fault', message: `cannot start worker threads: ${e instanceof Error ? e.message : String(e)}` };
  }
  tracing.tr?.programStart(wallNs());
  try { rt.start(opts.args); } catch (e) { rt.fail(e); }
  const res = await done;
  tracing.tr?.programFinish(wallNs());
  await pool.stop();
  closeTracing(tracing.tr);
  return res;
}


/** Run this node of a multi-node run over `transport` (rank 0 starts main). */
export async function runClusterNode(opts: RunOptions & { transport: Transport }): Promise<ClusterResult & { clockOffsets?: number[] }> {
  const tp = opts.transport;
  const threads = opts.threads ?? defaultThreads();
  const tracing = openTracing(opts, tp.rank);
  const cluster = new ClusterNode(tp, wallNs);
  let rt!: NodeRuntime;
  const pool = new WorkerPool({
    threads, bundle: opts.bundle, imports: opts.program.imports, trace: tracing.worker,
    onResult: (r) => rt.onResult(r),
    onFatal: (w, msg) => rt.fail(new RunFault(`worker thread ${w} failed: ${msg}`)),
  });
  rt = new NodeRuntime(opts.program, {
    rank: tp.rank, size: tp.size, threads, inflight: pool.inflight, trace: tracing.tr, now: wallNs,
    sendBatch: (w, b) => pool.send(w, b), remote: cluster,
  }, { needGid: opts.needGid });
  cluster.attach(rt);
  try {
    await pool.start();
  } catch (e) {
    // The other nodes must hear of it: fail through the normal fault path, which aborts the run.
    await pool.kill();
    rt.fail(new RunFault(`node ${tp.rank}: cannot start worker threads: ${e instanceof Error ? e.message : String(e)}`));
    const res = await cluster.done;
    await tp.close();
    return res;
  }
  // Traces of nodes on other hosts are put on node 0's clock with offsets measured now.
  const clockOffsets = tracing.tr && tp.rank === 0 ? await cluster.measureClocks() : undefined;
  tracing.tr?.programStart(wallNs());
  if (tp.rank === 0) {
    try { rt.start(opts.args); } catch (e) { rt.fail(e); }
  } else rt.schedule();
  const res = await cluster.done;
  if (!res.ok) pool.abort();
  tracing.tr?.programFinish(wallNs());
  await pool.stop();
  closeTracing(tracing.tr);
  await tp.close();
  return { ...res, clockOffsets };
}
