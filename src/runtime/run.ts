// One assembly for every node of a run, one node or many: worker lanes and the inline
// executor, the node runtime with its policy, the control protocol and the fragment layer's
// channels over a transport (a mesh of one for a one-node run), tracing. Returns how the run
// ended on this node.
import { cpuSet, parseCpuList, type HostCpus } from '../core/cpus.js';
import type { CompiledProgram } from '../program/compile.js';
import { parseMainArgs } from '../program/args.js';
import type { UcodeBundle } from '../ucode/bundle.js';
import { ThreadTraceWriter } from '../trace/writer.js';
import { cpuClockExact, runOrigin, setRunOrigin, threadCpuNs, wallNs } from '../trace/clock.js';
import type { RunStatus } from '../trace/schema.js';
import type { MachineInfo } from '../trace/manifest.js';
import { STATUS } from '../trace/schema.js';
import { InlineExecutor } from './exec/inline.js';
import { RequestDesk, type UcodeLayer } from './exec/desk.js';
import { bootingAtOnce, WorkerPool } from './exec/pool.js';
import { collections, keepFreedMemory, recycling, startHeapLog } from './exec/shm.js';
import { lowerBackgroundNow } from './exec/priority.js';
import { NodeRuntime, RunFault } from './node/runtime.js';
import { answering, foundSmall, LaneExecutors, rehearse } from './node/rehearsal.js';
import type { SchedulingPolicy } from './policy/types.js';
import { DefaultPolicy } from './policy/default.js';
import { Control, type ClusterResult } from './cluster/control.js';
import { FragmentLayer } from './cluster/fragments.js';
import type { ClusterLayer } from './cluster/layer.js';
import { RequestParticipant } from './cluster/requests.js';
import { faultText } from './cluster/report.js';
import { MemoryMesh } from './transport/memory.js';
import { Router } from './transport/router.js';
import type { Transport } from './transport/types.js';
import { MAX_THREADS } from './limits.js';
import { finishRunTrace, startRunTrace } from './tracing.js';
import { newRunOrigin } from '../trace/clock.js';
import { formatDuration } from '../core/duration.js';
import { version } from '../core/version.js';
import { collectYoung } from '../core/collector.js';
import { tuned } from './tuning.js';
import { recycleStats } from '../ucode/recycle.js';

export interface RunOptions {
  program: CompiledProgram;
  /** the bundled ucode module (its file, or what loadProgram returned) */
  bundle?: string | UcodeBundle;
  /** main's command-line arguments */
  args: readonly string[];
  /** worker threads (lanes) per node (default: all cores) */
  threads?: number;
  /**
   * CPUs this node may count on (default: the machine's; nodes on one host share it): workers
   * boot up to one fewer at a time, so that the system thread keeps a core meanwhile
   */
  cores?: number;
  /**
   * record this node's trace files into this directory (runNode: it must exist, see
   * runtime/tracing.ts; runSingleNode creates it and writes the manifest)
   */
  traceDir?: string;
  /** the run's clock origin (decimal ns string) shared by all nodes */
  traceOrigin?: string;
  policy?: SchedulingPolicy;
  /**
   * start main only once this node's worker threads have booted and loaded the ucodes, so the
   * program's span measures the program alone (as Task Bench times a graph after the runtime's
   * initialisation); by default the program starts at once and workers join as they boot
   */
  warmStart?: boolean;
  /** the mesh of a multi-node run (absent: one node) */
  transport?: Transport;
  /**
   * a fragment running longer than this (ns) fails the run; fragments then run on worker
   * threads only (the system thread could not be stopped in the middle of a ucode)
   */
  cfTimeoutNs?: number;
  /** layers whose ucodes ask the node through the request port (their handlers, their worker modules) */
  layers?: readonly (UcodeLayer & Partial<ClusterLayer>)[];
  /**
   * Stops the run when aborted (a signal, the launcher gone): every node ends as `interrupted`
   * with its trace flushed; the abort reason's `message` (or the reason itself) says why.
   */
  interrupt?: AbortSignal;
}

