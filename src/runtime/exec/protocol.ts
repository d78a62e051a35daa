// What the system thread hands to executors (worker threads, or itself for inline runs) and
// what comes back.
import type { MessagePort } from 'node:worker_threads';
import type { ParamType } from '../../core/imports.js';
import type { DfValue } from '../../ucode/value.js';
import type { NativeUcodes } from '../../ucode/cpp/native.js';
import { cpuClockExact, threadCpuNs } from '../../trace/clock.js';
import { lowerPriority } from './priority.js';

/** One atomic CF, ready to run. */
export interface Task {
  /** node-local CF number */
  cf: number;
  /** index of the ucode in CompiledProgram.imports */
  imp: number;
  /** aligned with the ucode's params: DfValue for value, number|string for int/real/string, null for name */
  args: unknown[];
  /** DF keys aligned with params ('' for plain values): for getName() and messages */
  keys: string[];
  /** forwarded inputs (continuations), see Forward; absent when every input is in args */
  fwd?: Forward[];
}

/**
 * A forwarded input: argument `arg` is output number `out` of task `task` of the same batch
 * (task ≥ 0), or of task `previousTask(task)` of the batch the same lane ran just before
 * (task < 0: a chain continuing across batches). With `lane`, it is fed across lanes: output
 * `out` of task `task` of batch `batch`, which lane `lane` runs (or ran); that lane's worker
 * sends it when asked by a feed request (see Feed).
 */
export interface Forward {
  arg: number;
  task: number;
  out: number;
  lane?: number;
  batch?: number;
}

/**
 * Feed requests to a producing lane, four numbers each: batch, task, output, consumer lane.
 * The system thread sends them before the consumer's batch; the producer answers when the task
 * has run (at once if it already ran) and keeps a batch's outputs until the system thread has
 * processed its result (after that no request can name it). The runtime sends an Int32Array:
 * a message clones it as one block, where an array costs a tagged write per number.
 */
export type Feed = Int32Array | number[];

/** Encode task index `i` of the lane's previous batch as a Forward.task. */
export const inPreviousBatch = (i: number): number => -1 - i;
/** The index in the previous batch of a Forward.task < 0. */
export const previousTask = (task: number): number => -1 - task;

export interface Batch {
  id: number;
  tasks: Task[];
}

/**
 * A planned loop as a lane's worker builds its steps from it (exec/plan-steps.ts): sent once a
 * loop to each lane with sites, before its first window. Step t's task runs site s's ucode; its
 * CF number is `firstCf` + (t − first)·sites + s.
 */
export interface WirePlan {
  /** the plan's number on this node (windows name it) */
  plan: number;
  first: number;
  last: number;
  /** the largest distance of an internal input */
  depth: number;
  firstCf: number;
  sites: WirePlanSite[];
}

/** Argument kinds of a planned site: an int a·t + b, a value passed as it is, an output, an input. */
export const ARG_INT = 0, ARG_VAL = 1, ARG_OUT = 2, ARG_IN = 3;

export interface WirePlanSite {
  imp: number;
  lane: number;
  /** per argument its kind (ARG_*), and for ARG_INT its a and b, for ARG_VAL its value */
  kinds: number[];
  a: number[];
  b: number[];
  vals: unknown[];
  /** per input (in argument order): the producing site, its output and the distance, three numbers each */
  inputs: number[];
  /** per output (in argument order): its readers inside the loop, [site, distance, …] */
  readers: number[][];
  /** per argument, its DF key's base and each index's a·t + b (getName, messages); null for a value */
  names: ({ base: string; a: number[]; b: number[] } | null)[];
}

/**
 * A window of a planned loop for one lane: its steps first..last of the sites on that lane, as
 * batch `id`. `ids[l]`: the window's batch on lane l (-1: no sites there), so a consumer names
 * the producer's batch of a value fed across lanes. `outside`: [t, site, argument] of the steps'
 * inputs read from before the loop, with their values in `outsideVals`.
 */
