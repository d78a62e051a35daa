// One node of a run, on its system thread: the pump that examines CFs and hands ready atomic
// CFs to executors, the completion of finished CFs, and the entry points other nodes use.
// The mechanism lives here and in examine.ts / batch.ts / state.ts; every open decision goes
// to the SchedulingPolicy.
//
// With one lane the order is the original's FIFO (docs/language.md §8.3): the head of the run queue
// is examined only when no batch is in flight; consecutive ready CFs (and CFs fed only by them)
// form one batch. With several lanes everything is examined at once and ready CFs are spread
// over the lanes. Either way, CFs of codes measured to be tiny run on this thread at once.
// the clock from its module, loaded with this one: the global `performance` is a lazy getter
// that loads perf_hooks at its first read, which was the pump's (~1 ms of cold module code in
// its first turns), and calls the getter at every read after it
import { performance } from 'node:perf_hooks';
import type { CallSite, CompiledProgram, ForSite, Site } from '../../program/compile.js';
import { displayDf, type DfKey } from '../../core/dfkey.js';
import { EvalError } from '../../program/expr.js';
import { T_RAW, type DfValue } from '../../ucode/value.js';
import { InlineFailure, type InlineExecutor } from '../exec/inline.js';
import { nameOfKey } from '../exec/call.js';
import type { DirectForm } from '../../ucode/cpp/native.js';
import type { Batch, BatchResult, Feed, Task, TaskError, WirePlan, WireWindow } from '../exec/protocol.js';
import type { BatchSizing, SchedulingPolicy } from '../policy/types.js';
import { BatchBuilder, mayWaitForNode, type LaneTail, type Producer } from './batch.js';
import { BLOCKED, Interpreter, TASK, WAIT } from './examine.js';
import { FeedBook } from './feed.js';
import { Cf, DISPATCHED, DONE, OUT_DROP, OUT_PUSH, QUEUED } from './fragment.js';
import { describeSite, RequestRefused, RunFault } from './fault.js';
import type { AskDone, DeskHost } from '../exec/desk.js';
import { batchBooking, batchDone, batchSent, batchesDropped, collectDue, type FlightBook } from '../exec/shm.js';
import { threadCpuNs } from '../../trace/clock.js';
import { NodeState, type NodeHost } from './state.js';
import { planLoop } from './loop-plan.js';
import { tuned } from '../tuning.js';
import { LoopRun } from './loop-run.js';
import { FINISHED, InlineLoops, TIME_UP } from './loop-inline.js';
import { LoopTrace } from './loop-trace.js';
import { TieringWatch } from './tiering.js';
import type { Served } from './store.js';
import type { Spread } from './spread.js';

export { RunFault } from './fault.js';
export type { NodeHost, RemoteOps } from './state.js';
export type { Spread } from './spread.js';

/** Where batches go: worker lanes, and the system thread itself for tiny CFs. */
export interface Executors {
  readonly lanes: number;
  /** batches in flight per lane */
  readonly inflight: ArrayLike<number>;
  send(lane: number, batch: Batch): void;
  /** batches that may be posted on the ready board now to keep `ahead` open (absent: there is none; exec/board.ts) */
  boardRoom?(ahead: number): number;
  /** post a batch on the ready board: the first lane to end its batch runs it */
  post?(batch: Batch): void;
  /** batches posted on the ready board that no lane has taken yet */
  boardOpen?(): number;
  /** batches the lanes took from the ready board so far */
  readonly boardTaken?: number;
  /**
   * Send a planned loop's plan or a window of it to lane `lane` (exec/plan-steps.ts): false when
   * that lane takes batches of tasks only (absent: no lane does)
   */
  sendPlanned?(lane: number, m: { loopPlan: WirePlan } | WireWindow, imps?: readonly { imp: number }[]): boolean;
  readonly inline?: InlineExecutor;
  /** worker threads ready to take batches (0 while they boot) */
  readonly booted: number;
  /** ask lane `from` to feed outputs of its batches to other lanes (absent: workers cannot) */
  feed?(from: number, requests: Feed): void;
  /** workers the system thread woke so far (absent: it never wakes one) */
  readonly wakes?: number;
  /** start the workers ahead of their first batch (absent: each starts with its first batch) */
  warm?(): void;
  /** the system thread has nothing to do until its next event (the pump ended with no turn due) */
  rest?(): void;
  /** the system thread works again (a pump starts: after a result, network input, a timer) */
  work?(): void;
  /** the node's fragments are coarse (the policy said so): lower the lanes below the system thread by `nice` steps (absent: no lanes to lower) */
  lowerLanes?(nice: number): void;
  /** whether the ucode running on lane `lane` waits for an answer of the node's request desk (absent: none can) */
  blocked?(lane: number): boolean;
  /**
   * Whether CFs of import `imp` only ask the node's request desk (exec/desk.ts DeskCall): this
   * thread asks for them, and `ask` completes them when the answer comes, no worker waiting
   * (absent: none do)
   */
  answers?(imp: number): boolean;
  ask?(t: Task, done: AskDone): void;
  /**
   * Outputs a worker returned for a CF whose ucode asked the desk without waiting (exec/desk.ts
   * settle): true when `done` completes the CF once the answers came (absent: none can)
   */
  settle?(lane: number, outs: (DfValue | null)[], done: (outs: (DfValue | null)[] | null, error?: string) => void): boolean;
}

/** The pump gives the event loop a turn after this long (network, worker results, signals). */
const SLICE_MS = 4;
/**
 * Ordered by priorities, a turn that runs out of time while examining holds the ready CFs for the
 * next one (a CF still to examine may come first), but for this long at most: one turn, so every
 * second late turn dispatches. The PIC's start (C++, seed size, 1 × 2) examined ~4 000 CFs in
 * ~110–130 ms of turns (5–19 ms each under load) while its first ready CFs and both lanes waited;
 * holding for 8 ms, a lane still waited 35 ms between its first two CFs (docs/pic.md, "The
 * start held back by priorities"). A loop of 20 CFs is examined in well under a turn, and its
 * second turn, which examines the few left, is not late: the order holds under a burst of load.
 */
const HOLD_READY_MS = SLICE_MS;
/**
 * Ordered by priorities, a turn that examines while nothing at all is in flight (every lane idle:
 * a program's start) dispatches what is ready once it has examined this long, and goes on
 * examining after, instead of holding every lane idle for its whole slice and the next. A loop
 * examined in less keeps its exact order. The PIC at the seed's parameters (C++, 1 × 2) examines
 * ~640 CFs in its first ~33 ms: its first CF went to a lane 12.5 ms into the run, 4.7–6.0 ms with
 * this rule. The program's time did not move beyond the noise (medians of 8 alternated pairs
 * 599 → 598 ms): the lanes' CFs at the start then share the cores with that examination.
 */
const IDLE_HOLD_MS = 1;
/**
 * The CFs such a turn must have examined since it last dispatched, besides IDLE_HOLD_MS: a start
 * of fewer keeps its exact priority order however long its examination takes. By time alone it
 * did not: a cold first turn in a loaded test process (Node 24, two test files at once) took over
 * 1 ms for 16 CFs and sent two of a 20-CF loop ahead of the higher ones. 64 CFs of the PIC's cold
 * examination are ~3 ms. Counted over turns: a turn that runs out of its whole slice holds what is
 * ready too until then (holdReady), where it dispatched at once when nothing was in flight: with
 * three CPU hogs on the two cores, a 59-CF start lost its order in 1 run of 20 that way.
 */
const IDLE_HOLD_CFS = 64;
/**
 * Most iterations a loop spawns before its CFs are examined and dispatched, with several lanes:
 * 1 024 iterations of cold code took 10–12 ms in one go while the workers waited.
 */
const UNROLL_SLICE = 64;
/**
 * The pump reads the clock every 16 steps (a read costs more than a tiny CF's bookkeeping), and
 * sooner once the CFs run inline since the last read are estimated to take this long (lone CFs
 * of up to a millisecond also run inline).
 */
const CLOCK_AFTER_NS = 200_000;
/**
 * One lane, a batch waiting for its node: structured CFs behind it spawn their children early
 * (sendAwayBehindWait) until this many CFs are queued, the memory the CFs of a loop's few
 * unrolled chunks take (~1 KB each), not a whole loop's.
 */
const BEHIND_WAIT_MAX = 4096;

export class NodeRuntime {
  readonly st: NodeState;
  readonly interp: Interpreter;
  readonly self: number;
  readonly size: number;
  private readonly batches = new Map<number, Cf[]>();
  private readonly sentAt = new Map<number, number>();
  private readonly tails: (LaneTail | null)[];
  private batchSeq = 0;
  /** CFs fed across lanes by the batches in flight (null: the executors or the policy do not) */
  private readonly feeds: FeedBook | null;
  private readonly lanesView: { count: number; inflight: ArrayLike<number> };
  /** mean execution time per CF of recent worker batches (ns, EWMA, as the workers measured it) */
  private cfNs = 0;
  /** per code: mean execution time (ns, EWMA), the fastest, and executions measured */
  private readonly costNs: Float64Array;
  private readonly costMin: Float64Array;
  /** per code, its previous execution's wall time (CodeCost.lastNs) */
  private readonly costLast: Float64Array;
  /** per code, the shortest of its last three measured executions (CodeCost.recentNs), and the one before its previous */
  private readonly costRecent: Float64Array;
  private readonly costPrev: Float64Array;
  private readonly costN: Int32Array;
  /** per code: raw bytes its CFs' outputs took, as last measured (fed batches' bound) */
  private readonly outBytes: Float64Array;
  private scheduled = false;
  private failed: RunFault | null = null;
  /** trace: start of the current busy span of this thread (-1: none) */
  private busyFrom = -1;
  /**
   * What ran where: CFs run by this thread, CFs and batches sent to workers, and the time this
   * thread spent inside ucodes (ns; untimed tiny executions count their code's mean).
   */
  /**
   * `handWorker`: CFs sent to a worker with an input a worker hands it (forwarded within its
   * lane, or fed across lanes); `handSystem`: CFs sent with inputs that all came through this
   * thread; `fedNone`/`fedSpun`/`fedSlept`: how the workers' waits for fed values ended
   * (exec/protocol.ts FedWaits); `systemWakes`/`workerWakes`: sleeping workers woken by the
   * system thread (batches, feed requests, answers; up to its last result) and by workers (fed
   * values); `examined`: CFs examined in full (a parked CF made ready from the task it prepared
   * when it parked is not); `laneSleeps`: times a worker slept on its empty port before a batch
   * came (it had nothing to run: its next batch was late); `laneGapNs`, `laneWaits`,
   * `laneWaitNs`, `fedWaitNs`: the lanes' time between CFs, the times a lane waited for its next
   * batch and how long, and its waits for fed values (exec/protocol.ts LaneGaps); `chainAhead`:
   * the most batches a lane held at once while a chain continued on it (the policy's chainDepth);
   * `lows`: times a worker's batch ran low with nothing queued behind it (runningLow); `fedLate`:
   * CFs fed that became candidates when they parked, their producers' batches already sent;
   * `fedCut`: fed batches sent early, short, because their lane had little work in flight (the
   * policy's chainLength with `aheadNs`); `fedBytesMax`: the most raw output bytes one fed batch
   * returned (the policy's fedBatchBytes); `boardPosted`/`boardTaken`: batches posted on the
   * ready board and those the lanes took from it (exec/board.ts; taken up to the last result)
   */
  readonly stats = { planned: 0, plannedLoops: 0, plannedRanges: 0, plannedInline: 0, plannedKept: 0, steppedNatively: 0, inline: 0, sent: 0, batches: 0, inlineNs: 0, fed: 0, handWorker: 0, handSystem: 0, fedNone: 0, fedSpun: 0, fedSlept: 0, systemWakes: 0, workerWakes: 0, examined: 0, woken: 0, laneSleeps: 0, laneGapNs: 0, laneWaits: 0, laneWaitNs: 0, fedWaitNs: 0, chainAhead: 0, lows: 0, fedLate: 0, fedCut: 0, fedBytesMax: 0, boardPosted: 0, boardTaken: 0 };

