// The system thread as one of the node's lanes. On a node whose system thread serves no peers,
// `--threads T` runs T − 1 worker threads and this lane: batches sent to it run on the system
// thread between its own duties (one batch per event-loop turn, after the pump that sent it),
// with the same inputs a worker's batch has (forwarded within the batch, from the lane's previous
// batch, fed across lanes through the node's feed slots and ports). Then only T threads want the
// T cores, and a waiting thread may spin where three threads on two cores made it sleep.
//
// What it keeps from a worker: its CFs run in the order they were sent (FIFO on the lane); a
// ucode's failure becomes the batch's error and names the CF (the runtime reports it); its CFs
// are traced on a lane of their own (thread T in the system thread's file). What it cannot do
// as a worker does: block for long. A wait for a fed value spins while a core is free for it,
// sleeps on the lane's flag for a bounded while (the policy's laneSleepNs: the event loop's
// worker results, deaths and signals wait that long at most), then the batch is suspended and
// the event loop runs on until a producer's notify or the abort resumes it (Atomics.waitAsync).
// Codes that may wait for their node never come here (the runtime keeps such programs on
// workers).
import type { DfValue } from '../../ucode/value.js';
import type { TraceSink } from '../../trace/schema.js';
import { wallNs } from '../../trace/clock.js';
import { InlineFailure, type InlineExecutor } from './inline.js';
import { CpuShare, SLEEPING, abortFlag, backOnCpu, leaveCpu, coreFree, onCpuFlag, runningFlag, type Batch, type BatchResult, type FedWaits, type Forward, type TaskError, type WaitPlan } from './protocol.js';
import type { Exchange } from './exchange.js';

/** A batch being run: where it stands, so that a wait for a fed value can suspend it. */
interface Running {
  b: Batch;
  ti: number;
  /** forwarded inputs of task `ti` already taken */
  fi: number;
  outs: (DfValue | null)[][];
  start: Float64Array;
  fin: Float64Array;
}

/**
 * A suspended wait wakes at least this often (ms) to look again: a notify may come between the
 * check and the wait's start, and a stopped pool leaves no wait behind for long.
 */
const SUSPEND_SLICE_MS = 50;

export interface SystemLaneOptions {
  /** this lane's index (the last of the node's lanes) */
  lane: number;
  /** the node's shared flags (protocol.ts): this lane sleeps, runs and is woken through them as a worker is */
  flags: Int32Array;
  inline: InlineExecutor;
  /** this lane's side of feeding across lanes (absent: the pool does not feed) */
  exchange?: Exchange;
  waiting: WaitPlan;
  /** the batch's result, as a worker's would come (the pool's result path) */
  onResult: (r: BatchResult) => void;
  trace?: TraceSink;
}

export class SystemLane {
  private readonly queue: Batch[] = [];
  private scheduled = false;
  private cur: Running | null = null;
  /** a wait for a fed value suspended the current batch */
  private suspended = false;
  private stopped = false;
  /** outputs of the batch this lane ran last (a chain may continue from them) */
  private prevOuts: (DfValue | null)[][] = [];
  private waits: FedWaits | undefined;
  private readonly ABORT: number;
  private readonly RUNNING: number;
  private readonly ONCPU: number;
  /** batches this lane ran, the times it slept for a fed value, suspended a batch for one, and how long those lasted (ns) */
  readonly stats = { batches: 0, sleeps: 0, suspends: 0, suspendedNs: 0 };

  constructor(private readonly o: SystemLaneOptions) {
    const lanes = o.lane + 1;
    this.ABORT = abortFlag(lanes);
    this.RUNNING = runningFlag(lanes, o.lane);
    this.ONCPU = onCpuFlag(lanes);
    o.flags[this.RUNNING] = -1;
  }

  /** Queue batch `b`: it runs after the current turn of the event loop. */
  send(b: Batch): void {
    this.queue.push(b);
    this.later();
  }

  /** Whether a batch waits to run here or is suspended (the system thread has work of its own). */
  get pending(): boolean {
    return this.queue.length > 0 || this.cur !== null;
  }

