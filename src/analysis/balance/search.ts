// Local search on the predicted makespan, after a strategy: the simulator says which node keeps
// the run going longest; its CFs are tried on the least busy nodes, heaviest first, one move at a
// time, and a move stays only if the predicted end of the run comes sooner. Formula 6 balances
// each quantum's load, but a pipelined program (test_3's conveyor) is held back by the order its
// CFs can run in, which only a replay of the graph sees. Bounded by a time budget: each try is a
// replay of the whole graph.
import type { PlacementResult as Prediction } from '../sim/placement.js';

export interface SearchOptions {
  /** time to spend, ms */
  budgetMs: number;
  /** CFs tried per source node before giving up on it */
  tries: number;
}

/** Improve `node` in place; returns the moves kept and the last prediction. */
export function searchPlacement(node: Int32Array, weight: ArrayLike<number>, pinned: Uint8Array | undefined, nodes: number, predict: (node: Int32Array) => Prediction, o: SearchOptions): { moves: number; pred: Prediction } {
  const t0 = performance.now();
  let best = predict(node), moves = 0;
  const order = Int32Array.from({ length: node.length }, (_, c) => c).sort((a, b) => weight[b]! - weight[a]! || a - b);
  for (;;) {
    if (performance.now() - t0 > o.budgetMs) break;
    // the node whose last CF ends last, and the nodes by how little they work
    const end = new Float64Array(nodes);
    for (let c = 0; c < node.length; c++) if (best.finish[c]! > end[node[c]!]!) end[node[c]!] = best.finish[c]!;
    const src = end.indexOf(Math.max(...end));
    const dsts = Array.from({ length: nodes }, (_, k) => k).filter((k) => k !== src).sort((a, b) => best.busy[a]! - best.busy[b]!).slice(0, 3);
    let found = false;
    let tried = 0;
    for (let k = 0; k < order.length && tried < o.tries && !found; k++) {
      const c = order[k]!;
      if (node[c] !== src || pinned?.[c]) continue;
      tried++;
      for (const dst of dsts) {
        node[c] = dst;
        const r = predict(node);
        if (r.makespan < best.makespan * (1 - 1e-4)) { best = r; moves++; found = true; break; }
        node[c] = src;
      }
    }
    if (!found) break;
  }
  return { moves, pred: best };
}
