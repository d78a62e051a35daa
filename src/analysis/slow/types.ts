// Public shapes of the SLOW analysis (SPEC §5, seed 003 §4). All times are nanoseconds.
import type { DamageReport } from '../../trace/damage.js';
import type { DfRec, Fragment } from '../../trace/model/records.js';
import type { RunStatus } from '../../trace/schema.js';

export type SlowModel = 'kireev2024' | 'litvinov2017';

/** The five SLOW(U) time characteristics. */
export interface Slou { S: number; L: number; O: number; W: number; U: number }

export interface SlowOptions {
  /** Which split the headline figures use; the other model is reported beside it when computed. */
  model?: SlowModel;
  /** Width of the time windows of `series`; omitted = automatic (at most 256 windows). */
  windowNs?: number;
  /** Also compute the other model side by side (litvinov2017 is always computed when selected). */
  compare?: boolean;
  /**
   * Cores per node the runtime used for its system threads *beyond* the worker cores. Default 0:
   * system threads share the workers' cores, so their time already shows up inside the workers'
   * idle intervals (as O/S/L) and inside CF executions (wall − CPU); counting sysBusy again would
   * count it twice. With k > 0, T_total grows by T_wall × k × nodes and all of it is O (seed 003 §4.2).
   */
  systemCores?: number;
  /** Length of the top-culprit lists (default 10). */
  topK?: number;
  /** Steps of the critical path kept whole, step by step (default 2^20; the earlier ones only in its totals). */
  wholePathSteps?: number;
  /** Keep the run's graph to predict what advice would gain (default true; ~40 bytes a CF, up to 2^21 CFs). */
  predict?: boolean;
  /** Told each idle interval's split and each execution's pre-emption as they are charged (the pattern engine's fragmented-program patterns). */
  observe?: SlowObserver;
}

/**
 * A listener of SLOW's accounting: the parts of each idle interval before a CF m (seed 003 §4.2,
 * kireev2024, after the waits in it were taken out as W) and the pre-emption of each execution,
 * in ns, so that what it derives sums to SLOW's own figures.
 */
export interface SlowObserver {
  /** S (the last producer, when known), O before the last input was sent, L (that input), O before m started. */
  idle?(m: Fragment, s: number, producer: Fragment | null, oSend: number, l: number, lastInput: DfRec | null, oStart: number): void;
  /** m's wall time less its CPU time and its waits (O). */
  preempt?(m: Fragment, ns: number): void;
}

export interface Row extends Slou { cfs: number }
export interface CodeRow extends Row { code: number; name: string }
export interface LabelRow extends Row { label: string }
export interface ThreadRow extends Slou { node: number; thread: number }

export interface Culprit { key: string; ns: number; share: number; code?: string; label?: string }
export interface PairCulprit { from: number; to: number; ns: number; share: number }

export interface Blame {
  /**
   * ns of S charged to producers, and the parts of it by producer code / label / individual CF
   * (gid); `other`: the S no producer ended — worker threads that ran no fragment, the workers'
   * tails after their last fragment, inputs without a recorded producer (shares of S).
   */
  starvation: {
    total: number; byCode: Culprit[]; byLabel: Culprit[]; byCf: Culprit[]; other: Culprit[];
    /**
     * the same total by what the producer did meanwhile: its own inputs not all present yet
     * (`notReady`), ready and not started (`queued`: behind other CFs of its lane, or in a batch
     * not yet reached), `running`, and `unknown` (no producer or readiness recorded). Only
     * `notReady` is idle the graph imposed through this producer; `queued` is scheduling.
     */
    byProducerState: { notReady: number; queued: number; running: number; unknown: number };
  };
  /** ns of L charged to transfers, by DF base name (indices stripped), DF, node pair and producer. */
  latency: { total: number; byDfBase: Culprit[]; byDf: Culprit[]; byNodePair: PairCulprit[]; byProducerLabel: Culprit[] };
  /**
   * ns threads spent waiting for resources (wait records: all of them, W and beyond), how many
   * waits, and the parts of it by resource (`kind resource`), by kind, and by who waited (a CF's
   * gid, `rank r`, or a thread).
   */
  waiting: { total: number; waits: number; byResource: Culprit[]; byKind: Culprit[]; byWaiter: Culprit[] };
}