  onIdle: () => void = () => {};
  onFault: (f: RunFault) => void = () => {};
  /**
   * This runtime's batches in flight (exec/shm.ts): kept here, whatever runs them, since a
   * batch reads the values forwarded or fed to it with no holder counted for it, and no freed
   * raw buffer may be reused before such a reader is done.
   */
  private readonly flights: FlightBook = new Map();

  constructor(readonly program: CompiledProgram, readonly host: NodeHost, private readonly exec: Executors, readonly policy: SchedulingPolicy) {
    this.st = new NodeState(program, host, policy);
    this.inlineView.nodes = host.size;
    this.profiles = policy.caps.profiles === true;
    this.fedBytes = policy.fedBatchBytes;
    this.interp = new Interpreter(this.st);
    this.self = host.rank;
    this.size = host.size;
    this.tails = new Array(exec.lanes).fill(null);
    // with an order of priorities every CF goes through the ready queue, to be ordered there
    this.feeds = exec.feed && policy.caps.feeds && !policy.caps.orders && exec.lanes > 1 ? new FeedBook() : null;
    this.lanesView = { count: exec.lanes, inflight: exec.inflight };
    this.laneFree = new Float64Array(exec.lanes).fill(-Infinity);
    this.laneWorkNs = new Float64Array(exec.lanes);
    const probe = { cfNs: 100_000, cfMinNs: 100_000, ready: 0, lanes: exec.lanes, nodes: host.size, stealable: false, fifo: false, fed: true };
    this.boardAhead = exec.boardRoom !== undefined && exec.post !== undefined ? policy.boardAhead ?? 0 : 0;
    this.tracksAhead = this.feeds !== null && policy.chainLength({ ...probe, aheadNs: 0 }) !== policy.chainLength(probe);
    if (this.feeds) this.openFed = new Array(exec.lanes).fill(null);
    this.fedView = {
      costNs: 0, fedFrom: new Int32Array(exec.lanes), given: new Int32Array(exec.lanes), short: this.shortFed = new Int32Array(exec.lanes),
      // asked only of long CFs: whether the fed CF reads an output of the CF given last to `lane`
      follows: (lane) => {
        const keys = this.lastGiven[lane]?.outKeys;
        return keys !== null && keys !== undefined && !this.fedCf!.everyPending((k) => !keys.includes(k));
      },
    };
    this.lastGiven = new Array<Cf | null>(exec.lanes).fill(null);
    this.costNs = new Float64Array(program.codes.length);
    this.costMin = new Float64Array(program.codes.length).fill(Infinity);
    this.costLast = new Float64Array(program.codes.length);
    this.costRecent = new Float64Array(program.codes.length);
    this.costPrev = new Float64Array(program.codes.length);
    this.costN = new Int32Array(program.codes.length);
    this.outBytes = new Float64Array(program.codes.length);
    this.st.owner = this;
    // loops of ucode calls planned whole (loop-plan.ts; LUNA_LOOP_PLANS=0 turns it off), on one
    // node with fed lanes, in the default order (no priorities; a replayed schedule places each
    // CF itself), and not for a policy told of each CF that ran (a recorder: a planned step is
    // none); traced, the steps' records are written per batch (loop-trace.ts)
    this.plans = tuned('LUNA_LOOP_PLANS') !== 0 && this.feeds !== null && host.size === 1
      && !this.st.ordered && !this.profiles && policy.name === 'default' && policy.planWindow !== undefined && (policy.planWindows ?? 0) > 0;
    // and run whole on this thread where the FIFO pump runs their CFs inline (loop-inline.ts), on
    // the same terms but for the lanes, and untraced (an inline step writes no records yet)
    this.inlineLoops = tuned('LUNA_LOOP_PLANS') !== 0 && exec.inline !== undefined && host.size === 1 && host.trace === undefined
      && !this.st.ordered && policy.name === 'default' ? new InlineLoops(this.st, this.inlineHost) : null;
    // before the ucode module loads, if the policy wants workers from the start (several nodes)
    if (policy.bootWorkers(this.costView, 0, host.size, program.hasHeavy)) this.warmWorkers();
    // coarse fragments: the lanes below this thread, which books their results (policy laneNice)
    const nice = policy.laneNice?.() ?? 0;
    this.tiering = new TieringWatch(policy, program.hasHeavy, { onCoarse: nice > 0 && exec.lowerLanes ? () => exec.lowerLanes!(nice) : undefined });
  }

  get live(): number {
    return this.st.live;
  }

  /** Record the counters still unrecorded (tracing; at the end of the run). */
  traceCounters(at: number): void {
    this.st.traceLive(at);
  }

  /**
   * The DFs this node holds at the end whose req_count was not reached (each kept its value from
   * its post on): traced as dfUnspent at `at` when tracing, counted for --timing.
   */
  unspentDfs(at: number): { dfs: number; bytes: number } {
    const tr = this.st.tr;
    let bytes = 0;
    const us = this.st.store.unspent();
    for (const u of us) {
      bytes += u.bytes;
      if (tr) tr.dfUnspent(at, tr.dfName(u.key), u.left, u.bytes);
    }
    return { dfs: us.length, bytes };
  }

  /** The names of the DFs unspentDfs counts, as the program writes them (for messages). */
  unspentKeys(): string[] {
    return this.st.store.unspent().map((u) => displayDf(u.key));
  }

  /** batches in flight on this node's worker threads */
  get inflight(): number {
    return this.batches.size;
  }

  // =================================================================== entry points

  /** Start the program on this node (node 0 creates main's CF) with main's parsed arguments. */
  start(mainArgs: readonly (number | string)[]): void {
    const main = this.program.main;
    const env = new Array<unknown>(main.frameSize);
    main.params.forEach((p, i) => { env[p.slot] = mainArgs[i]; });
    const root = this.st.newCf(this.program.mainSite, env, '', -1, null);
    root.placed = true;
    // main's CF is the sub call itself: run its body now.
    this.interp.spawnBlock(root, main.body, env, -1, false);
    this.st.finish(root);
    this.schedule();
  }

  /** What a batch's lane reports of its waits and gaps, counted (--timing). */
  private countLane(r: BatchResult): void {
    const w = r.fedWaits;
    if (w) { this.stats.fedNone += w.none; this.stats.fedSpun += w.spun; this.stats.fedSlept += w.slept; this.stats.workerWakes += w.woke; }
    if (r.idleSleeps) this.stats.laneSleeps += r.idleSleeps;
    const g = r.gaps;
    if (g) { this.stats.laneGapNs += g.gapNs; this.stats.laneWaits += g.batchWaits; this.stats.laneWaitNs += g.batchWaitNs; this.stats.fedWaitNs += g.fedWaitNs; }
    this.stats.systemWakes = this.exec.wakes ?? 0;
    this.stats.boardTaken = this.exec.boardTaken ?? 0;
  }

  /** A worker finished a batch. */
  onResult(r: BatchResult): void {
    const pb = this.plannedBatches.size > 0 ? this.plannedBatches.get(r.batch) : undefined;
    if (pb !== undefined) { this.bookPlanned(pb, r); return; }
    const cfs = this.batches.get(r.batch);
    if (!cfs) return;
    this.batches.delete(r.batch);
    const work = this.batchWorkNs.get(r.batch);
    if (work !== undefined) { this.batchWorkNs.delete(r.batch); this.laneWorkNs[r.lane] = Math.max(0, this.laneWorkNs[r.lane]! - work); }
    if (this.shortIds.size > 0 && this.shortIds.delete(r.batch)) this.shortFed[r.lane]!--;
    this.feeds?.returned(r.batch, cfs);
    this.countLane(r);
    const t0 = this.st.tr ? this.host.now() : 0;
    // (a fed batch's send time is not kept: it measures no CF's cost)
    const fed = !this.sentAt.has(r.batch);
    this.measureBatch(r);
    if (this.st.tr && r.fin && r.fin.length > 0) this.laneFree[r.lane] = r.fin[r.fin.length - 1]!;
    batchBooking(this.flights, r.batch); // its raw outputs, posted now, are its (exec/shm.ts)
    try {
      const bytes = this.completeAll(cfs, r);
      if (fed && bytes > this.stats.fedBytesMax) this.stats.fedBytesMax = bytes;
    } catch (e) { batchBooking(this.flights, null); this.fail(e); return; }
    // booked (its outputs posted, its CFs finished): what only this batch still read may be reused
    batchDone(this.flights, r.batch, r.outs);
    if (this.st.tr) this.st.tr.sysBusy(t0, this.host.now());
    this.schedule();
  }

  /** A CF arrived from node `from`, where it was CF number `remoteId`. */
  receiveCf(cf: Cf, from: number, remoteId: number): void {
    const tr = this.st.tr;
    if (tr) tr.cfReceive(this.host.now(), cf.id, from, remoteId, cf.site.id, cf.gid, this.interp.labelIndices(cf));
    cf.from = from;
    cf.placed = true;
    this.st.enqueue(cf);
  }

  /** A copy of a loop spread from node `from`: unrolled here too, spawning the CFs placed here. */
  receiveSpread(cf: Cf, from: number, remoteId: number, s: Spread): void {
    const st = this.st, tr = st.tr;
    if (tr) tr.cfReceive(this.host.now(), cf.id, from, remoteId, cf.site.id, cf.gid, this.interp.labelIndices(cf));
    cf.from = from;
    cf.placed = true;
    cf.begun = true;
    st.spreads.set(cf, s);
    // as where it began: FIFO, in the run queue's order; several lanes, among the lazy loops
    if (st.fifo) st.enqueue(cf);
    else { st.loops.push(cf); this.schedule(); }
  }

  /** A shell for a CF migrating here (cluster/ decodes the rest into it). */
  adoptCf(site: Site, env: unknown[], gid: string): Cf {
    return this.st.adopt(site, env, gid);
  }