export interface WireWindow {
  window: number;
  id: number;
  first: number;
  last: number;
  ids: number[];
  outside: number[] | undefined;
  outsideVals: DfValue[] | undefined;
  /** freed raw buffers handed to the worker's pool with the window (exec/shm.ts) */
  recycled: SharedArrayBuffer[] | undefined;
}

export interface TaskError {
  task: number;
  message: string;
  stack?: string;
  /** the error is the executor's, not the ucode's (e.g. a Promise returned) */
  kind?: 'ucode' | 'async' | 'contract';
}

export interface BatchResult {
  lane: number;
  batch: number;
  /** per task that ran: values of its name params in order (null = not set) */
  outs: (DfValue | null)[][];
  error?: TaskError;
  /** wall ns of each task that ran (start and finish on the run's clock when traced, else durations from 0) */
  start?: Float64Array;
  fin?: Float64Array;
  /** how the batch's waits for values fed across lanes ended (absent: it waited for none) */
  fedWaits?: FedWaits;
  /** times the worker slept on its empty port before this batch came (absent: none): it had nothing to run */
  idleSleeps?: number;
  /** where the worker's time between CFs went since its previous result (absent: never traced, see LaneGaps) */
  gaps?: LaneGaps;
}

/**
 * A lane's time between two CFs, by cause, summed by the worker since its previous result:
 * `gapNs` all of it (from a CF's end to the next one's start); `batchWaits`/`batchWaitNs` the
 * times its port was empty when a batch ended and how long until the next came (the lane waited
 * for the system thread); `fedWaitNs` how long it waited for values fed by other lanes. What is
 * left of `gapNs` is the worker's own overhead (decoding, results, garbage collection) and time
 * the operating system gave its core to another thread.
 */
export interface LaneGaps {
  gapNs: number; batchWaits: number; batchWaitNs: number; fedWaitNs: number;
}

/**
 * How a worker's waits for fed values ended, counted per batch: the value was there already
 * (`none`), came while it spun (`spun`), or after it slept and its producer woke it (`slept`:
 * a wake-up on the path from producer to consumer).
 */
export interface FedWaits {
  none: number; spun: number; slept: number;
  /** sleeping lanes this worker woke with the values it fed them */
  woke: number;
}

/**
 * A ucode's request to its node's system thread, on the worker's request port (`post`: no
 * answer wanted). One is outstanding per worker at a time: the worker waits for its answer.
 */
export interface WireRequest { id: number; kind: string; payload: unknown; cf: number; post?: true }

/** The answer to request `id`: its value or the handler's refusal, and how the wait is booked. */
export interface WireAnswer {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
  /** index in WAIT_KINDS: what the wait was for, as the handler declared */
  wait: number;
  /** the resource, as the trace names it */
  resource: string;
}

/**
 * What a worker booted before its pool existed is given at its start (pool.ts bootEarly); its
 * WorkerInit comes later, in its first message.
 */
export interface EarlyData {
  early: true;
  /** the program's bundled ucode module, imported while the worker waits for its WorkerInit */
  ucodes?: string;
}