export interface RunResult {
  ok: boolean;
  status: RunStatus;
  /** error text (fault, hang or lost node) when !ok */
  message?: string;
  kind?: 'fault' | 'hang' | 'lost' | 'interrupted';
  /** rank 0 of a traced multi-node run: clock offsets of the nodes */
  clockOffsets?: number[];
  /** rank 0 of a traced multi-node run: the machines the nodes ran on */
  machines?: MachineInfo[];
  /** CFs this node ran on its system thread and sent to workers (in how many batches), and its time in ucodes */
  stats: { inline: number; sent: number; batches: number; inlineNs: number };
  /** this node's program time: from its start (after loading) to the end of the run, ns */
  wallNs: number;
  /** CPU time of this node's system thread over the same span, ns (less sensitive to a busy machine than wallNs) */
  systemCpuNs: number;
  /** time spent before the program's start waiting for the workers to boot (warmStart), ns */
  bootWaitNs: number;
  /** the young generation's collection just before the program's start, ns (-1: none, no collector or LUNA_START_GC=0) */
  startGcNs: number;
  /** worker threads this node started (a program of tiny CFs on one node starts none) */
  workersStarted: number;
  /**
   * worker threads that did not end when told to (stuck in a C++ ucode): the process must end
   * without waiting for them (core/exit.ts exitHard)
   */
  stuckThreads: number;
}

/** Worker threads per node by default: this process's CPUs shared by the `ranksHere` nodes on it. */
export function defaultThreads(ranksHere = 1): number {
  return Math.max(1, Math.floor(cpuSet().count / Math.max(1, ranksHere)));
}

/**
 * Nodes grouped by the host they ran on. A machine's CPUs are the union of its nodes' CPU sets:
 * ranks a launcher bound to one core each still ran on as many cores as there are ranks.
 */
export function machinesOf(hosts: readonly HostCpus[]): MachineInfo[] {
  const by = new Map<string, { m: MachineInfo; ids: Set<number> | null }>();
  hosts.forEach((h, node) => {
    const ids = h.list ? parseCpuList(h.list) : null;
    let e = by.get(h.host);
    if (!e) { e = { m: { host: h.host, cores: 0, nodes: [], cpus: h.machine, nodeCpus: [] }, ids: new Set() }; by.set(h.host, e); }
    e.m.nodes.push(node);
    e.m.nodeCpus!.push(h.count);
    e.m.cpus = Math.max(e.m.cpus!, h.machine);
    if (e.ids && ids) for (const i of ids) e.ids.add(i); else e.ids = null;
    // without lists, the widest node's count is all that is known
    e.m.cores = e.ids ? e.ids.size : Math.max(e.m.cores, h.count);
  });
  return [...by.values()].map((e) => e.m);
}

const STATUS_OF: Record<NonNullable<ClusterResult['kind']>, RunStatus> = { fault: 'failed', hang: 'hung', lost: 'lost', interrupted: 'interrupted' };
const statusOf = (r: ClusterResult): RunStatus => (r.ok ? 'completed' : STATUS_OF[r.kind ?? 'fault']);

/** Time between spills of the trace buffers during a run: what a SIGKILL can cost. */
const SPILL_MS = 1000;
/** How long an interrupted node waits for a worker to finish its ucode before it salvages that worker's trace. */
const INTERRUPT_GRACE_MS = 500;

/** The text of an AbortSignal's reason. */
function reasonText(reason: unknown): string {
  if (reason && typeof reason === 'object' && typeof (reason as { message?: unknown }).message === 'string') return (reason as { message: string }).message;
  return reason === undefined ? 'interrupted' : String(reason);
}

/** Options a run cannot start with (threads out of range, an unusable trace directory). */
export class RunOptionsError extends Error {}