/** A step of the critical path: its global id, label, the name the program gives it (`sw[57][0]`), code and CPU time. */
export interface PathStep { gid: string; label: string; name: string; code: string; ns: number }
export interface CriticalPath {
  /** Σ CF CPU time along the longest DF-dependency chain (the span). */
  length: number;
  /** length / T_wall: near 1 = the run was as fast as the dependencies allow. */
  ofWall: number;
  /** T_U / length: average parallelism available in the execution graph. */
  parallelism: number;
  cfs: number;
  /** steps kept one by one (the report lists and draws them all): `cfs` unless the path was longer than that limit */
  steps: number;
  byCode: Culprit[];
  byLabel: Culprit[];
  /** the last fragments of the path, latest first */
  tail: PathStep[];
}

/** A machine of the run and how many worker threads ran on it. */
export interface MachineRow {
  host: string;
  /** CPUs its processes could use (the union of its nodes' CPU sets) */
  cores: number;
  /** CPUs the machine has online (= cores when the trace does not say) */
  cpus: number;
  nodes: number[];
  /** per node of `nodes`: the CPUs it could use (= cores when the trace does not say); fewer than `cpus` when a launcher bound it */
  nodeCpus: number[];
  /** worker threads of those nodes (their system threads come on top) */
  workers: number;
  /** workers / cores: above 1 the machine is oversubscribed */
  oversubscription: number;
}

/** Where the CFs ran, and the nodes and worker threads that ran none. */
export interface Placement {
  /** CFs run per node */
  perNode: number[];
  /** CFs run per worker thread, in the order of perThread */
  perThread: number[];
  /** nodes that ran no CF at all (a node that recorded nothing is missing, not listed: see warnings) */
  idleNodes: number[];
  /** worker threads that ran no CF, on nodes that ran some */
  idleThreads: { node: number; thread: number }[];
  /** ns of S on every worker thread that ran no CF (their whole T_wall; part of starvationTail) */
  idleNs: number;
  /** ns from the run's start to the latest first CF of the worker threads that ran any: how long the workers took to get going */
  startupNs: number;
}

/**
 * What the run's graph, replayed on its nodes' workers (sim/run-graph.ts), predicts: the makespan in
 * the run's own order (the baseline the others are compared with), in critical-path order (what
 * `--priorities-from` does), and with fewer worker threads per node.
 */
export interface Predictions {
  baselineNs: number;
  criticalOrderNs: number;
  threads: { threads: number; ns: number }[];
}

/**
 * How long the run's graph needs on its own, on the run's nodes and threads: each CF its CPU
 * time, every CF known from the start, critical path first, remote inputs after the transfers
 * they had. T_wall beyond `ns` is the runtime's and the machine's, not the fragmentation's.
 */
export interface Floor {
  ns: number;
  /** ns / tWall */
  ofWall: number;
  /** no schedule is shorter: the longest chain of CPU time, or the busiest node's CPU time over its threads */
  boundNs: number;
}

/**
 * How the run ended: the manifest's status, or (when the launcher never wrote its end) the
 * nodes' programFinish records; `running`/`unknown`: the run never recorded its end (killed, or
 * still running). Unless `complete`, every figure covers only the part of the run before it ended.
 */
export interface RunEnd {
  status: RunStatus | 'unknown';
  /** the error of a failed, hung or lost run, as the runtime printed it (several lines for a hang) */
  message?: string;
  complete: boolean;
}

