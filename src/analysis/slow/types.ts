// Public shapes of the SLOW analysis (SPEC §5, seed 003 §4). All times are nanoseconds.

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
}

export interface Row extends Slou { cfs: number }
export interface CodeRow extends Row { code: number; name: string }
export interface LabelRow extends Row { label: string }
export interface ThreadRow extends Slou { node: number; thread: number }

export interface Culprit { key: string; ns: number; share: number; code?: string; label?: string }
export interface PairCulprit { from: number; to: number; ns: number; share: number }

export interface Blame {
  /** ns of S charged to producers, and the parts of it by producer code / label / individual CF (gid). */
  starvation: { total: number; byCode: Culprit[]; byLabel: Culprit[]; byCf: Culprit[] };
  /** ns of L charged to transfers, by DF base name (indices stripped), DF, node pair and producer. */
  latency: { total: number; byDfBase: Culprit[]; byDf: Culprit[]; byNodePair: PairCulprit[]; byProducerLabel: Culprit[] };
}

export interface PathStep { gid: string; label: string; code: string; ns: number }
export interface CriticalPath {
  /** Σ CF CPU time along the longest DF-dependency chain (the span). */
  length: number;
  /** length / T_wall: near 1 = the run was as fast as the dependencies allow. */
  ofWall: number;
  /** T_U / length: average parallelism available in the execution graph. */
  parallelism: number;
  cfs: number;
  byCode: Culprit[];
  byLabel: Culprit[];
  /** the last fragments of the path, latest first */
  tail: PathStep[];
}

export interface SlowReport {
  model: SlowModel;
  program: string;
  nodes: number;
  threads: number;
  /** nodes × worker threads (+ nodes × systemCores) */
  cores: number;
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
  /** parts of O: CF pre-emption (wall − CPU), producer→send delay [B,C), input-present→start delay [G,D), extra system cores */
  overhead: { preempt: number; sendDelay: number; startDelay: number; systemCores: number };
  /** part of S that is the tail after each worker's last CF */
  starvationTail: number;
  perNode: Slou[];
  perThread: ThreadRow[];
  series: { windowNs: number; points: Slou[] };
  perCode: CodeRow[];
  perLabel: LabelRow[];
  blame: Blame;
  criticalPath: CriticalPath;
  /** system-thread busy time (sysBusy), informational unless systemCores > 0 */
  sysBusy: { total: number; perNode: number[] };
  cfs: number;
  meanCfNs: number;
  events: number;
  warnings: string[];
}

export const FACTORS = ['S', 'L', 'O', 'W', 'U'] as const;
export const F_S = 0, F_L = 1, F_O = 2, F_W = 3, F_U = 4;

export function slou(v: ArrayLike<number>, off = 0): Slou {
  return { S: v[off + F_S], L: v[off + F_L], O: v[off + F_O], W: v[off + F_W], U: v[off + F_U] };
}