  /**
   * Answer the feed requests sent to this lane (outputs of its batches, kept until the runtime
   * processed their results): a worker answers them while it waits; this lane is asked by its
   * own thread, so it answers at once.
   */
  serve(): void {
    this.o.exchange?.serve();
  }

  /** The pool stops: a suspended batch is dropped. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
  }

  private later(): void {
    if (this.scheduled || this.suspended || this.stopped) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    if (this.stopped) return;
    if (this.cur === null) {
      const b = this.queue.shift();
      if (b === undefined) return;
      this.cur = { b, ti: 0, fi: 0, outs: new Array(b.tasks.length), start: new Float64Array(b.tasks.length), fin: new Float64Array(b.tasks.length) };
      this.o.exchange?.begin(b.id, this.cur.outs);
    }
    if (!this.resume()) return; // suspended: a producer's notify resumes it
    if (this.queue.length > 0) this.later();
  };

  /** Run the current batch from where it stands; false when a fed value's wait suspended it. */
  private resume(): boolean {
    const r = this.cur!, o = this.o, flags = o.flags, tasks = r.b.tasks, ex = o.exchange;
    let error: TaskError | undefined;
    for (; r.ti < tasks.length; r.ti++) {
      if (flags[this.ABORT] !== 0) break; // the run failed: drop the rest
      const ti = r.ti, t = tasks[ti]!;
      if (t.fwd) {
        // (resumed after a suspension: the inputs taken before it are in args already)
        let aborted = false;
        for (const fwd = t.fwd; r.fi < fwd.length; r.fi++) {
          const f = fwd[r.fi]!;
          if (f.lane === undefined) { t.args[f.arg] = (f.task >= 0 ? r.outs[f.task] : this.prevOuts[-1 - f.task])![f.out]; continue; }
          const v = this.fed(f);
          if (v === SUSPEND) return false;
          if (v === undefined) { aborted = true; break; }
          t.args[f.arg] = v;
        }
        r.fi = 0;
        if (aborted) break;
        if (o.trace) o.trace.cfReady(wallNs(), t.cf);
      }
      Atomics.store(flags, this.RUNNING, t.cf);
      try {
        r.outs[ti] = o.inline.run(t, o.lane, true);
      } catch (e) {
        Atomics.store(flags, this.RUNNING, -1);
        if (!(e instanceof InlineFailure)) throw e;
        error = { ...e.error, task: ti };
        Atomics.store(flags, this.ABORT, 1); // the run fails: the workers stop after their current CF
        break;
      }
      r.start[ti] = o.inline.start;
      r.fin[ti] = o.inline.fin;
      ex?.ran(r.b.id, ti);
    }
    Atomics.store(flags, this.RUNNING, -1);
    const ran = error ? error.task : Math.min(r.ti, tasks.length);
    this.cur = null;
    r.outs.length = ran;
    this.prevOuts = r.outs;
    this.stats.batches++;
    const res: BatchResult = { lane: o.lane, batch: r.b.id, outs: r.outs, start: r.start.subarray(0, ran), fin: r.fin.subarray(0, ran) };
    if (error) res.error = error;
    if (ex && ex.woke > 0) { (this.waits ??= { none: 0, spun: 0, slept: 0, woke: 0 }).woke = ex.woke; ex.woke = 0; }
    if (this.waits) { res.fedWaits = this.waits; this.waits = undefined; }
    o.onResult(res);
    return true;
  }