  /** Request for `key`, owned here, by node `from`. */
  remoteRequest(key: DfKey, from: number): void {
    try {
      const served = this.st.store.readRemote(key, from);
      if (served !== undefined) this.st.remote!.respond(key, from, served);
    } catch (e) {
      if (e instanceof RequestRefused) this.st.remote!.refuse(key, from, e.message); else this.fail(e);
    }
    this.schedule();
  }

  /** Node `from` read `key`, owned here, `n` more times from its copy: counted like requests. */
  remoteReads(key: DfKey, from: number, n: number): void {
    try { this.st.store.reads(key, from, n); } catch (e) {
      if (e instanceof RequestRefused) this.st.remote!.refuse(key, from, e.message); else this.fail(e);
    }
    this.schedule();
  }

  /**
   * The owner of `key` refused a request of this node: the first CF that waits for it, or that
   * read it, asked too late or too often (the run fails).
   */
  refused(key: DfKey, message: string): void {
    this.fail(new RunFault(message, this.st.store.refusedRead(key)));
  }

  /** A value this node requested arrived: it serves every CF here that waits for it. */
  response(key: DfKey, served: Served): void {
    this.st.responded(key, served);
    this.schedule();
  }

  /** The owner freed `key`: the copy kept here goes. */
  dropCopy(key: DfKey): void {
    this.st.store.dropCopy(key);
  }

  remotePost(key: DfKey, v: DfValue, count: number, site: number, gid: string, from: number): void {
    try { this.st.postFromRemote(key, v, count, site, gid, from); } catch (e) { this.fail(e); }
    this.schedule();
  }

  remoteDestroy(key: DfKey): void {
    try { this.st.store.destroy(key); } catch (e) { this.fail(e); }
    this.schedule();
  }

  remotePush(pushKey: string, v: DfValue): void {
    this.st.pushHere(pushKey, v);
    this.schedule();
  }

  /** Stealable CFs beyond what this node's lanes need. */
  stealableCount(): number {
    let n = 0;
    const st = this.st;
    for (let i = 0; i < st.run.length; i++) if (this.mayGo(st.run.at(i))) n++;
    return n + st.ready.length;
  }

  /** A CF another node may steal: stealable, and the policy lets it go (a placed CF stays). */
  private readonly mayGo = (cf: Cf): boolean => cf.site.stealable && (!this.policy.caps.guardsSteals || this.policy.permitSteal(cf));

  /**
   * Give away up to `max` stealable CFs that have not started here: ready atomic CFs first (the
   * ones this node would run last), then queued ones not yet examined.
   */
  takeStealable(to: number): Cf[] {
    const st = this.st;
    if (!this.program.hasStealable) return [];
    const max = this.policy.giveAway(this.stealableCount(), this.exec.lanes);
    if (max <= 0) return [];
    const out = st.ready.takeFromTail(this.mayGo, max);
    if (out.length < max) out.push(...st.run.removeWhere((cf) => cf.state === QUEUED && this.mayGo(cf), max - out.length));
    for (const cf of out) {
      st.live--;
      cf.state = DONE;
      cf.task = null;
      if (st.tr) st.tr.cfMigrate(this.host.now(), cf.id, to);
    }
    return out;
  }

  /**
   * Nothing to do here right now: nothing queued, ready or unrolling, and no batch in flight but
   * on lanes whose ucode waits for an answer of the node's request desk (whether the desk is busy
   * is its own participant's say: cluster/requests.ts).
   */
  idle(): boolean {
    const st = this.st;
    if (st.run.length !== 0 || st.ready.length !== 0 || st.loops.length !== 0) return false;
    if (this.batches.size === 0) return true;
    const exec = this.exec;
    if (exec.blocked === undefined) return false;
    // a batch on the ready board is in flight on no lane yet: any lane not blocked will take it
    const posted = (exec.boardOpen?.() ?? 0) > 0;
    for (let l = 0; l < exec.lanes; l++) if ((posted || exec.inflight[l]! > 0) && !exec.blocked(l)) return false;
    return true;
  }

  /** Every CF that waits, with what it waits for (hang reports). */
  waitingReport(): { cf: Cf; label: string; waits: string[] }[] {
    const st = this.st;
    const out: { cf: Cf; label: string; waits: string[] }[] = [];
    const waiter = (cf: Cf): { cf: Cf; label: string; waits: string[] } =>
      ({ cf, label: this.interp.labelOf(cf), waits: cf.pendingKeys().map((k) => `${displayDf(k)}${st.store.expectedFrom(k, st.self, st.size)}`) });
    for (const cf of st.waiting) out.push(waiter(cf));
    // a planned loop waits for what its first steps read from before it (its CF holds those reads)
    for (const run of this.runs) if (run.loop.pendingCount > 0) out.push(waiter(run.loop));
    return out;
  }

  labelOf(cf: Cf): string {
    return this.interp.labelOf(cf);
  }

  labelIndices(cf: Cf): number[] | null {
    return this.interp.labelIndices(cf);
  }

  // =================================================================== the pump

  /** A CF parked (NodeState.park): the book looks whether batches in flight feed it (feed.ts). */
  parked(cf: Cf): void {
    this.feeds?.parked(cf);
  }

  /** A worker's batch runs low with nothing queued behind it: its next one is planned now (feed.ts retry). */
  runningLow(): void {
    this.stats.lows++;
    this.feeds?.retry();
    this.schedule();
  }

  schedule(): void {
    if (this.scheduled || this.failed) return;
    this.scheduled = true;
    this.turn = setImmediate(this.pumpTurn);
  }

  /**
   * Pump now if a pump is due (after input arrived). The scheduled turn is withdrawn, so a
   * fine-grained exchange between nodes does not run an empty pump after every message.
   */
  pumpNow(): void {
    if (this.scheduled) this.pump();
  }

  private turn: NodeJS.Immediate | null = null;
  private readonly pumpTurn = (): void => { this.turn = null; this.pump(); };

  private pump(): void {
    this.scheduled = false;
    if (this.turn !== null) { clearImmediate(this.turn); this.turn = null; }
    if (this.failed) return;
    this.exec.work?.();
    const tr = this.st.tr;
    if (tr) this.busyFrom = this.host.now();
    const until = this.until = performance.now() + SLICE_MS;
    // workers are wanted or up, or CFs park: a node begun in FIFO order on several lanes spreads
    // over them now
    if (this.st.fifo && this.lanesDue()) this.st.toLanes();
    try {
      if (!this.st.fifo) this.pumpLanes(until);
      else {
        this.pumpFifo(until);
        // due during this turn: the next one spreads what is queued
        if (this.lanesDue()) this.schedule();
      }
    } catch (e) { this.fail(e); return; }
    this.stats.examined = this.interp.examined;
    this.stats.plannedKept = this.st.store.keptByNumbers;
    this.stats.woken = this.st.wakes;
    // the turn's batches are sent: a forced collection overlaps the lanes' work (inside the
    // turn's busy span: it is the system thread's overhead)
    collectDue();
    if (tr) { const t1 = this.host.now(); tr.sysBusy(this.busyFrom, t1); tr.readyQueue(t1, this.st.ready.length); this.st.traceLive(t1); this.busyFrom = -1; }
    if (this.idle()) this.onIdle();
    else if (!this.scheduled) this.exec.rest?.();
  }

  /**
   * One lane: the original's FIFO order. While a batch runs, the next one is built from the head
   * of the queue, fed from the running batch's outputs on the worker, so that the worker finds
   * it when it finishes and bookkeeping overlaps the ucodes. Whatever would see the difference
   * waits for the running batch (BLOCKED): a structured CF, a migration, a `>>` flag it sets;
   * and nothing runs inline meanwhile, so output keeps the FIFO order.
   */
  private pumpFifo(until: number): void {
    const st = this.st, interp = this.interp, inflight = this.exec.inflight, parkedMax = this.policy.fifoStartParked;
    for (;;) {
      const tail = inflight[0]! > 0 ? this.tails[0] : null;
      // nothing waits behind a ucode that may wait for what it would hold back; what is due on
      // other nodes leaves (the order across nodes is free, and the wait may need it there),
      // whatever the policy's depth: once the waiting batch is the only one in flight (the
      // outputs of a batch before it are not posted yet: a loop reading them would be parked
      // and woken at the queue's end, out of FIFO order)
      // a batch ending in a heavy CF on several nodes likewise: it runs long, and the CFs behind
      // it that are due elsewhere (the other nodes' whole next steps) would wait all that time
      if (tail && (waitsLast(tail.cfs) || (this.size > 1 && heavyLast(tail.cfs)))) { if (inflight[0] === 1) this.sendAwayBehindWait(tail, until); return; }
      if (inflight[0]! >= this.policy.fifoDepth) return;
      let b: BatchBuilder | null = tail ? new BatchBuilder(st, tail) : null;
      let limit = b ? this.batchLimit() : 0;
      let blocked = false, late = false;
      while (st.run.length > 0) {
        const cf = st.run.shift()!;
        // a loop going on where its next iterations would run inline now: run them planned
        // (loop-inline.ts); what it cannot run is unrolled below as before
        if (b === null && cf.begun && cf.site.kind === 'for' && this.inlineLoops !== null) {
          const o = this.inlineLoops.run(cf);
          if (o === FINISHED) { if (this.timeUp(until)) { late = true; break; } continue; }
          if (o === TIME_UP) { st.run.pushFront(cf); late = true; break; }
        }
        // a ucode that may wait starts a batch of its own (BatchBuilder.admits): it is examined
        // against the batch sent before it
        if (b !== null && !b.admits(cf)) { st.run.pushFront(cf); break; }
        const o = interp.examine(cf, b);
        if (o === BLOCKED) { st.run.pushFront(cf); blocked = true; break; }
        if (o !== TASK) {
          // spawning, parking and migrating take turns with the event loop too: a loop migrating
          // thousands of CFs would otherwise hold every message back until it is all unrolled
          if (this.timeUp(until)) { late = true; break; }
          // several lanes begun in this order leave it at once when CFs park: the loops not
          // unrolled yet go to the several-lane pump (lanesDue), which unrolls them as they run
          if (st.fifoUntilWorkers && st.waiting.size > parkedMax) { late = true; break; }
          continue;
        }
        if (cf.task!.fwd === undefined && this.asks(cf)) { this.ask(cf); continue; }
        // (both lengths read every time, not short-circuited: a field first read by the run's
        // last CF deoptimised the optimised pump there)
        if (b === null && this.inlineable(cf, (st.run.length | st.loops.length) === 0)) {
          this.runInline(cf, 0);
          // the clock is read every few CFs: it costs more than a tiny CF's bookkeeping
          if (this.timeUp(until)) { late = true; break; }
          continue;
        }
        if (b === null) { b = new BatchBuilder(st); limit = this.batchLimit(); }
        b.add(cf);
        if (b.size >= limit || b.closed) break;
      }
      const sent = b !== null && b.size > 0;
      if (sent) this.send(0, b!);
      if (!late) {
        if (!sent || blocked || st.run.length === 0) return;
        if (performance.now() <= until) continue;
      }
      break;
    }
    // every turn that ends early for time leaves here: one call site, run (and given type
    // feedback) by the first such turn, where one per exit left the optimised pump to
    // deoptimise at the first exit of a kind not taken before
    this.schedule();
  }

