// The worker threads of one node, seen from its system thread: lane i is worker i, started on
// its first batch (a program that never needs a worker never pays for one). Sending wakes a
// worker only if it sleeps; results and deaths come back as callbacks. A worker that dies
// (process.exit in a ucode, out of memory, a crash) is reported with the CF it was running.
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import type { ImportDef } from '../../core/imports.js';
import { laneCpus } from './affinity.js';
import { AWAKE, LOWERED, PARKED, abortFlag, answersFlag, coreFree, feedsFlag, flagsLength, laneNiceFlag, loweredFlag, lowerLaneOnce, onCpuFlag, processedFlag, resultsFlag, runningFlag, wakeLane, type Batch, type BatchResult, type Feed, type WaitPlan, type WireAnswer, type WirePlan, type WireWindow, type WireRequest, type WorkerInit, type RehearsalWiring, type EarlyData } from './protocol.js';
import { decodeResult, encodeBatch, type WireBatch, type WireResult } from './codec.js';
import { ReadyBoard, type WireBoard } from './board.js';
import { buffersFor, deferCollectionWhile, recycleHome, recycleHomeGone, recycling } from './shm.js';
import { FeedSlots, feedSlotsBuffer } from './slots.js';
import { Exchange } from './exchange.js';
import type { InlineExecutor } from './inline.js';
import { SystemLane } from './system-lane.js';
import type { TraceSink } from '../../trace/schema.js';
import { buildingAhead, lowerBackgroundNow } from './priority.js';
import type { NativeUcodes } from '../../ucode/cpp/native.js';
import { sharedTraceBuffer, spillSharedTrace, ThreadTraceWriter } from '../../trace/writer.js';
import { traceFileName } from '../../trace/format.js';
import { join } from 'node:path';
import { tuned, type TuningName } from '../tuning.js';

/** no tasks: what buffersFor hands ahead of a ready-board entry (the worker's home buffers, and the system thread's pool's overflow as with any batch) */
const NO_TASKS: readonly { imp: number }[] = [];

const WORKER_FILE = fileURLToPath(new URL('./worker.js', import.meta.url));

/**
 * The heap limit of a worker thread in MB, from `LUNA_WORKER_HEAP_MB` (undefined: V8's default,
 * the process's). A worker that reaches it stops with ERR_WORKER_OUT_OF_MEMORY and is reported;
 * the rest of the process is unharmed.
 */
export function workerHeapMb(): number | undefined {
  return tuned('LUNA_WORKER_HEAP_MB');
}

/**
 * Semi-space size of worker threads, MB: V8's default on 64-bit machines. `bin/luna` starts Node
 * with small semi-spaces (`--max-semi-space-size=2`) for the system thread, whose many
 * short-lived bookkeeping objects then reuse a few warm pages instead of growing into fresh
 * ones; ucodes allocate like ordinary programs (matrices, arrays), so their threads keep the
 * default. V8 reads the flag when an isolate is created: set now, it applies to the workers
 * started from here on and not to the running system thread. (`resourceLimits.
 * maxYoungGenerationSizeMb` would not do: the command-line flag overrides it.)
 */
