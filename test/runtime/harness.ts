// Node runtimes in this process for unit tests: a program compiled from source text, ucodes
// given as plain functions, executor lanes that run batches synchronously in this thread (real DF
// handles, real forwarding), and the real control protocol and fragment layer over an in-memory
// mesh of N nodes — so scheduling, termination, migration and stealing are tested in
// milliseconds, without workers or processes.
import { compileFrontEnd } from '../../src/lang/index.js';
import { originOf } from '../../src/lang/origin.js';
import { compileProgram, type CompiledProgram } from '../../src/program/compile.js';
import { parseMainArgs } from '../../src/program/args.js';
import { bindUcodes, callUcode, nameOfKey, type Ucode } from '../../src/runtime/exec/call.js';
import { InlineExecutor } from '../../src/runtime/exec/inline.js';
import type { Batch, BatchResult, WireAnswer } from '../../src/runtime/exec/protocol.js';
import { RequestDesk, type UcodeLayer } from '../../src/runtime/exec/desk.js';
import { RequestParticipant } from '../../src/runtime/cluster/requests.js';
import { NodeRuntime, type Executors } from '../../src/runtime/node/runtime.js';
import { Control, type ClusterResult } from '../../src/runtime/cluster/control.js';
import { FragmentLayer } from '../../src/runtime/cluster/fragments.js';
import { faultText } from '../../src/runtime/cluster/report.js';
import { MemoryMesh } from '../../src/runtime/transport/memory.js';
import { Router } from '../../src/runtime/transport/router.js';
import { DefaultPolicy } from '../../src/runtime/policy/default.js';
import type { SchedulingPolicy } from '../../src/runtime/policy/types.js';
import type { DfValue } from '../../src/ucode/value.js';
import type { NativeUcodes } from '../../src/ucode/cpp/native.js';
import type { TraceSink } from '../../src/trace/schema.js';

export type Ucodes = Record<string, unknown>;

export function compileSource(source: string, ucodes: Ucodes = {}, file = 'test.fa', defines?: Record<string, string>): CompiledProgram {
  const fe = compileFrontEnd(file, { source, defines, ucodeExports: new Set(Object.keys(ucodes)) });
  if (!fe.program) throw new Error(fe.diagnostics.map((d) => `${d.origin?.line}:${d.origin?.col} ${d.message}`).join('\n'));
  return compileProgram(fe.program, (pos) => originOf(fe.pre, pos));
}

/** Lanes that run every batch right away in this thread (after the current turn). */
export class SyncLanes implements Executors {
  readonly inflight: Int32Array;
  readonly inline?: InlineExecutor;
  /** workers up (1), or none yet (0: `unbooted`, as before the policy wants workers) */
  booted = 1;
  /** every batch sent: lane and CF numbers, in order */
  readonly sent: { lane: number; cfs: number[] }[] = [];
  /** most batches a lane ever had in flight */
  maxInflight = 0;
  private fns: Ucode[];
  private prev: (DfValue | null)[][][];
  onResult: (r: BatchResult) => void = () => {};

  constructor(readonly lanes: number, private readonly program: CompiledProgram, ucodes: Ucodes, inline: boolean, native?: NativeUcodes, private readonly lagged = false) {
    this.inflight = new Int32Array(lanes);
    this.fns = bindUcodes(ucodes, program.imports, native);
    this.prev = Array.from({ length: lanes }, () => []);
    if (inline) { this.inline = new InlineExecutor(program.imports); this.inline.use(ucodes, native); }
  }