  /**
   * One lane, its batch ending in a ucode that may wait: the CFs queued behind it that are due on
   * other nodes are sent there now, the rest keep their order. Loops, sub calls and `if`s behind
   * it spawn their children now, as the pump would once the wait ended (Interpreter.expandAhead),
   * so the CFs they make that are due elsewhere leave too; the local ones queue where that pump
   * would have put them. This stops at the first that cannot spawn yet (a later one spawning
   * first would change the local order), and at BEHIND_WAIT_MAX CFs queued (memory, as a loop's
   * unrolling is bounded); at the turn's time budget it goes on in the next turn.
   */
  private sendAwayBehindWait(tail: LaneTail, until: number): void {
    if (this.size === 1) return;
    const st = this.st, run = st.run, interp = this.interp;
    let todo = false;
    for (let i = 0; i < run.length && !todo; i++) {
      const cf = run.at(i);
      todo = cf.armed === null && (!cf.placed || (cf.site.kind !== 'call' && run.length < BEHIND_WAIT_MAX));
    }
    if (!todo) return;
    const b = new BatchBuilder(st, tail);
    const kept: Cf[] = [];
    let expanding = true, late = false;
    // the pump's walk from the head, with the CFs that stay here set aside in order: a loop's
    // unrolled children go to the head, before the loop, as they do when the pump unrolls it
    while (run.length > 0) {
      const cf = run.shift()!;
      if (interp.leavesNow(cf)) continue;
      if (expanding && cf.site.kind !== 'call' && cf.armed === null) {
        const o = interp.expandAhead(cf, b);
        if (o === BLOCKED) { kept.push(cf); expanding = false; }
        // parked: the pump would have parked it too; what comes behind it waits for the pump
        else if (o === WAIT) expanding = false;
        if (expanding && (kept.length + run.length >= BEHIND_WAIT_MAX || this.timeUp(until))) { expanding = false; late = kept.length + run.length < BEHIND_WAIT_MAX; }
        continue;
      }
      kept.push(cf);
    }
    for (let k = kept.length - 1; k >= 0; k--) run.pushFront(kept[k]!);
    if (late) this.schedule();
  }

  /**
   * Several lanes: examine the run queue, spread ready CFs over the lanes. Every few CFs an idle
   * lane gets what is ready so far (unless priorities order them), and the turn ends when its
   * time is up: a loop of 2 000 independent CFs, unrolled at once, took 37 ms of cold code to
   * examine in one turn while both workers waited.
   */
  private pumpLanes(until: number): void {
    const st = this.st, interp = this.interp;
    for (;;) {
      let n = 0, late = false;
      while (st.run.length > 0) {
        const cf = st.run.shift()!;
        const woken = cf.armed !== null;
        if (interp.examine(cf) === TASK) {
          // Nothing in flight and nothing ready ahead of it: a woken tiny CF runs here at once,
          // as dispatch would run it, without the ready queue's round and dispatch's pass over
          // the lanes (a step of a chain or a stencil on the system thread: ~1.9 K instructions
          // a CF, the several-lane pump's cost over the FIFO pump's).
          if (woken && (st.ready.length | this.batches.size) === 0 && !st.ordered && !(cf.task!.fwd === undefined && this.asks(cf))
            && this.inlineable(cf, (st.run.length | st.loops.length) === 0)) {
            const lane = this.idleLane();
            if (lane >= 0) {
              this.runInline(cf, lane);
              if (this.timeUp(until)) { late = true; break; }
              continue;
            }
          }
          st.ready.push(cf);
          // a woken tiny CF (a step of a chain) runs before more is examined: else an eager
          // recursion spawns ~4 levels per step and runs away from its steps (see deliver)
          if (woken && !st.ordered && this.inlineable(cf, false) && this.idleLane() >= 0) break;
        }
        if ((++n & 15) !== 0) continue;
        const now = performance.now();
        if (now > until) { late = true; break; }
        // (ordered by priorities, every CF waiting here must be a candidate, but not while the
        // whole node idles: see IDLE_HOLD_MS)
        if (st.ready.length > 0 && (!st.ordered || (this.batches.size === 0 && this.examinedIdle + n >= IDLE_HOLD_CFS && now > until - SLICE_MS + IDLE_HOLD_MS)) && this.idleLane() >= 0) break;
      }
      this.examinedIdle = this.batches.size === 0 ? this.examinedIdle + n : 0;
      // Ordered by priorities, a CF still to examine may come first: what is ready waits for the
      // next turn, which examines the rest (under load 20 CFs of one loop ran as 14, 13, 19, …).
      // But not for longer than HOLD_READY_MS: a program that unfolds many steps ahead (the PIC's
      // 4 000 examinations at its start) would keep every lane idle until all were examined.
      const hold = late && st.ordered && this.holdReady();
      if (!hold) this.examinedIdle = 0;
      const inlined = hold ? false : this.dispatch(until);
      if (!late || !st.ordered) this.heldSince = 0;
      if (late) break;
      if (inlined || st.run.length > 0) {
        // a chain of tiny CFs passes here once a CF: the clock is read every few passes
        if (this.timeUp(until)) break;
        continue;
      }
      if (st.loops.length === 0) return;
      const loop = st.nextLoop();
      if (this.plans && this.planned(loop)) continue;
      const chunk = st.unrollChunk(loop.counterEnd - loop.counter + 1, this.starving(), loop);
      if (chunk <= 0) return;
      // a slice at a time, examined and dispatched before the next (the policy is asked again);
      // ordered by priorities, the whole chunk competes
      interp.unroll(loop, st.ordered ? chunk : Math.min(chunk, UNROLL_SLICE));
      if (performance.now() > until) break;
    }
    // the turn's time is up (one call site for every such exit, as in pumpFifo)
    this.schedule();
  }

  /** performance.now() when a late turn first held back ready CFs under priorities (0: none held) */
  private heldSince = 0;
  /** CFs examined since the last dispatch while nothing was in flight (see IDLE_HOLD_CFS) */
  private examinedIdle = 0;

  /** A late turn under priorities: true to hold what is ready for the next turn, false once held long enough. */
  private holdReady(): boolean {
    if (this.st.ready.length === 0) return true;
    // nothing in flight: every lane idles while the ready CFs are held
    // (but a start keeps its order until it has examined IDLE_HOLD_CFS, or all it had to)
    if (this.batches.size === 0) { this.heldSince = 0; return this.examinedIdle < IDLE_HOLD_CFS && this.st.run.length > 0; }
    const now = performance.now();
    if (this.heldSince === 0) this.heldSince = now;
    if (now - this.heldSince < HOLD_READY_MS) return true;
    this.heldSince = 0;
    return false;
  }

  /** Nothing could run on this node but a lazily unrolled loop. */
  private starving(): boolean {
    return this.batches.size === 0 && this.st.ready.length === 0 && this.st.run.length === 0;
  }

  /** Hand ready CFs to lanes until `until` (performance.now()); true when CFs ran inline (new work may be queued). */
  private dispatch(until: number): boolean {
    const st = this.st;
    const lanes = this.exec;
    let ranInline = false;
    while (st.ready.length > 0) {
      const head = st.ready.peek()!;
      if (head.task!.fwd === undefined && this.asks(head)) {
        this.ask(st.ready.shift()!);
        ranInline = true;
        continue;
      }
      // alone: the only CF ready, nothing in flight or queued (read without short-circuits, as in pumpFifo)
      if (this.inlineable(head, (st.ready.length - 1 | this.batches.size | st.run.length | st.loops.length) === 0)) {
        const lane = this.idleLane();
        if (lane >= 0) {
          // a burst, bounded by the turn's time: the event loop (network, worker results) gets
          // its turn (the clock is read every few CFs: it costs more than a tiny CF's bookkeeping)
          do this.runInline(st.ready.shift()!, lane);
          while (st.ready.length > 0 && !this.timeUp(until) && this.inlineable(st.ready.peek()!, false));
          ranInline = true;
          continue;
        }
      }
      // no lane free: the best ready CF may wait on the ready board instead (lane -1)
      const lane = this.policy.chooseLane(this.lanesView, head);
      if (lane < 0 && !(st.ordered && this.boardAhead > 0 && this.exec.boardRoom!(this.boardAhead) > 0)) break;
      const code = head.site.code;
      const n = this.batchSize(code);
      const b = new BatchBuilder(st);
      const one = n > 1 && this.policy.batchOneCode === true;
      while (b.size < n && st.ready.length > 0 && !b.closed && b.admits(st.ready.peek()!) && !this.asks(st.ready.peek()!) && (!one || st.ready.peek()!.site.code === code)) b.add(st.ready.shift()!);
      b.extend(this.interp, Math.max(n, this.batchLimit()), 0, this.notAsked);
      this.send(lane, b);
    }
    this.continueChains();
    if (this.feeds) this.feedAcross(this.feeds);
    if (this.runs.length > 0) {
      this.feedRuns();
      // a loop's last window promises what leaves the loop: its readers go now, not at the next pass
      if (this.feeds?.hasCandidates) this.feedAcross(this.feeds);
    }
    return ranInline;
  }

  // =================================================================== loop plans

  /** a spread loop's fewest iterations a lane (see planned): structural, not measured */
  private static readonly SPREAD_MIN_PER_LANE = 2;
  /** LUNA_LOOP_PLANS not 0, one node, fed lanes (constructor) */
  private readonly plans: boolean;
  /** loops planning was tried for (once each: a loop refused is unrolled as before) */
  private readonly planTried = new WeakSet<Cf>();
  /** the planned loops running */
  private readonly runs: LoopRun[] = [];
  /** planned batches in flight: their loop, tasks, and each task's iteration and site */
  private readonly plannedBatches = new Map<number, { run: LoopRun; lane: number; its: Int32Array; sites: Int32Array }>();
  /** plans whose steps the lanes build (exec/plan-steps.ts), numbered */
  private planSeq = 0;
  /** what send() sees as a planned batch's CFs (none): the batch is in flight all the same */
  private static readonly NO_CFS: Cf[] = [];
  private readonly planHost = {
    batchId: (): number => this.batchSeq++,
    sendPlanned: (lane: number, id: number, tasks: Task[], run: LoopRun, its: Int32Array, sites: Int32Array): void => this.sendPlanned(lane, id, tasks, run, its, sites),
    rangePlan: (lanes: readonly number[]): number => this.rangePlan(lanes),
    sendPlan: (lane: number, plan: WirePlan): boolean => this.exec.sendPlanned!(lane, { loopPlan: plan }),
    sendWindow: (lane: number, w: WireWindow, run: LoopRun, its: Int32Array, sites: Int32Array, imps: readonly { imp: number }[]): void => this.sendWindow(lane, w, run, its, sites, imps),
    promise: (lane: number, id: number, out: ReadonlyMap<DfKey, Producer>): void => {
      if (this.feeds === null) return;
      this.feeds.sent(lane, id, out);
      this.planPromised.set(id, [...out.keys()]);
    },
  };
  /** planned batches in flight that promised outputs leaving their loop (LoopRun.promiseEscaping), with those keys */
  private readonly planPromised = new Map<number, DfKey[]>();
  private static readonly NO_KEYS: DfKey[] = [];

