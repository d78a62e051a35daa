// A rehearsal of the program on the system thread while its worker threads boot (--warm-start):
// the program's own fragments go through this thread's whole per-fragment path — examination,
// batches, feeding across lanes, the wire codec, completion, the DF store — against simulated
// lanes that return a placeholder for every output at once. No ucode runs: nothing the program
// does is seen outside, and the rehearsal's node state is dropped when it ends.
//
// Why: V8 compiles and tiers this path only as it runs. Over a short program's first thousands
// of fragments the system thread runs it as baseline code, at ~3× the CPU of the same fragments
// warm: the C++ stencil_1d of Task Bench, 1 000 steps on 2 lanes, took 55–70 ms of system-thread
// CPU cold and 19–24 ms in the third run of one process. The workers' boot is a wait anyway.
//
// Placeholders differ from the real values, so a program whose control flow reads its DFs may
// take another way, loop, or fail: the rehearsal is cut at a budget of fragments and of time,
// and a fault ends it quietly.
import type { CompiledProgram } from '../../program/compile.js';
import { T_INT, T_REAL, type DfValue } from '../../ucode/value.js';
import { batchId, batchSize, decodeResult, encodeBatch, encodeResult, type WireBatch } from '../exec/codec.js';
import type { Batch, WirePlan, WireWindow } from '../exec/protocol.js';
import type { RehearsalBudget, SchedulingPolicy } from '../policy/types.js';
import { wallNs } from '../../trace/clock.js';
import { ThreadTraceWriter } from '../../trace/writer.js';
import { NodeRuntime, type Executors } from './runtime.js';

/** What a runtime's executors read of its lanes as they go (a worker pool, or the rehearsal's simulated lanes). */
export interface LaneCounts { readonly booted: number; readonly wakes: number; readonly boardTaken?: number }

/**
 * The executors of a runtime, the run's and its rehearsal's alike: one class, every field set in
 * one order (undefined where absent), the counts read through the prototype. The rehearsal's
 * executors were an object literal of other fields than the run's, so every function of the
 * runtime optimised on them met another hidden class in the span and deoptimised ('wrong map').
 */
export class LaneExecutors implements Executors {
  readonly lanes: number;
  readonly inflight: ArrayLike<number>;
  readonly send: Executors['send'];
  readonly boardRoom: Executors['boardRoom'];
  readonly post: Executors['post'];
  readonly boardOpen: Executors['boardOpen'];
  readonly sendPlanned: Executors['sendPlanned'];
  readonly inline: Executors['inline'];
  readonly feed: Executors['feed'];
  readonly warm: Executors['warm'];
  readonly rest: Executors['rest'];
  readonly work: Executors['work'];
  readonly lowerLanes: Executors['lowerLanes'];
  readonly blocked: Executors['blocked'];
  readonly answers: Executors['answers'];
  readonly ask: Executors['ask'];
  readonly settle: Executors['settle'];
  constructor(e: Omit<Executors, 'booted' | 'wakes' | 'boardTaken'>, private readonly counts: LaneCounts) {
    this.lanes = e.lanes;
    this.inflight = e.inflight;
    this.send = e.send;
    this.boardRoom = e.boardRoom;
    this.post = e.post;
    this.boardOpen = e.boardOpen;
    this.sendPlanned = e.sendPlanned;
    this.inline = e.inline;
    this.feed = e.feed;
    this.warm = e.warm;
    this.rest = e.rest;
    this.work = e.work;
    this.lowerLanes = e.lowerLanes;
    this.blocked = e.blocked;
    this.answers = e.answers;
    this.ask = e.ask;
    this.settle = e.settle;
  }
  get booted(): number { return this.counts.booted; }
  get wakes(): number { return this.counts.wakes; }
  get boardTaken(): number { return this.counts.boardTaken ?? 0; }
}

/**
 * `Executors.answers` over the imports a node's request desk answers (`asking.asked[imp]`),
 * the run's and its rehearsal's made here alike: the runtime calls it per CF, and code optimised
 * on a closure of another site deoptimised at the span's first call ('wrong feedback cell').
 */