/** Run this node of a run (rank 0 starts main). */
export async function runNode(opts: RunOptions): Promise<RunResult> {
  const t = opts.threads;
  if (t !== undefined && !(Number.isInteger(t) && t >= 1 && t <= MAX_THREADS)) throw new RunOptionsError(`threads must be an integer from 1 to ${MAX_THREADS}, got ${t}`);
  const tp = opts.transport ?? new MemoryMesh(1).endpoints[0]!;
  // large DFs reuse freed memory rather than fresh pages (LUNA_KEEP_FREED_MB)
  keepFreedMemory();
  startHeapLog();
  const lanes = opts.threads ?? defaultThreads();
  const cores = opts.cores ?? cpuSet().count;
  const bundle = typeof opts.bundle === 'string' ? opts.bundle : opts.bundle?.file;
  const native = typeof opts.bundle === 'string' ? undefined : opts.bundle?.native;
  const mainArgs = parseMainArgs(opts.program.main, opts.args);
  let tr: ThreadTraceWriter | undefined;
  let workerTrace: { dir: string; node: number; origin: string } | undefined;
  if (opts.traceDir) {
    if (opts.traceOrigin) setRunOrigin(opts.traceOrigin);
    tr = ThreadTraceWriter.open(opts.traceDir, tp.rank, 0, { cpuExact: cpuClockExact });
    workerTrace = { dir: opts.traceDir, node: tp.rank, origin: String(runOrigin()) };
  }
  let rt!: NodeRuntime;
  const died: [number, number, string][] = [];
  let rehearsed: { cfs: number; runs: number; finished: number; ns: number } | undefined;
  const policy = opts.policy ?? new DefaultPolicy();
  const layers = opts.layers ?? [];
  const desk = new RequestDesk((lane, a) => pool.answer(lane, a));
  const asking: { asked: boolean[] } = { asked: [] };
  for (const l of layers) l.register?.(desk);
  const inline = new InlineExecutor(opts.program.imports, tr, desk, tp.rank);
  // the system thread as the last lane (the policy's say, where it can be: fragments may run on
  // it, and none may wait for the thread that would answer it)
  const threadsView = { cpus: cores, lanes, nodes: tp.size };
  // --warm-start: the policy's rehearsal budget (node/rehearsal.ts on this thread, exec/worker.ts on the workers)
  const budget = opts.warmStart && opts.program.imports.length > 0 ? policy.rehearsal?.(threadsView) : undefined;
  const laneRehearsal = budget?.laneCfs && !opts.cfTimeoutNs ? { cfs: budget.laneCfs, ms: budget.laneMs ?? 0, alone: budget.laneAlone === true } : undefined;
  const systemLane = !opts.cfTimeoutNs && !opts.program.imports.some((m) => m.waits) && lanes >= 2 && policy.systemLane?.(threadsView) === true;
  const pool = new WorkerPool({
    lanes, node: tp.rank, system: systemLane ? { inline, trace: tr } : undefined, bundle, native, imports: opts.program.imports, trace: workerTrace,
    modules: layers.flatMap((l) => l.workerModules ?? []),
    onRequest: (lane, m) => desk.receive(lane, m),
    // waiting threads spin while a core is free for them (the policy says how long)
    waiting: policy.waiting(threadsView),
    // workers feed each other the values of dependent steps (LUNA_FEED=0: through this thread only)
    feed: process.env.LUNA_FEED !== '0',
    rehearse: laneRehearsal,
    onResult: (r) => rt.onResult(r),
    // a worker's batch runs low: its next one is planned now (a pump turn)
    onLow: () => rt.runningLow(),
    // (a worker that dies while the program is rehearsed, before the run's runtime is made, is reported to it once made)
    onDeath: (lane, cf, cause) => { if (rt === undefined) died.push([lane, cf, cause]); else rt.workerDied(lane, cf, cause); },
  });
  // workers boot (tens of milliseconds each) when the policy first wants them, as many at once
  // as leave this thread a core (one a core where a CF is marked heavy: those never run here);
  // a program without ucodes never starts one
  const atOnce = policy.bootAtOnce?.(cores, lanes, opts.program.hasHeavy) ?? bootingAtOnce(cores);
  const warm = opts.program.imports.length > 0 ? (): void => pool.warmUp(atOnce) : undefined;
  let loadFault: RunFault | undefined;
  try {
    await inline.load(bundle, native);
  } catch (e) {
    loadFault = new RunFault(`cannot load the ucode module: ${e instanceof Error ? e.message : String(e)}`);
  }
  const bootWait = wallNs();
  const booting = opts.warmStart && opts.program.imports.length > 0 && !loadFault ? pool.allBooted() : undefined;
  // --warm-start: while the workers boot, the program is rehearsed on this thread against
  // simulated lanes (node/rehearsal.ts): one node, no layer, no ucode that asks the node. Before
  // the run's runtime is made: objects made before the rehearsal kept the hidden classes it then
  // generalised (a field's first double, its first object where there was undefined), and every
  // function optimised in it deoptimised on them in the span ('wrong map', the runtime's and its
  // node state's)
  if (booting && budget && budget.cfs > 0 && tp.size === 1 && layers.length === 0 && !opts.cfTimeoutNs && !opts.program.imports.some((m) => m.waits)) {
    const t0 = wallNs();
    rehearsed = { ...await rehearse(opts.program, mainArgs, lanes, () => new DefaultPolicy(), budget, tr !== undefined, pool.feeds ? pool.workerLanes : 0), ns: wallNs() - t0 };
    // a small program: the workers' rehearsal (up to its count, or LANE_REHEARSE_MS) would be
    // most of its wall, and its short run gains nothing from it (examples/hello --warm-start,
    // docs/runtime.md "What --warm-start costs a short run"); they report ready once booted
    if (foundSmall(rehearsed, budget)) pool.endRehearsal();
  }
  const router = new Router(tp);
  const control = new Control(router, wallNs);
  const fragments = new FragmentLayer(router, control, { now: wallNs, trace: tr });
  // each import's block parameters: the blocks a layer may reserve as the CF is sent (desk.reserve)
  const blockParams = opts.program.imports.map((d) => { const ps = d.params.flatMap((p, i) => (p === 'block' ? [i] : [])); return ps.length > 0 ? ps : null; });
  rt = new NodeRuntime(opts.program, {
    rank: tp.rank, size: tp.size, lanes, trace: tr, now: wallNs, remote: fragments.remote,
  }, new LaneExecutors({ lanes, inflight: pool.inflight, send: (l, b) => { desk.reserve(b.tasks, blockParams); pool.send(l, b); }, boardRoom: (a) => pool.boardRoom(a), post: (b) => { desk.reserve(b.tasks, blockParams); pool.post(b); }, boardOpen: () => pool.boardOpen(), sendPlanned: pool.feeds ? (l, m, imps) => pool.sendPlanned(l, m, imps) : undefined, inline: opts.cfTimeoutNs ? undefined : inline, feed: pool.feeds ? (f, q) => pool.feed(f, q) : undefined, warm, rest: () => pool.rest(), work: () => pool.work(), lowerLanes: (nice) => pool.lowerLanes(nice), blocked: (l) => desk.blocked(l), answers: answering(asking), ask: (t, done) => desk.ask(opts.program.imports[t.imp]!.symbol, t, done), settle: (lane, outs, done) => desk.settle(lane, outs, done) }, pool), policy);
  fragments.attach(rt);
  desk.host = rt.deskHost();
  control.register(new RequestParticipant(desk));
  desk.onWait = () => control.wake();
  for (const l of layers) l.join?.({ router, control, host: { now: wallNs, trace: tr }, desk });
  // imports that only ask the desk (registered by the layers that joined): asked by this thread
  asking.asked = opts.cfTimeoutNs ? [] : opts.program.imports.map((m) => desk.answers(m.symbol));
  if (loadFault) rt.fail(loadFault);
  for (const [lane, cf, cause] of died) rt.workerDied(lane, cf, cause);
  // traces of nodes on other hosts are put on node 0's clock with offsets measured now
  const clockOffsets = tr && tp.rank === 0 && tp.size > 1 ? await control.measureClocks() : undefined;
  if (booting && !rt.failure) await booting;
  const bootWaitNs = wallNs() - bootWait;
  // The young generation collected before the first fragment: what loading left there (the
  // program, the front end's and the code cache's objects, the ucode module) is copied out now,
  // not by the first scavenges of the run, which a short program pays inside its span while the
  // optimising compiler's jobs hold the collector's helper threads (docs/benchmarks.md, "The
  // young generation collected before the first fragment"). Only a program that can make many
  // fragments (a loop, or a sub it calls): one of a few ucode calls would never scavenge, and the
  // collection costs 2–15 ms of start-up on this machine.
  const grows = opts.program.sites.some((x) => x.kind === 'for' || x.kind === 'while' || x.kind === 'subcall');
  const gc0 = wallNs();
  const startGcNs = grows && !rt.failure && tuned('LUNA_START_GC') !== 0 && collectYoung() ? wallNs() - gc0 : -1;
  // V8's background threads lowered now where the program begins on this thread (no worker
  // started): its fragments' code is optimised by those threads, which on a 2-CPU node took the
  // thread's own CPU (an empty-kernel stencil of 2 000 steps on one thread waited, runnable, a
  // median 36–69 ms of a 86–115 ms span for them; lowered, 5–25 ms; docs/benchmarks.md, "V8's
  // helper threads lowered for a program run on the system thread"). Otherwise the pool lowers
  // them once its lanes have run fragments (exec/priority.ts). Only a program that can make many
  // fragments, as for the collection above, and only where `luna run` noted the threads.
  const backgroundLowered = grows && tp.size === 1 && pool.started === 0 && tuned('LUNA_V8_NICE_START') !== 0 ? lowerBackgroundNow() : 0;
  if (!rt.failure) control.warmEnd(() => rt.onIdle());
  // (before the span: the first listener an AbortSignal takes costs ~0.2 ms of cold EventTarget
  // code, which delayed every fragment of a run)
  const interrupt = opts.interrupt;
  const onInterrupt = (): void => control.interrupt(reasonText(interrupt!.reason));
  if (interrupt?.aborted) onInterrupt(); else interrupt?.addEventListener('abort', onInterrupt, { once: true });
  const started = wallNs();
  const cpuStarted = threadCpuNs();
  tr?.programStart(started);
  if (!rt.failure && !interrupt?.aborted) {
    if (tp.rank === 0) {
      try { rt.start(mainArgs); } catch (e) { rt.fail(e); }
    } else rt.schedule();
  }
  // the backstop for errors no ucode call could catch; removed with the run
  const onException = (e: unknown): void => rt.uncaught(e, 'exception');
  const onRejection = (e: unknown): void => rt.uncaught(e, 'rejection');
  process.on('uncaughtException', onException).on('unhandledRejection', onRejection);
  const watchdog = opts.cfTimeoutNs ? watchLanes(pool, opts.cfTimeoutNs) : undefined;
  // a run killed outright (SIGKILL, a crash) keeps what was recorded up to the last spill
  const spill = tr ? setInterval(() => { tr!.flush(); pool.spillTraces(); }, SPILL_MS).unref() : undefined;
  let res = await control.done;
  // The run is over: its span and this thread's CPU time end here, not after the tear-down
  // below. Removing the listeners and the turn that waits for a late rejection run code for the
  // first time in the process: 0.3–0.5 ms of a 40–60 ms span (stencil_1d 1 × 2 at 2^11 under
  // load 9–10, timestamps: the end settled → the listeners removed 0.16–0.20 ms, the turn 0.04–0.06,
  // the process's listeners removed 0.10–0.13). A late fault still fails the run.
  const ended = wallNs();
  const systemCpuNs = threadCpuNs() - cpuStarted;
  interrupt?.removeEventListener('abort', onInterrupt);
  if (watchdog) clearInterval(watchdog);
  if (spill) clearInterval(spill);
  // a rejection left by the last fragments is reported after the microtasks of this turn
  await new Promise<void>((r) => setImmediate(r));
  process.off('uncaughtException', onException).off('unhandledRejection', onRejection);
  const late = rt.failure;
  if (res.ok && late) res = { ok: false, kind: 'fault', message: faultText(rt, late) };
  if (!res.ok) pool.abort();
  const status = statusOf(res);
  const workersStarted = pool.started;
  if (tr) rt.traceCounters(ended);
  // a run cut short leaves its DFs unread for that reason alone
  const unspent = status === 'completed' ? rt.unspentDfs(ended) : { dfs: 0, bytes: 0 };
  tr?.programFinish(ended, STATUS.indexOf(status));
  await pool.stop(res.kind === 'interrupted' ? INTERRUPT_GRACE_MS : undefined);
  tr?.close();
  await tp.close();
  // terminated workers end within milliseconds unless they are in native code
  if (pool.stuck > 0) await new Promise((r) => setTimeout(r, 100));
  const machines = clockOffsets ? machinesOf(control.hosts) : undefined;
  return { ...res, status, clockOffsets, ...(machines ? { machines } : {}), stats: { ...rt.stats, ...recycledStats(), ...(unspent.dfs > 0 ? { unspentDfs: unspent.dfs, unspentMB: Math.round(unspent.bytes / 1e4) / 100 } : {}), ...(backgroundLowered > 0 ? { backgroundLowered } : {}), ...(pool.lanesLowered > 0 ? { lanesLowered: pool.lanesLowered } : {}), ...(rt.tiering.relaxedAt >= 0 ? { tieringRelaxedAt: rt.tiering.relaxedAt } : {}), ...(rehearsed ? { rehearsedCfs: rehearsed.cfs, rehearsals: rehearsed.runs, rehearsalMs: Math.round(rehearsed.ns / 1e4) / 100 } : {}), ...(pool.rehearsedCfs > 0 || pool.rehearsalsCut > 0 ? { laneRehearsedCfs: pool.rehearsedCfs, lanesRehearsedTogether: pool.rehearsedTogether, laneRehearsalsCut: pool.rehearsalsCut, ...(pool.rehearsalEnded ? { laneRehearsalEndedSmall: 1 } : {}) } : {}), ...(pool.system ? { systemLaneBatches: pool.system.stats.batches, systemLaneSleeps: pool.system.stats.sleeps, systemLaneSuspends: pool.system.stats.suspends, systemLaneSuspendedMs: Math.round(pool.system.stats.suspendedNs / 1e3) / 1e3 } : {}), ...(tp.size > 1 ? messageStats(control, tp) : {}) }, wallNs: ended - started, systemCpuNs, bootWaitNs, startGcNs, workersStarted, stuckThreads: pool.stuck };
}

