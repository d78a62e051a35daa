// The scheduling policy of a node: every decision the runtime's mechanism leaves open, as
// small functions taking plain data and returning a decision (in the spirit of Legion's mapper
// and piscina's balancer). The mechanism (src/runtime/node) asks; a policy never touches the
// runtime's state. A policy declares in `caps` which of the questions only some policies answer
// it wants asked: the others cost nothing (a forwarding policy has every method, so presence
// cannot tell).
import type { Site } from '../../program/compile.js';
import type { WaitPlan } from '../exec/protocol.js';

/**
 * A policy's own storage on fragments (see FragmentView.memo): each policy that keeps something
 * per fragment makes its own slot, so policies combined by delegation never share one.
 */
export class FragmentSlot<T> {
  /** (the type parameter only) */
  declare private readonly value: T;
  constructor(readonly name: string) {}
}

/**
 * A fragment as a policy sees it. `gid` is computed on first use: read it only when needed.
 * A placement question may come before the fragment exists (a spread loop deciding which
 * iterations to spawn): then `id` is -1 and nothing is kept by `memo`.
 */
export interface FragmentView {
  readonly id: number;
  readonly gid: string;
  readonly site: Site;
  /**
   * What the policy owning `slot` worked out for this fragment (a plan entry, say): `make` runs
   * on the first question, later ones read the kept value and cost nothing.
   */
  memo<T>(slot: FragmentSlot<T>, make: (cf: FragmentView) => T): T;
}

/** The questions only some policies answer: the runtime asks them only when declared. */
export interface PolicyCapabilities {
  /** `place`: the policy puts some fragments on nodes (before their locators, also in spread loops) */
  readonly places: boolean;
  /** `dfOwner`: some DFs live elsewhere than their map rules say */
  readonly ownsDfs: boolean;
  /** `priority`: ready fragments in the policy's order (every CF goes through the ordered ready queue) */
  readonly orders: boolean;
  /** `chooseFedLane`: CFs fed across lanes by the batches in flight */
  readonly feeds: boolean;
  /** `profile`: the policy observes every finished atomic CF */
  readonly profiles: boolean;
  /** `permitSteal`: some stealable fragments must stay where they are */
  readonly guardsSteals: boolean;
}

/** The executors of a node: lane i is worker thread i (the system thread may borrow an idle lane). */
export interface LanesView {
  readonly count: number;
  /** batches sent to lane i and not finished */
  readonly inflight: ArrayLike<number>;
}

/** What the runtime knows of a CF it feeds across lanes, and of the pass that feeds it. */
export interface FedView {
  /** mean cost of its code (ns; 0 = never measured) */
  readonly costNs: number;
  /** CFs fed from each lane earlier in this pass: a second one is parallel work, not a chain */
  readonly fedFrom: ArrayLike<number>;
  /** CFs given to each lane earlier in this pass (not in `inflight` yet: sent at its end) */
  readonly given: ArrayLike<number>;
  /** whether this CF reads an output of the CF given last to `lane` in this pass (computed on demand) */
  follows(lane: number): boolean;
  /**
   * per lane, its fed batches in flight that were sent short because the lane had little work in
   * flight (`chainLength` with `aheadNs`); absent: not counted
   */
  readonly short?: ArrayLike<number>;
}

/** What the runtime knows of a code fragment's cost (EWMA over its finished executions). */
export interface CodeCost {
  /** mean wall time of one execution in ns (recent ones weigh more); 0 = never measured */
  readonly meanNs: number;
  /** the shortest execution measured, ns (first calls of a function are slow: this is not) */
  readonly minNs: number;
  /** executions measured */
  readonly samples: number;
  /** the execution before the one being measured, ns (0: none) */
  readonly lastNs: number;
  /**
   * the shortest of the last three executions measured, ns (0: fewer measured): unlike the mean,
   * which a lone outlier must not move, it follows a code whose calls became longer at once
   */
  readonly recentNs: number;
}

export interface InlineContext {
  /** some worker thread is ready (at start-up they boot for tens of milliseconds) */
  readonly workersReady: boolean;
  readonly nodes: number;
  /** the CF is the only one ready and no batch is in flight: running it here delays nothing else */
  readonly alone: boolean;
  /** measured delay a worker adds to a lone CF (hand-off there and back), ns; 0 = unknown yet */
  readonly handoffNs: number;
  /** lone CFs run on this thread since handoffNs was last measured (it is measured only on workers) */
  readonly aloneSinceHandoff: number;
}

