// Light fragments follow their data: after a strategy and the search, a CF whose DFs would cost
// more to carry across than it costs to run is moved to the node where its data is, if that saves
// more than its weight. Heaviest-first moves take the heavy CF of a chain and leave its light
// producer and consumer behind (test_1: an addOne moved without its checkB, so its 18 KB block
// crosses back where the 8-byte result of checkB would); the replay then decides whether the
// whole pass is kept. A DF crosses to a node once (the runtime's remote copies): an input some
// other CF of the node reads is there already.
import type { Profile } from './profile-type.js';

/**
 * One pass over the CFs in order: each moves to the node where its inputs and outputs cost the
 * least to carry (`hop` per DF crossing to a node) when the saving exceeds its weight. Returns the
 * CFs moved.
 */
export function pullNeighbours(p: Pick<Profile, 'n' | 'depStart' | 'depFrom' | 'depDf' | 'dfs' | 'dfWriter' | 'dfBytes'>, node: Int32Array, weight: ArrayLike<number>, pinned: Uint8Array | undefined, nodes: number, hop: (bytes: number) => number): number {
  // readers of each DF on each node, and the DFs each CF writes (CSR)
  const readers = new Int32Array(p.dfs * nodes), readingNodes = new Int32Array(p.dfs);
  for (let c = 0; c < p.n; c++) {
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) if (readers[p.depDf[k]! * nodes + node[c]!]++ === 0) readingNodes[p.depDf[k]!]++;
  }
  const wAt = new Int32Array(p.n + 1);
  for (let d = 0; d < p.dfs; d++) if (p.dfWriter[d]! >= 0) wAt[p.dfWriter[d]! + 1]++;
  for (let c = 0; c < p.n; c++) wAt[c + 1] += wAt[c]!;
  const fill = wAt.slice(0, p.n), wDf = new Int32Array(wAt[p.n]!);
  for (let d = 0; d < p.dfs; d++) if (p.dfWriter[d]! >= 0) wDf[fill[p.dfWriter[d]!]!++] = d;
  // one crossing of each DF (the hop's cost per DF once, not per CF and node)
  const cross = new Float64Array(p.dfs);
  for (let d = 0; d < p.dfs; d++) cross[d] = hop(p.dfBytes[d]!);
  const cost = new Float64Array(nodes);
  const depStart = p.depStart, depFrom = p.depFrom, depDf = p.depDf;
  // what carrying CF c's DFs costs on node m
  const costOn = (c: number, here: number, m: number): number => {
    let s = 0;
    // an input crosses to m unless its writer is there or another reader there has it
    for (let k = depStart[c]!; k < depStart[c + 1]!; k++) {
      const d = depDf[k]!;
      if (node[depFrom[k]!] === m || readers[d * nodes + m]! - (here === m ? 1 : 0) > 0) continue;
      s += cross[d]!;
    }
    // an output crosses once to every other node that reads it
    for (let x = wAt[c]!; x < wAt[c + 1]!; x++) {
      const d = wDf[x]!;
      s += (readingNodes[d]! - (readers[d * nodes + m]! > 0 ? 1 : 0)) * cross[d]!;
    }
    return s;
  };
  let moved = 0;
  for (let c = 0; c < p.n; c++) {
    if (pinned?.[c]) continue;
    const here = node[c]!;
    // every cost is ≥ 0, so a move saves at most what the CF's DFs cost where it is: when that is
    // not more than its weight, no node can win (most CFs: their data is local)
    const stay = costOn(c, here, here);
    if (stay <= weight[c]!) continue;
    for (let m = 0; m < nodes; m++) cost[m] = m === here ? stay : costOn(c, here, m);
    let best = here;
    for (let m = 0; m < nodes; m++) if (cost[m]! < cost[best]!) best = m;
    if (best === here || cost[here]! - cost[best]! <= weight[c]!) continue;
    node[c] = best; moved++;
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) {
      const d = p.depDf[k]!;
      if (--readers[d * nodes + here] === 0) readingNodes[d]--;
      if (readers[d * nodes + best]++ === 0) readingNodes[d]++;
    }
  }
  return moved;
}