  /** loops run planned on this thread (null: LUNA_LOOP_PLANS=0, several nodes, traced, ordered) */
  private readonly inlineLoops: InlineLoops | null;
  /** the end of the pump's current turn (performance.now()) */
  private until = 0;
  private readonly inlineHost = {
    runsHere: (site: CallSite, cf: Cf): boolean => this.runsHere(site, cf, false),
    call: (site: CallSite, t: Task, cf: () => Cf): (DfValue | null)[] => { this.stats.plannedInline++; return this.callInline(site, t, 0, cf); },
    timeUp: (): boolean => this.timeUp(this.until),
    measured: (): number => this.measured,
    nameKeys: (nameOf: ((key: string | number) => string) | null): void => { this.exec.inline!.nameOf = nameOf ?? nameOfKey; },
    direct: (site: CallSite): DirectForm | undefined => this.exec.inline!.directForm(site.imp.index),
    sampled: (site: CallSite): boolean => this.nativeSteps && this.costN[site.code]! >= 64 && !this.profiles && this.st.tr === undefined && !this.st.remote,
    stepOn: (buffer: ArrayBuffer, from: number, t: number, last: number, step: () => void, nameOf: (param: string | number) => string, tick: Int32Array, failed: () => [CallSite, Cf], onTimed: () => boolean): void => {
      const inl = this.exec.inline!;
      tick[0] = this.tick;
      try {
        inl.stepOn(buffer, from, t, last, Math.max(0, this.until - performance.now()) * 1e6, step, nameOf, onTimed);
      } catch (e) {
        if (e instanceof InlineFailure) { const [site, cf] = failed(); throw new RunFault(this.taskFaultMessage(site, e.error), cf); }
        throw e;
      } finally { this.tick = tick[0]!; }
    },
    enter: (id: number, site: CallSite): void => this.exec.inline!.enter(id, site.imp.index),
    stepped: (site: CallSite, calls: number, ns: number): void => {
      const code = site.code, stats = this.stats;
      stats.plannedInline += calls;
      stats.steppedNatively += calls;
      stats.inline += calls;
      // (untimed calls count their code's mean, as callInline counts them)
      stats.inlineNs += (ns >= 0 ? calls - 1 : calls) * this.costNs[code]!;
      if (ns >= 0) { stats.inlineNs += ns; this.measureCode(code, ns); if (this.feeds !== null) this.outBytes[code] = 0; }
    },
  };
  /** LUNA_NATIVE_STEPS not 0: planned loops of C++ ucodes on this thread are stepped by the addon (loop-native.ts) */
  private readonly nativeSteps = tuned('LUNA_NATIVE_STEPS') !== 0;
  /** codes' measurements so far (measureCode): the inline rule's figures change only with them */
  private measured = 0;
  /** whether this node's fragments are coarse enough to raise V8's tiering budget */
  readonly tiering: TieringWatch;

  /**
   * The examiner begins loop `loop`: planned before any of it is unrolled (its windows go out at
   * the pump's next dispatch, not from inside the examination), or refused (StateOwner).
   */
  planLoop(loop: Cf): boolean {
    return this.plans && this.planned(loop, false);
  }

  /**
   * Loop `loop` is planned whole from its next iteration on (true: it is the plan's from now on,
   * no longer unrolled), or refused (false, and never asked again); `feed`: its first windows go
   * now.
   */
  private planned(loop: Cf, feed = true): boolean {
    if (this.planTried.has(loop)) return false;
    this.planTried.add(loop);
    if (this.st.spreads.size > 0 && this.st.spreads.has(loop)) return false;
    let plan = planLoop(loop.site as ForSite, loop.env, loop.counter, loop.counterEnd, this.exec.lanes, this.stats.plannedLoops);
    // independent iterations (depth 0) of fewer sites than lanes: each site on its lane would run
    // the loop on fewer lanes than the unplanned path spreads it over (4 000 × 100 µs of one site
    // on 2 lanes: 592 ms planned so, 394 unplanned); its iterations are spread over the lanes in
    // blocks instead. A loop of fewer than SPREAD_MIN_PER_LANE iterations a lane stays unplanned
    // (the stencil's two-step init loop): each lane's block would be a batch of one step
    let why: string | null = typeof plan === 'string' ? plan : null;
    if (typeof plan !== 'string' && plan.depth === 0 && plan.sites.length < this.exec.lanes) {
      if (plan.last - plan.first + 1 < NodeRuntime.SPREAD_MIN_PER_LANE * this.exec.lanes) why = 'independent iterations, too few to spread over the lanes';
      else plan = { ...plan, spread: this.exec.lanes };
    }
    if (typeof plan === 'string' || why !== null) { if (process.env.LUNA_LOOP_PLANS_WHY === '1') process.stderr.write(`luna: loop ${loop.site.label} not planned: ${why}\n`); return false; }
    const st = this.st;
    st.loops.splice(st.loops.indexOf(loop), 1);
    st.frontier.delete(loop);
    st.unrolled(loop);
    loop.counter = loop.counterEnd + 1;
    const run = new LoopRun(loop, plan, st, this.planHost);
    if (st.tr) run.tracer = new LoopTrace(run, st.tr, this.size, this.self);
    this.runs.push(run);
    this.stats.plannedLoops++;
    if (feed) this.feedRuns(); else this.schedule();
    return true;
  }

  /** Each planned loop sends its next windows while fewer than PLAN_WINDOWS are in flight. */
  private feedRuns(): void {
    for (let k = 0; k < this.runs.length; k++) {
      const run = this.runs[k]!;
      if (!run.outsideReady()) continue;
      while (!run.emitted && run.inFlight < (this.policy.planWindows ?? 1)) run.emit(this.planWindow(run));
    }
  }

  /** A window's iterations: the policy's, for the body's costliest code and the loop's iterations in flight. */
  private planWindow(run: LoopRun): number {
    let code = -1;
    for (const s of run.plan.sites) if (code < 0 || this.costNs[s.site.code]! > this.costNs[code]!) code = s.site.code;
    // a spread loop's lane reads nothing of another: its block is an unfed batch's length, which
    // the unplanned path spreads such a loop by
    const z = this.fedSized(code, this.exec.lanes, false, (run.plan.spread ?? 0) === 0);
    // a lane's worker keeps a batch's outputs until the batch is booked: a window's raw outputs
    // are bounded as a fed batch's are (fedBatchBytes)
    let bytes = 0;
    for (const s of run.plan.sites) bytes += this.outBytes[s.site.code]!;
    const byBytes = bytes > 0 ? Math.max(1, Math.floor(this.fedBytes / bytes)) : Infinity;
    return Math.min((this.policy.planWindow?.(z, run.iterationsInFlight) ?? 1), byBytes);
  }

  /**
   * A fresh plan number when the lanes `lanes` may build their steps from a plan (the executors
   * take plans; LUNA_LOOP_RANGES=0: never, for comparisons), else -1.
   */
  private rangePlan(lanes: readonly number[]): number {
    if (!this.ranges || this.exec.sendPlanned === undefined) return -1;
    return lanes.length > 0 ? this.planSeq++ : -1;
  }

  /** LUNA_LOOP_RANGES not 0: the lanes build planned steps themselves */
  private readonly ranges = tuned('LUNA_LOOP_RANGES') !== 0;

  /**
   * Send a planned window: the lane's worker builds its steps and pushes what other batches read
   * of them (no feed requests). The flight book counts it as reading anything in flight (wild):
   * it names none of the batches it reads, and a buffer let go meanwhile waits for it.
   */
  private sendWindow(lane: number, w: WireWindow, run: LoopRun, its: Int32Array, sites: Int32Array, imps: readonly { imp: number }[]): void {
    this.plannedInFlight(lane, w.id, run, its, sites);
    const h = run.handoffs(its, sites);
    this.stats.handWorker += h.worker;
    this.stats.handSystem += h.system;
    if (h.fed) this.stats.fed++;
    this.stats.plannedRanges++;
    batchSent(this.flights, w.id, imps, undefined, true);
    this.exec.sendPlanned!(lane, w, imps);
  }

  /** A planned batch or window `id` of `its.length` steps goes to `lane`: in flight, counted. */
  private plannedInFlight(lane: number, id: number, run: LoopRun, its: Int32Array, sites: Int32Array): void {
    this.warmWorkers();
    this.batches.set(id, NodeRuntime.NO_CFS);
    // nothing continues a chain from a planned batch (its outputs are not the builder's)
    this.tails[lane] = null;
    this.plannedBatches.set(id, { run, lane, its, sites });
    this.stats.sent += its.length;
    this.stats.planned += its.length;
    this.stats.batches++;
  }

  /** Send a planned batch: feed requests to the lanes that make its forwarded inputs, then the batch. */
  private sendPlanned(lane: number, id: number, tasks: Task[], run: LoopRun, its: Int32Array, sites: Int32Array): void {
    const prev = this.tails[lane]?.batch;
    this.plannedInFlight(lane, id, run, its, sites);
    this.countHandoffs(tasks);
    const req = FeedBook.requests(tasks, lane);
    if (req) { for (const [from, q] of req) this.exec.feed!(from, q); this.stats.fed++; }
    // its steps' records before the batch leaves: a worker's cfStart never precedes its cfCreated
    if (run.tracer) run.tracer.sent(this.host.now(), tasks, its, sites);
    batchSent(this.flights, id, tasks, prev);
    this.exec.send(lane, { id, tasks });
  }

  /** A planned batch came back: the windows its outputs feed are sent first, then it is booked. */
  private bookPlanned(pb: { run: LoopRun; lane: number; its: Int32Array; sites: Int32Array }, r: BatchResult): void {
    const run = pb.run;
    this.plannedBatches.delete(r.batch);
    this.batches.delete(r.batch);
    if (this.feeds !== null) {
      // what it promised is posted below; what found no lane free is offered again
      const keys = this.planPromised.get(r.batch);
      if (keys !== undefined) this.planPromised.delete(r.batch);
      this.feeds.returnedPlanned(r.batch, keys ?? NodeRuntime.NO_KEYS);
    }
    this.countLane(r);
    const tr = this.st.tr, t0 = tr ? this.host.now() : 0;
    if (tr && r.fin && r.fin.length > 0) this.laneFree[r.lane] = r.fin[r.fin.length - 1]!;
    try {
      // a step reads its producer's output from the producer's worker, which keeps it only
      // until this booking: every step reading this batch's outputs is sent before
      const last = pb.its[pb.its.length - 1];
      if (last !== undefined) while (!run.emitted && run.nextIteration <= run.readersUpTo(last)) run.emit(this.planWindow(run));
      for (let i = 0; i < r.outs.length; i++) {
        const code = run.plan.sites[pb.sites[i]!]!.site.code;
        if (r.start && r.fin) this.measureCode(code, r.fin[i]! - r.start[i]!);
        // output sizes bound the windows, as they bound fed batches
        this.outBytes[code] = rawBytes(r.outs[i]!);
      }
      batchBooking(this.flights, r.batch);
      try {
        run.book(r.batch, pb.its, pb.sites, r.outs, tr ? r.fin : undefined);
        if (r.error) { const i = r.error.task, t = pb.its[i]!, s = pb.sites[i]!; throw run.fault(this.taskFaultMessage(run.plan.sites[s]!.site, r.error), t, s, run.cfOf(t, s)); }
      } catch (e) { batchBooking(this.flights, null); throw e; }
      batchDone(this.flights, r.batch, r.outs);
      if (run.done) {
        this.runs.splice(this.runs.indexOf(run), 1);
        this.st.finish(run.loop);
      }
    } catch (e) { this.fail(e); return; }
    if (tr) tr.sysBusy(t0, this.host.now());
    this.schedule();
  }