  send(lane: number, b: Batch): void {
    this.inflight[lane]!++;
    this.maxInflight = Math.max(this.maxInflight, this.inflight[lane]!);
    this.sent.push({ lane, cfs: b.tasks.map((t) => t.cf) });
    const outs: (DfValue | null)[][] = [];
    const r: BatchResult = { lane, batch: b.id, outs, start: new Float64Array(b.tasks.length), fin: new Float64Array(b.tasks.length) };
    // task i of the batch, then the next; a request suspends the batch until its answer
    const run = (i: number): void => {
      for (; i < b.tasks.length; i++) {
        const t = b.tasks[i]!;
        const ask = this.requests && this.asks?.(this.program.imports[t.imp]!.symbol, t.args);
        if (ask && this.answered.get(lane) === undefined) {
          const id = ++this.requestSeq;
          this.waiting.set(lane, { id, resume: (a) => { this.answered.set(lane, a); run(i); } });
          this.requests!.receive(lane, { id, kind: ask.kind, payload: ask.payload, cf: t.cf });
          return;
        }
        const a = this.answered.get(lane);
        this.answered.delete(lane);
        if (a && !a.ok) { r.error = { task: i, message: `request refused: ${a.error}`, kind: 'ucode' }; break; }
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
    };
    if (this.lagged) setTimeout(() => run(0), 0); else setImmediate(() => run(0));
  }

  // ------------------------------------------------------------ requests (a worker's request port, simulated)

  /** the node's request desk, and which calls ask it before they run (`asks` gives the request) */
  private requests?: RequestDesk;
  private asks?: HarnessOptions['asks'];
  private requestSeq = 0;
  private readonly waiting = new Map<number, { id: number; resume: (a: WireAnswer) => void }>();
  private readonly answered = new Map<number, WireAnswer>();

  /** Calls for which `asks` gives a request wait for the desk's answer before they run. */
  useDesk(desk: RequestDesk, asks: HarnessOptions['asks']): void {
    this.requests = desk;
    this.asks = asks;
  }

  /** The desk's answer for lane `lane` (the pool's request port does this for workers). */
  answer(lane: number, a: WireAnswer): void {
    const w = this.waiting.get(lane);
    if (!w || w.id !== a.id) return;
    this.waiting.delete(lane);
    // the worker wakes and goes on with its batch
    setImmediate(() => w.resume(a));
  }

  blocked(lane: number): boolean {
    return this.requests?.blocked(lane) ?? false;
  }
}

/** One node of an in-process run. */
export interface HarnessNode {
  rank: number;
  router: Router;
  control: Control;
  rt: NodeRuntime;
  lanes: SyncLanes;
  /** how the run ended on this node */
  result?: ClusterResult;
  /** the node's request desk, when the run has layers */
  desk?: RequestDesk;
}

export interface HarnessOptions {
  /** node runtimes in this process, linked by one in-memory mesh (default 1) */
  nodes?: number;
  /** synchronous lanes per node (default 1) */
  lanes?: number;
  args?: string[];
  /** one policy for a node alone, or one per node */
  policy?: SchedulingPolicy | ((node: number) => SchedulingPolicy);
  /** run tiny CFs on the system thread too, as the real runtime does */
  inline?: boolean;
  /**
   * lanes run each batch on a timer, not on the next turn: the nodes' pumps run in between (and
   * release what they hold), as beside a worker thread running a batch sent long before
   */
  lagged?: boolean;
  /** the program's compiled C++ ucodes */
  native?: NativeUcodes;
  /**
   * the lanes count as not booted (as a real node's workers before the policy wants them): a node
   * of several lanes then begins in the FIFO order
   */
  unbooted?: boolean;
  /** each node's trace sink (a test's recorder: the node writes its records to it) */
  trace?: (node: number) => TraceSink;
  /** called with each node's runtime before the program starts */
  observe?: (rt: NodeRuntime, node: number) => void;
  /** called for each node before the program starts: register participants, channels */
  join?: (n: HarnessNode) => void;
  /** the mesh, once built (a test can lose a node with it) */
  mesh?: (m: MemoryMesh) => void;
  /** layers registering request handlers on each node's desk (exec/desk.ts) */
  layers?: readonly UcodeLayer[];
  /** a call of ucode `symbol` asks its node this (and waits for the answer) before it runs */
  asks?: (symbol: string, args: unknown[]) => { kind: string; payload?: unknown } | undefined;
}

export interface HarnessRun extends ClusterResult {
  /** node 0's runtime and lanes */
  rt: NodeRuntime;
  lanes: SyncLanes;
  nodes: HarnessNode[];
}

const now = (): number => performance.now() * 1e6;

/**
 * Run `program` (source text or compiled) with `ucodes` (or each node's own) on `nodes`
 * in-process nodes; the result is node 0's, as the CLI reports it, once every node has ended.
 */
export async function runInProcess(program: string | CompiledProgram, ucodes: Ucodes | ((node: number) => Ucodes), o: HarnessOptions = {}): Promise<HarnessRun> {
  const ucodesOf = typeof ucodes === 'function' ? ucodes : () => ucodes;
  const compiled = typeof program === 'string' ? compileSource(program, ucodesOf(0)) : program;
  const mainArgs = parseMainArgs(compiled.main, o.args ?? []);
  const mesh = new MemoryMesh(o.nodes ?? 1);
  o.mesh?.(mesh);
  const nodes = mesh.endpoints.map((tp): HarnessNode => {
    const lanes = new SyncLanes(o.lanes ?? 1, compiled, ucodesOf(tp.rank), o.inline ?? false, o.native, o.lagged);
    if (o.unbooted) lanes.booted = 0;
    const router = new Router(tp);
    const control = new Control(router, now);
    const fragments = new FragmentLayer(router, control, { now });
    const policy = typeof o.policy === 'function' ? o.policy(tp.rank) : o.policy ?? new DefaultPolicy();
    const rt = new NodeRuntime(compiled, { rank: tp.rank, size: tp.size, lanes: lanes.lanes, now, remote: fragments.remote, trace: o.trace?.(tp.rank) }, lanes, policy);
    lanes.onResult = (r) => rt.onResult(r);
    fragments.attach(rt);
    let desk: RequestDesk | undefined;
    if (o.layers) {
      desk = new RequestDesk((lane, a) => lanes.answer(lane, a));
      for (const l of o.layers) l.register?.(desk);
      desk.host = rt.deskHost();
      desk.onWait = () => control.wake();
      control.register(new RequestParticipant(desk));
      lanes.useDesk(desk, o.asks);
    }
    return { rank: tp.rank, router, control, rt, lanes, ...(desk ? { desk } : {}) };
  });
  for (const n of nodes) {
    o.join?.(n);
    o.observe?.(n.rt, n.rank);
  }
  for (const n of nodes) {
    if (n.rank > 0) { n.rt.schedule(); continue; }
    try { n.rt.start(mainArgs); } catch (e) { n.rt.fail(e); }
  }
  await Promise.all(nodes.map(async (n) => {
    n.result = await n.control.done;
    // a fault raised as the run ended still fails it (as runNode reports it)
    const late = n.rt.failure;
    if (n.result.ok && late) n.result = { ok: false, kind: 'fault', message: faultText(n.rt, late) };
  }));
  for (const tp of mesh.endpoints) await tp.close();
  return { ...nodes[0]!.result!, rt: nodes[0]!.rt, lanes: nodes[0]!.lanes, nodes };
}