export interface WorkerInit {
  index: number;
  /** the node's ready board (board.ts): the lanes' batches in flight and its claim slots */
  board: SharedArrayBuffer;
  /** this node's rank (the ucode context says it) */
  node: number;
  /** bundled ucode module (absent when the program imports nothing) */
  bundle?: string;
  /** the compiled C++ ucodes (absent when the program has none) */
  native?: NativeUcodes;
  imports: { symbol: string; alias: string; params: ParamType[]; waits: boolean }[];
  /** modules of layers imported before the first batch (they register block kinds, see blocks.ts) */
  modules?: string[];
  /** this worker's end of its request port to the system thread */
  requests: MessagePort;
  /** Int32Array over a SharedArrayBuffer, see LaneFlags */
  flags: SharedArrayBuffer;
  port: MessagePort;
  trace?: { dir: string; node: number; origin: string; buffer?: SharedArrayBuffer };
  /** feed requests from the system thread (absent: this pool does not feed across lanes) */
  ctl?: MessagePort;
  /** per lane j, the port this worker shares with lane j's worker (values fed across lanes) */
  peers?: (MessagePort | null)[];
  /** the node's feed slots (slots.ts): ints and reals fed across lanes without a message */
  slots?: SharedArrayBuffer;
  /** how it waits when it has nothing to do (`LUNA_SPIN_US`, `LUNA_FED_SPIN_US` override the spins) */
  waiting: WaitPlan;
  /** the CPU this worker pins itself to at its first wait for a fed value (affinity.ts; absent: it runs where the process may) */
  cpu?: number;
  /**
   * --warm-start: rehearse the per-CF path this many fragments, at most `ms`, before reporting
   * ready (worker.ts rehearse). Ended early when the system thread raises `stop` (a worker alone;
   * Int32Array [flag]) or the wiring's abort flag (together): it found the program small.
   */
  rehearse?: { cfs: number; ms: number; pair?: RehearsalWiring; stop?: SharedArrayBuffer };
}

/**
 * The workers' own exchange wiring for a rehearsal together (worker.ts rehearseTogether): lane i
 * of `lanes` (the workers only) is fed by lane i+1 (mod lanes) and feeds lane i-1, over flags,
 * feed slots and ports of the rehearsal alone, through the code the run uses.
 */
export interface RehearsalWiring {
  /**
   * LaneFlags for the workers' lanes (the pool raises its abort flag when a worker dies
   * meanwhile, or when the system thread's rehearsal found the program small)
   */
  flags: SharedArrayBuffer;
  slots?: SharedArrayBuffer;
  /** feed requests to this worker, from the lane it feeds */
  ctl: MessagePort;
  /** feed requests this worker sends to the lane that feeds it */
  feedTo: MessagePort;
  /** per lane j, the port this worker shares with lane j's worker */
  peers: (MessagePort | null)[];
  /** Int32Array: [lanes that ran their last round, then per lane the last round whose feed requests it sent (-1: none)] */
  progress: SharedArrayBuffer;
}

/**
 * Shared flags between the system thread and workers (Int32Array): per lane its sleep state,
 * then the abort flag every worker checks between CFs, then per lane the CF it is running
 * (-1 when none) so that a worker that dies can be blamed on its fragment; then per lane the
 * count of feed requests sent to it, of values fed to it (a worker reads its ports only when
 * these moved), the last batch of it whose result the system thread processed, and the count
 * of answers to its requests, and the count of values fed to it that its worker looked at; then
 * the node's threads on a CPU (workers not asleep, and the
 * system thread while it works: a waiting thread spins only while that leaves it a core, see
 * `coreFree`) and the results workers posted; how far the lanes are to be lowered below the
 * system thread (0: not), which a worker reads as it boots (laneNiceFlag); last, per lane, whether
 * it is lowered (loweredFlag).
 */
export const SLEEPING = 1, AWAKE = 0;
/**
 * Asleep while a fed value is due within its spin: the system thread, when it rests and a core
 * frees, wakes one such worker, which spins again (see WorkerPool.rest).
 */
export const PARKED = 2;
export const flagsLength = (lanes: number): number => 8 * lanes + 4;
export const lanesOf = (flags: Int32Array): number => (flags.length - 4) / 8;
export const abortFlag = (lanes: number): number => lanes;
export const runningFlag = (lanes: number, lane: number): number => lanes + 1 + lane;
export const feedsFlag = (lanes: number, lane: number): number => 2 * lanes + 1 + lane;
export const inboxFlag = (lanes: number, lane: number): number => 3 * lanes + 1 + lane;
export const processedFlag = (lanes: number, lane: number): number => 4 * lanes + 1 + lane;
export const answersFlag = (lanes: number, lane: number): number => 5 * lanes + 1 + lane;
/** per lane, the count of values fed to it (inboxFlag) its worker last looked at (exchange.ts) */
export const seenFlag = (lanes: number, lane: number): number => 6 * lanes + 1 + lane;
export const onCpuFlag = (lanes: number): number => 7 * lanes + 1;
export const resultsFlag = (lanes: number): number => 7 * lanes + 2;
/**
 * How far the worker lanes are lowered below the system thread, set once the node finds its
 * fragments coarse (WorkerPool.lowerLanes): a worker that boots after that lowers itself before
 * it takes anything, a CF it takes from the ready board before the system thread has its ready
 * message included.
 */