  /**
   * CFs waiting only for outputs of batches in flight go to a lane now, their inputs fed by the
   * producers' workers (feed.ts); the policy picks the lane, or none (the CF waits as before).
   * A lane's fed CFs of one pass share a batch up to the batch limit (each batch costs this
   * thread a message, a result and maybe a wake-up); what such a batch will produce can feed the
   * next CFs of the same pass. Every batch is sent by the end of the pass.
   */
  private feedAcross(book: FeedBook): void {
    if (!book.hasCandidates) return;
    const lanes = this.exec.lanes, open = this.openFed, view = this.fedView;
    view.fedFrom.fill(0);
    view.given.fill(0);
    const last = this.lastGiven;
    last.fill(null);
    book.candidates(this.st.store, (cf, from) => {
      if (this.asks(cf)) return -1; // asked once its inputs are here (dispatch)
      // the lanes' loads count sent batches: an open batch with room adds none yet, a full one
      // is sent at once
      view.costNs = this.costNs[cf.site.code]!;
      this.fedCf = cf;
      const lane = this.policy.chooseFedLane(this.lanesView, from, view);
      if (lane < 0) return -1;
      for (let i = 0; i < from.length; i++) view.fedFrom[from[i]!]!++;
      view.given[lane]!++;
      last[lane] = cf;
      let b = open[lane];
      // a ucode that may wait starts a batch of its own (BatchBuilder.admits)
      if (b && !b.b.admits(cf)) { open[lane] = null; this.send(lane, b.b, b.id); b = null; }
      // the lane's work in flight when its batch opens: a lane about to run dry gets a short one
      if (!b) {
        open[lane] = b = { id: this.batchSeq++, b: new BatchBuilder(this.st, undefined, book.promised), bytes: 0, aheadNs: this.tracksAhead ? this.aheadNs(lane) : undefined, code: -1, fed: false, limit: 0, cut: false };
      }
      if (this.interp.examine(cf, b.b) !== TASK) return lane;
      b.b.add(cf);
      book.added(lane, b.id, b.b, cf);
      if (book.offeringLate) this.stats.fedLate++;
      // sized by the CFs' own cost: a fed batch's round trip includes its waits for values; an
      // output another node reads leaves only when the batch returns: then it is kept short
      const fed = this.size === 1 || !this.readElsewhere(cf);
      const code = cf.site.code;
      // asked once per batch and code (costs change only when results come): a stencil's CFs share one
      if (code !== b.code || fed !== b.fed) {
        const z = this.fedSized(code, lanes, this.program.hasStealable, fed);
        const full = this.policy.chainLength(z);
        z.aheadNs = b.aheadNs;
        b.limit = b.aheadNs === undefined ? full : this.policy.chainLength(z);
        b.cut = b.limit < full;
        b.code = code;
        b.fed = fed;
      }
      // the raw outputs a fed batch makes stay until it returns (the freed ones in the limbo):
      // the policy bounds them too
      b.bytes += this.outBytes[code]!;
      if (b.b.size >= b.limit || b.b.closed || b.bytes >= this.fedBytes) {
        if (b.cut && b.b.size >= b.limit) { this.stats.fedCut++; this.shortIds.add(b.id); this.shortFed[lane]!++; }
        open[lane] = null;
        this.send(lane, b.b, b.id);
      }
      return lane;
    });
    for (let i = 0; i < lanes; i++) {
      const b = open[i];
      open[i] = null;
      if (b && b.b.size > 0) this.send(i, b.b, b.id); // (a CF that turned out not ready opened none)
    }
  }

  /** Whether an output of `cf` goes to another node (owned there, replicated, or requested from there). */
  private readElsewhere(cf: Cf): boolean {
    const keys = cf.outKeys, owners = cf.outOwners;
    if (!keys || !owners) return false;
    for (let o = 0; o < keys.length; o++) if (owners[o] !== this.self || this.st.store.hasRemoteWaiters(keys[o]!)) return true;
    return false;
  }

  /** raw output bytes at which a fed batch closes (the policy's fedBatchBytes, fixed: read once) */
  private readonly fedBytes: number;
  /** how long a lane's fed batch may grow, as the policy is asked (one object, reused) */
  /** fedSizing filled for a batch of `code` (the waiting-ahead bound unset), for the policy's chainLength */
  private fedSized(code: number, lanes: number, stealable: boolean, fed: boolean): typeof this.fedSizing {
    const z = this.fedSizing;
    z.cfNs = this.costNs[code]!;
    z.cfMinNs = this.costMin[code]!;
    z.lanes = lanes;
    z.nodes = this.size;
    z.stealable = stealable;
    z.fed = fed;
    z.aheadNs = undefined;
    return z;
  }

  private readonly fedSizing: { cfNs: number; cfMinNs: number; ready: number; lanes: number; nodes: number; stealable: boolean; fifo: boolean; fed: boolean; aheadNs: number | undefined } =
    { cfNs: 0, cfMinNs: Infinity, ready: 0, lanes: 0, nodes: 0, stealable: false, fifo: false, fed: false, aheadNs: 0 };
  /** what the policy is told of each fed CF (one object, reused) */
  private readonly fedView: { costNs: number; fedFrom: Int32Array; given: Int32Array; follows(lane: number): boolean; short: Int32Array };
  /** per lane, its fed batches in flight sent short (cut: the lane had little in flight), what the policy's fedView.short reads */
  private readonly shortFed: Int32Array;
  /** the ids of those batches, until each returns */
  private readonly shortIds = new Set<number>();
  /** the CF feedAcross is placing (what fedView.follows is asked about) */
  private fedCf: Cf | null = null;
  /** per lane, the CF given to it last in this pass of feedAcross */
  private readonly lastGiven: (Cf | null)[];

  /**
   * per lane, the batch of fed CFs being built in this pass: with the lane's work in flight when
   * it opened (undefined: not tracked), and the limit the policy gave for CFs of `code` (-1: none yet) with `fed` (`cut`:
   * shorter than without that work in flight)
   */
  private readonly openFed: ({ id: number; b: BatchBuilder; bytes: number; aheadNs: number | undefined; code: number; fed: boolean; limit: number; cut: boolean } | null)[] = [];

  /**
   * per lane, the work of its batches in flight by their CFs' costs when sent (ns), whole
   * until each returns: a lane's own clock is not the system thread's, and a fed lane's CFs wait
   * for each other beyond their costs, so the time since a batch left says little of its progress
   */
  private readonly laneWorkNs: Float64Array;
  /** per batch in flight, its work as added to laneWorkNs */
  private readonly batchWorkNs = new Map<number, number>();

  /**
   * whether the policy sizes a fed batch by its lane's work in flight (asked once: a fed batch of
   * 100 µs CFs for an idle lane against one not asked for a lane), so that only then the batches'
   * work is counted
   */
  private readonly tracksAhead: boolean;
  /** ready CFs the policy keeps on the ready board while no lane is idle (0: none, or no board) */
  private readonly boardAhead: number;

  /** Batch `id` of `cfs` went to `lane`: its work, by the CFs' fastest executions where known. */
  private addWork(lane: number, id: number, cfs: readonly Cf[]): void {
    const cost = this.costNs, fastest = this.costMin;
    let work = 0;
    for (let i = 0; i < cfs.length; i++) {
      // as fed batches are sized (chainLength): cold calls and preemption stretch the mean (a
      // 45 µs kernel's mean read ~1 ms in the first batches)
      const c = cfs[i]!.site.code, m = fastest[c]!;
      work += m < Infinity && m > 0 ? Math.min(m, cost[c]!) : cost[c]!;
    }
    this.laneWorkNs[lane] = (this.exec.inflight[lane] === 0 ? 0 : this.laneWorkNs[lane]!) + work;
    this.batchWorkNs.set(id, work);
  }

  /** The work lane `lane` has in flight, ns, by its CFs' costs (0: idle). */
  private aheadNs(lane: number): number {
    return this.exec.inflight[lane] === 0 ? 0 : this.laneWorkNs[lane]!;
  }

  /**
   * A chain longer than one batch continues in a second batch to the same lane while the first
   * still runs: its first CF takes its input from the previous batch's outputs on the worker.
   */
  private continueChains(): void {
    const lanes = this.exec;
    let depth = 0;
    for (let w = 0; w < lanes.lanes; w++) {
      const tail = this.tails[w];
      if (!tail || !this.batches.has(tail.batch) || waitsLast(tail.cfs)) continue;
      if (depth === 0) depth = this.policy.chainDepth(this.sizing());
      if (lanes.inflight[w]! >= depth) continue;
      const succ = BatchBuilder.soleWaiter(this.st, tail.cfs[tail.cfs.length - 1]!);
      if (succ === null || succ.site.kind !== 'call' || this.asks(succ)) continue;
      const b = new BatchBuilder(this.st, tail);
      if (this.interp.examine(succ, b) !== TASK) continue;
      b.add(succ);
      b.extend(this.interp, this.batchLimit(), 0, this.notAsked);
      this.send(w, b);
      if (lanes.inflight[w]! > this.stats.chainAhead) this.stats.chainAhead = lanes.inflight[w]!;
    }
  }

  private idleLane(): number {
    const f = this.exec.inflight;
    for (let i = 0; i < this.exec.lanes; i++) if (f[i] === 0) return i;
    return -1;
  }

  /** The idle lane whose last CF ended first (traced runs: laneFree), or -1. */
  private restedLane(): number {
    const f = this.exec.inflight;
    let best = -1;
    for (let i = 0; i < this.exec.lanes; i++) if (f[i] === 0 && (best < 0 || this.laneFree[i]! < this.laneFree[best]!)) best = i;
    return best;
  }

  /** traced runs: per lane, when its last CF ended on the trace's clock (a worker's batch, an inline or asked CF) */
  private readonly laneFree: Float64Array;

  private inlineable(cf: Cf, alone: boolean): boolean {
    return cf.task!.fwd === undefined && this.runsHere(cf.site as CallSite, cf, alone);
  }