const WORKER_SEMI_SPACE_MB = 16;
let workerHeapFlags = false;
function setWorkerHeapFlags(): void {
  if (workerHeapFlags) return;
  workerHeapFlags = true;
  setFlagsFromString(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
}

/** A worker booted before its pool existed; whether it already failed. */
interface EarlyWorker { w: Worker; failed?: string }
const early: EarlyWorker[] = [];

function newWorker(workerData: unknown, transferList: MessagePort[] = []): Worker {
  setWorkerHeapFlags();
  const heapMb = workerHeapMb();
  // Workers write ucode output straight to the file descriptors (worker.ts replaces their
  // process.stdout/stderr). Their stdio streams are therefore not piped here: a piped stream
  // asks the worker's original stream for more data, and with many workers booting that
  // request can arrive after the replacement and kill the worker.
  return new Worker(WORKER_FILE, {
    workerData, transferList, stdout: true, stderr: true,
    ...(heapMb !== undefined ? { resourceLimits: { maxOldGenerationSizeMb: heapMb } } : {}),
  });
}

/**
 * Workers that boot at once on a node of `cores` cores: one fewer than its cores, at least one
 * (a booting worker keeps a core busy; see WorkerPool.warmUp).
 */
export function bootingAtOnce(cores: number): number {
  return Math.max(1, cores - 1);
}

/**
 * Boot now, before the program's pool exists, the workers that would boot at once for `lanes`
 * lanes on `cores` cores (`atOnce`: the policy's count, SchedulingPolicy.bootAtOnce). On several nodes a worker runs even the first CF of a code (the system
 * thread must keep answering its peers), and the nodes take a few hundred milliseconds to
 * connect, long enough for a worker to boot (~110 ms here) instead of the first CF waiting for
 * it. The next pool adopts them (they learn their lane then); those it does not need end with
 * the process. `ucodes`: the program's TypeScript ucode module, which each imports as soon as it
 * has booted (worker.ts main): its import then overlaps the compile instead of the first CFs.
 */
export function bootEarly(lanes: number, cores: number, atOnce = bootingAtOnce(cores), ucodes?: string): void {
  for (let k = Math.min(lanes, atOnce); k > 0; k--) {
    const e: EarlyWorker = { w: newWorker({ early: true, ucodes } satisfies EarlyData) };
    e.w.unref();
    e.w.once('error', (err) => { e.failed ??= `failed: ${err.message}`; });
    e.w.once('exit', (code) => { e.failed ??= `exited with code ${code}`; });
    early.push(e);
  }
}

export interface PoolOptions {
  lanes: number;
  /** this node's rank (ucodes' context says it; default 0) */
  node?: number;
  bundle?: string;
  /** the compiled C++ ucodes */
  native?: NativeUcodes;
  imports: readonly ImportDef[];
  trace?: WorkerInit['trace'];
  /** how the threads wait when they have nothing to do (default: never spin) */
  waiting?: WaitPlan;
  /** workers feed values to each other (see exchange.ts); off above MAX_FEED_LANES lanes */
  feed?: boolean;
  onResult: (r: BatchResult) => void;
  /** a worker's batch is running low (WaitPlan.runLowNs) and nothing is queued behind it: plan its next batch now */
  onLow?: () => void;
  /** a ucode on lane `lane` asks the system thread (answered with answer()) */
  onRequest?: (lane: number, r: WireRequest) => void;
  /** layers' modules every worker imports before its first batch (they register block kinds) */
  modules?: readonly string[];
  /**
   * a worker died or could not start; `cf` is the CF it was running (-1: none); `cause` reads
   * after "worker thread N" (e.g. "exited with code 3")
   */
  onDeath: (lane: number, cf: number, cause: string) => void;
  /**
   * the system thread is the last of the `lanes` lanes (system-lane.ts): one worker fewer, and
   * batches sent to that lane run on this thread with `inline`
   */
  system?: { inline: InlineExecutor; trace?: TraceSink };
  /**
   * workers rehearse their per-CF path before they report ready (WorkerInit.rehearse): together
   * where they feed each other, else alone if `alone`
   */
  rehearse?: { cfs: number; ms: number; alone?: boolean };
}

/** Feeding across lanes takes a port per pair of workers: not beyond this many. */
export const MAX_FEED_LANES = 16;

/** No spinning: every wait sleeps at once. */
export const SLEEP_AT_ONCE: WaitPlan = { cpus: 1, idleSpinNs: 0, fedSpinNs: 0, resultSpinNs: 0 };

/** µs from the environment (a comparison's override of the policy), else `ns`. */
function envSpin(name: TuningName, ns: number): number {
  const us = tuned(name);
  return us !== undefined ? us * 1000 : ns;
}

/** The policy's plan with the environment's overrides (`LUNA_SPIN_US`, `LUNA_FED_SPIN_US`, `LUNA_FED_SPIN_PRODUCER_US`, `LUNA_FED_STARVED_US`, `LUNA_RESULT_SPIN_US`). */
export function waitPlan(p: WaitPlan = SLEEP_AT_ONCE): WaitPlan {
  const plan: WaitPlan = { cpus: p.cpus, idleSpinNs: envSpin('LUNA_SPIN_US', p.idleSpinNs), fedSpinNs: envSpin('LUNA_FED_SPIN_US', p.fedSpinNs), resultSpinNs: envSpin('LUNA_RESULT_SPIN_US', p.resultSpinNs) };
  const producer = envSpin('LUNA_FED_SPIN_PRODUCER_US', p.fedSpinProducerNs ?? 0);
  if (producer > 0) plan.fedSpinProducerNs = producer;
  const starvedNs = envSpin('LUNA_FED_STARVED_US', p.fedStarvedNs ?? 0);
  if (starvedNs > 0) plan.fedStarvedNs = starvedNs;
  if (p.laneSleepNs) plan.laneSleepNs = p.laneSleepNs;
  const low = envSpin('LUNA_RUN_LOW_US', p.runLowNs ?? 0);
  if (low > 0) plan.runLowNs = low;
  const pin = tuned('LUNA_PIN_LANES');
  if (pin !== undefined ? pin === 1 : p.pinLanes === true) plan.pinLanes = true;
  return plan;
}

/** Fragments' time on the lanes after which V8's background threads run at a lower priority (priority.ts). */
const LANES_RAN_NS = 2_000_000;
/**
 * batches queued behind a worker lane's running one from which the system thread's work is work
 * ahead (see recount): one, the next batch the lane runs when its current one ends
 */
const QUEUED_AHEAD = 1;
/**
 * A worker that could not be started because a lane it feeds with ended (pool.unstartable) is
 * reported dead itself only if no other death came within this many ms: the ended lane's exit
 * event follows its closed ports within milliseconds, tens of them under load.
 */
const UNSTARTABLE_MS = 2000;

export class WorkerPool {
  /** the node's lanes: the workers, and the system lane when there is one (the last) */
  readonly lanes: number;
  /** lanes run by worker threads (the first ones) */
  readonly workerLanes: number;
  /** the system thread's lane (absent: every lane is a worker's) */
  readonly system: SystemLane | undefined;
  readonly waiting: WaitPlan;
  /** the system thread counts itself among the node's threads on a CPU (false: it rests in its event loop) */
  private working = true;
  /** it is counted so now (see recount) */
  private counted = true;
  /** workers this thread woke (with a batch, a feed request, an answer, or a core for a parked one) */
  wakes = 0;
  /**
   * batches sent and not yet answered, per lane, those a worker took from the board included
   * (shared with the workers, which count what they take: changed here only atomically)
   */
  readonly inflight: Int32Array;
  /** the ready board (board.ts): batches posted to every worker lane, taken by the first free */
  private readonly board: ReadyBoard;
  private readonly workers: (Worker | undefined)[];
  private readonly ports: (MessagePort | undefined)[];
  private readonly flags: Int32Array;
  private stopped = false;
  /** workers that loaded the ucode module and wait for batches */
  booted = 0;
  /** the booted worker lanes' thread ids, by lane, as their ready messages say them (where the platform does: Linux) */
  private readonly tidOf: (number | undefined)[] = [];
  /** lanes lowered below the system thread so far (by lowerLanes, as they report ready, or by themselves) */
  get lanesLowered(): number {
    let n = 0;
    for (let i = 0; i < this.opts.lanes; i++) if (Atomics.load(this.flags, loweredFlag(this.opts.lanes, i)) === LOWERED) n++;
    return n;
  }
  private readonly ready: boolean[] = [];
  /** fragments the workers rehearsed before they reported ready (PoolOptions.rehearse) */
  rehearsedCfs = 0;
  /** workers that rehearsed together, fed by each other (PoolOptions.rehearse) */
  rehearsedTogether = 0;
  /** workers whose rehearsal its time (or a partner's fault, or endRehearsal) ended before its count */
  rehearsalsCut = 0;
  /** endRehearsal was called: the workers' rehearsal was ended before its count or time */
  rehearsalEnded = false;
  private bootWaiters: (() => void)[] = [];
  /** workers that exited or were given up (a stop must not wait for them) */
  private readonly exited: boolean[] = [];
  /** workers whose thread really ended */
  private readonly gone: boolean[] = [];
  private readonly heapMb = workerHeapMb();
  /** lanes whose worker could not be started (unstartable) */
  private readonly noWorker: boolean[] = [];
  /** why a worker was terminated on purpose (reported instead of its exit code) */
  private readonly causes: (string | undefined)[] = [];
  /** warmUp: workers start ahead of their first batch, the next at lane nextWarm */
  private bootAhead = false;
  private nextWarm = 0;
  /** workers feed each other: feed-request ports (system thread's ends) and the pairs' ports */
  readonly feeds: boolean;
  private readonly ctl: (MessagePort | undefined)[];
  private readonly peers: (MessagePort | null)[][];
  /** the feed slots every worker shares (ints and reals fed without a message); absent without feeding */
  private readonly slots: SharedArrayBuffer | undefined;
  /**
   * ns the lanes have spent running fragments, up to LANES_RAN_NS: V8's background threads are
   * lowered then (see priority.ts). Not at the first batch: with --warm-start the first few CFs of
   * a chain of empty C++ fragments go to a lane before the policy runs the code on the system
   * thread, and lowered then, the system thread's CPU went 91 → 136 ms (20 000 fragments, load 22).
   */
  private lanesRanNs = 0;
  /** the system thread's ends of the workers' request ports */
  private readonly requests: (MessagePort | undefined)[];
  /** tracing: each worker's shared trace buffer and file, which this thread can spill */
  private readonly traces: ({ buffer: SharedArrayBuffer; path: string } | undefined)[] = [];
  /** per lane: report the worker dead (once) */
  private readonly deaths: (((cause: string) => void) | undefined)[] = [];
  /**
   * the workers' rehearsal together (worker.ts rehearseTogether): its flags, and per worker what
   * it is handed (absent: each worker rehearses alone, or none does)
   */
  private readonly rehearsal?: { flags: Int32Array; wiring: RehearsalWiring[] };
  /** a worker rehearsing alone ends its rehearsal when this flag is raised (endRehearsal) */
  private readonly rehearsalStop?: Int32Array;

  constructor(private readonly opts: PoolOptions) {
    this.lanes = opts.lanes;
    this.workerLanes = opts.system && opts.lanes >= 2 ? opts.lanes - 1 : opts.lanes;
    this.flags = new Int32Array(new SharedArrayBuffer(4 * flagsLength(opts.lanes)));
    this.waiting = waitPlan(opts.waiting);
    this.flags[onCpuFlag(opts.lanes)] = 1; // the system thread
    for (let i = 0; i < opts.lanes; i++) this.flags[runningFlag(opts.lanes, i)] = -1;
    this.board = new ReadyBoard(opts.lanes);
    this.inflight = this.board.inflight;
    this.workers = new Array(opts.lanes);
    this.ports = new Array(opts.lanes);
    this.feeds = opts.feed === true && opts.lanes >= 2 && opts.lanes <= MAX_FEED_LANES;
    this.ctl = new Array(opts.lanes);
    this.requests = new Array(opts.lanes);
    this.peers = [];
    this.slots = this.feeds && process.env.LUNA_FEED_SLOTS !== '0' ? feedSlotsBuffer(opts.lanes) : undefined;
    if (this.feeds) {
      for (let i = 0; i < opts.lanes; i++) {
        this.flags[processedFlag(opts.lanes, i)] = -1;
        this.peers.push(new Array<MessagePort | null>(opts.lanes).fill(null));
      }
      for (let i = 0; i < opts.lanes; i++) {
        for (let j = i + 1; j < opts.lanes; j++) {
          const ch = new MessageChannel();
          this.peers[i]![j] = ch.port1;
          this.peers[j]![i] = ch.port2;
        }
      }
    }
    if (opts.system && this.workerLanes < this.lanes) {
      const me = this.workerLanes;
      let exchange: Exchange | undefined;
      if (this.feeds) {
        const ctl = new MessageChannel();
        this.ctl[me] = ctl.port1;
        exchange = new Exchange(this.flags, me, this.lanes, ctl.port2, this.peers[me]!, this.slots && new FeedSlots(this.slots, this.lanes, me));
      }
      this.system = new SystemLane({ lane: me, flags: this.flags, inline: opts.system.inline, exchange, waiting: this.waiting, trace: opts.system.trace, onResult: (r) => this.result(r) });
    }
    // workers that feed each other rehearse together, each waiting for the others' values
    if (opts.rehearse && this.feeds && this.workerLanes >= 2) this.rehearsal = this.rehearsalWiring();
    else if (opts.rehearse?.alone === true) this.rehearsalStop = new Int32Array(new SharedArrayBuffer(4));
    // this thread's forced full collection waits for a turn that leaves every lane running
    this.undefer = deferCollectionWhile(() => !this.allRunning());
  }

  /** withdraws the deferral of this thread's collections (the pool stops) */
  private readonly undefer: () => void;

  /**
   * Wiring of the workers' rehearsal together: flags, slots and ports like the run's, for the
   * worker lanes alone; lane i's feed requests go to lane i+1 (mod workers), which feeds it.
   */
  private rehearsalWiring(): { flags: Int32Array; wiring: RehearsalWiring[] } {
    const n = this.workerLanes;
    const flags = new Int32Array(new SharedArrayBuffer(4 * flagsLength(n)));
    flags[onCpuFlag(n)] = 1; // the system thread
    for (let i = 0; i < n; i++) { flags[runningFlag(n, i)] = -1; flags[processedFlag(n, i)] = -1; }
    const progress = new Int32Array(new SharedArrayBuffer(4 * (1 + n))).fill(-1);
    progress[0] = 0;
    const slots = this.slots && feedSlotsBuffer(n);
    const peers = Array.from({ length: n }, () => new Array<MessagePort | null>(n).fill(null));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) { const ch = new MessageChannel(); peers[i]![j] = ch.port1; peers[j]![i] = ch.port2; }
    }
    const ctl = Array.from({ length: n }, () => new MessageChannel());
    const wiring = ctl.map((c, i): RehearsalWiring => ({ flags: flags.buffer as SharedArrayBuffer, ...(slots ? { slots } : {}), ctl: c.port2, feedTo: ctl[(i + 1) % n]!.port1, peers: peers[i]!, progress: progress.buffer as SharedArrayBuffer }));
    return { flags, wiring };
  }

  /** A batch's result (a worker's, decoded, or the system lane's): the runtime books it. */
  private result(r: BatchResult): void {
    this.work();
    Atomics.sub(this.inflight, r.lane, 1);
    this.recount();
    if (this.lanesRanNs < LANES_RAN_NS) this.lanesRan(r);
    this.opts.onResult(r);
    // the system thread will not name this batch in a feed request any more
    if (this.feeds) Atomics.store(this.flags, processedFlag(this.lanes, r.lane), r.batch);
  }

  /**
   * The workers' rehearsal ends now, wherever each is in it (one that has not begun rehearses
   * nothing): the system thread's own rehearsal found the program small (node/rehearsal.ts), so
   * the lanes' would only delay its start. Idempotent; nothing once every worker is ready.
   */
  endRehearsal(): void {
    if (this.rehearsalEnded || (this.rehearsal === undefined && this.rehearsalStop === undefined) || this.booted >= this.workerLanes) return;
    this.rehearsalEnded = true;
    this.abortRehearsal(true);
  }

  /** Raise the rehearsal's abort flag (together) and wake the lanes that sleep on it; `alone`: the lone workers' stop flag too. */
  private abortRehearsal(alone: boolean): void {
    if (alone && this.rehearsalStop) Atomics.store(this.rehearsalStop, 0, 1);
    if (!this.rehearsal) return;
    const f = this.rehearsal.flags;
    Atomics.store(f, abortFlag(this.workerLanes), 1);
    for (let l = 0; l < this.workerLanes; l++) wakeLane(f, l);
  }

  /** Start lane `i`'s worker now (it boots while the system thread does other work). */
  warm(i: number): void {
    if (i < this.workerLanes && !this.workers[i] && !this.noWorker[i] && !this.stopped) this.startWorker(i);
  }

  /**
   * Start the workers ahead of their first batch, `parallel` at a time: each further one when
   * one of them booted. A booting worker keeps a core busy for tens of milliseconds (over 100 on
   * a slow machine); booting more at once than the spare cores would take the system thread's
   * core while it runs the program's first fragments itself.
   */
  warmUp(parallel: number): void {
    this.bootAhead = true;
    for (let started = 0; started < parallel && this.nextWarm < this.workerLanes; this.nextWarm++) {
      if (!this.workers[this.nextWarm]) { this.warm(this.nextWarm); started++; }
    }
  }

  /** A worker booted: the next one of warmUp may start. */
  private warmNext(): void {
    if (!this.bootAhead) return;
    while (this.nextWarm < this.workerLanes && this.workers[this.nextWarm]) this.nextWarm++;
    if (this.nextWarm < this.workerLanes) this.warm(this.nextWarm++);
  }

  /**
   * Lower the worker lanes' priority by `nice` steps below the system thread's (the node's
   * fragments are coarse: policy laneNice), those booted and those still to boot; once.
   */
  lowerLanes(nice: number): void {
    if (this.laneNice > 0 || nice <= 0) return;
    // workers lower themselves before they run anything more (worker.ts lowerSelf); those whose
    // ids are here, at once
    Atomics.store(this.flags, laneNiceFlag(this.opts.lanes), nice);
    for (let i = 0; i < this.tidOf.length; i++) { const tid = this.tidOf[i]; if (tid !== undefined) lowerLaneOnce(this.flags, i, tid, nice); }
  }

  /** how far the lanes are lowered below the system thread (lowerLanes; 0: not), as the workers read it */
  private get laneNice(): number {
    return this.flags[laneNiceFlag(this.opts.lanes)]!;
  }

  /** Resolves when every lane's worker has booted (or died: its fault is reported on its own). */
  allBooted(): Promise<void> {
    for (let i = 0; i < this.workerLanes; i++) this.warm(i);
    return this.booted >= this.workerLanes ? Promise.resolve() : new Promise((res) => this.bootWaiters.push(res));
  }

  private bootSettled(): void {
    for (const f of this.bootWaiters.splice(0)) f();
  }

  get started(): number {
    return this.workers.filter(Boolean).length;
  }

  private startWorker(i: number): void {
    const trace = this.opts.trace;
    let buffer: SharedArrayBuffer | undefined;
    if (trace) {
      ThreadTraceWriter.prepare(trace.dir, trace.node, i + 1);
      buffer = sharedTraceBuffer();
      this.traces[i] = { buffer, path: join(trace.dir, traceFileName(trace.node, i + 1)) };
    }
    const ch = new MessageChannel();
    const req = new MessageChannel();
    const init: WorkerInit = {
      index: i, node: this.opts.node ?? 0, bundle: this.opts.bundle, native: this.opts.native, flags: this.flags.buffer as SharedArrayBuffer, board: this.board.buffer, port: ch.port2, trace: trace && { ...trace, buffer }, waiting: this.waiting,
      imports: this.opts.imports.map((m) => ({ symbol: m.symbol, alias: m.alias, params: m.params, waits: m.waits })),
      requests: req.port2,
    };
    const cpu = this.waiting.pinLanes ? laneCpus(this.workerLanes, undefined, this.waiting.cpus)?.[i] : undefined;
    if (cpu !== undefined) init.cpu = cpu;
    if (this.opts.modules?.length) init.modules = [...this.opts.modules];
    const pair = this.rehearsal?.wiring[i];
    const rh = this.opts.rehearse;
    if (rh && (pair || rh.alone === true)) init.rehearse = pair ? { cfs: rh.cfs, ms: rh.ms, pair } : { cfs: rh.cfs, ms: rh.ms, stop: this.rehearsalStop!.buffer as SharedArrayBuffer };
    this.requests[i] = req.port1;
    const onRequest = this.opts.onRequest;
    req.port1.on('message', (m: WireRequest) => {
      if (onRequest) onRequest(i, m);
      else if (!m.post) this.answer(i, { id: m.id, ok: false, error: 'this node takes no requests', wait: 0, resource: m.kind });
    });
    req.port1.unref(); // the worker keeps the run alive, not its port
    const transfer: MessagePort[] = [ch.port2, req.port2];
    if (this.feeds) {
      const ctl = new MessageChannel();
      this.ctl[i] = ctl.port1;
      init.ctl = ctl.port2;
      init.peers = this.peers[i]!;
      if (this.slots) init.slots = this.slots;
      transfer.push(ctl.port2, ...this.peers[i]!.filter((p): p is MessagePort => p !== null));
    }
    if (pair) transfer.push(pair.ctl, pair.feedTo, ...pair.peers.filter((p): p is MessagePort => p !== null));
    const e = early.shift();
    let w: Worker;
    try {
      if (e) {
        w = e.w;
        w.ref();
        w.postMessage({ init }, transfer);
      } else w = newWorker(init, transfer);
    } catch (err) {
      if (!(err instanceof Error && err.name === 'DataCloneError')) throw err;
      // A port it was to get is closed: the worker at its other end has ended (its thread closed
      // it), and that end's death, still to be reported by its exit event, is the run's fault. A
      // worker whose batch ended its thread can do so before the message that it booted (which
      // starts this one, warmNext) is handled here.
      this.unstartable(i, e, err.message);
      return;
    }
    this.workers[i] = w;
    this.ports[i] = ch.port1;
    const tid = w.threadId;
    recycleHome(tid); // the freed buffers it makes go back to it (shm.ts buffersFor)
    let dead = false;
    const death = (cause: string): void => {
      if (dead || this.stopped) return;
      dead = true;
      // the others, rehearsing with it, would wait for its values: their rehearsal ends
      // (a worker rehearsing alone waits for no other: it goes on)
      if (!this.ready[i]) this.abortRehearsal(false);
      this.bootSettled();
      this.opts.onDeath(i, this.flags[runningFlag(this.lanes, i)]!, this.causes[i] ?? cause);
    };
    this.deaths[i] = death;
    const result = (m: WireResult): void => {
      // a worker's results before it is ready are its rehearsal's (worker.ts rehearse): it runs no batch before
      if (!this.ready[i]) return;
      // posts made before this result are handled first (a CF's release of its blocks), so what
      // they send (a dynamic array's STAND) leaves before the CFs' outputs: every lane's, since an
      // output may have been fed to this worker by a lane whose own result is still to come
      if (onRequest) this.drainRequests(onRequest);
      this.result(decodeResult(m));
    };
    w.on('message', (m: { low?: number; ready?: number; tid?: number; rehearsed?: number; together?: boolean; cut?: boolean; fatal?: string } | WireResult) => {
      // results are arrays (codec.ts), the rest objects
      if (Array.isArray(m)) { result(m); return; }
      if (m.ready !== undefined) {
        if (m.rehearsed) this.rehearsedCfs += m.rehearsed;
        if (m.together && m.rehearsed) this.rehearsedTogether++;
        if (m.cut) this.rehearsalsCut++;
        this.booted++;
        this.ready[i] = true;
        // (unless the worker lowered itself first: lowerLaneOnce)
        if (m.tid !== undefined) { this.tidOf[i] = m.tid; if (this.laneNice > 0) lowerLaneOnce(this.flags, i, m.tid, this.laneNice); }
        if (this.booted >= this.workerLanes) this.bootSettled();
        this.warmNext();
        return;
      }
      if (m.fatal !== undefined) { death(`could not load the ucode module: ${m.fatal}`); return; }
      if (!this.ready[i]) return;
      if (m.low !== undefined) {
        // its next batch is already queued (or it is the last): nothing to plan early
        if (this.inflight[i]! === 1) this.opts.onLow?.();
      }
    });
    w.on('error', (e: Error & { code?: string }) => {
      death(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `ran out of memory (heap limit ${this.heapMb ?? defaultHeapMb()} MB${this.heapMb !== undefined ? ', LUNA_WORKER_HEAP_MB' : ''})` : `failed: ${e.message}`);
    });
    w.on('exit', (code) => {
      recycleHomeGone(tid);
      this.gone[i] = true;
      this.exited[i] = true;
      Atomics.store(this.inflight, i, 0);
      death(`exited with code ${code}`);
    });
    if (e?.failed !== undefined) { this.exited[i] = true; death(e.failed); }
  }

  /**
   * Lane `i`'s worker could not be started: it gets nothing (send and feed drop what is meant for
   * it; the run ends with the fault that closed its port). Should no lane's death be reported
   * within UNSTARTABLE_MS, this lane's is, so that the run never waits for it in silence.
   */
  private unstartable(i: number, e: EarlyWorker | undefined, why: string): void {
    if (e) { e.w.unref(); early.unshift(e); }
    this.ctl[i] = undefined;
    this.requests[i]?.close();
    this.requests[i] = undefined;
    this.traces[i] = undefined;
    this.noWorker[i] = true;
    setTimeout(() => {
      if (this.stopped || this.exited.some(Boolean)) return;
      this.exited[i] = true;
      this.bootSettled();
      this.opts.onDeath(i, -1, `could not be started: ${why}`);
    }, UNSTARTABLE_MS).unref();
  }

  /** Handle the requests every lane has posted so far (~60 ns a lane when none is waiting). */
  private drainRequests(onRequest: (lane: number, r: WireRequest) => void): void {
    for (let l = 0; l < this.requests.length; l++) {
      const port = this.requests[l];
      if (port === undefined) continue;
      for (let q = receiveMessageOnPort(port); q !== undefined; q = receiveMessageOnPort(port)) onRequest(l, q.message as WireRequest);
    }
  }

  /** Count the time a batch's fragments ran; past LANES_RAN_NS, lower V8's background threads. */
  private lanesRan(m: BatchResult): void {
    if (!m.start || !m.fin) return;
    for (let i = 0; i < m.start.length; i++) this.lanesRanNs += m.fin[i]! - m.start[i]!;
    if (this.lanesRanNs >= LANES_RAN_NS) lowerBackgroundNow();
  }

  send(lane: number, batch: Batch): void {
    if (lane === this.workerLanes) { Atomics.add(this.inflight, lane, 1); this.system!.send(batch); return; }
    if (!this.workers[lane] && !this.noWorker[lane]) this.startWorker(lane);
    if (!this.workers[lane]) return; // could not be started: the run ends with the fault that stopped it
    Atomics.add(this.inflight, lane, 1);
    this.recount();
    const wire = encodeBatch(batch.id, batch.tasks);
    wire[4] = buffersFor(batch.tasks, this.workers[lane]!.threadId); // freed raw buffers, for the outputs it makes
    this.ports[lane]!.postMessage(wire);
    if (wakeLane(this.flags, lane)) this.wakes++;
  }

  /**
   * Send a planned loop's plan, or a window of it, to lane `lane`'s worker (exec/plan-steps.ts);
   * false for the system lane, which takes batches of tasks only. A window counts in flight as
   * a batch; `imps`: its tasks' ucodes, for the buffers that go with it.
   */
  sendPlanned(lane: number, m: { loopPlan: WirePlan } | WireWindow, imps?: readonly { imp: number }[]): boolean {
    if (lane >= this.workerLanes) return false;
    if (!this.workers[lane] && !this.noWorker[lane]) this.startWorker(lane);
    if (!this.workers[lane]) return true; // could not be started: the run ends with the fault that stopped it
    if ('window' in m) {
      Atomics.add(this.inflight, lane, 1);
      this.recount();
      m.recycled = buffersFor(imps ?? [], this.workers[lane]!.threadId);
    }
    this.ports[lane]!.postMessage(m);
    if ('window' in m && wakeLane(this.flags, lane)) this.wakes++;
    return true;
  }

  /**
   * Ask lane `from` to send outputs of its batches to other lanes (Feed quadruples), before the
   * batch that reads them is sent.
   */
  feed(from: number, requests: Feed): void {
    if (from < this.workerLanes && !this.workers[from] && !this.noWorker[from]) this.startWorker(from);
    const ctl = this.ctl[from];
    if (ctl === undefined) return; // could not be started (see send)
    ctl.postMessage(requests);
    Atomics.add(this.flags, feedsFlag(this.lanes, from), 1);
    if (from === this.workerLanes) { this.system!.serve(); return; }
    if (wakeLane(this.flags, from)) this.wakes++;
  }

  /** Answer a request of lane `lane`'s worker (it waits for it). */
  answer(lane: number, a: WireAnswer): void {
    const port = this.requests[lane];
    if (port === undefined || this.exited[lane]) return;
    port.postMessage(a);
    Atomics.add(this.flags, answersFlag(this.lanes, lane), 1);
    if (wakeLane(this.flags, lane)) this.wakes++;
  }

  /**
   * The system thread works (a result arrived): it counts among the node's threads on a CPU while
   * a worker may wait for it (see recount).
   */
  work(): void {
    if (this.working) return;
    this.working = true;
    this.recount();
  }

  /**
   * Count the system thread among the node's threads on a CPU while it works and some worker lane
   * has no batch queued behind the one it runs: that lane's worker may soon wait for this
   * thread's next batch, and a sibling spinning on the core this thread needs would delay it.
   * While every worker lane has one queued, this thread only builds ahead, and a worker waiting
   * for a value another worker feeds it spins on: counted, it parked and paid a wake-up (Task
   * Bench stencil_1d 1×2, 10 000 steps: fed waits that slept 1 138–1 597 → 88–238 a run, not
   * counting it at all). Not with a system lane: that lane's own sleeps count this thread out
   * and back in.
   */
  private recount(): void {
    const waitedFor = this.system !== undefined || this.awaited();
    // while every worker lane runs a batch, the system thread runs at a lower priority where it may get it back (priority.ts)
    buildingAhead(this.system === undefined && this.allRunning());
    const c = this.working && waitedFor;
    if (c === this.counted) return;
    this.counted = c;
    Atomics.add(this.flags, onCpuFlag(this.lanes), c ? 1 : -1);
  }

  /**
   * Whether every worker lane has a batch in flight: the system thread's work is then ahead of
   * the lanes. (Not "a batch queued behind it", as for the count above: a fed batch's result
   * comes with its successor already queued only rarely, so its burst of booking and building
   * runs while the lane holds one batch — of up to FED_RUN_NS of work. Lowered only while a lane
   * held two, the system thread spent 2.8 of its 106 ms of CPU lowered; while each holds one,
   * 27–36 of 39–45 ms: Task Bench stencil_1d 1×2, C++, 2^16 iterations, 1 000 steps.)
   */
  private allRunning(): boolean {
    for (let i = 0; i < this.workerLanes; i++) if (this.inflight[i]! === 0) return false;
    return true;
  }

  /** Whether some worker lane has fewer than QUEUED_AHEAD + 1 batches in flight. */
  private awaited(): boolean {
    for (let i = 0; i < this.workerLanes; i++) if (this.inflight[i]! <= QUEUED_AHEAD) return true;
    return false;
  }

  /**
   * The system thread has nothing to do until its next event. With batches in flight it first
   * spins for a result, up to the plan's `resultSpinNs` while a core is free for it: a result
   * posted meanwhile is then taken by the event loop at once, without waking this thread from
   * its poll. Then it rests: waiting workers may spin on its core, and one parked for a fed value
   * (it slept within its spin because this thread had the core) is woken to spin again, before
   * its value arrives: the wake-up is then off the path from the producer to the consumer.
   */
  rest(): void {
    // the system lane has a batch to run or to resume: this thread is not idle
    if (this.system?.pending) return;
    const ns = this.waiting.resultSpinNs;
    if (ns > 0 && this.busy() && this.booted > 0) {
      // (a spinner counts itself: this thread is not counted while it builds ahead, see recount)
      const results = resultsFlag(this.lanes), onCpu = onCpuFlag(this.lanes), cpus = this.waiting.cpus - (this.counted ? 0 : 1);
      const seen = Atomics.load(this.flags, results);
      const until = performance.now() + ns / 1e6;
      while (Atomics.load(this.flags, results) === seen && performance.now() < until && coreFree(this.flags, onCpu, cpus));
      if (Atomics.load(this.flags, results) !== seen) return; // its message is being delivered: keep working
    }
    if (!this.working) return;
    this.working = false;
    this.recount();
    const onCpu = onCpuFlag(this.lanes);
    // the core this thread leaves goes to a worker parked for a fed value, if any
    for (let i = 0; i < this.workerLanes; i++) {
      if (Atomics.load(this.flags, i) !== PARKED) continue;
      if (Atomics.load(this.flags, onCpu) < this.waiting.cpus && wakeLane(this.flags, i)) this.wakes++;
      break;
    }
  }

  busy(): boolean {
    for (let i = 0; i < this.lanes; i++) if (this.inflight[i]! > 0) return true;
    return this.board.open() > 0;
  }

  /**
   * How many batches may be posted on the ready board now to keep `ahead` open (0: the board is
   * not for this pool: a system lane, which takes only its own batches, or fewer than 2 worker
   * lanes, or one not ready yet).
   */
  boardRoom(ahead: number): number {
    if (ahead <= 0 || this.system !== undefined || this.workerLanes < 2) return 0;
    for (let i = 0; i < this.workerLanes; i++) if (!this.ready[i] || this.exited[i]) return 0;
    return Math.max(0, ahead - this.board.open());
  }

  /**
   * Post `batch` on the ready board: every worker lane gets it, the first to take it runs it (its
   * result comes as any batch's, with that lane) and the others skip it. A lane asleep is woken:
   * its result may be on its way here, the system thread not knowing yet that it is idle.
   */
  post(batch: Batch): void {
    const m: WireBoard<WireBatch> = { board: this.board.post(), batch: encodeBatch(batch.id, batch.tasks) };
    for (let i = 0; i < this.workerLanes; i++) {
      // the freed buffers on their way to this worker go ahead of the entry: a lane that runs
      // board entries gets no batch of its own to carry them
      const w = this.workers[i];
      const recycled = w ? buffersFor(NO_TASKS, w.threadId) : undefined;
      if (recycled !== undefined) { this.ports[i]!.postMessage({ recycled }); recycling.homedAhead += recycled.length; }
      this.ports[i]!.postMessage(m);
      if (wakeLane(this.flags, i)) this.wakes++;
    }
  }

  /** Batches posted on the ready board that no lane has taken yet. */
  boardOpen(): number {
    return this.board.open();
  }

  /** Batches the lanes took from the ready board so far. */
  get boardTaken(): number {
    this.board.open();
    return this.board.taken;
  }

  /** Tell workers to drop the rest of their batches (the run failed). */
  abort(): void {
    Atomics.store(this.flags, abortFlag(this.lanes), 1);
    // a worker waiting for a fed value must see it
    for (let i = 0; i < this.lanes; i++) wakeLane(this.flags, i);
  }

  /**
   * Stop the workers. Those that booted are asked to stop after their batch (a tracing worker
   * closes its file then); those still booting had nothing to do and are terminated.
   */
  async stop(graceMs = 2000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.undefer();
    this.system?.stop();
    const waits: Promise<void>[] = [];
    for (let i = 0; i < this.workerLanes; i++) {
      const w = this.workers[i];
      if (!w || this.exited[i]) continue;
      if (!this.ready[i]) { void w.terminate(); continue; }
      waits.push(new Promise<void>((r) => w.once('exit', () => r())));
      this.ports[i]!.postMessage({ stop: true });
      wakeLane(this.flags, i);
    }
    if (waits.length === 0) return;
    const timeout = new Promise<void>((r) => setTimeout(r, graceMs).unref());
    await Promise.race([Promise.all(waits), timeout]);
    // workers still in a ucode: keep what they recorded before it
    this.spillTraces(true);
    for (const w of this.workers) if (w) void w.terminate();
  }

  /**
   * Stop lane `i`'s worker now (a ucode ran too long): its death is reported with `cause` at
   * once. Worker.terminate() stops JavaScript, not native code: a C++ ucode that never returns
   * keeps its thread (the process ends with the failed run), so nothing waits for its exit.
   */
  terminate(i: number, cause: string): void {
    const w = this.workers[i];
    if (!w || this.exited[i] || this.causes[i] !== undefined) return;
    this.causes[i] = cause;
    const t = this.traces[i];
    if (t) spillSharedTrace(t.buffer, t.path, true);
    void w.terminate();
    this.exited[i] = true;
    Atomics.store(this.inflight, i, 0);
    this.recount();
    this.deaths[i]?.(cause);
  }

  /**
   * Write out what the workers recorded and lent (they lend their trace while in a ucode or
   * asleep); `final`: they are being stopped, nothing more will come from them.
   */
  spillTraces(final = false): void {
    for (let i = 0; i < this.workerLanes; i++) {
      const t = this.traces[i];
      if (t) spillSharedTrace(t.buffer, t.path, final);
    }
  }

  /**
   * Worker threads that were told to end and have not: stuck in native code, which
   * Worker.terminate() cannot interrupt. The process must then end without waiting for them.
   */
  get stuck(): number {
    let n = 0;
    for (let i = 0; i < this.lanes; i++) if (this.workers[i] && !this.gone[i] && (this.stopped || this.causes[i] !== undefined)) n++;
    return n;
  }

  /** The node's threads counted on a CPU now (workers not asleep, the system thread unless it rests). */
  get onCpu(): number {
    return Atomics.load(this.flags, onCpuFlag(this.lanes));
  }

  /** Whether lane `i`'s worker sleeps on its flag (parked or not). */
  asleep(i: number): boolean {
    return Atomics.load(this.flags, i) !== AWAKE;
  }

  /** The CF lane `i` is running (-1: none). */
  running(i: number): number {
    return this.flags[runningFlag(this.lanes, i)]!;
  }

  /** Stop immediately (errors): do not wait for running ucodes. */
  async kill(): Promise<void> {
    this.stopped = true;
    this.undefer();
    this.system?.stop();
    await Promise.all(this.workers.filter((w): w is Worker => w !== undefined).map((w) => w.terminate()));
  }
}

/** V8's heap limit of this process in MB (a worker without resourceLimits gets the same). */
function defaultHeapMb(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
}