export const laneNiceFlag = (lanes: number): number => 7 * lanes + 3;
/**
 * Per lane, whether it is lowered (laneNiceFlag): 0 not yet, LOWERED, or LOWEST (claimed with
 * nothing to change: the thread was at the lowest priority already). The system thread lowers the
 * lanes whose thread ids it has, and a lane lowers itself before it runs anything once the flag
 * is set (it may take a CF before the system thread has its id); a lowering is relative to the
 * thread's present nice, so whichever claims a lane first lowers it, once (lowerLaneOnce).
 */
export const loweredFlag = (lanes: number, lane: number): number => 7 * lanes + 4 + lane;
export const LOWERED = 1, LOWEST = 2;

/** Lower lane `lane` (thread `tid`) by `nice` unless it was claimed already (loweredFlag); true when this call changed its priority. */
export function lowerLaneOnce(flags: Int32Array, lane: number, tid: number, nice: number): boolean {
  const at = loweredFlag(lanesOf(flags), lane);
  if (Atomics.compareExchange(flags, at, 0, LOWEST) !== 0) return false;
  if (lowerPriority([tid], nice) === 0) return false;
  Atomics.store(flags, at, LOWERED);
  return true;
}

/**
 * Whether lane `lane` has been handed a fed value it has not looked at while it runs no CF: a
 * worker waiting for a value looks at every one within a microsecond while it is on a CPU, so
 * one that stays unseen means the lane waits for a core (it was woken from a sleep, or the
 * operating system took its core). A thread spinning for that lane's next value then holds a
 * core the lane needs.
 */
export function starved(flags: Int32Array, lanes: number, lane: number): boolean {
  return Atomics.load(flags, runningFlag(lanes, lane)) === -1 && Atomics.load(flags, inboxFlag(lanes, lane)) !== Atomics.load(flags, seenFlag(lanes, lane));
}

/**
 * Whether a thread that has nothing to do may spin rather than sleep: the node's threads on a
 * CPU, the spinner included, do not outnumber the CPUs it may use. A spinner that would take
 * the core a sibling needs (the system thread woken by a result, a worker woken by a batch)
 * sleeps instead: on 2 cores with 2 workers a worker spinning for its next batch delayed the
 * system thread that was to send it.
 */
export function coreFree(flags: Int32Array, onCpu: number, cpus: number): boolean {
  return Atomics.load(flags, onCpu) <= cpus;
}

/** A spin for a running producer checks the CPU it gets every this many ms (two clock reads of ~1 µs) … */
const SPIN_WINDOW_MS = 0.1;
/** … and stops when it got less than this share of the wall time: other processes want the cores */
const SPIN_CPU_SHARE = 0.8;
/** CpuShare: no window open (a double, see there) */
const NO_WINDOW = -0.5;

/**
 * Whether a spinner still gets its core. The spin gate (`coreFree`) counts the node's own threads
 * only: a spinner that gets much less than the wall time as CPU shares its core with other
 * processes, and would slow the thread it waits for. Measured in windows of SPIN_WINDOW_MS, with
 * the exact thread clock only (without it, always true).
 */
export class CpuShare {
  // The window's start, wall and thread CPU, in ms: doubles from the first (NO_WINDOW is one too).
  // In ns the thread's CPU clock is a small integer for its first 2.1 s, and the code V8
  // optimised on that in the rehearsal deoptimised in the span once it grew past ('not a Smi').
  private wall = NO_WINDOW;
  private cpu = NO_WINDOW;