export interface BatchSizing {
  /** mean execution time per CF of recent worker batches (ns, as the workers measured it); 0 = unknown yet */
  readonly cfNs: number;
  /** ready atomic CFs not yet dispatched */
  readonly ready: number;
  readonly lanes: number;
  readonly nodes: number;
  /** the program has stealable CFs (keep batches small on several nodes so others can steal) */
  readonly stealable: boolean;
  /** one worker thread: the original's FIFO order */
  readonly fifo: boolean;
  /** the mean cost of the next ready CF's code (ns; 0: not measured yet; absent: not given) */
  readonly headNs?: number;
  /**
   * a batch of CFs fed across lanes whose outputs no other node reads: their inputs come from
   * other workers' batches in flight, and the workers hand the values to each other; the system
   * thread learns of its CFs only when the whole batch returns
   */
  readonly fed?: boolean;
  /**
   * the fastest execution of the batch's code measured so far (ns; Infinity or absent: none):
   * load stretches the mean, not the fastest run, so a batch sized by it keeps its CF count
   */
  readonly cfMinNs?: number;
  /**
   * a fed batch: the work its lane has in flight now (ns, its batches' CFs by their codes' fastest
   * executions, until each batch returns; 0: the lane is idle; absent: not asked for a lane)
   */
  readonly aheadNs?: number;
}

export interface LoopView {
  /** iterations not spawned yet */
  readonly remaining: number;
  /** CFs alive on the node (waiting, queued, running) */
  readonly live: number;
  /** of them, CFs waiting for inputs */
  readonly waiting: number;
  /** nothing else can run on the node right now: unrolling is the only way forward */
  readonly starving: boolean;
  /** nodes of the run (on several, CFs spawned early request their remote inputs early) */
  readonly nodes: number;
  /** ready CFs run in priority order (CFs spawned ahead are candidates of that order) */
  readonly ordered: boolean;
  /** batches in flight on this node's worker threads */
  readonly inflight: number;
  /** iterations the node's previous unroll spawned (0: none yet) */
  readonly lastChunk: number;
  /**
   * CFs woken since the previous unroll: they had waited for inputs that then came, so they were
   * spawned before they could run (CFs still waiting for later inputs do not count)
   */
  readonly wokenSince: number;
  /** this loop's unrolls since one was followed by a wake (Infinity: none ever was) */
  readonly calm: number;
  /**
   * the CFs this loop spawned last have begun to run (gone to a lane or finished): its lanes
   * run dry unless it spawns more, whatever other loops keep waiting ahead
   */
  readonly behind?: boolean;
}

export interface ProfileSample {
  readonly cf: FragmentView;
  readonly lane: number;
  /** the system thread ran it (on behalf of the idle lane `lane`) */
  readonly inline: boolean;
  /** some worker thread was up when it was dispatched (false: the runtime was still starting) */
  readonly workersReady: boolean;
  /** wall time of the execution, ns (NaN when it was not timed: tiny CFs are timed 1 in 16) */
  readonly ns: number;
}

/** How long a rehearsal of the program goes on (SchedulingPolicy.rehearsal). */
export interface RehearsalBudget {
  /**
   * fragments the simulated lanes return in all, unless the program is smaller: once `runs`
   * runs went to its end, more runs of it are not rehearsed (its whole real run costs less cold
   * than they would)
   */
  readonly cfs: number;
  /**
   * over at least this many runs of the program, each cut at cfs / runs fragments: every run
   * makes the runtime's objects anew, and code optimised on one run's closures and shapes is
   * deoptimised when the next run brings others ('wrong call target', 'wrong map'); the real
   * run must find code that has seen several
   */
  readonly runs: number;
  /** and at most this long, ms */
  readonly ms: number;
  /** the duration a simulated fragment reports, ns (batches are sized by it) */
  readonly cfNs: number;
  /**
   * fragments each worker runs through its own per-CF path before it reports ready, against
   * stand-ins for the ucodes, fed by another worker (or, alone, by a simulated peer lane;
   * exec/worker.ts), at most laneMs
   */
  readonly laneCfs?: number;
  readonly laneMs?: number;
  /** whether a worker that has no other to rehearse with rehearses alone */
  readonly laneAlone?: boolean;
}

