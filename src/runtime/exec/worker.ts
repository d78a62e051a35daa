// Worker thread: runs atomic CFs (ucodes) only. It pulls batches from its port synchronously,
// spins briefly when its port is empty and a core is free for it (a batch that follows within
// microseconds costs no wake-up), then parks on an Atomics flag, so the system thread wakes only sleepers and a busy
// worker never pays an event-loop round trip per batch. The worker never returns to its event
// loop while the run lasts: timers and promises a ucode creates could never run, so creating
// any is reported as a contract violation naming the CF.
import { createHook } from 'node:async_hooks';
import { MessageChannel, receiveMessageOnPort, workerData, parentPort, type MessagePort } from 'node:worker_threads';
import { writeSync } from 'node:fs';
import { Console } from 'node:console';
import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';
import { T_INT, T_RAW, T_REAL, type DfValue } from '../../ucode/value.js';
import { DF } from '../../ucode/df.js';
import { reclaimingSink, ThreadTraceWriter } from '../../trace/writer.js';
import { setRunOrigin, wallNs, cpuClockExact, CpuClockGate, threadCpuNs } from '../../trace/clock.js';
import { CpuShare, PARKED, SLEEPING, abortFlag, wakeLane, feedsFlag, flagsLength, processedFlag, backOnCpu, leaveCpu, coreFree, laneNiceFlag, lanesOf, lowerLaneOnce, onCpuFlag, resultsFlag, runningFlag, starved, type FedWaits, type Forward, type LaneGaps, type RehearsalWiring, type TaskError, type WireAnswer, type WirePlan, type WireWindow, type WorkerInit, type EarlyData, ARG_IN, ARG_INT, ARG_OUT } from './protocol.js';
import { LanePlan, rehearsePlanSteps } from './plan-steps.js';
import { ReadyBoard, type WireBoard } from './board.js';
import { adoptRaw } from '../../ucode/recycle.js';
import { Exchange } from './exchange.js';
import { pinCpus, pinSelf, threadCpus } from './affinity.js';
import { osThreadId } from '../../core/thread-id.js';
import { FeedSlots, feedSlotsBuffer } from './slots.js';
import { BatchKeys, batchId, batchKeys, decodeBatch, encodeBatch, encodeResult, type DecodedTask, type ResultNotes, type WireBatch } from './codec.js';
import { bindUcodes, callUcode, directOf, type Ucode } from './call.js';
import { collectDue, countHeld } from './shm.js';
import { ContractError } from './contract.js';
import { displayDf } from '../../core/dfkey.js';
import { installContext } from '../../ucode/context.js';
import { ThreadContext } from './context.js';
import { RequestPort } from './request.js';
import type { Task } from './protocol.js';
import { hideCollector } from '../../core/collector.js';

// Ucode stack traces point into ucodes.ts (the bundle carries an inline source map).
process.setSourceMapsEnabled(true);
hideCollector();

// What the pool tells this worker: in its workerData, or, for a worker booted early (before the
// program was loaded, see pool.ts bootEarly), in its first message.
let init!: WorkerInit;
let flags!: Int32Array;
let me = 0;
let LANES = 1, ABORT = 0, RUNNING = 0, ONCPU = 0, RESULTS = 0, CPUS = 1, SPIN_NS = 0, FED_SPIN_NS = 0, FED_SPIN_PRODUCER_NS = 0, FED_STARVED_NS = 0, RUN_LOW_NS = 0;
/** tracing: this worker's own file (thread me+1); CF start/finish with wall and thread-CPU clocks */
let tw: ThreadTraceWriter | undefined;
/** tracing: which codes' CFs read the CPU clock */
let gate: CpuClockGate | undefined;
let now: () => number = () => performance.now() * 1e6;
/** values fed across lanes (absent when the pool does not feed) */
let exchange: Exchange | undefined;
/** the node's ready board, which this lane takes posted batches from */
let board!: ReadyBoard;
/** the batch running was taken from the board (its outputs continue no chain: see run) */
let fromBoard = false;
/** the ucode context of this thread, with its request port to the system thread */
let ctx!: ThreadContext;

function setUp(i: WorkerInit): void {
  init = i;
  flags = new Int32Array(i.flags);
  me = i.index;
  const lanes = lanesOf(flags);
  LANES = lanes;
  board = new ReadyBoard(lanes, i.board);
  ABORT = abortFlag(lanes);
  RUNNING = runningFlag(lanes, me);
  ONCPU = onCpuFlag(lanes);
  RESULTS = resultsFlag(lanes);
  CPUS = i.waiting.cpus;
  SPIN_NS = i.waiting.idleSpinNs;
  FED_SPIN_NS = i.waiting.fedSpinNs;
  FED_SPIN_PRODUCER_NS = i.waiting.fedSpinProducerNs ?? 0;
  FED_STARVED_NS = i.waiting.fedStarvedNs ?? 0;
  RUN_LOW_NS = i.waiting.runLowNs ?? 0;
  Atomics.add(flags, ONCPU, 1); // this thread runs
  pinTo = i.cpu ?? -1;
  pinDue = pinTo >= 0;
  if (i.trace) {
    setRunOrigin(i.trace.origin);
    tw = ThreadTraceWriter.open(i.trace.dir, i.trace.node, me + 1, { cpuExact: cpuClockExact, prepared: true, shared: i.trace.buffer });
    gate = new CpuClockGate(i.imports.length);
    now = wallNs;
  }
  if (i.ctl) exchange = new Exchange(flags, me, lanes, i.ctl, i.peers!, i.slots && new FeedSlots(i.slots, lanes, me));
  const ex = exchange;
  // a ucode (and its request port) records while this worker's buffer is lent (see runTask)
  const sink = tw && reclaimingSink(tw);
  const port = new RequestPort({
    flags, lane: me, lanes, trace: sink, now, cpuNs: cpuClockExact ? threadCpuNs : undefined,
    channel: { post: (m) => i.requests.postMessage(m), receive: () => receiveMessageOnPort(i.requests)?.message as WireAnswer | undefined },
    // (the exchange of the moment: a rehearsal makes this worker's anew, see rehearse)
    serve: ex ? () => exchange!.serve() : undefined, pending: ex ? () => exchange!.pending() : undefined,
    sleep: (work) => sleep(work, SLEEPING, false),
  });
  ctx = new ThreadContext(i.node, me + 1, sink, port, now);
  installContext(ctx);
}