export interface SingleNodeOptions extends Omit<RunOptions, 'transport'> {
  /** the program's file as the trace manifest records it (default: the file of its `sub main`) */
  programFile?: string;
}

/**
 * A one-node run in this process (the library's entry point). With `traceDir` it does what
 * `luna run --trace` does: creates the directory, writes the draft manifest before the run and
 * the final one (files, how the run ended) after it, so the trace reads like the CLI's.
 */
export async function runSingleNode(opts: SingleNodeOptions): Promise<RunResult> {
  const { programFile, ...run } = opts;
  if (!run.traceDir) return runNode(run);
  const threads = run.threads ?? defaultThreads();
  const policy = run.policy ?? new DefaultPolicy();
  let manifest;
  try {
    manifest = startRunTrace(run.traceDir, run.program, {
      program: programFile ?? run.program.mainSite.origin.file, args: run.args, nodes: 1, threads, policy: policy.name, version: version(),
    });
  } catch (e) {
    throw new RunOptionsError(`cannot open trace directory ${run.traceDir}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const res = await runNode({ ...run, threads, policy, traceOrigin: run.traceOrigin ?? String(newRunOrigin()) });
  finishRunTrace(run.traceDir, manifest, { status: res.status, message: res.message, machines: res.machines });
  return res;
}

/**
 * `--cf-timeout`: every lane's running fragment is sampled a few times per timeout; a worker
 * seen running the same fragment for longer is terminated, and its death fails the run naming
 * that fragment. A fragment is caught between `timeoutNs` and 1.25 × `timeoutNs` (+ 10 ms).
 */
function watchLanes(pool: WorkerPool, timeoutNs: number): NodeJS.Timeout {
  const seen = new Int32Array(pool.lanes).fill(-1);
  const since = new Float64Array(pool.lanes);
  const period = Math.max(10, Math.min(1000, timeoutNs / 4e6));
  const t = setInterval(() => {
    const now = performance.now();
    for (let i = 0; i < pool.lanes; i++) {
      const cf = pool.running(i);
      if (cf !== seen[i]) { seen[i] = cf; since[i] = now; continue; }
      if (cf >= 0 && (now - since[i]!) * 1e6 >= timeoutNs) {
        pool.terminate(i, `was stopped after ${formatDuration(timeoutNs)} (--cf-timeout)`);
        seen[i] = -1;
      }
    }
  }, period);
  t.unref();
  return t;
}

/**
 * What crossing nodes cost this node: termination waves (rank 0 starts them; each is a message
 * to every node and its answer) and, over TCP, the frames sent and the socket writes they took.
 */
function messageStats(control: Control, tp: object): { waves: number; framesSent?: number; socketWrites?: number; ringFrames?: number; doorbells?: number } {
  const t = (tp as { stats?: () => { framesSent: number; socketWrites: number; ringFrames?: number; doorbells?: number } }).stats?.();
  return { waves: control.waves, ...(t ? { framesSent: t.framesSent, socketWrites: t.socketWrites, ringFrames: t.ringFrames, doorbells: t.doorbells } : {}) };
}

/**
 * --timing: the raw buffers the system thread saw recycled (put back into a pool: recycled;
 * posted again after a pool gave them out: reused), those made fresh (on workers, as their
 * results tell; on this thread: inline CFs, the system lane's batches, values received) and the
 * collections it forced.
 */
function recycledStats(): Record<string, number> {
  return { rawRecycled: recycling.recycled, rawRecycledMB: Math.round(recycling.recycledBytes / 2 ** 20), rawReused: recycling.reused, rawReceived: recycling.received, rawReceivedReused: recycling.receivedReused, rawReceivedRecycled: recycling.receivedRecycled, rawSent: recycling.sent, rawSentRecycled: recycling.sentRecycled, rawPinned: recycling.pinned, rawHomed: recycling.homed, rawHomedAhead: recycling.homedAhead, rawHomeDropped: recycling.homeDropped, rawFresh: recycling.fresh, rawFreshSystem: recycleStats.made, rawLimboMs: Math.round(recycling.limboMs), rawLimboMaxMs: Math.round(recycling.limboMaxMs), forcedFullGcs: collections.full };
}
