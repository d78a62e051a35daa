// The advice's use of the replay (replay.ts): a run's execution graph replayed on its nodes'
// worker threads under another scheduling order or another number of threads, to predict what an
// option would change before advice offers it: `--priorities-from` (ready CFs in critical-path
// order) against the run's own order (ready first, first run), `--threads k` against the threads
// it had. Each CF keeps its node, its wall time and its creation time; a remote input arrives
// after the latency its transfer had.
import { replayGraph, type ReplayGraph } from './replay.js';

/** Growable columns of a run's graph, in the order CFs finished (producers before consumers). */
export class RunGraph implements ReplayGraph {
  n = 0;
  node = new Int32Array(1024);
  /** wall time on its lane, ns */
  duration = new Float64Array(1024);
  /** CPU time, ns (bottom levels, as --priorities-from computes them) */
  cpu = new Float64Array(1024);
  /** creation time: a CF cannot run before the program made it */
  release = new Float64Array(1024);
  /** inputs of CF i: depFrom/depLat[depStart[i] .. depStart[i + 1]) */
  depStart = new Int32Array(1025);
  depFrom = new Int32Array(1024);
  /** the latency each input's transfer had (0 when it was on the node) */
  depLat = new Float32Array(1024);
  edges = 0;
  /** false once `limit` CFs were recorded: the graph is incomplete, nothing is predicted */
  whole = true;
  /** bottomLevels of the graph as it stood at `n` CFs: the report's replays and its floor share one pass */
  levels: { n: number; bl: Float64Array } | null = null;

  constructor(readonly nodes: number, readonly threads: number, readonly limit = 1 << 21) {}

  /** Adds a CF; returns its number (for its consumers' `inputs`), -1 past the limit. */
  add(node: number, dur: number, cpu: number, release: number, inputs: readonly number[], lats: readonly number[]): number {
    if (this.n >= this.limit) { this.whole = false; return -1; }
    if (this.n + 1 >= this.node.length) this.grow();
    const i = this.n++;
    this.node[i] = node; this.duration[i] = dur; this.cpu[i] = cpu; this.release[i] = release;
    for (let k = 0; k < inputs.length; k++) {
      if (inputs[k]! < 0) continue;
      if (this.edges >= this.depFrom.length) { this.depFrom = grown(this.depFrom); this.depLat = grown(this.depLat); }
      this.depFrom[this.edges] = inputs[k]!; this.depLat[this.edges] = lats[k]!; this.edges++;
    }
    this.depStart[i + 1] = this.edges;
    return i;
  }

  private grow(): void {
    this.node = grown(this.node); this.duration = grown(this.duration); this.cpu = grown(this.cpu); this.release = grown(this.release);
    const off = new Int32Array(this.node.length + 1); off.set(this.depStart); this.depStart = off;
  }
}

function grown<A extends Int32Array | Float64Array | Float32Array>(a: A): A {
  const b = new (a.constructor as new (n: number) => A)(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Bottom level of every CF: its CPU time plus the longest chain of CPU time among its consumers.
 * Computed once for the graph as it stands (read-only for the callers).
 */
export function bottomLevels(g: RunGraph): Float64Array {
  if (g.levels?.n === g.n) return g.levels.bl;
  const bl = new Float64Array(g.n);
  for (let i = g.n - 1; i >= 0; i--) {
    bl[i] = bl[i]! + g.cpu[i]!;
    for (let e = g.depStart[i]!; e < g.depStart[i + 1]!; e++) { const p = g.depFrom[e]!; if (bl[i]! > bl[p]!) bl[p] = bl[i]!; }
  }
  g.levels = { n: g.n, bl };
  return bl;
}

export type ReplayOrder = 'run' | 'critical';

/**
 * The makespan (ns from the first release) of the graph on `threads` worker threads per node,
 * running ready CFs in the run's order (the earliest ready first) or in critical-path order.
 */
export function replay(g: RunGraph, order: ReplayOrder, threads = g.threads): number {
  if (g.n === 0) return 0;
  const bl = order === 'critical' ? bottomLevels(g) : null;
  const r = replayGraph(g, {
    nodes: g.nodes, lanes: threads, node: g.node,
    arrival: (k) => g.depLat[k]!,
    // critical: the highest bottom level first (a min-heap on its negation)
    priority: bl ? (c) => -bl[c]! : undefined,
  });
  return r.makespan - r.first;
}

/** What the run's graph needs on its own (`graphFloor`). */
export interface GraphFloor {
  /** makespan of the graph replayed with no runtime: each CF its CPU time, all released at once, critical path first, inputs after their measured transfers, ns */
  ns: number;
  /** no schedule on these workers is shorter: the longest chain of CPU time, or the busiest node's CPU time over its threads, ns */
  boundNs: number;
}

/**
 * The graph's floor: how long the run would have taken with a runtime that costs nothing — no
 * examination, hand-out or booking between CFs, no pre-emption of a CF by anything, every CF
 * known from the start — on the same nodes and threads, each CF taking its own CPU time and each
 * remote input the transfer it had. The span beyond it is the runtime's and the machine's, not
 * the fragmentation's. List scheduling is not optimal, so `boundNs` says how far from the best
 * schedule the floor can be.
 */
export function graphFloor(g: RunGraph): GraphFloor {
  if (g.n === 0) return { ns: 0, boundNs: 0 };
  const bl = bottomLevels(g);
  const r = replayGraph({ n: g.n, duration: g.cpu, release: new Float64Array(g.n), depStart: g.depStart, depFrom: g.depFrom }, {
    nodes: g.nodes, lanes: g.threads, node: g.node,
    arrival: (k) => g.depLat[k]!,
    priority: (c) => -bl[c]!,
  });
  let path = 0;
  const work = new Float64Array(g.nodes);
  for (let i = 0; i < g.n; i++) { if (bl[i]! > path) path = bl[i]!; work[g.node[i]!] += g.cpu[i]!; }
  let busiest = 0;
  for (const w of work) if (w > busiest) busiest = w;
  return { ns: r.makespan - r.first, boundNs: Math.max(path, busiest / g.threads) };
}