export function answering(asking: { asked: readonly boolean[] }): (imp: number) => boolean {
  return (imp) => asking.asked[imp] === true;
}

/**
 * What the rehearsal did: fragments the simulated lanes returned, runs begun, and runs that
 * went to the program's end.
 */
export interface Rehearsed { cfs: number; runs: number; finished: number }

/**
 * Whether the rehearsal found the program small: it ran to its end in each of the runs the budget
 * asks (and was rehearsed no further). Its real run is then short too, cold or not, and warming
 * anything more for it (the workers' own rehearsal) costs more than it saves.
 */
export function foundSmall(done: Rehearsed, budget: RehearsalBudget): boolean {
  return done.finished >= budget.runs;
}

/**
 * Rehearse `program` with `args` on `lanes` simulated lanes under a fresh `policy` each run (a
 * policy may keep what it learnt: the real run must not inherit it), until the budget is spent,
 * in at least the runs it asks, and no more than those when each went to the program's end (a
 * small program): a run is cut only when a batch returns, so one fed batch of
 * hundreds of CFs can take it past its share, and the runs it asks (each a fresh start: the
 * paths a run's beginning takes) would otherwise be fewer.
 */
export async function rehearse(program: CompiledProgram, args: readonly (number | string)[], lanes: number, policy: () => SchedulingPolicy, budget: RehearsalBudget, traced = false, planLanes = 0): Promise<Rehearsed> {
  const trace = traced ? rehearsalTrace() : undefined;
  const until = performance.now() + budget.ms;
  const done: Rehearsed = { cfs: 0, runs: 0, finished: 0 };
  const perRun = Math.max(1, Math.ceil(budget.cfs / budget.runs));
  // A program that ran to its end `runs` times is smaller than a run's share: rehearsing it
  // further (a tiny one hundreds of times) costs more than its whole real run saves.
  while ((done.cfs < budget.cfs || done.runs < budget.runs) && !foundSmall(done, budget) && performance.now() < until) {
    const cut = done.runs < budget.runs ? perRun : Math.min(perRun, budget.cfs - done.cfs);
    const n = await once(program, args, lanes, policy(), cut, until, budget.cfNs, trace, planLanes);
    done.cfs += n.cfs;
    done.runs++;
    if (n.finished) done.finished++;
    if (n.cfs === 0) break; // a program without fragments for the lanes (or one cut at once): nothing to rehearse
  }
  return done;
}

/** how often a run's budget is checked apart from its results (ms) */
const CHECK_MS = 5;
/**
 * CFs of any kind a run may make: MADE_PER_CF per atomic fragment of its budget (a stencil makes
 * ~1.5 per fragment it runs) and MADE_AHEAD more, what loops unroll ahead of what runs (a memory
 * bound of ~1 KB a CF against placeholders that spawn for ever)
 */
const MADE_PER_CF = 16;
const MADE_AHEAD = 65_536;
/**
 * Results returned together in a run's first BURST_TURNS turns, before the pump runs. Returned one
 * a turn, a CF the lanes had no fed slot for was always offered again while its inputs were still
 * in flight, and went out fed. In the run the lanes' first results come together (Task Bench's
 * stencil: both lanes' first two batches before the pump looked again): the CF waits, its values
 * are delivered to it, it goes out with them. That path never ran here, and `deliver`, `examine`,
 * `gotValue`, `complete`, `countHandoffs` and `batchDone` deoptimised at the span's first step
 * ('insufficient type feedback', --trace-deopt-verbose) and were compiled again in the span. Only
 * the first turns: returned so throughout, the rehearsal fed less, and the fed path's functions
 * deoptimised in the span instead.
 */
const BURST = 4;
const BURST_TURNS = 4;