  /**
   * The value fed for `f`: at once, after a spin while a core is free for it (as a worker spins,
   * policy/default.ts FED_SPIN_NS, and on while its producer runs a CF), or SUSPEND: the batch
   * waits in the event loop for the producer's notify. Undefined: the run was aborted.
   */
  private fed(f: Forward): DfValue | null | undefined | typeof SUSPEND {
    const ex = this.o.exchange!, flags = this.o.flags, plan = this.o.waiting;
    const w = (this.waits ??= { none: 0, spun: 0, slept: 0, woke: 0 });
    const first = ex.take(f.lane!, f.batch!, f.task, f.out);
    if (first !== undefined) { if (this.waking) w.slept++; else w.none++; this.waking = false; return first; }
    // waiting runs no CF: a worker waiting for this lane's value must not spin on as if it did
    Atomics.store(flags, this.RUNNING, -1);
    const t0 = performance.now();
    const until = t0 + plan.fedSpinNs / 1e6;
    const producing = t0 + (plan.fedSpinProducerNs ?? 0) / 1e6;
    const PRODUCER = runningFlag(this.o.lane + 1, f.lane!);
    const share = new CpuShare();
    for (;;) {
      const v = ex.take(f.lane!, f.batch!, f.task, f.out);
      if (v !== undefined) { if (this.waking) w.slept++; else w.spun++; this.waking = false; return v; }
      ex.serve(); // the producer of what we wait for may wait for us
      if (flags[this.ABORT] !== 0) return undefined;
      const now = performance.now();
      if (!coreFree(flags, this.ONCPU, plan.cpus)) break;
      if (now < until) continue;
      if (now < producing && Atomics.load(flags, PRODUCER) !== -1 && share.ok(now)) continue;
      break;
    }
    // sleep as a worker does (the producer's wakeLane notifies this flag), for a while
    if (plan.laneSleepNs && this.sleep(plan.laneSleepNs)) {
      const v = ex.take(f.lane!, f.batch!, f.task, f.out);
      if (v !== undefined) { w.slept++; this.waking = false; return v; }
      if (flags[this.ABORT] !== 0) return undefined;
    }
    this.suspend();
    return SUSPEND;
  }

  /**
   * Sleep on this lane's flag up to `ns` unless something came meanwhile; whether it slept. The
   * node's count of threads on a CPU leaves with this one, as with a worker (protocol.ts wakeLane).
   */
  private sleep(ns: number): boolean {
    const flags = this.o.flags, me = this.o.lane, ex = this.o.exchange!;
    leaveCpu(flags, me, this.ONCPU, SLEEPING);
    const slept = !ex.pending() && flags[this.ABORT] === 0;
    if (slept) { this.stats.sleeps++; Atomics.wait(flags, me, SLEEPING, ns / 1e6); }
    backOnCpu(flags, me, this.ONCPU, SLEEPING);
    return slept;
  }

  /** the batch was suspended and resumed since its last fed value (FedWaits.slept) */
  private waking = false;

  /**
   * Leave the CPU to the node's other threads until a value is fed to this lane (the producer's
   * wakeLane notifies this lane's flag) or the run aborts; the event loop runs meanwhile.
   */
  private suspend(): void {
    const flags = this.o.flags, me = this.o.lane, ex = this.o.exchange!;
    this.suspended = true;
    this.stats.suspends++;
    const t0 = performance.now();
    leaveCpu(flags, me, this.ONCPU, SLEEPING);
    const wake = (): void => {
      backOnCpu(flags, me, this.ONCPU, SLEEPING);
      this.suspended = false;
      this.waking = true;
      this.stats.suspendedNs += (performance.now() - t0) * 1e6;
      if (this.stopped) { this.cur = null; return; }
      this.turn();
    };
    const wait = (): void => {
      if (this.stopped || ex.pending() || flags[this.ABORT] !== 0 || Atomics.load(flags, me) !== SLEEPING) { wake(); return; }
      const a = waitAsync(flags, me, SLEEPING, SUSPEND_SLICE_MS);
      if (!a.async) { wake(); return; }
      void a.value.then((how) => { if (how === 'timed-out') wait(); else wake(); });
    };
    wait();
  }
}

const SUSPEND: unique symbol = Symbol('suspend');

/** Atomics.waitAsync (Node 16+; the library's types know it from ES2024 on). */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, i: number, v: number, ms: number): { async: false; value: string } | { async: true; value: Promise<'ok' | 'timed-out'> };
}).waitAsync;