  /** Whether CFs of `site` (`cf` one of them) run on this thread now (the policy's runInline). */
  private runsHere(site: CallSite, cf: Cf, alone: boolean): boolean {
    const inl = this.exec.inline;
    // an import that may wait for its node never runs on the thread that would answer it
    if (inl === undefined || !inl.ready || site.imp.waits) return false;
    // views reused for every question (plain data for the policy, no garbage per CF)
    const code = site.code, cost = this.costView, now = this.inlineView;
    // the view holds `code`'s figures until a measurement changes them (measureCode): a run of
    // one code's CFs copies them once, not six field accesses a CF
    if (this.costViewCode !== code) {
      cost.meanNs = this.costNs[code]!;
      cost.minNs = this.costMin[code]!;
      cost.samples = this.costN[code]!;
      cost.recentNs = this.costRecent[code]!;
      this.costViewCode = code;
    }
    now.workersReady = this.exec.booted > 0;
    now.alone = alone;
    const here = this.policy.runInline(cost, now, cf);
    // counted without a branch around the field: first taken by the run's last CF, it deoptimised
    now.aloneSinceHandoff += here && alone ? 1 : 0;
    return here;
  }

  /** the policy's caps.profiles, read once (a policy's capabilities are fixed) */
  private readonly profiles: boolean;
  private readonly costView = { meanNs: 0, minNs: Infinity, samples: 0, lastNs: 0, recentNs: 0 };
  /** the code whose figures costView holds for inlineable (-1: none, or changed since) */
  private costViewCode = -1;
  /**
   * the policy's view of this thread, kept as the state itself: `handoffNs`, what a worker adds
   * to a one-CF batch (round trip − the ucode's own time, EWMA, ns); `aloneSinceHandoff`, lone
   * CFs the policy kept on this thread since handoffNs was last measured
   */
  private readonly inlineView = { workersReady: false, nodes: 1, alone: false, handoffNs: 0, aloneSinceHandoff: 0 };
  /** counts inline CFs: a tiny code's duration is sampled 1 in 16 */
  private tick = 0;
  /** counts steps of the pump: the clock is read 1 in 16, or after CLOCK_AFTER_NS of inline ucodes */
  private clockTick = 0;
  /** `stats.inlineNs` (the time of the ucodes run inline, measured or their codes' means) at the last clock read */
  private inlineNsAtClock = 0;

  /** Whether the turn that ends at `until` (performance.now()) is over; the clock is read only when due. */
  private timeUp(until: number): boolean {
    const inl = this.stats.inlineNs;
    if ((++this.clockTick & 15) !== 0 && inl - this.inlineNsAtClock < CLOCK_AFTER_NS) return false;
    this.inlineNsAtClock = inl;
    return performance.now() > until;
  }

  /** `code`: the next ready CF's code (its mean cost is the sizing's headNs) */
  private batchSize(code: number): number {
    return this.policy.batchSize({
      cfNs: this.cfNs, ready: this.st.ready.length, lanes: this.exec.lanes, nodes: this.size,
      stealable: this.program.hasStealable, fifo: this.st.fifo, headNs: code >= 0 ? this.costNs[code]! : 0,
    });
  }

  /** Most CFs a batch may grow to with continuations. */
  private batchLimit(): number {
    return this.policy.chainLength(this.sizing());
  }

  private sizing(): BatchSizing {
    return { cfNs: this.cfNs, ready: this.st.ready.length, lanes: this.exec.lanes, nodes: this.size, stealable: this.program.hasStealable, fifo: this.st.fifo };
  }

  /**
   * Several lanes begun in FIFO order, and workers wanted or already up, or more CFs parked than
   * the policy lets the FIFO start park (NodeState.toLanes).
   */
  private lanesDue(): boolean {
    return this.st.fifoUntilWorkers && (this.warmed || this.exec.booted > 0 || this.st.waiting.size > this.policy.fifoStartParked);
  }

  /** Workers are wanted (the policy said so, or a batch leaves): they start booting now. */
  private warmWorkers(): void {
    if (this.warmed) return;
    this.warmed = true;
    this.exec.warm?.();
  }

  private warmed = false;

  /** Send batch `b` to lane `lane`; `id`: the number a fed batch got when it was opened. */
  private send(lane: number, b: BatchBuilder, fedId?: number): void {
    this.warmWorkers();
    const id = fedId ?? this.batchSeq++;
    // lane -1: the ready board, whose batch no lane's chain continues from (its lane is unknown)
    const board = lane < 0;
    const prev = board ? undefined : this.tails[lane]?.batch;
    this.batches.set(id, b.cfs);
    if (!board) this.tails[lane] = { batch: id, cfs: b.cfs, out: b.out, flags: b.flags };
    // a fed batch's round trip includes its waits for values, a posted one its wait on the board: they measure no CF's cost
    if (fedId === undefined && !board) this.sentAt.set(id, performance.now() * 1e6);
    const cfs = b.cfs;
    for (let i = 0; i < cfs.length; i++) cfs[i]!.state = DISPATCHED;
    if (this.tracksAhead && !board) this.addWork(lane, id, cfs);
    this.stats.sent += b.cfs.length;
    this.stats.batches++;
    this.countHandoffs(b.tasks);
    if (fedId !== undefined) {
      // the producers learn where to send before the consumer's batch can ask (only fed
      // batches read values across lanes: the others are built without the book)
      const req = FeedBook.requests(b.tasks, lane);
      if (req) { for (const [from, q] of req) this.exec.feed!(from, q); this.stats.fed++; }
    }
    batchSent(this.flights, id, b.tasks, prev);
    if (board) { this.stats.boardPosted++; this.exec.post!({ id, tasks: b.tasks }); return; }
    this.exec.send(lane, { id, tasks: b.tasks });
    if (this.feeds && fedId === undefined) this.feeds.sent(lane, id, b.out);
  }

  /** Count the sent tasks' inputs by who hands them over (stats.handWorker, handSystem). */
  private countHandoffs(tasks: readonly Task[]): void {
    for (let i = 0; i < tasks.length; i++) {
      const t = tasks[i]!;
      if (t.fwd) { this.stats.handWorker++; continue; }
      // a value param's argument is its DfValue (an object): it came from the store
      const args = t.args;
      for (let j = 0; j < args.length; j++) { const a = args[j]; if (typeof a === 'object' && a !== null) { this.stats.handSystem++; break; } }
    }
  }

  /** Whether `cf` is a call of an import that only asks the request desk (Executors.answers). */
  private asks(cf: Cf): boolean {
    return this.exec.answers !== undefined && cf.site.kind === 'call' && this.exec.answers((cf.site as CallSite).imp.index);
  }

  /** what batches may take as continuations: no CF that this thread asks for */
  private readonly notAsked = (cf: Cf): boolean => !this.asks(cf);

  /** the CF whose ucode runs on this thread now (callInline), or what makes its stand-in: running() finds it */
  private onThisThread: Cf | (() => Cf) | null = null;
  /** CFs this thread asked the request desk for, by number (running() finds them). */
  private readonly asking = new Map<number, Cf>();

  /**
   * Ask the request desk for `cf` (an import that only asks, Executors.answers) and complete it
   * when the answer comes: a global operation's round trip to other nodes holds no worker.
   */
  private ask(cf: Cf): void {
    cf.state = DISPATCHED;
    this.asking.set(cf.id, cf);
    let sync = true;
    const asked = this.st.tr ? this.host.now() : 0;
    this.exec.ask!(cf.task!, (outs, error, waited) => {
      this.asking.delete(cf.id);
      if (this.failed) return;
      const tr = this.st.tr;
      try {
        if (outs === null) throw new RunFault(`exception in ucode ${(cf.site as CallSite).imp.symbol}: ${error ?? 'refused'}`, cf);
        const at = this.host.now();
        // The CF is placed on the timeline of the lane idle the longest, as a CF run inline is
        // (with every lane busy it has none): it runs there from when it asked or the lane last
        // worked, whichever is later, to its answer, waiting — what a worker holding that lane
        // for the wait would show, and SLOW's W; none of the time the lane spent on other CFs.
        const lane = tr ? this.restedLane() : -1;
        if (lane >= 0) {
          // a nanosecond after the lane's last CF at the earliest: that CF's finish is written by
          // its worker, in another stream of the trace, and an equal time may merge after this
          // start (the analysis then sees two CFs on the lane at once and drops one)
          const from = Math.min(at, Math.max(asked, this.laneFree[lane]! + 1));
          tr!.cfStart(from, 0, cf.id, lane + 1);
          if (waited && at > from) tr!.wait(from, at, 0, cf.id, -1, waited.wait, waited.resource);
          tr!.cfFinish(at, 0, cf.id, lane + 1);
          this.laneFree[lane] = at;
        }
        this.complete(cf, outs, at);
      } catch (e) { this.fail(e); return; }
      if (!sync) this.schedule();
    });
    sync = false;
  }

  /** The answers a CF's ucode asked for without waiting came (settle): it completes now. */
  private settled(cf: Cf, outs: (DfValue | null)[] | null, error?: string): void {
    this.asking.delete(cf.id);
    if (this.failed) return;
    try {
      if (outs === null) throw new RunFault(`exception in ucode ${(cf.site as CallSite).imp.symbol}: ${error ?? 'refused'}`, cf);
      this.complete(cf, outs, this.host.now());
    } catch (e) { this.fail(e); return; }
    this.schedule();
  }

  /** Run `cf` on this thread now, as lane `lane`, and complete it. */
  private runInline(cf: Cf, lane: number): void {
    cf.state = DISPATCHED;
    const outs = this.callInline(cf.site as CallSite, cf.task!, lane, cf);
    this.complete(cf, outs, this.st.tr ? this.exec.inline!.fin : 0);
  }

  /**
   * Run task `t` of call site `site` on this thread now, as lane `lane`, measured as inline CFs
   * are; `cf`: its CF, or for a planned step what makes the stand-in naming it.
   */
  private callInline(site: CallSite, t: Task, lane: number, cf: Cf | (() => Cf)): (DfValue | null)[] {
    const st = this.st, tr = st.tr, code = site.code;
    // a tiny code's duration is sampled (1 in 16), not read twice a run: the clock costs more than it
    const timed = tr !== undefined || this.costN[code]! < 64 || (++this.tick & 15) === 0;
    this.stats.inline++;
    const inl = this.exec.inline!;
    // Messages queued so far would leave at the end of this pump's slice, behind this ucode and
    // the next: a node that another is waiting on (a stencil's neighbour) sends them first.
    if (st.remote && this.policy.flushBefore(this.costNs[code]!)) st.remote.flush();
    // a code's first call while no worker is up may boot them by its length (policy.bootWorkers):
    // its CPU time, so that a short call descheduled on a loaded machine does not
    const firstCpu = !this.warmed && this.costN[code] === 0 ? threadCpuNs() : -1;
    let outs: (DfValue | null)[];
    this.onThisThread = cf;
    try {
      outs = inl.run(t, lane, timed);
    } catch (e) {
      if (e instanceof InlineFailure) throw new RunFault(this.taskFaultMessage(site, e.error), typeof cf === 'function' ? cf() : cf);
      throw e;
    } finally {
      this.onThisThread = null;
    }
    if (timed) { this.measureCode(code, inl.fin - inl.start, firstCpu >= 0 ? threadCpuNs() - firstCpu : undefined); if (this.feeds !== null) this.outBytes[code] = rawBytes(outs); }
    this.stats.inlineNs += timed ? inl.fin - inl.start : this.costNs[code]!;
    if (this.profiles) this.policy.profile({ cf: typeof cf === 'function' ? cf() : cf, lane, inline: true, workersReady: this.exec.booted > 0, ns: timed ? inl.fin - inl.start : NaN });
    if (tr) this.laneFree[lane] = inl.fin;
    return outs;
  }