/** One run, cut after `cfs` fragments or at `until`. */
function once(program: CompiledProgram, args: readonly (number | string)[], lanes: number, policy: SchedulingPolicy, cfs: number, until: number, cfNs: number, trace: ThreadTraceWriter | undefined, planLanes: number): Promise<{ cfs: number; finished: boolean }> {
  const outputs = program.imports.map((m) => m.params.filter((p) => p === 'name').length);
  const inflight = new Int32Array(lanes);
  // batches in the order they were sent: a fed batch is sent after the batches that feed it,
  // so returning them in that order keeps every producer ahead of its consumers
  // (`plan`, `step`: a planned window's plan and first step, -1 for a batch of tasks)
  const queue: { lane: number; id: number; n: number; outputs: number[]; plan: number; step: number }[] = [];
  let returned = 0, results = 0, over = false, rt: NodeRuntime | undefined;
  return new Promise((resolve) => {
    // the budget holds also when no batch comes back to check it: placeholders can send a
    // program's sub calls round for ever without a fragment for the lanes, so the time and the
    // CFs made (structured ones too) are checked apart from the results
    const timer = setInterval(() => { if (performance.now() > until || (rt !== undefined && rt.st.made > MADE_PER_CF * cfs + MADE_AHEAD)) end(false); }, CHECK_MS);
    const end = (finished: boolean): void => {
      if (over) return;
      over = true;
      clearInterval(timer);
      // a cut run stops pumping: a failed runtime schedules nothing more
      if (!finished) rt!.fail(new Error('rehearsal cut'));
      resolve({ cfs: returned, finished });
    };
    let turns = 0;
    const lane = (): void => {
      // one batch a turn, as results come from the workers: the pump runs in between; but a run's
      // first turns return up to BURST at once, as a run's first results come (see BURST)
      const burst = turns++ < BURST_TURNS ? BURST : 1;
      for (let k = 0; k < burst; k++) if (!returnOne()) return;
      if (queue.length > 0) setImmediate(lane);
    };
    const returnOne = (): boolean => {
      if (over || queue.length === 0) return false;
      // (checked before a result, not after: the last result of a run lets the run end)
      if (returned >= cfs || performance.now() > until) { end(false); return false; }
      // the lanes' batches of one planned window come back in either order in a run (each lane's
      // last step reads nothing of the other's): every other window, the later lane's first. Booked
      // always in lane order, the freed keys' rows were always widened by the next column, and
      // addToRows' other branch (a column before the row's last) deoptimised at the span's first
      // such booking ('insufficient type feedback for call')
      const swap = queue.length > 1 && queue[0]!.step >= 0 && queue[1]!.step === queue[0]!.step && queue[1]!.plan === queue[0]!.plan && (results & 2) === 2;
      const b = swap ? queue.splice(1, 1)[0]! : queue.shift()!;
      const n = b.n;
      const outs = new Array<DfValue[]>(n);
      // ints and reals by turns: a run's values are often reals (Task Bench's), and the branches
      // of the wire codec and the DF store for a kind the rehearsal never made deoptimised in the span
      const real = (results & 1) === 1;
      for (let i = 0; i < n; i++) outs[i] = placeholders(b.outputs[i]!, real);
      // (doubles, as a run's clock gives: integers kept the runtime's time fields small integers
      // until the span's first double generalised them, deprecating its class: 'wrong map')
      const start = new Float64Array(n).fill(0.25), fin = new Float64Array(n).fill(cfNs + 0.25);
      // what a worker reports beside its outputs (exec/worker.ts): a run's results carry it, and
      // the branches that read it had no feedback here ('insufficient type feedback' in the span);
      // the counts go to this rehearsal's runtime, dropped after; and a worker's shared buffers it
      // dropped (counted towards this thread's next collection: a byte)
      const r = encodeResult(b.lane, b.id, outs, start, fin, {
        fedWaits: { none: 1, spun: 0, slept: 0, woke: 0 }, idleSleeps: (results & 3) === 2 ? 1 : undefined,
        gaps: { gapNs: 0.5, batchWaits: 0, batchWaitNs: 0.5, fedWaitNs: 0.5 }, dropped: (results & 3) === 3 ? 1 : undefined,
      });
      results++;
      // through the structured clone a worker's result takes: the system thread then meets the
      // objects a real result makes (a shape it had not seen deoptimised the code warmed here)
      const wire = structuredClone(r);
      inflight[b.lane]!--;
      returned += n;
      rt!.onResult(decodeResult(wire));
      return true;
    };
    const sent = (l: number, id: number, n: number, tasks: readonly { imp: number }[], plan: number, step: number): void => {
      inflight[l]!++;
      queue.push({ lane: l, id, n, outputs: tasks.map((t) => outputs[t.imp]!), plan, step });
      if (queue.length === 1) setImmediate(lane);
    };
    // every executor the run's has, doing nothing where a simulated lane has nothing to do
    const none = (): void => {};
    const exec = new LaneExecutors({
      lanes, inflight,
      send(l: number, batch: Batch): void {
        const wire: WireBatch = encodeBatch(batch.id, batch.tasks);
        sent(l, batchId(wire), batchSize(wire), batch.tasks, -1, -1);
      },
      // (simulated lanes take no batch of their own: nothing is posted on a board)
      boardRoom: () => 0, post: none, boardOpen: () => 0,
      // the run's lanes build planned steps from a plan (exec/plan-steps.ts): so do these, as far
      // as the system thread sees — a window comes back as a batch of its steps. Without it the
      // rehearsal sent planned loops as tasks, and the span's first windows were the system
      // thread's first emitRange (46–77 ms of TurboFan on the lanes' cores at 2^16)
      sendPlanned: planLanes > 0 ? (l: number, m: { loopPlan: WirePlan } | WireWindow, imps?: readonly { imp: number }[]): boolean => {
        if (l >= planLanes) return false;
        // the pool stores the window's buffers (exec/pool.ts sendPlanned): without this store, the
        // run's first one made the literal's field mutable, and emitRange, optimised here on a
        // const field, was deoptimised at the span's first window ('code dependencies')
        if ('window' in m) { m.recycled = undefined; sent(l, m.id, imps!.length, imps!, m.window, m.first); }
        return true;
      } : undefined,
      inline: undefined, feed: none, warm: none, rest: none, work: none, lowerLanes: none,
      blocked: () => false, answers: answering({ asked: [] }), ask: none, settle: () => false,
    }, { booted: lanes, wakes: 0 });
    // (the host's fields those of the run's, in its order: run.ts)
    rt = new NodeRuntime(program, { rank: 0, size: 1, lanes, trace, now: trace ? wallNs : () => 0, remote: undefined }, exec, policy);
    rt.onIdle = () => end(true);
    rt.onFault = () => end(false);
    try { rt.start(args); } catch { end(false); }
  });
}

function placeholders(n: number, real: boolean): DfValue[] {
  const o = new Array<DfValue>(n);
  for (let i = 0; i < n; i++) o[i] = real ? { t: T_REAL, v: 1.5 } : { t: T_INT, v: 1 };
  return o;
}

/**
 * The system thread's rehearsal trace (a traced run only), so the runtime's traced branches
 * (cfCreated, cfReady and cfInput, dfComputed, sysBusy) get their feedback before the span.
 * Rehearsed untraced, the span's first CFs took them for the first time: newCf ran in baseline
 * code, recompiled in the span, and tracing cost the system thread ~13 µs a CF at Task Bench's
 * METG sizes (docs/benchmarks.md, "What the system thread's trace costs"). One per process, as the
 * workers' rehearsal writers.
 */
function rehearsalTrace(): ThreadTraceWriter {
  return rehearsalTw ??= ThreadTraceWriter.discarding(0, 0);
}
let rehearsalTw: ThreadTraceWriter | undefined;

/** Records the traced rehearsals of this process wrote (to /dev/null) so far. */
export function rehearsalTraceRecords(): number {
  return rehearsalTw?.records ?? 0;
}
