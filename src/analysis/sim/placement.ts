// The balancer's use of the replay (replay.ts): a traced graph under another placement of its
// CFs and DFs, with the traced durations and a transfer model. A writer posts its DF to the DF's
// owner and a reader elsewhere gets it from there: one transfer per crossing. It predicts the end
// of the run and each node's busy time, as Charm++'s +LBSim does for a balancing step.
import { replayOnHosts, type HostModel } from './host.js';
import { replayGraph, type PlacementGraph, type ReplayResult } from './replay.js';

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

/** Replay `g` under placement `o` (ready CFs in the order they became ready). */
export function replayPlacement(g: PlacementGraph, o: PlacementOptions): PlacementResult {
  if (o.host) return replayOnHosts(g, { nodes: o.nodes, lanes: o.lanes, node: o.node, dfOwner: o.dfOwner, host: o.host });
  const r = replayGraph(g, {
    nodes: o.nodes, lanes: o.lanes, node: o.node,
    arrival: (k, from, to) => {
      const d = g.depDf[k]!, h = hops(o.dfOwner[d]!, from, to);
      return h > 0 ? h * o.transferNs(g.dfBytes[d]!) : 0;
    },
  });
  // a DF crosses to a reading node once (the node keeps a copy for its later readers)
  let bytesMoved = 0;
  const crossed = new Set<number>();
  for (let c = 0; c < g.n; c++) {
    for (let k = g.depStart[c]!; k < g.depStart[c + 1]!; k++) {
      const d = g.depDf[k]!, key = d * o.nodes + o.node[c]!;
      if (crossed.has(key)) continue;
      crossed.add(key);
      bytesMoved += hops(o.dfOwner[d]!, o.node[g.depFrom[k]!]!, o.node[c]!) * g.dfBytes[d]!;
    }
  }
  return { ...r, bytesMoved };
}