/** Where a node's threads run: the CPUs it may use, its worker threads, the run's nodes. */
export interface ThreadsView {
  readonly cpus: number;
  readonly lanes: number;
  readonly nodes: number;
}

export interface SchedulingPolicy {
  readonly name: string;
  readonly caps: PolicyCapabilities;

  /**
   * Node a fragment runs on, decided before its locator is evaluated (a distribution or a
   * recorded schedule); undefined: what its locator (or the default, node 0) says. Asked where
   * the fragment is spawned and, for a spread loop, on every node before it exists: the answer
   * must depend on the fragment alone and agree on every node. Asked when `caps.places`.
   */
  place(cf: FragmentView): number | undefined;
  /** Node that owns DF `key`; `owner` is what the map rules say. Must agree on every node. Asked when `caps.ownsDfs`. */
  dfOwner(key: string, owner: number): number;
  /** Order of ready fragments: higher first, ties in the order they became ready (`cf.priority`: the program's rule). Asked when `caps.orders`. */
  priority(cf: FragmentView & { readonly priority: number }): number;

  /** Lane that takes the next batch (its first CF: `next`), or -1 to wait for one to free up. */
  chooseLane(lanes: LanesView, next?: FragmentView): number;
  /**
   * Lane for a CF whose inputs are all made by batches in flight (on lanes `from`): it is sent
   * now and the producers' workers feed it; -1: it waits for those results as usual. Asked when
   * `caps.feeds`, and not when the policy orders ready CFs (`caps.orders`: priorities, a
   * recorded schedule): every CF then goes through the ordered ready queue.
   */
  chooseFedLane(lanes: LanesView, from: readonly number[], cf?: FedView): number;
  /** Ready CFs taken for the next batch. */
  batchSize(s: BatchSizing): number;
  /** Most CFs a batch may grow to with continuations (CFs fed only by earlier members). */
  chainLength(s: BatchSizing): number;
  /**
   * Loop plans (node/loop-plan.ts): iterations of a planned loop's next window, `s` sized for
   * the body's costliest code as a fed batch, `inFlight` of the loop's iterations sent and not
   * yet booked. Absent: the policy's runs plan no loop.
   */
  planWindow?(s: BatchSizing, inFlight: number): number;
  /** Loop plans: windows of one planned loop in flight at most (with planWindow). */
  readonly planWindows?: number;
  /**
   * Batches a lane may hold at once (the running one included) while a chain continues on it:
   * the next batches of the chain are sent behind the running one, each taking its first input
   * from the batch before it on the worker, so the lane runs on while the system thread is late.
   */
  chainDepth(s: BatchSizing): number;
  /**
   * Batches the one lane of FIFO order keeps in flight: 1 builds the next batch only after the
   * last came back; 2 builds it while the last runs (the order is the same).
   */
  readonly fifoDepth: number;
  /**
   * Several lanes on one node begin in the one-lane FIFO order (while every CF runs on the
   * system thread it does the same work for less); they leave it when workers are wanted, or
   * when more CFs than this are parked (the FIFO pump unrolls a loop whole: the several-lane
   * pump must get the loops before they are).
   */
  readonly fifoStartParked: number;
  /**
   * A fed batch closes once its CFs' raw outputs (by each code's last measured on a worker) reach
   * this many bytes: they, and the freed buffers they back, stay until the batch returns.
   */
  readonly fedBatchBytes: number;
  /**
   * A batch of several ready CFs holds only CFs of its first one's code (the ready queue's order
   * then decides which of them; batchSize sized it by that code's cost, BatchSizing.headNs).
   * Absent: any ready CFs, in the queue's order.
   */
  readonly batchOneCode?: boolean;
  /**
   * Ready CFs kept posted on the node's ready board (exec/board.ts) while no lane is idle: the
   * first lane to end its batch takes the next one itself, without a round trip through the
   * system thread. Absent or 0: none; each batch goes to a lane chooseLane names.
   */
  readonly boardAhead?: number;
  /**
   * Start booting the worker threads now that a fragment of a code that costs `cost` took `ns`
   * (a code's first call run on the system thread: its CPU time), on a run of `nodes` nodes; asked first before the program starts (`samples` 0). Workers
   * boot anyway with the first batch. While every fragment is tiny, all run on the system
   * thread, and a booting worker only takes a core from it. `heavy`: the program marks some CF
   * `heavy` (its ucode runs long: the program has work for the workers from its start).
   */
  bootWorkers(cost: CodeCost, ns: number, nodes: number, heavy?: boolean): boolean;
  /**
   * How many workers of `lanes` boot at once before the program starts on a node of `cores`
   * cores (`heavy`: the program marks some CF `heavy`); absent: one fewer than the cores.
   */
  bootAtOnce?(cores: number, lanes: number, heavy?: boolean): number;
  /**
   * Whether this node's fragments are coarse enough that a high tiering budget serves it better
   * than the lowered one `bin/luna` starts with (core/tiering.ts): asked before the first CF
   * (`measured` 0; `heavy`: the program marks some CF `heavy`), then after each CF measured, with
   * the mean time of the `measured` so far, until it answers. undefined: not yet known; absent:
   * never.
   */
  relaxTiering?(heavy: boolean, measured: number, meanNs: number): boolean | undefined;
  /**
   * How far a node whose fragments are coarse (relaxTiering said so) lowers its worker lanes'
   * priority below its system thread, in nice steps (exec/priority.ts): the system thread books
   * each result and hands out the next CFs, and woken while both lanes run kernels it otherwise
   * waits for a core. Absent or 0: the lanes keep the process's priority.
   */
  laneNice?(): number;
  /**
   * Before a ucode of mean cost `meanNs` runs on the system thread of a node of several, write
   * the messages queued so far (they would leave only after it): a peer may wait for them.
   */
  flushBefore(meanNs: number): boolean;
  /** Run fragment `cf`, whose code costs this, on the system thread instead of a worker (no hand-off). */
  runInline(cost: CodeCost, now: InlineContext, cf: FragmentView): boolean;
  /** Iterations of a long loop to spawn now (0: not now). */
  unrollChunk(loop: LoopView): number;
  /**
   * Spread a `for` loop of `iterations` that begins on a node of a run of `nodes`: every node
   * unrolls it and spawns only the CFs placed on it, instead of this node spawning them all and
   * migrating the others'. Asked once, where the loop begins; every node tells where a CF runs
   * by the same question as anywhere (`place`, else its locator) before the CF exists.
   */
  spreadLoop(iterations: number, nodes: number): boolean;

