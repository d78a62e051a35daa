// One node of an SPMD run, one node or many: the control protocol and the SPMD layer's channel
// over a transport (a mesh of one for a one-node run), the node's ranks, its trace. Returns how
// the run ended on this node.
import { Control, type ClusterResult } from '../runtime/cluster/control.js';
import { MemoryMesh } from '../runtime/transport/memory.js';
import { Router } from '../runtime/transport/router.js';
import type { Transport } from '../runtime/transport/types.js';
import type { TcpTransport } from '../runtime/transport/tcp.js';
import { setRunOrigin, wallNs, runOrigin } from '../trace/clock.js';
import { STATUS, type RunStatus } from '../trace/schema.js';
import { ThreadTraceWriter } from '../trace/writer.js';
import { SpmdNode, type SpmdCounts } from './host.js';

export interface SpmdRunOptions {
  /** the bundled program (bundle.ts) */
  program: string;
  args?: string[];
  /** ranks in the whole run */
  threads: number;
  /** the mesh of a multi-node run (absent: one node) */
  transport?: Transport;
  /** record this node's trace files into this existing directory */
  traceDir?: string;
  /** the run's clock origin shared by all nodes (decimal ns) */
  traceOrigin?: string;
  /** spin before sleeping in waits for ranks of this node / for other nodes (ms; defaults: host.ts) */
  spinMs?: number;
  remoteSpinMs?: number;
  /** CPUs this node may count on (default: this process's; the CLI shares a machine's among its nodes) */
  cpus?: number;
  /** barriers among this machine's node processes through shared memory (default: when available; host.ts) */
  shm?: boolean;
  interrupt?: AbortSignal;
}

export interface SpmdRunResult extends ClusterResult {
  status: RunStatus;
  clockOffsets?: number[];
  wallNs: number;
  /** what this node's ranks cost its system thread and themselves (absent when the node never started) */
  counts?: SpmdCounts;
  /** the transport's own counters when it keeps them (TCP: frames sent and socket writes, every layer's) */
  transport?: { framesSent: number; socketWrites: number };
}

export async function runSpmdNode(o: SpmdRunOptions): Promise<SpmdRunResult> {
  const tp = o.transport ?? new MemoryMesh(1).endpoints[0]!;
  if (o.traceOrigin) setRunOrigin(o.traceOrigin);
  const tr = o.traceDir ? ThreadTraceWriter.open(o.traceDir, tp.rank, 0) : undefined;
  const router = new Router(tp);
  const control = new Control(router, wallNs);
  let node: SpmdNode;
  try {
    node = new SpmdNode(router, control, { program: o.program, args: o.args, threads: o.threads, origin: String(runOrigin()), trace: o.traceDir ? { dir: o.traceDir } : undefined, spinMs: o.spinMs, remoteSpinMs: o.remoteSpinMs, cpus: o.cpus, shm: o.shm });
  } catch (e) {
    tr?.close();
    await tp.close();
    return { ok: false, kind: 'fault', message: e instanceof Error ? e.message : String(e), status: 'failed', wallNs: 0 };
  }
  const clockOffsets = tr && tp.rank === 0 && tp.size > 1 ? await control.measureClocks() : undefined;
  const started = wallNs();
  tr?.programStart(started);
  const onInterrupt = (): void => control.interrupt(String((o.interrupt!.reason as { message?: string })?.message ?? o.interrupt!.reason));
  if (o.interrupt?.aborted) onInterrupt(); else o.interrupt?.addEventListener('abort', onInterrupt, { once: true });
  node.start();
  const res = await control.done;
  o.interrupt?.removeEventListener('abort', onInterrupt);
  const counts = node.counts();
  const stats = (tp as Partial<TcpTransport>).stats?.();
  await node.stop();
  const ended = wallNs();
  const status: RunStatus = res.ok ? 'completed' : res.kind === 'hang' ? 'hung' : res.kind === 'lost' ? 'lost' : 'failed';
  tr?.programFinish(ended, STATUS.indexOf(status));
  tr?.close();
  await tp.close();
  return { ...res, status, clockOffsets, wallNs: ended - started, counts, ...(stats ? { transport: { framesSent: stats.framesSent, socketWrites: stats.socketWrites } } : {}) };
}
