// The balancer's use of the replay (replay.ts): a traced graph under another placement of its
// CFs and DFs, with the traced durations and a transfer model. A writer posts its DF to the DF's
// owner and a reader elsewhere gets it from there: one transfer per crossing. It predicts the end
// of the run and each node's busy time, as Charm++'s +LBSim does for a balancing step.
import { replayOnHosts, type HostModel } from './host.js';
import { consumersOf, replayGraph, replayScratch, type Consumers, type PlacementGraph, type ReplayResult, type ReplayScratch } from './replay.js';

/** A traced graph with the DF each input is and the DFs' sizes. */
export type { PlacementGraph } from './replay.js';

export interface PlacementOptions {
  nodes: number;
  /** worker lanes per node */
  lanes: number;
  /** node of each CF */
  node: ArrayLike<number>;
  /** node that keeps each DF (-1: the node of its writer) */
  dfOwner: ArrayLike<number>;
  /** time one DF of `bytes` takes from one node to another, ns */
  transferNs(bytes: number): number;
  /**
   * The hosts the nodes share and what transfers cost their system threads (host.ts): when
   * given, it replaces `transferNs`'s delay.
   */
  host?: HostModel;
}

export interface PlacementResult extends ReplayResult {
  /** bytes that crossed between nodes */
  bytesMoved: number;
  /** on a host model: each CF's CPU time with the contention it met (else its duration) */
  cpu?: Float64Array;
}

/** Transfers an input takes: writer → owner, owner → reader, each when they differ. */
function hops(dfOwner: number, writer: number, reader: number): number {
  const owner = dfOwner < 0 ? writer : dfOwner;
  return (owner !== writer ? 1 : 0) + (reader !== owner ? 1 : 0);
}

/**
 * What every replay of one graph shares, built once by a user that replays it many times (the
 * balancer: a sweep, the guard, a search): the consumers of each CF, and the time each input
 * takes for one hop (`transferNs` of its DF's size).
 */
export interface PlacementPrep { consumers: Consumers; hopNs: Float64Array; scratch: ReplayScratch; crossed?: Uint32Array }

export function preparePlacement(g: PlacementGraph, transferNs: (bytes: number) => number): PlacementPrep {
  const m = g.n > 0 ? g.depStart[g.n]! : 0, hopNs = new Float64Array(m);
  for (let k = 0; k < m; k++) hopNs[k] = transferNs(g.dfBytes[g.depDf[k]!]!);
  return { consumers: consumersOf(g), hopNs, scratch: replayScratch(g.n) };
}

/** Replay `g` under placement `o` (ready CFs in the order they became ready); `prep` from preparePlacement with `o.transferNs`. */
export function replayPlacement(g: PlacementGraph, o: PlacementOptions, prep?: PlacementPrep): PlacementResult {
  if (o.host) return replayOnHosts(g, { nodes: o.nodes, lanes: o.lanes, node: o.node, dfOwner: o.dfOwner, host: o.host }, prep?.consumers);
  const pre = prep ?? preparePlacement(g, o.transferNs), hopNs = pre.hopNs, owner = o.dfOwner, node = o.node, depDf = g.depDf;
  const r = replayGraph(g, {
    nodes: o.nodes, lanes: o.lanes, node,
    arrival: (k, from, to) => {
      const h = hops(owner[depDf[k]!]!, from, to);
      return h > 0 ? h * hopNs[k]! : 0;
    },
    hops: { hopNs, df: depDf, owner },
  }, pre.consumers, pre.scratch);
  return { ...r, bytesMoved: bytesCrossed(g, o.nodes, node, owner, pre) };
}

/**
 * Bytes that cross between nodes: a DF crosses to a reading node once (the node keeps a copy for
 * its later readers). Which (DF, node) pairs were counted: a bit mask per DF up to 32 nodes, a
 * byte per pair beyond (typed: a set of 10^6 pairs cost more than the replay itself).
 */
function bytesCrossed(g: PlacementGraph, N: number, node: ArrayLike<number>, owner: ArrayLike<number>, pre: PlacementPrep): number {
  // the masks are the prep's, cleared per replay (4 MB at 10^6 DFs: a major GC every few replays when new)
  const dfs = g.dfBytes.length;
  let mask: Uint32Array | undefined;
  if (N <= 32) { mask = pre.crossed?.length === dfs ? pre.crossed.fill(0) : (pre.crossed = new Uint32Array(dfs)); }
  const seen = mask ? undefined : new Uint8Array(dfs * N);
  let bytes = 0;
  for (let c = 0; c < g.n; c++) {
    const m = node[c]!;
    for (let k = g.depStart[c]!; k < g.depStart[c + 1]!; k++) {
      const d = g.depDf[k]!;
      if (mask) {
        const bit = 1 << m;
        if (mask[d]! & bit) continue;
        mask[d] = mask[d]! | bit;
      } else {
        if (seen![d * N + m]) continue;
        seen![d * N + m] = 1;
      }
      bytes += hops(owner[d]!, node[g.depFrom[k]!]!, m) * g.dfBytes[d]!;
    }
  }
  return bytes;
}