export interface SlowReport {
  /** how the run ended; the figures cover only the part before it unless `run.complete` */
  run: RunEnd;
  model: SlowModel;
  /** the other model is in `models` because it was asked for (--compare) */
  compare: boolean;
  program: string;
  nodes: number;
  threads: number;
  /** worker threads the model accounts for: nodes × threads (+ nodes × systemCores); not the machine's CPUs (see machines) */
  cores: number;
  /** the machines the nodes ran on, as the trace recorded them (empty when it did not) */
  machines: MachineRow[];
  /** what started the nodes: `local` (luna run), `mpirun`, `srun`, `pmi`; `unknown` in older traces */
  launcher: string;
  placement: Placement;
  tStart: number;
  tWall: number;
  tTotal: number;
  t: Slou;
  /** percent of T_total */
  p: Slou;
  sum: number;
  /** ΣT_X / T_total */
  coverage: number;
  /** both models when computed; `t` equals models[model] */
  models: Partial<Record<SlowModel, Slou>>;
  /**
   * parts of O: CF pre-emption (wall − CPU), producer→send delay [B,C), input-present→start delay [G,D), extra system cores;
   * `startup` is the part of sendDelay + startDelay before each worker's first CF (not a separate part: it overlaps them);
   * `startDelaySystemBusy` the part of startDelay during which the CF's node's system thread was busy (its sysBusy spans:
   * its other work held the ready CF back), the rest of startDelay the hand-off itself (the result's way to the system
   * thread, the dispatch, the worker's wake-up)
   */
  overhead: { preempt: number; sendDelay: number; startDelay: number; startDelaySystemBusy: number; systemCores: number; startup: number };
  /** part of S after each worker's last CF up to the end (the whole T_wall of a worker that ran none: placement.idleNs) */
  starvationTail: number;
  perNode: Slou[];
  perThread: ThreadRow[];
  /** SLOW per time window [tStart + i·windowNs, …); `explicit`: the width was asked for (windowNs option) */
  series: { windowNs: number; explicit: boolean; points: Slou[]; requestedNs?: number };
  perCode: CodeRow[];
  perLabel: LabelRow[];
  blame: Blame;
  criticalPath: CriticalPath;
  /**
   * DF families advice may name (those the starved CFs waited for, those the labels produce): how
   * many indices each has — a map rule for a family must have as many — and a label producing it
   */
  families: { family: string; indices: number; producer: string }[];
  /** per label, a family of DFs its CFs produce */
  produces: { label: string; family: string }[];
  /** what replays of the run's graph predict for the options advice may offer; null when not computed (the graph was too large, not kept, or S and idle threads give nothing to predict) */
  predictions: Predictions | null;
  /** why `predictions` is null (empty when computed) */
  predictionsSkipped: string;
  /** the graph's floor: the run replayed with a runtime that costs nothing (sim/run-graph.ts `graphFloor`); null when the graph was not kept or is incomplete */
  floor: Floor | null;
  /** system-thread busy time (sysBusy), informational unless systemCores > 0 */
  sysBusy: { total: number; perNode: number[] };
  /**
   * DFs held from their post to the end of the run because their req_count was never reached
   * (more than the CFs that read them): how many, their bytes, and the largest (at most 8) with
   * the node that held each and the requests that never came
   */
  unspent: { dfs: number; bytes: number; largest: { df: string; node: number; left: number; bytes: number }[] };
  cfs: number;
  meanCfNs: number;
  events: number;
  warnings: string[];
  /** nodes of the manifest that recorded nothing: left out of cores, T_total and every share */
  missingNodes: number[];
  /** records the reader and the model dropped or corrected (docs/reliability.md, Traces) */
  damage: DamageReport;
  /** the unit of every kind of number in this report (see docs/slow.md) */
  units: typeof UNITS;
}

/**
 * The unit of every number of the report, by path (`*` any key, `[]` any array element), carried
 * in the JSON so that a reader needs no documentation. Times are nanoseconds.
 */