// Ucode output goes straight to the file descriptors: ordered, unbuffered, never lost on abort.
const pause = new Int32Array(new SharedArrayBuffer(4));
/** Write all of `buf`; a pipe in non-blocking mode may refuse (EAGAIN) while its reader lags. */
function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) {
    try { off += writeSync(fd, buf, off); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
/**
 * A synchronous stand-in for process.stdout/stderr. Not a stream.Writable: a Writable defers
 * its callbacks with process.nextTick, which would count as asynchronous work of the ucode.
 */
class SyncOut extends EventEmitter {
  readonly isTTY = false;
  readonly writable = true;
  constructor(readonly fd: number) { super(); }
  write(chunk: string | Uint8Array, enc?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void): boolean {
    writeAll(this.fd, typeof chunk === 'string' ? Buffer.from(chunk, typeof enc === 'string' ? enc : 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    // null, not undefined: Console's write-error handler reads `_writableState` unless the error
    // is exactly null, so undefined made every console.log throw and swallow a TypeError (the
    // first one costs ~15 ms: Node probes the stack depth to tell it from a stack overflow)
    (typeof enc === 'function' ? enc : cb)?.(null);
    return true;
  }
  end(): void {}
}
const out = new SyncOut(1), err = new SyncOut(2);
globalThis.console = new Console({ stdout: out as unknown as NodeJS.WritableStream, stderr: err as unknown as NodeJS.WritableStream });
Object.defineProperty(process, 'stdout', { value: out, configurable: true });
Object.defineProperty(process, 'stderr', { value: err, configurable: true });

// Asynchronous work started by a ucode: recorded while a ucode runs, reported after it returns.
let inUcode = false;
let asyncMade: string | null = null;
createHook({
  init(_id, type) { if (inUcode && asyncMade === null) asyncMade = type; },
}).enable();

/** where results go: the system thread (a rehearsal's own port while it lasts) */
let results: MessagePort = parentPort!;

/** Outputs of the batch this worker ran last (a chain may continue from them). */
let prevOuts: (DfValue | null)[][] = [];

async function main(): Promise<void> {
  const data = workerData as WorkerInit | EarlyData;
  // A worker booted early imports the program's ucode module while it waits (the same URL's
  // import below then finds it loaded). A failure is the import's below, reported as before.
  if ('early' in data && data.ucodes !== undefined) import(pathToFileURL(data.ucodes).href).catch(() => undefined);
  setUp('early' in data ? await new Promise<WorkerInit>((res) => parentPort!.once('message', (m: { init: WorkerInit }) => res(m.init))) : data);
  // layers first: they register the kinds of blocks the ucodes hold
  for (const m of init.modules ?? []) await import(pathToFileURL(m).href);
  const mod = init.bundle ? ((await import(pathToFileURL(init.bundle).href)) as Record<string, unknown>) : undefined;
  const fns = bindUcodes(mod, init.imports, init.native);
  const r = init.rehearse;
  const rehearsed = r ? (r.pair ? rehearseTogether(fns, r, r.pair) : rehearse(fns, r)) : undefined;
  // (its thread id: the system thread may lower this lane's priority, pool.ts lowerLanes). A
  // node that found its fragments coarse already says how far: the lane lowers itself before it
  // takes anything (lowerSelf)
  tid = osThreadId();
  lowerSelf();
  const ready = { ready: me, tid };
  parentPort!.postMessage(rehearsed && (rehearsed.cfs > 0 || rehearsed.cut) ? { ...ready, rehearsed: rehearsed.cfs, together: r?.pair !== undefined, cut: rehearsed.cut } : ready);
  loop(fns);
}

/**
 * When a rehearsal gives up (performance.now ms; Infinity in the run): its waits for fed values
 * and its sleeps end there, whatever the other lanes do (see giveUp).
 */
let giveUpAt = Infinity;

/**
 * A rehearsal gives up: its abort flag ends every lane's waits (the run's own ends a failed run
 * the same way). True.
 */
function giveUp(): boolean {
  Atomics.store(flags, ABORT, 1);
  for (let l = 0; l < LANES; l++) wakeLane(flags, l);
  return true;
}

/**
 * Sleep on this lane's flag unless `work()`, asked once the flag says so, finds something to do.
 * The node's count of threads on a CPU leaves with this one; a waker counts it back when it
 * wakes it (protocol.ts wakeLane), else this thread does. In a rehearsal not past `giveUpAt`.
 */
function sleep(work: () => boolean, state = SLEEPING, lend = true): boolean {
  leaveCpu(flags, me, ONCPU, state);
  const slept = !work();
  if (slept) {
    // the system thread may spill what this worker recorded while it sleeps (inside a ucode,
    // waiting for a request's answer, the trace is lent already)
    if (lend) tw?.lend();
    Atomics.wait(flags, me, state, giveUpAt === Infinity ? Infinity : giveUpAt - performance.now());
    if (lend) tw?.reclaim();
  }
  backOnCpu(flags, me, ONCPU, state);
  return slept;
}

/** Spin until `until` (ms, performance.now) while the node's threads leave a core free. */
const spinning = (until: number): boolean => performance.now() < until && coreFree(flags, ONCPU, CPUS);

function loop(fns: Ucode[]): void {
  const port = init.port;
  type Msg = ReturnType<typeof receiveMessageOnPort>;
  let m: Msg;
  // a batch may have arrived before we slept; feed requests for batches this worker ran are
  // still answered while it has nothing to do. Values fed to this lane are not looked at until
  // its batch comes: a value left in the inbox (a ring's head taken without draining the rest,
  // or fed ahead of the batch) kept this wait from sleeping, and a dry lane ran at full CPU
  // without the spin gate, on the cores the system thread needed to build its next batch
  // (docs/benchmarks.md, "Both lanes idle at METG sizes")
  const work = (): boolean => (m = receiveMessageOnPort(port)) !== undefined || exchange?.requested() === true;
  for (;;) {
    m ??= receiveMessageOnPort(port);
    // the lane has nothing to run until the system thread sends its next batch
    const waitFrom = m === undefined && lastFin >= 0 ? now() : -1;
    if (m === undefined && SPIN_NS > 0) {
      const until = performance.now() + SPIN_NS / 1e6;
      do { exchange?.serve(); m = receiveMessageOnPort(port); } while (m === undefined && spinning(until));
    }
    while (m === undefined) {
      exchange?.serve();
      if (sleep(work)) idleSleeps++;
      if (m === undefined) m = receiveMessageOnPort(port);
    }
    if (waitFrom >= 0) { gaps.batchWaits++; gaps.batchWaitNs += now() - waitFrom; }
    if (!run(m.message as PortMessage, fns)) return;
    // after the result (the system thread books it meanwhile), and with the batch dropped: its
    // inputs die young, and a minor collection frees them. A next batch already here (one
    // posted on the ready board) runs first: the collection waits for an idle moment (shm.ts)
    m = receiveMessageOnPort(port);
    collectDue(m !== undefined);
  }
}

/** How this batch's waits for fed values ended (see FedWaits). */
let waits: FedWaits | undefined;
/** times this worker slept on its empty port since its last result (BatchResult.idleSleeps) */
let idleSleeps = 0;
/** this lane's time between CFs since its last result, by cause (BatchResult.gaps) */
/**
 * No gaps yet. The class of these objects is first made here with doubles in its ns fields, at
 * load: made with small integers, the first double stored generalised a field and deprecated the
 * class, and every function optimised on it deoptimised ('wrong map'; the rehearsal never fills
 * `batchWaitNs`, so the run did it in the span). See SHAPES in ucode/value.ts.
 */
const noGaps = (): LaneGaps => ({ gapNs: 0, batchWaits: 0, batchWaitNs: 0, fedWaitNs: 0 });
let gaps: LaneGaps = { gapNs: 0.5, batchWaits: 0, batchWaitNs: 0.5, fedWaitNs: 0.5 };
gaps = noGaps();
/** when this lane's last CF ended (the clock of `now`; -1: none yet, its wait for a first batch is no gap) */
let lastFin = -1;

/**
 * `fed`'s "not starved" mark: a double, like the times it alternates with. As the small integer
 * -1, `starvedFrom < 0` was compiled for small integers only (the rehearsal's producers are never
 * starved twice in a row), and the span's first starved producer deoptimised `fed` on both
 * workers ('not a Smi'), recompiled then by TurboFan on a helper thread — 60–480 ms of its CPU
 * (traced --trace-opt, under load) on the cores the lanes run on.
 */
const NOT_STARVED = -0.5;

/**
 * The CPU this lane pins itself to at its first wait for a fed value (-1: none): lanes that feed
 * each other are what pinning is for (a lane woken by its partner's value must not land on the
 * partner's CPU), and lanes that never wait for each other (a block matmul's) keep the freedom to
 * move off a CPU another process holds (affinity.ts).
 */
let pinTo = -1;
/**
 * Whether the lane has still to pin itself, at its next wait for a fed value. A rehearsal sets it
 * at every round and pins for real, to the run's CPU: its waits then run the branch with feedback,
 * as the run's first wait does. Taken only once, at the rehearsal's first wait, the branch ran
 * before `fed` had a feedback vector, and the run's first wait deoptimised `fed` on both workers in
 * 3 runs of 4 ('insufficient type feedback', --trace-deopt-verbose), which TurboFan then compiled
 * again on a helper thread, on the lanes' cores, in the span (docs/benchmarks.md, "V8's helper
 * threads in the span").
 */
let pinDue = false;
/** The lane's first wait for a fed value: pin it to its CPU (where it cannot, it runs unpinned). */
function pinOnce(): void {
  pinDue = false;
  if (pinTo >= 0) pinSelf(pinTo);
}

/**
 * Whether the batch that has run `ranNs` (its first start to its last task's end, the clock of
 * `now`: no clock read of its own on the way to the next task) with `ti` of its `n` tasks run is running low: it
 * has run RUN_LOW_NS, and its tasks left take less at the pace so far, or one is left (a pace
 * slowed by waits, under load, otherwise never asked). Then the system thread is
 * told (it plans this lane's next batch while the rest runs, if none is queued) and true returned.
 * Told only at the batch's end (its result), a fed stencil's lanes ran dry at the end of each fed
 * batch while the system thread unrolled, examined and sent the next: 13–48 % of the span at
 * 2^14–2^16 iterations with C++ kernels (docs/benchmarks.md, "Where a lane's gaps go").
 */
function runningLow(ranNs: number, ti: number, n: number): boolean {
  if (ranNs < RUN_LOW_NS || (n - ti > 1 && (ranNs / ti) * (n - ti) > RUN_LOW_NS)) return false;
  parentPort!.postMessage({ low: me });
  return true;
}

/** Wait for the value fed for `f` (undefined: the run was aborted meanwhile). */
function fed(f: Forward): DfValue | null | undefined {
  const ex = exchange!;
  const w = (waits ??= { none: 0, spun: 0, slept: 0, woke: 0 });
  const first = ex.take(f.lane!, f.batch!, f.task, f.out);
  if (first !== undefined) { w.none++; return first; }
  if (pinDue) pinOnce();
  // waiting runs no CF: a watchdog must not blame the one that ran last
  Atomics.store(flags, RUNNING, -1);
  // the policy's fed spin (policy/default.ts FED_SPIN_NS), while a core is free for it; and
  // on while the producing lane runs a CF, up to FED_SPIN_PRODUCER_NS: the value is being made,
  // and a sleep would put a wake-up between producer and consumer
  const t0 = performance.now();
  const until = t0 + FED_SPIN_NS / 1e6;
  let producing = t0 + FED_SPIN_PRODUCER_NS / 1e6;
  const PRODUCER = runningFlag(LANES, f.lane!);
  let slept = false;
  // since when the producing lane has been starved (protocol.ts starved; NOT_STARVED: it is not)
  const STARVED_MS = FED_STARVED_NS / 1e6;
  let starvedFrom = NOT_STARVED;
  // the CPU this spinner gets (see CpuShare)
  const share = new CpuShare();
  for (;;) {
    const v = ex.take(f.lane!, f.batch!, f.task, f.out);
    if (v !== undefined) { if (slept) w.slept++; else w.spun++; gaps.fedWaitNs += (performance.now() - t0) * 1e6; return v; }
    ex.serve(); // the producer of what we wait for may wait for us
    const now = performance.now();
    // (a rehearsal whose partner never answers gives up: see giveUpAt)
    if (flags[ABORT] !== 0 || (now >= giveUpAt && giveUp())) { gaps.fedWaitNs += (now - t0) * 1e6; return undefined; }
    // The producer holds a value it has not looked at: it waits for a core, and this spin may
    // hold the only one it could get (other processes, the system thread or V8's threads have
    // the rest). Spinning on would put the whole spin, and then a switch, between every two
    // steps of a pair of lanes that feed each other; leaving the core lets it run at once.
    let leave = false;
    if (STARVED_MS > 0 && starved(flags, LANES, f.lane!)) {
      if (starvedFrom < 0) starvedFrom = now;
      else leave = now - starvedFrom >= STARVED_MS;
    } else starvedFrom = NOT_STARVED;
    if (!leave) {
      if (now < until && coreFree(flags, ONCPU, CPUS)) continue;
      if (now < producing && Atomics.load(flags, PRODUCER) !== -1 && coreFree(flags, ONCPU, CPUS)) {
        // The gate counts this node's threads only: a spinner that shares its core with other
        // processes would slow the producer it waits for
        if (share.ok(now)) continue;
        producing = 0; // this wait spins no more beyond FED_SPIN_NS
      }
    }
    // within the spin but no core free (often: this worker's own result has just woken the
    // system thread), parked: the system thread wakes it when it rests and a core frees
    // (parked, the system thread's rest would wake it to spin again, on the starved lane's core)
    recordDone();
    if (sleep(() => ex.pending() || flags[ABORT] !== 0, !leave && (now < until || now < producing) ? PARKED : SLEEPING)) {
      slept = true;
      starvedFrom = NOT_STARVED;
      share.reset(); // a window across the sleep would count the sleep as CPU denied
    }
  }
}

/**
 * Traced: the finish of this lane's last CF, recorded as the next one starts (`run`), or before
 * the lane sleeps waiting for a value (a lane that never wakes leaves its last CF finished in
 * the trace), or at its batch's end.
 */
let done = false, doneImp = 0, doneCf = 0, doneCpu = false, doneT0 = 0.5, doneC1 = 0.5, doneT1 = 0.5;
function recordDone(): void {
  if (!done) return;
  done = false;
  gate!.record(tw!, doneT0, doneImp, doneCf, me + 1, doneCpu, doneC1, doneT1);
}

/** What comes on a worker's port: a batch, one posted on the ready board, a loop's plan, a window of it, freed buffers for its pool (ahead of a board entry), or the end. */
type PortMessage = WireBatch | WireBoard<WireBatch> | { loopPlan: WirePlan } | WireWindow | { recycled: SharedArrayBuffer[] } | { stop: true };

/** The planned loops this lane runs steps of, by plan number (plan-steps.ts). */
const plans = new Map<number, LanePlan>();

/** This lane's thread id (osThreadId), and whether it has seen its lowering due (lowerSelf). */
let tid: number | undefined;
let selfLowered = false;

/**
 * Once the node lowers its lanes (laneNiceFlag), this lane is lowered before it runs anything
 * more: the system thread lowers the lanes whose ids it has, but a lane may take a CF before its
 * id reached it (a batch sent, or a board entry, while its ready message waits). Whichever of the
 * two claims the lane first lowers it (lowerLaneOnce).
 */
function lowerSelf(): void {
  if (selfLowered) return;
  const nice = Atomics.load(flags, laneNiceFlag(LANES));
  if (nice <= 0) return;
  selfLowered = true;
  if (tid !== undefined) lowerLaneOnce(flags, me, tid, nice);
}

function run(msg: PortMessage, fns: Ucode[]): boolean {
  if (Array.isArray(msg)) return runBatch(msg, fns);
  if ('stop' in msg) { Atomics.sub(flags, ONCPU, 1); tw?.close(); rehearsalTw?.close(); init.port.close(); return false; }
  if ('loopPlan' in msg) { plans.set(msg.loopPlan.plan, new LanePlan(msg.loopPlan, me)); return true; }
  if ('window' in msg) return runWindow(msg, fns);
  // a posted batch another lane took first is skipped; one taken here runs as if sent here, but
  // a chain sent to this lane continues from the batch sent before it, not from this one
  if ('board' in msg) {
    if (!board.claim(msg.board, me)) return true;
    fromBoard = true;
    return runBatch(msg.batch, fns);
  }
  if ('recycled' in msg) adoptRaw(msg.recycled);
  return true;
}

/** A batch of tasks, sent here or taken from the board. */
function runBatch(b: WireBatch, fns: Ucode[]): boolean {
  lowerSelf();
  const tasks = decodeBatch(b);
  const names = new BatchKeys(batchKeys(b));
  return runTasks(batchId(b), tasks, (k: string | number): string => displayDf(names.get(k as number)), fns);
}

/** A window of a planned loop: its tasks built here from the plan, its outputs others read promised to them. */
function runWindow(w: WireWindow, fns: Ucode[]): boolean {
  lowerSelf();
  if (w.recycled !== undefined) adoptRaw(w.recycled);
  const lp = plans.get(w.window);
  const ex = exchange;
  if (lp === undefined || ex === undefined) throw new Error(`internal: window of planned loop ${w.window} without its plan or an exchange`);
  const id = w.id;
  const tasks = windowTasks(lp, w, ex);
  if (lp.isLast(w)) plans.delete(w.window);
  return runTasks(id, tasks, (k: string | number): string => displayDf(lp.key(w, k as number)), fns);
}

/** The exchange and batch a window's promises go to (one function for every window, the rehearsal's too: see keepDrained in exchange.ts). */
let promiseEx: Exchange | null = null;
let promiseId = 0;
function promised(task: number, out: number, lane: number): void {
  promiseEx!.promise(promiseId, task, out, lane);
}

/** Window `w`'s tasks on this lane, its promises made to exchange `ex`. */
function windowTasks(lp: LanePlan, w: WireWindow, ex: Exchange): DecodedTask[] {
  promiseEx = ex;
  promiseId = w.id;
  try { return lp.build(w, promised); } finally { promiseEx = null; }
}

/**
 * --warm-start: build windows of stand-in plans on this lane (plan-steps.ts rehearsePlanSteps),
 * through a structured clone as the real plans and windows come, so that V8 optimises
 * LanePlan.build in this isolate before the span. `ex`: the rehearsal's exchange, which the
 * promises go to (it is dropped after). The rehearsal builds them halfway through its rounds, so
 * that build's optimisation, a job of 30–80 ms on a helper thread, is compiled beside the second
 * half: built after the rounds, it ended in the span (3 runs of 4), on the lanes' cores; built
 * before them, build was optimised on the exchange's first hidden class and deoptimised on the
 * run's ('wrong map', 4 runs of 4, and the boot took 0.5 s longer); halfway, compiled before the
 * span and never compiled again nor deoptimised in 7 runs of 7 (--trace-opt --trace-deopt, stencil_1d 1 × 2, C++,
 * 2^16 iterations).
 */
function rehearseWindows(ex: Exchange, until: number): void {
  rehearsePlanSteps((lp, w) => windowTasks(lp, w, ex), until, structuredClone);
}

function runTasks(id: number, tasks: DecodedTask[], nameOf: (k: string | number) => string, fns: Ucode[]): boolean {
  const outs: (DfValue | null)[][] = new Array(tasks.length);
  running = tasks;
  exchange?.begin(id, outs);
  const start = new Float64Array(tasks.length), fin = new Float64Array(tasks.length);
  let error: TaskError | undefined;
  let ran = 0;
  // running low is told once a batch, and only by a batch that has run RUN_LOW_NS already
  let low = RUN_LOW_NS <= 0 || tasks.length < 2;
  const began = low ? 0 : now();
  for (let ti = 0; ti < tasks.length; ti++) {
    if (flags[ABORT] !== 0) break; // the run failed: drop the rest
    if (!low && ti > 0) low = runningLow(lastFin - began, ti, tasks.length);
    const t = tasks[ti]!;
    const def = init.imports[t.imp]!;
    const args = t.args;
    const fwd = t.fwd;
    if (fwd) {
      // (by index, not for-of: leaving a for-of early runs its iterator's closing, code that only
      // an aborted wait reaches; a rehearsal cut by its time reached it first, and deoptimised
      // `run` on both workers for the whole run: 'insufficient type feedback', --trace-deopt)
      let aborted = false;
      for (let k = 0; k < fwd.length; k++) {
        const f = fwd[k]!;
        if (f.lane === undefined) { args[f.arg] = (f.task >= 0 ? outs[f.task] : prevOuts[-1 - f.task])![f.out]; continue; }
        const v = fed(f);
        if (v === undefined) { aborted = true; break; }
        args[f.arg] = v;
      }
      if (aborted) break;
    }
    // whom this task's outputs go to, looked up while the lane is warm (see Exchange.prepare)
    exchange?.prepare(id, ti);
    Atomics.store(flags, RUNNING, t.cf);
    const t0 = now();
    let cpu = false;
    if (tw) {
      recordDone();
      if (fwd) tw.cfReady(t0, t.cf);
      cpu = gate!.start(tw, t0, t.imp, t.cf, me + 1);
    }
    start[ti] = t0;
    if (lastFin >= 0) gaps.gapNs += t0 - lastFin;
    try {
      inUcode = true;
      tw?.lend(); // a ucode that never returns must not take this worker's trace with it
      outs[ti] = callUcode(fns[t.imp]!, def, args, t.keys, nameOf, ctx, t.cf);
      inUcode = false;
      tw?.reclaim();
      if (asyncMade !== null) throw new ContractError(`ucode ${def.symbol} started asynchronous work (${asyncMade}): ucodes are synchronous, they must not start timers or promises`);
    } catch (e) {
      inUcode = false;
      if (tw) { tw.reclaim(); gate!.finish(tw, t0, t.imp, t.cf, me + 1, cpu, now); tw.flush(); }
      const ex = e instanceof Error ? e : new Error(String(e));
      error = { task: ti, message: ex.message, stack: ex.stack, kind: e instanceof ContractError ? 'contract' : 'ucode' };
      Atomics.store(flags, ABORT, 1); // the run fails: other workers stop after their current CF
      break;
    }
    // the outputs go to the lanes waiting for them before this lane records anything: on this
    // host a thread's code and data come back cold after a kernel of a millisecond (~8–10 µs a
    // small step, bench/raw-cold.ts), and each step put between a producer's end and its
    // consumer's start was paid on every hand-off (docs/benchmarks.md, "The hand-off between
    // lanes, split on this machine")
    const c1 = cpu ? threadCpuNs() : 0;
    const t1 = now();
    exchange?.ran(id, ti);
    lastFin = fin[ti] = t1;
    ran = ti + 1;
    // traced, the CF's finish is recorded as the next one starts, after its clock is read: the
    // records are the trace's own work, and between this CF's end and the next one's start (a
    // hand-off's span) they would add a cold step of their own to what the trace measures
    if (tw) { done = true; doneImp = t.imp; doneCf = t.cf; doneCpu = cpu; doneT0 = t0; doneC1 = c1; doneT1 = t1; }
  }
  recordDone();
  Atomics.store(flags, RUNNING, -1);
  outs.length = ran;
  if (!fromBoard) prevOuts = outs; // the next batch may continue a chain from these
  fromBoard = false;
  if (exchange && exchange.woke > 0) { (waits ??= { none: 0, spun: 0, slept: 0, woke: 0 }).woke = exchange.woke; exchange.woke = 0; }
  notes.error = error;
  notes.fedWaits = waits;
  notes.idleSleeps = idleSleeps > 0 ? idleSleeps : undefined;
  notes.gaps = gaps.gapNs > 0 ? gaps : undefined;
  const result = encodeResult(me, id, outs, start, fin, notes);
  notes.error = undefined;
  waits = undefined;
  idleSleeps = 0;
  if (gaps.gapNs > 0) gaps = noGaps();
  results.postMessage(result);
  Atomics.add(flags, RESULTS, 1); // a system thread spinning for a result sees it (pool.ts rest)
  running = undefined;
  return true;
}

/** what the next result reports beside its outputs (one object, every field always there: one hidden class) */
const notes: ResultNotes = { error: undefined, fedWaits: undefined, idleSleeps: undefined, gaps: undefined };

/** The tasks of the batch running (their inputs), for the raw views a collection meanwhile keeps. */
let running: readonly { args: unknown[] }[] | undefined;
/** the raw views already counted as held through a collection (each counts once) */
const counted = new WeakSet<Uint8Array>();

/** The bytes of raw views this worker holds now and has not counted before (shm.ts countHeld). */
function heldRaw(): number {
  let n = 0;
  const count = (v: unknown): void => {
    const d = v as DfValue | null | undefined;
    if (d === null || d === undefined || typeof d !== 'object' || d.t !== T_RAW || counted.has(d.v)) return;
    counted.add(d.v);
    n += d.v.byteLength;
  };
  for (const o of prevOuts) if (o !== undefined) for (const v of o) count(v);
  exchange?.forEachHeld(count);
  if (running !== undefined) for (const t of running) for (const a of t.args) count(a);
  return n;
}
countHeld(heldRaw);

/**
 * `--warm-start`: run about `cfs` fragments (at most `ms`) through this worker's own per-CF path
 * before it reports ready — decode, values fed across lanes, the calling convention, result
 * encode and post — so that V8 optimises it in this isolate while the workers boot, not inside
 * the span (each worker's isolate compiles its own copy). Nothing leaves the worker: the flags,
 * feed slots, ports and the peer lane that feeds it are private to the rehearsal; the ucodes are
 * stand-ins with their calling convention (no ucode runs: a ucode may print, abort or keep
 * state); nothing reaches the run's trace (see rehearsalTrace); the worker's own state (its
 * last outputs, gaps, counts) is reset after. Returns the fragments rehearsed, and whether its time (or the system thread's `stop`) ended it before its count. The
 * wire batches go through a structured clone, as the real ones do, and carry every
 * kind of argument (plain numbers and strings, inline values, outputs, inputs from the same batch
 * and fed from the peer), so the code optimised here has seen the real run's shapes.
 */
function rehearse(fns: Ucode[], budget: { cfs: number; ms: number; stop?: SharedArrayBuffer }): Rehearsed {
  // raised by the system thread when it found the program small (pool.ts endRehearsal)
  const stop = budget.stop && new Int32Array(budget.stop);
  const stopped = (): boolean => stop !== undefined && Atomics.load(stop, 0) !== 0;
  const imps: number[] = [];
  init.imports.forEach((d, k) => { if (!d.waits && !d.params.includes('block')) imps.push(k); });
  if (imps.length === 0 || budget.cfs <= 0) return { cfs: 0, cut: false };
  const saved = { flags, me, LANES, ABORT, RUNNING, ONCPU, RESULTS, exchange, tw, gate };
  const L = 2, P = 1;
  const pflags = new Int32Array(new SharedArrayBuffer(4 * flagsLength(L)));
  const buf = feedSlotsBuffer(L);
  const pair = new MessageChannel(), ctl0 = new MessageChannel(), ctl1 = new MessageChannel(), out = new MessageChannel();
  // the rehearsal's ports arrive as the real ones do, through a structured clone with their
  // transfer: objects made another way have other hidden classes, and code optimised on them
  // is deoptimised by the real ones ('wrong map')
  const via = new MessageChannel();
  via.port1.postMessage({ ctl: [ctl0.port2, ctl1.port2], peers: [[null, pair.port1], [pair.port2, null]] }, [ctl0.port2, ctl1.port2, pair.port1, pair.port2]);
  const got = receiveMessageOnPort(via.port2)!.message as { ctl: MessagePort[]; peers: (MessagePort | null)[][] };
  via.port1.close();
  const mine = new Exchange(pflags, 0, L, got.ctl[0]!, got.peers[0]!, new FeedSlots(buf, L, 0));
  const peer = new Exchange(pflags, P, L, got.ctl[1]!, got.peers[1]!, new FeedSlots(buf, L, P));
  flags = pflags; me = 0; LANES = L; ABORT = abortFlag(L); RUNNING = runningFlag(L, 0); ONCPU = onCpuFlag(L); RESULTS = resultsFlag(L);
  exchange = mine; ({ tw, gate } = rehearsalTrace());
  const variants = fns.map((f, k) => standIns(f, init.imports[k]!.params));
  const stand = variants.map((v) => v[0]!);
  const until = performance.now() + budget.ms;
  // (its peer's values are made before they are waited for: a wait that does not end is a fault)
  giveUpAt = until;
  let cfs = 0, id = 0, cf = 0;
  // the peer feeds only from tasks that make outputs
  const makers = imps.filter((k) => init.imports[k]!.params.includes('name'));
  /** A batch of `n` tasks; value inputs fed from the peer's batch `from` (its tasks `made`), or not (-1). */
  const batch = (b: number, n: number, from: number, made: number, feed: number[]): Task[] => {
    const tasks: Task[] = [];
    for (let ti = 0; ti < n; ti++) {
      const pool = from >= 0 || makers.length === 0 ? imps : makers;
      const k = pool[(b + ti) % pool.length]!;
      let fedFrom = 0;
      // inputs mostly fed from the peer, else made in this batch, or sent with it
      tasks.push(rehearsalTask(cf++, k, (i, how, fwd) => {
        if (how < 3 && from >= 0 && made > 0) { const pt = fedFrom++ % made; fwd.push({ arg: i, lane: P, batch: from, task: pt, out: 0 }); feed.push(from, pt, 0, 0); return true; }
        if (how === 3 && ti > 0 && init.imports[tasks[ti - 1]!.imp]!.params.includes('name')) { fwd.push({ arg: i, task: ti - 1, out: 0 }); return true; }
        return false;
      }));
    }
    return tasks;
  };
  /** Run `tasks` as batch `bid` on lane `lane` (0: this worker's, P: the peer's), as the real run would: cloned on the way. */
  const runAs = (lane: number, bid: number, tasks: Task[]): boolean => {
    me = lane; RUNNING = runningFlag(L, lane); exchange = lane === 0 ? mine : peer;
    const ok = run(structuredClone(encodeBatch(bid, tasks)), stand);
    me = 0; RUNNING = runningFlag(L, 0); exchange = mine;
    return ok;
  };
  // the windows are built halfway (see rehearseWindows)
  let built = false;
  try {
    for (let b = 0; cfs < budget.cfs && performance.now() < until && !stopped(); b++) {
      for (let k = 0; k < stand.length; k++) stand[k] = variants[k]![b % 5]!;
      // results go to the rehearsal's own port, and one in four to the system thread, which drops
      // them (a worker's results before it is ready): the site posting them sees both ports
      results = (b & 3) === 3 ? parentPort! : out.port1;
      // the peer's batch makes the values this lane's batch is fed; the feed requests reach the
      // peer before or after its tasks ran, as in a real run
      // (the first one long: the encoders' scratch grows here, not in the run)
      const pid = ++id, n = b === 0 ? 100 : 1 + (b % 3);
      const ptasks = batch(b, n, -1, 0, []);
      const made = makers.length > 0 ? n : 0;
      const feed: number[] = [];
      const tasks = batch(b + 1, 1 + ((b + 1) % 3), pid, made, feed);
      const early = (b & 1) === 0;
      // (as Int32Arrays, as the runtime sends them: node/feed.ts requests; see rehearseTogether)
      if (early && feed.length > 0) { ctl1.port1.postMessage(Int32Array.from(feed)); Atomics.add(pflags, feedsFlag(L, P), 1); }
      if (!runAs(P, pid, ptasks)) break;
      if (!early && feed.length > 0) { ctl1.port1.postMessage(Int32Array.from(feed)); Atomics.add(pflags, feedsFlag(L, P), 1); }
      peer.serve();
      // what a result reports after sleeps and wakes, which the rehearsal's lanes never need: its
      // code paths get their feedback too (code optimised without it deoptimises at the first)
      if ((b & 7) === 5) { idleSleeps = 1; mine.woke = 1; gaps.batchWaits = 1; }
      if (!runAs(0, ++id, tasks)) break;
      Atomics.store(pflags, processedFlag(L, 0), id);
      Atomics.store(pflags, processedFlag(L, P), pid);
      while (receiveMessageOnPort(out.port2) !== undefined);
      cfs += n + tasks.length;
      if (!built && cfs >= budget.cfs / 2) { built = true; rehearseWindows(mine, until); }
    }
    if (!built && !stopped()) rehearseWindows(mine, until);
  } finally {
    giveUpAt = Infinity;
    endRehearsalTrace();
    ({ flags, me, LANES, ABORT, RUNNING, ONCPU, RESULTS, exchange, tw, gate } = saved);
    // this worker's exchange made anew (it was not used yet): an object made before the
    // rehearsal's may carry a hidden class V8 has since replaced, and the code optimised in the
    // rehearsal would deoptimise on it at the first batch ('wrong map')
    if (exchange) exchange = new Exchange(flags, me, LANES, init.ctl!, init.peers!, init.slots && new FeedSlots(init.slots, LANES, me));
    results = parentPort!;
    prevOuts = []; lastFin = -1; idleSleeps = 0; waits = undefined;
    gaps = noGaps();
    for (const p of [got.peers[0]![1]!, got.peers[1]![0]!, got.ctl[0]!, got.ctl[1]!, ctl0.port1, ctl1.port1, out.port1, out.port2, via.port2]) p.close();
  }
  return { cfs, cut: cfs < budget.cfs };
}

/**
 * The rehearsal's trace. Untraced runs rehearse untraced. A traced run's rehearsal records too,
 * into a writer of its own (to /dev/null, over a buffer of its own when the run's writer has
 * one) with a gate of its own, so `run`'s traced branches get their feedback with the real
 * classes. Rehearsed untraced, TurboFan compiled `run` with no feedback for the trace's calls. The
 * span's first traced task then deoptimised it on both workers ('insufficient type feedback for
 * call', --trace-deopt). V8 did not optimise it again within a 1 000-step run, so a traced run
 * measured its hand-offs through `run` in unoptimised code (docs/benchmarks.md, "The lane's
 * per-task path as one function").
 */
function rehearsalTrace(): { tw?: ThreadTraceWriter; gate?: CpuClockGate } {
  const t = init.trace;
  if (t === undefined) return { tw: undefined, gate: undefined };
  rehearsalTw ??= ThreadTraceWriter.discarding(t.node, me + 1, t.buffer && new SharedArrayBuffer(t.buffer.byteLength));
  return { tw: rehearsalTw, gate: new CpuClockGate(init.imports.length) };
}

/**
 * The rehearsal's writer, closed when the worker stops, not when the rehearsal ends: closing
 * writes its `closed` field, which the code optimised in the rehearsal took for a constant, and
 * both workers' `run`, `lend` and `reclaim` were deoptimised at the span's start ('code
 * dependencies', --trace-deopt).
 */
let rehearsalTw: ThreadTraceWriter | undefined;

/** The rehearsal's trace ends: nothing of it is left to record (its last finish is dropped). */
function endRehearsalTrace(): void {
  done = false;
}

/**
 * The paired rehearsal's rounds r with r % 16 equal to this run the waits of a run whose CFs take
 * time: the stand-ins hold their lane 20 µs (0.12 ms in one such round in four, past the CPU
 * share's first window, protocol.ts SPIN_WINDOW_MS), the spin gate has one CPU more, one lane
 * in turn waits without FED_SPIN_NS (0), and, where RUN_LOW_NS is on, batches run low at once.
 * So a wait for a producer that runs a CF spins on while it runs (its CPU share checked, `CpuShare`), the lane without the spin sleeps when its producer
 * does not run, and the other lane, spinning, sees it starved (woken, not yet looking) and
 * leaves. Otherwise the rehearsal never reached those branches: its gate counts the system thread
 * (rehearsing too) beside both lanes, 3 threads on 2 CPUs, so its waits never spun while the
 * producer ran, and its stand-ins take no time. `fed` was compiled without them, and the span's
 * first long wait deoptimised it on both workers ('insufficient type feedback', --trace-deopt):
 * TurboFan compiled it again on a helper thread, on the lanes' cores.
 */
const WAITS_ROUND = 2;
/**
 * How long a stand-in holds its lane (ms; WAITS_ROUND): a CF's work, so the lane it feeds
 * waits for a producer that runs a CF. Stand-ins otherwise take no time.
 */
let holdMs = 0;
const hold = (): void => {
  if (holdMs === 0) return;
  const until = performance.now() + holdMs;
  while (performance.now() < until) { /* a CF's work */ }
};

/** What a worker's rehearsal did: the fragments it ran, and whether its time or a fault ended it before its count. */
interface Rehearsed { cfs: number; cut: boolean }

/**
 * `--warm-start` with workers that feed each other: the workers rehearse their per-CF path
 * together, over an exchange wiring of the rehearsal's own (pool.ts rehearsalWiring), so each
 * one's waits for values fed by another thread — spinning, parking, being woken — run and are
 * optimised before the span, which a worker alone cannot rehearse. Lane i runs rounds of
 * batches; task k of round r may be fed by task k-1 of lane i+1's round r (and task 0 by that
 * lane's previous round), as the steps of a stencil are: every input comes from a task earlier in
 * (round, task) order, so no lane waits on a cycle. Batches of the same round have the same
 * tasks on every lane, so a consumer knows which of its producer's tasks make outputs.
 *
 * Which tasks are fed depends on the program's imports (a task that takes no value, or whose
 * producer makes none, waits for nobody), so the lanes need not keep in step: one may run many
 * rounds ahead of the lane it feeds. It keeps its outputs until that lane has sent its requests
 * for them (the rounds each lane has asked up to are shared), and after its last round answers
 * requests until every lane has run its own. Ended by its count (every lane runs the same
 * rounds) or by its time (`ms`): the first lane out of time raises the rehearsal's abort flag,
 * and every lane's waits end there, its own sleeps included, so a partner that never answers
 * (stalled, or booting late) costs at most `ms`. A worker that dies meanwhile makes the pool
 * raise the same flag, and so does the system thread when its own rehearsal found the program
 * small (pool.ts endRehearsal). Otherwise as `rehearse`: stand-ins, nothing in the run's trace, the
 * worker's state reset after. Returns the fragments this worker rehearsed, and whether it was cut.
 */
function rehearseTogether(fns: Ucode[], budget: { cfs: number; ms: number }, pair: RehearsalWiring): Rehearsed {
  const imps: number[] = [];
  init.imports.forEach((d, k) => { if (!d.waits && !d.params.includes('block')) imps.push(k); });
  const saved = { flags, me, LANES, ABORT, RUNNING, ONCPU, RESULTS, exchange, tw, gate };
  const rflags = new Int32Array(pair.flags);
  const L = lanesOf(rflags), P = (me + 1) % L;
  const lane = me;
  // [lanes that ran their last round, then per lane the last round whose requests it sent]
  const progress = new Int32Array(pair.progress);
  const DONE = 0, ASKED = 1 + ((lane + L - 1) % L); // (of the lane this one feeds)
  const out = new MessageChannel();
  const mine = new Exchange(rflags, lane, L, pair.ctl, pair.peers, pair.slots && new FeedSlots(pair.slots, L, lane));
  flags = rflags; LANES = L; ABORT = abortFlag(L); RUNNING = runningFlag(L, lane); ONCPU = onCpuFlag(L); RESULTS = resultsFlag(L);
  exchange = mine; ({ tw, gate } = rehearsalTrace());
  Atomics.add(rflags, ONCPU, 1);
  const variants = fns.map((f, k) => standIns(f, init.imports[k]!.params));
  const stand = variants.map((v) => v[0]!);
  const started = performance.now(), until = started + budget.ms;
  giveUpAt = until;
  const size = (r: number): number => (r === 0 ? 100 : 2 + (r % 3)); // the first one long: the encoders' scratch grows here
  // the same rounds on every lane (every lane reads the same budget), counted as they run: a
  // budget no rehearsal reaches (only its time ends it) costs no count up front
  const imp = (r: number, k: number): number => imps[(r + k) % imps.length]!;
  const makes = (r: number, k: number): boolean => init.imports[imp(r, k)]!.params.includes('name');
  const id = (l: number, r: number): number => r * L + l + 1;
  let cfs = 0, cf = 0, cut = false, finished = false;
  // the windows are built halfway (see rehearseWindows)
  let built = false;
  // (the run's bounds, which the rounds of WAITS_ROUND change for their length)
  const spin = FED_SPIN_NS, cpus = CPUS, due = pinDue, low = RUN_LOW_NS;
  // the CPUs to give the thread back after (see pinDue): a run that does not pin keeps them all
  const allowed = pinTo >= 0 ? threadCpus() : null;
  try {
    if (imps.length === 0 || budget.cfs <= 0) return { cfs: 0, cut: false };
    for (let r = 0; ; r++) {
      if (cfs >= budget.cfs) { finished = true; break; }
      if (rflags[ABORT] !== 0 || (performance.now() >= until && giveUp())) break;
      for (let k = 0; k < stand.length; k++) stand[k] = variants[k]![r % 5]!;
      pinDue = true;
      results = (r & 3) === 3 ? parentPort! : out.port1;
      const n = size(r), tasks: Task[] = [], feed: number[] = [];
      for (let ti = 0; ti < n; ti++) {
        // what lane P made that this task may be fed: its task ti-1 of this round, or the last of its previous one
        const src = ti > 0 ? (makes(r, ti - 1) ? { b: id(P, r), t: ti - 1 } : undefined) : r > 0 && makes(r - 1, size(r - 1) - 1) ? { b: id(P, r - 1), t: size(r - 1) - 1 } : undefined;
        const c = cf++;
        // inputs mostly fed from lane P, else made in this batch, or sent with it
        tasks.push(rehearsalTask(c, imp(r, ti), (i, how, fwd) => {
          if (how < 3 && src) {
            fwd.push({ arg: i, lane: P, batch: src.b, task: src.t, out: 0 });
            feed.push(src.b, src.t, 0, lane);
            // now and then a value lane P keeps for itself (a run asks that too; never taken here)
            if ((c & 15) === 7) feed.push(src.b, src.t, 0, P);
            return true;
          }
          if (how === 3 && ti > 0 && makes(r, ti - 1)) { fwd.push({ arg: i, task: ti - 1, out: 0 }); return true; }
          return false;
        }));
      }
      // as the system thread does: the requests go before the batch that reads their values
      if (feed.length > 0) {
        // an Int32Array, as the runtime sends them (node/feed.ts requests): sent as plain arrays,
        // the requests the run sends deoptimised the worker's Exchange.serve in the span, on
        // both workers, every run ('wrong map', --trace-deopt)
        pair.feedTo.postMessage(Int32Array.from(feed));
        Atomics.add(rflags, feedsFlag(L, P), 1);
        wakeLane(rflags, P);
      }
      // (after the count above: a lane that reads this round reads its requests too)
      Atomics.store(progress, 1 + lane, r);
      // batches no request can name any more: the lane this one feeds asks for rounds a and a-1
      // at its round a, and has sent its requests up to round `asked`; the exchange forgets
      // them as it does in a run (it answers what arrived first)
      const asked = Atomics.load(progress, ASKED);
      if (asked >= 1) Atomics.store(rflags, processedFlag(L, lane), id(lane, asked - 1));
      // what a result reports after sleeps and wakes: its code paths get their feedback too
      if ((r & 7) === 5) { idleSleeps = 1; mine.woke = 1; gaps.batchWaits = 1; }
      // one round in sixteen with the waits of a run's long CFs (see WAITS_ROUND)
      if ((r & 15) === WAITS_ROUND) {
        CPUS = cpus + 1;
        if (((r >> 4) & 1) === (lane & 1)) FED_SPIN_NS = 0;
        holdMs = (r & 63) === WAITS_ROUND ? 0.12 : 0.02;
        // its batches run low at once: the ask (dropped by the pool before this worker is ready)
        // runs here with feedback, not first in the span
        if (low > 0) RUN_LOW_NS = 1;
      }
      const ran = run(structuredClone(encodeBatch(id(lane, r), tasks)), stand);
      FED_SPIN_NS = spin; CPUS = cpus; holdMs = 0; RUN_LOW_NS = low;
      if (!ran) break;
      while (receiveMessageOnPort(out.port2) !== undefined);
      cfs += n;
      if (!built && cfs >= budget.cfs / 2) { built = true; rehearseWindows(mine, giveUpAt); }
    }
    // (ended by the system thread's verdict, a partner's death or the time: the windows too)
    if (!built && rflags[ABORT] === 0) rehearseWindows(mine, giveUpAt);
  } finally {
    // the common point: every lane ran its last round; until then this one answers their requests
    if (Atomics.add(progress, DONE, 1) + 1 >= L) for (let l = 0; l < L; l++) wakeLane(rflags, l);
    const done = (): boolean => Atomics.load(progress, DONE) >= L || rflags[ABORT] !== 0 || (performance.now() >= giveUpAt && giveUp());
    while (!done()) {
      mine.serve();
      sleep(() => mine.pending() || done(), SLEEPING, false);
    }
    // cut: by its time, a fault, or a lane that gave up (its own last round may have been aborted)
    cut = !finished || rflags[ABORT] !== 0;
    giveUpAt = Infinity;
    FED_SPIN_NS = spin; CPUS = cpus; holdMs = 0; pinDue = due; RUN_LOW_NS = low;
    if (allowed !== null) pinCpus(allowed);
    Atomics.sub(rflags, ONCPU, 1);
    endRehearsalTrace();
    ({ flags, me, LANES, ABORT, RUNNING, ONCPU, RESULTS, exchange, tw, gate } = saved);
    // this worker's exchange made anew (see rehearse)
    if (exchange) exchange = new Exchange(flags, me, LANES, init.ctl!, init.peers!, init.slots && new FeedSlots(init.slots, LANES, me));
    results = parentPort!;
    prevOuts = []; lastFin = -1; idleSleeps = 0; waits = undefined;
    gaps = noGaps();
    for (const p of [pair.ctl, pair.feedTo, out.port1, out.port2, ...pair.peers]) p?.close();
  }
  return { cfs, cut };
}

/**
 * Rehearsal task `cf` of ucode `k`: every argument of the kind its parameter takes (outputs, plain
 * numbers and strings, value inputs). A value input is forwarded where `input(i, how, fwd)` says
 * so (how = (cf + i) % 5 spreads the kinds over the tasks), else sent with the batch, a real or
 * an int in turn.
 */
function rehearsalTask(cf: number, k: number, input: (i: number, how: number, fwd: Forward[]) => boolean): Task {
  const params = init.imports[k]!.params;
  const args: unknown[] = [], keys: string[] = [], fwd: Forward[] = [];
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p === 'name') { args.push(null); keys.push(`r${cf}.${i}`); continue; }
    if (p !== 'value') { args.push(p === 'string' ? 's' : p === 'real' ? 0.5 : 1); keys.push(''); continue; }
    args.push(null);
    keys.push(`v${cf}.${i}`);
    if (!input(i, (cf + i) % 5, fwd)) args[i] = (cf & 1) === 0 ? { t: T_REAL, v: 0.25 + cf } : { t: T_INT, v: cf };
  }
  return fwd.length > 0 ? { cf, imp: k, args, keys, fwd } : { cf, imp: k, args, keys };
}

/**
 * Stand-ins for ucode `f` with its calling convention (a C++ ucode's direct form, or DF handles),
 * each setting every output. Five, made by different literals and taken in turn: the call sites
 * go megamorphic in the rehearsal, so the code optimised there assumes nothing about which
 * function the real run calls ('wrong call target').
 */
function standIns(f: Ucode, params: readonly string[]): Ucode[] {
  type Fill = (a: readonly unknown[], k: ArrayLike<string | number>, n: unknown, outs: (DfValue | null)[]) => void;
  const cpp = (direct: Fill): Ucode => { const c: Ucode = function cpp(): unknown { return undefined; }; (c as Ucode & { direct?: Fill }).direct = direct; return c; };
  if (directOf(f) !== undefined) {
    return [
      cpp((_a, _k, _n, outs) => { hold(); for (let i = 0; i < outs.length; i++) outs[i] = { t: T_REAL, v: 0.5 + i }; }),
      cpp((_a, _k, _n, outs) => { hold(); for (let i = 0; i < outs.length; i++) outs[i] = { t: T_REAL, v: 1.5 + i }; }),
      cpp((_a, _k, _n, outs) => { hold(); for (let i = 0; i < outs.length; i++) outs[i] = { t: T_INT, v: i }; }),
      cpp((_a, _k, _n, outs) => { hold(); for (let i = 0; i < outs.length; i++) outs[i] = { t: T_REAL, v: 2.5 * i }; }),
      cpp((_a, _k, _n, outs) => { hold(); for (let i = 0; i < outs.length; i++) outs[i] = { t: T_REAL, v: 3.5 + i }; }),
    ];
  }
  const names = (args: unknown[]): DF[] => params.flatMap((p, i) => (p === 'name' ? [args[i] as DF] : []));
  // functions as a module declares them (with a prototype) and arrows (without): the real
  // ucode's hidden class is one of the two, and callUcode's look at it was compiled for the
  // arrows alone ('wrong map' in the span, at the first real call)
  return [
    function (...a: unknown[]): void { hold(); for (const d of names(a)) d.setReal(0.5); },
    (...a: unknown[]) => { hold(); for (const d of names(a)) d.setReal(1.5); },
    function (...a: unknown[]): void { hold(); for (const d of names(a)) d.setInt(1); },
    (...a: unknown[]) => { hold(); for (const d of names(a)) d.setReal(2.5); },
    function (...a: unknown[]): void { hold(); for (const d of names(a)) d.setReal(3.5); },
  ];
}

main().catch((e: unknown) => {
  const ex = e instanceof Error ? e : new Error(String(e));
  parentPort!.postMessage({ fatal: ex.message, lane: me });
});