  /** Node an idle node asks for stealable work; `attempt` counts refusals since the last success. */
  stealVictim(self: number, nodes: number, attempt: number): number;
  /** How many of `available` stealable ready CFs a victim gives away. */
  giveAway(available: number, threads: number): number;
  /** Whether stealable `cf` may be given to another node (a placed fragment stays). Asked when `caps.guardsSteals`. */
  permitSteal(cf: FragmentView): boolean;

  /**
   * How the node's threads wait when they have nothing to do: how long each kind of wait spins
   * (while the node's threads on a CPU leave a core free) before it sleeps.
   */
  waiting(t: ThreadsView): WaitPlan;

  /**
   * Whether the system thread is one of the node's `t.lanes` lanes (one worker fewer): batches
   * sent to the last lane run on it between its own duties (exec/system-lane.ts). Asked once,
   * before the run, only where it can be: several lanes, fragments that may run on the system
   * thread (no `--cf-timeout`), and no ucode that may wait for its node (absent: never).
   */
  systemLane?(t: ThreadsView): boolean;

  /**
   * With `--warm-start`, how much of the program the system thread rehearses against simulated
   * lanes while the workers boot, so that its per-fragment code is compiled and warm when the
   * program starts (node/rehearsal.ts). Asked once, on a node without peers whose ucodes never
   * wait for it (absent or undefined: no rehearsal).
   */
  rehearsal?(t: ThreadsView): RehearsalBudget | undefined;

  /** Called after every finished atomic CF (profiling), when `caps.profiles`. */
  profile(sample: ProfileSample): void;
}
