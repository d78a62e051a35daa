// An in-process node runtime for unit tests: a program compiled from source text, ucodes given
// as plain functions, executor lanes that run batches synchronously in this thread (real DF
// handles, real forwarding), and the real cluster protocol over a loopback transport — so
// scheduling mechanism and policies are tested in milliseconds, without workers or processes.
import { compileFrontEnd } from '../../src/lang/index.js';
import { originOf } from '../../src/lang/origin.js';
import { compileProgram, type CompiledProgram } from '../../src/program/compile.js';
import { parseMainArgs } from '../../src/program/args.js';
import { bindUcodes, callUcode, nameOfKey, type Ucode } from '../../src/runtime/exec/call.js';
import { InlineExecutor } from '../../src/runtime/exec/inline.js';
import type { Batch, BatchResult } from '../../src/runtime/exec/protocol.js';
import { NodeRuntime, type Executors } from '../../src/runtime/node/runtime.js';
import { ClusterNode } from '../../src/runtime/cluster/node.js';
import { LoopbackTransport } from '../../src/runtime/transport/loopback.js';
import { Router } from '../../src/runtime/transport/router.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import type { SchedulingPolicy } from '../../src/runtime/policy/types.js';
import type { DfValue } from '../../src/ucode/value.js';

export function compileSource(source: string, ucodes: Record<string, unknown> = {}): CompiledProgram {
  const fe = compileFrontEnd('test.fa', { source, ucodeExports: new Set(Object.keys(ucodes)) });
  if (!fe.program) throw new Error(fe.diagnostics.map((d) => `${d.origin?.line}:${d.origin?.col} ${d.message}`).join('\n'));
  return compileProgram(fe.program, (pos) => originOf(fe.pre, pos));
}

/** Lanes that run every batch right away in this thread (after the current turn). */
export class SyncLanes implements Executors {
  readonly inflight: Int32Array;
  readonly inline?: InlineExecutor;
  readonly booted = 1;
  /** every batch sent: lane and CF numbers, in order */
  readonly sent: { lane: number; cfs: number[] }[] = [];
  /** most batches a lane ever had in flight */
  maxInflight = 0;
  private fns: Ucode[];
  private prev: (DfValue | null)[][][];
  onResult: (r: BatchResult) => void = () => {};

  constructor(readonly lanes: number, private readonly program: CompiledProgram, ucodes: Record<string, unknown>, inline: boolean) {
    this.inflight = new Int32Array(lanes);
    this.fns = bindUcodes(ucodes, program.imports);
    this.prev = Array.from({ length: lanes }, () => []);
    if (inline) { this.inline = new InlineExecutor(program.imports); this.inline.use(ucodes); }
  }

  send(lane: number, b: Batch): void {
    this.inflight[lane]!++;
    this.maxInflight = Math.max(this.maxInflight, this.inflight[lane]!);
    this.sent.push({ lane, cfs: b.tasks.map((t) => t.cf) });
    setImmediate(() => {
      const outs: (DfValue | null)[][] = [];
      const r: BatchResult = { lane, batch: b.id, outs, start: new Float64Array(b.tasks.length), fin: new Float64Array(b.tasks.length) };
      for (let i = 0; i < b.tasks.length; i++) {
        const t = b.tasks[i]!;
        for (const f of t.fwd ?? []) t.args[f.arg] = (f.task >= 0 ? outs[f.task] : this.prev[lane]![-1 - f.task])![f.out];
        try {
          outs.push(callUcode(this.fns[t.imp]!, this.program.imports[t.imp]!, t.args, t.keys, nameOfKey));
        } catch (e) {
          r.error = { task: i, message: (e as Error).message, kind: 'ucode' };
          break;
        }
      }
      this.prev[lane] = outs;
      this.inflight[lane]!--;
      this.onResult(r);
    });
  }
}

export interface HarnessRun {
  ok: boolean;
  message?: string;
  kind?: string;
  rt: NodeRuntime;
  lanes: SyncLanes;
}

/** Run `source` with `ucodes` on one in-process node with `lanes` synchronous lanes. */
export async function runInProcess(source: string, ucodes: Record<string, unknown>, o: { lanes?: number; args?: string[]; policy?: SchedulingPolicy; inline?: boolean; observe?: (rt: NodeRuntime) => void } = {}): Promise<HarnessRun> {
  const program = compileSource(source, ucodes);
  const lanes = new SyncLanes(o.lanes ?? 1, program, ucodes, o.inline ?? false);
  const tp = new LoopbackTransport();
  const cluster = new ClusterNode(new Router(tp), () => performance.now() * 1e6);
  const rt = new NodeRuntime(program, { rank: 0, size: 1, lanes: lanes.lanes, now: () => performance.now() * 1e6 }, lanes, o.policy ?? new DefaultPolicy());
  lanes.onResult = (r) => rt.onResult(r);
  cluster.attach(rt);
  o.observe?.(rt);
  rt.start(parseMainArgs(program.main, o.args ?? []));
  const res = await cluster.done;
  return { ...res, rt, lanes };
}