  /** Complete a batch's CFs; returns the raw bytes of their outputs. */
  private completeAll(cfs: Cf[], r: BatchResult): number {
    const traced = this.st.tr !== undefined, sizes = this.feeds !== null;
    let total = 0;
    for (let i = 0; i < r.outs.length; i++) {
      const cf = cfs[i]!;
      const fin = r.fin ? r.fin[i]! : 0;
      if (r.start && r.fin) this.measureCode(cf.site.code, fin - r.start[i]!);
      // output sizes bound fed batches: counted only on a node that feeds
      if (sizes) { const bytes = rawBytes(r.outs[i]!); this.outBytes[cf.site.code] = bytes; total += bytes; }
      if (this.profiles) this.policy.profile({ cf, lane: r.lane, inline: false, workersReady: true, ns: r.start ? fin - r.start[i]! : NaN });
      // a ucode that asked its node without waiting: the CF completes when the answers come
      if (this.exec.settle !== undefined && (cf.site as CallSite).imp.waits && this.exec.settle(r.lane, r.outs[i]!, (outs, error) => this.settled(cf, outs, error))) { this.asking.set(cf.id, cf); continue; }
      // (the time is the trace's alone: no clock read per CF untraced)
      this.complete(cf, r.outs[i]!, traced ? fin : 0);
    }
    if (r.error) throw this.taskFault(cfs[r.error.task]!, r.error);
    return total;
  }

  private taskFault(cf: Cf, e: TaskError): RunFault {
    return new RunFault(this.taskFaultMessage(cf.site as CallSite, e), cf);
  }

  private taskFaultMessage(site: CallSite, e: TaskError): string {
    return e.kind === 'ucode' ? `exception in ucode ${site.imp.symbol}: ${e.message}${userStack(e.stack)}` : e.message;
  }

  /** `cpuNs`: the call's CPU time, when read (a first call while no worker is up), for the boot decision */
  private measureCode(c: number, ns: number, cpuNs?: number): void {
    const n = this.costN[c]!;
    this.costViewCode = -1;
    this.measured++;
    if (this.tiering.open) this.tiering.measured(ns);
    // A quick average over the first calls (the first, cold calls of a function are much slower
    // than the rest), then a slow one: a lone outlier (a GC pause, the thread descheduled) moves
    // it by an eighth at most, so a code near the inline threshold does not flip between the
    // system thread and the workers.
    const mean = this.costNs[c]!;
    this.costNs[c] = n === 0 ? ns : n < 8 ? 0.5 * mean + 0.5 * Math.min(ns, 4 * mean) : 0.875 * mean + 0.125 * Math.min(ns, 2 * mean);
    if (ns < this.costMin[c]!) this.costMin[c] = ns;
    this.costN[c] = n + 1;
    const last = this.costLast[c]!;
    this.costLast[c] = ns;
    // (the policy tells a code that became long from a lone outlier by these three)
    if (n >= 2) this.costRecent[c] = Math.min(ns, last, this.costPrev[c]!);
    this.costPrev[c] = last;
    if (!this.warmed) {
      const cost = this.costView;
      cost.meanNs = this.costNs[c]!;
      cost.minNs = this.costMin[c]!;
      cost.samples = n + 1;
      cost.lastNs = last;
      cost.recentNs = this.costRecent[c]!;
      if (this.policy.bootWorkers(cost, cpuNs ?? ns, this.size, this.program.hasHeavy)) this.warmWorkers();
    }
  }

  private measureBatch(r: BatchResult): void {
    const t0 = this.sentAt.get(r.batch);
    if (t0 === undefined) return;
    this.sentAt.delete(r.batch);
    const n = r.outs.length;
    if (n === 0) return;
    const rt = performance.now() * 1e6 - t0;
    // the CFs' own time as the worker measured it: the round trip also holds the wait behind
    // the batch queued ahead, and batches sized by it shrank themselves (Task Bench trivial:
    // ~5 CFs of 80 µs a batch instead of 25)
    let per = rt / n;
    if (r.start && r.fin) {
      let e = 0;
      for (let i = 0; i < n; i++) e += r.fin[i]! - r.start[i]!;
      if (e > 0) per = e / n; // (an executor that does not time its CFs reports zeros)
    }
    this.cfNs = this.cfNs === 0 ? per : 0.7 * this.cfNs + 0.3 * per;
    if (n === 1 && r.start && r.fin) {
      const h = Math.max(0, rt - (r.fin[0]! - r.start[0]!));
      const v = this.inlineView;
      v.handoffNs = v.handoffNs === 0 ? h : 0.8 * v.handoffNs + 0.2 * h;
      v.aloneSinceHandoff = 0;
    }
  }

  /** Publish a finished atomic CF's outputs and run its after-actions; `at`: when it finished (read by traces only). */
  private complete(cf: Cf, outs: (DfValue | null)[], at: number): void {
    const st = this.st;
    const site = cf.site as CallSite;
    const keys = cf.outKeys!, owners = cf.outOwners!, rules = cf.outRules;
    for (let j = 0; j < keys.length; j++) {
      const rule = rules !== null ? rules[j]! : -1;
      if (rule === OUT_DROP) continue;
      const v = outs[j];
      if (v === null || v === undefined) throw new RunFault(`ucode ${site.imp.symbol} did not set its output DF ${displayDf(keys[j]!)} (Posting an unset value)`, cf);
      if (rule <= OUT_PUSH) { // a push rule (isPushRule, written out: this runs for every output of every fragment)
        const t = this.interp.pushTarget(cf, rule, keys[j]!);
        st.push(t.key, t.owner, v);
        continue;
      }
      if (owners[j] === -1) for (const node of cf.replicas![j]!) st.post(keys[j]!, node, v, rule, cf, at);
      else st.post(keys[j]!, owners[j]!, v, rule, cf, at);
    }
    const after = cf.after;
    if (after !== null) {
      this.interp.runAfter(after, cf);
      cf.after = null;
    }
    cf.task = null;
    st.finish(cf);
  }

  // =================================================================== failure

  /** A worker thread died while running CF number `cfId` (-1: none). */
  workerDied(lane: number, cfId: number, cause: string): void {
    const cf = this.running(cfId);
    const what = cf ? ` while running ucode ${(cf.site as CallSite).imp.symbol}` : '';
    const hint = /^exited with code [1-9]/.test(cause) && cf ? ' (did the ucode call process.exit?)' : '';
    this.fail(new RunFault(`worker thread ${lane + 1} of node ${this.self} ${cause}${what}${hint}`, cf));
  }

  /** CF number `cfId` of a batch in flight (a worker runs it, or will). */
  private running(cfId: number): Cf | undefined {
    const asked = this.asking.get(cfId);
    if (asked) return asked;
    const here = this.onThisThread;
    if (here !== null) {
      const cf = typeof here === 'function' ? here() : here;
      if (cf.id === cfId) return cf;
    }
    const step = this.inlineLoops?.runningStep(cfId);
    if (step) return step;
    for (const cfs of this.batches.values()) {
      const cf = cfs.find((c) => c.id === cfId);
      if (cf) return cf;
    }
    // a planned step: named by its stand-in
    for (const pb of this.plannedBatches.values()) {
      for (let i = 0; i < pb.its.length; i++) if (pb.run.cfOf(pb.its[i]!, pb.sites[i]!) === cfId) return pb.run.standIn(pb.its[i]!, pb.sites[i]!, cfId);
    }
    return undefined;
  }

  /** What the node's request desk needs: who a running CF is, and how to fail the run blaming it. */
  deskHost(): DeskHost {
    return {
      node: this.self,
      identify: (cfId) => {
        const cf = this.running(cfId);
        if (cf === undefined) return { label: '?', gid: '?', text: `CF number ${cfId} on node ${this.self}` };
        const label = this.labelOf(cf);
        return { label, gid: cf.gid, text: `${describeSite(cf.site, label, cf.gid)}${this.size > 1 ? ` on node ${this.self}` : ''}`, origin: cf.site.origin };
      },
      fault: (cfId, message) => this.fail(new RunFault(message, this.running(cfId))),
    };
  }

  /**
   * An error nothing caught reached this thread's event loop (a ucode's timer or promise that
   * slipped past the checks, or a bug of the runtime): the run fails, naming the node.
   */
  uncaught(e: unknown, how: 'exception' | 'rejection'): void {
    const ex = e instanceof Error ? e : new Error(String(e));
    const user = userStack(ex.stack);
    if (user) this.fail(new RunFault(`an error escaped a ucode asynchronously on the system thread of node ${this.self} (uncaught ${how}): ${ex.message}${user}`));
    else this.fail(e instanceof Error ? e : new RunFault(`uncaught ${how} on the system thread of node ${this.self}: ${ex.message}`));
  }

  fail(e: unknown): void {
    if (this.failed) return;
    let f: RunFault;
    if (e instanceof RunFault) f = e;
    else if (e instanceof EvalError) f = new RunFault(e.message);
    else f = new RunFault(`internal error: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    this.failed = f;
    // it books no more results: its batches in flight must not hold back other runtimes' buffers
    // on this thread (a rehearsal cut mid-run, in-process nodes)
    batchesDropped(this.flights);
    this.onFault(f);
  }

  get failure(): RunFault | null {
    return this.failed;
  }
}

/** The user's part of a ucode stack (frames of the bundled ucode module only). */
export function userStack(stack: string | undefined): string {
  if (!stack) return '';
  const lines = stack.split('\n').filter((l) => /ucodes-[0-9a-f]+\.mjs|ucodes\.ts/.test(l)).slice(0, 5);
  return lines.length ? '\n' + lines.join('\n') : '';
}

/** Whether the last CF of a batch may wait for its node (nothing is queued behind it on its lane). */
function waitsLast(cfs: readonly Cf[]): boolean {
  const last = cfs[cfs.length - 1];
  return last !== undefined && mayWaitForNode(last);
}

/** Whether a batch ends in a CF marked `heavy` (its ucode runs long). */
function heavyLast(cfs: readonly Cf[]): boolean {
  const last = cfs[cfs.length - 1];
  return last !== undefined && last.site.kind === 'call' && (last.site as CallSite).heavy === true;
}

/** Bytes of the raw values among a CF's outputs. */
function rawBytes(outs: readonly (DfValue | null)[]): number {
  let n = 0;
  for (let j = 0; j < outs.length; j++) { const v = outs[j]; if (v != null && v.t === T_RAW) n += v.v.byteLength; }
  return n;
}