  /** Forget the window (after a sleep, which would read as CPU denied). */
  reset(): void {
    this.wall = NO_WINDOW;
  }

  /** false once the spinner got less than SPIN_CPU_SHARE of a window's wall time (`now`: performance.now()) */
  ok(now: number): boolean {
    if (!cpuClockExact) return true;
    if (this.wall < 0) { this.wall = now; this.cpu = threadCpuNs() / 1e6; return true; }
    if (now - this.wall < SPIN_WINDOW_MS) return true;
    const cpu = threadCpuNs() / 1e6;
    if (cpu - this.cpu < SPIN_CPU_SHARE * (now - this.wall)) return false;
    this.wall = now;
    this.cpu = cpu;
    return true;
  }
}

/** How the threads of a node wait when they have nothing to do (the policy's `waiting`). */
export interface WaitPlan {
  /** CPUs the node may use: a waiting thread spins only while its threads on a CPU fit in them */
  cpus: number;
  /** ns a worker spins on its empty port before it sleeps (while a core is free) */
  idleSpinNs: number;
  /** ns a worker waiting for a value fed by another worker spins before it sleeps (same gate) */
  fedSpinNs: number;
  /**
   * ns it may go on spinning while the producing lane runs a CF (the value is being made; same
   * gate; absent: 0, `fedSpinNs` alone)
   */
  fedSpinProducerNs?: number;
  /**
   * ns a worker waiting for a fed value goes on spinning while the lane that makes it is starved
   * (`starved`: it holds a value it has not looked at and no core to look with); past it, the
   * spinner sleeps and leaves its core to that lane (absent: it never stops for that)
   */
  fedStarvedNs?: number;
  /** ns the system thread, its pump done, spins for a worker's result before it returns to the event loop (same gate) */
  resultSpinNs: number;
  /**
   * ns the system lane, its spin for a fed value over, sleeps on its flag as a worker does before
   * it suspends the batch and returns to the event loop (absent: 0, it returns at once)
   */
  laneSleepNs?: number;
  /** worker lanes pinned one to a CPU where the node has a CPU for each (affinity.ts; absent: not pinned) */
  pinLanes?: boolean;
  /**
   * ns of work left in a worker's batch at which, if the batch has run at least as long, it tells
   * the system thread it is running low (a `low` message), so the next batch is planned while
   * this one still runs, not after the lane ran dry (absent or 0: it never does)
   */
  runLowNs?: number;
}

/**
 * Lane `lane`'s thread leaves its CPU to wait in `state` (SLEEPING, or PARKED for a fed value):
 * the node's count of threads on a CPU drops now, and its waker (wakeLane) counts it back.
 */
export function leaveCpu(flags: Int32Array, lane: number, onCpu: number, state: number): void {
  Atomics.store(flags, lane, state);
  Atomics.sub(flags, onCpu, 1);
}

/** Lane `lane`'s thread is back from a wait in `state`: on a CPU again, unless its waker counted it so. */
export function backOnCpu(flags: Int32Array, lane: number, onCpu: number, state: number): void {
  if (Atomics.compareExchange(flags, lane, state, AWAKE) === state) Atomics.add(flags, onCpu, 1);
}

/**
 * Wake lane `lane`'s worker if it sleeps (after a message or request was posted to it). The
 * waker counts it on a CPU at once: the woken thread takes tens of microseconds to run, and a
 * spinner must not take its core meanwhile. True when it woke it (the lane slept or was parked).
 */
export function wakeLane(flags: Int32Array, lane: number): boolean {
  const v = Atomics.load(flags, lane);
  if (v !== AWAKE && Atomics.compareExchange(flags, lane, v, AWAKE) === v) {
    Atomics.add(flags, onCpuFlag(lanesOf(flags)), 1);
    Atomics.notify(flags, lane);
    return true;
  }
  return false;
}