export const UNITS = {
  'tStart': 'ns on the run clock (node 0\'s monotonic clock minus the run origin)',
  'tWall': 'ns', 'tTotal': 'ns', 'sum': 'ns', 't.*': 'ns', 'models.*.*': 'ns',
  'p.*': 'percent of tTotal (0-100)',
  'coverage': 'fraction (sum / tTotal)',
  'overhead.*': 'ns', 'starvationTail': 'ns',
  'perNode[].*': 'ns (a node\'s five sum to tWall × threads)',
  'perThread[].node': 'node number', 'perThread[].thread': 'worker thread number (1-based)',
  'perThread[].*': 'ns (a thread\'s five sum to tWall)',
  'series.windowNs': 'ns', 'series.requestedNs': 'ns (the --window asked for, when the run would need more than 10 000 windows of it; windowNs is the width used)', 'series.points[].*': 'ns (a window\'s five sum to windowNs × cores, the last window cut by the end)',
  'perCode[].code': 'code-fragment index', 'perCode[].cfs': 'count', 'perCode[].*': 'ns',
  'perLabel[].cfs': 'count', 'perLabel[].*': 'ns',
  'unspent.dfs': 'count', 'unspent.bytes': 'bytes', 'unspent.largest[].node': 'node number', 'unspent.largest[].left': 'count (requests that never came)', 'unspent.largest[].bytes': 'bytes',
  'blame.*.total': 'ns', 'blame.*.*[].ns': 'ns', 'blame.*.*[].share': 'fraction of that blame total',
  'blame.waiting.waits': 'count',
  'blame.latency.byNodePair[].from': 'node number', 'blame.latency.byNodePair[].to': 'node number',
  'criticalPath.length': 'ns', 'criticalPath.ofWall': 'fraction of tWall', 'criticalPath.parallelism': 'ratio (T_U / length)',
  'criticalPath.cfs': 'count', 'criticalPath.steps': 'count', 'criticalPath.by*[].ns': 'ns', 'criticalPath.by*[].share': 'fraction of length',
  'criticalPath.tail[].ns': 'ns (CPU time of that CF)',
  'sysBusy.total': 'ns', 'sysBusy.perNode[]': 'ns',
  'cfs': 'count', 'meanCfNs': 'ns', 'events': 'count',
  'nodes': 'count', 'threads': 'count (worker threads per node)', 'cores': 'count (worker threads of the run)',
  'machines[].cores': 'count (CPUs)', 'machines[].cpus': 'count (CPUs)', 'machines[].nodeCpus[]': 'count (CPUs of that node)', 'machines[].nodes[]': 'node number', 'machines[].workers': 'count',
  'machines[].oversubscription': 'ratio (workers / cores)',
  'placement.perNode[]': 'count (CFs)', 'placement.perThread[]': 'count (CFs)', 'placement.idleNodes[]': 'node number',
  'missingNodes[]': 'node number',
  'damage.total': 'count', 'damage.counts.*': 'count', 'damage.examples[].offset': 'byte offset in that file',
  'placement.idleThreads[].node': 'node number', 'placement.idleThreads[].thread': 'worker thread number', 'placement.idleNs': 'ns',
  'placement.startupNs': 'ns from tStart', 'families[].indices': 'count (indices of the family\'s DFs)',
  'blame.starvation.other[].share': 'fraction of t.S',
  'blame.starvation.byProducerState.*': 'ns (the four sum to blame.starvation.total)',
  'predictions.baselineNs': 'ns (makespan of the replayed graph)', 'predictions.criticalOrderNs': 'ns (makespan of the replayed graph)',
  'predictions.threads[].threads': 'count (worker threads per node)', 'predictions.threads[].ns': 'ns (makespan of the replayed graph)',
  'floor.ns': 'ns (makespan of the graph replayed with a runtime that costs nothing)', 'floor.ofWall': 'fraction of tWall',
  'floor.boundNs': 'ns (no schedule is shorter)',
} as const;

/** The unit of the number at `path` (e.g. `perNode[3].S`), or undefined when UNITS has none. */
export function unitOf(path: string): string | undefined {
  const norm = path.replace(/\[\d+\]/g, '[]');
  let best: string | undefined, bestLen = -Infinity;
  for (const [pat, unit] of Object.entries(UNITS)) {
    const re = new RegExp(`^${pat.replace(/[.[\]]/g, (c) => `\\${c}`).replace(/\*/g, '[^.\\[]*')}$`);
    // the most specific pattern (fewest wildcards, then longest) wins
    const score = pat.length - 100 * (pat.split('*').length - 1);
    if (re.test(norm) && score > bestLen) { best = unit; bestLen = score; }
  }
  return best;
}

export const FACTORS = ['S', 'L', 'O', 'W', 'U'] as const;
export const F_S = 0, F_L = 1, F_O = 2, F_W = 3, F_U = 4;

export function slou(v: ArrayLike<number>, off = 0): Slou {
  return { S: v[off + F_S], L: v[off + F_L], O: v[off + F_O], W: v[off + F_W], U: v[off + F_U] };
}
