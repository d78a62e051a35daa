// Local search on the predicted makespan, after a strategy: the simulator says which node keeps
// the run going longest; its CFs are tried on the least busy nodes, heaviest first, and a move
// stays only if the predicted end of the run comes sooner. Formula 6 balances each quantum's
// load, but a pipelined program (test_3's conveyor) is held back by the order its CFs can run in,
// which only a replay of the graph sees. Bounded by a number of replays (each try replays the
// whole graph).
//
// A move takes a CF alone or with its successors along its heaviest output (a segment of the
// chain its bulk data flows along: a block of test_3 through its sweeps): moving one CF of such
// a chain adds two transfers of its bulk data, moving a segment two for the whole segment, so
// single moves may all lose where a segment's move gains. Segments of 1, 2, 4 … SEGMENT_MAX CFs.
import type { PlacementResult as Prediction } from '../sim/placement.js';

export interface SearchOptions {
  /** replays to spend (the budget: the same on any machine) */
  replays: number;
  /** time limit, ms (against a machine far slower than the budget assumes) */
  budgetMs: number;
  /** starting CFs tried per segment length and source node before giving up on it */
  tries: number;
  /** per CF the next one along its heaviest output (-1: none); without it, single CFs only */
  chain?: Int32Array;
  /** the prediction of `node` as given, when the caller has it (saves a replay) */
  start?: Prediction;
}

/** Longest segment a move takes. */
export const SEGMENT_MAX = 32;

/** Improve `node` in place; returns the moves kept and the last prediction. */
export function searchPlacement(node: Int32Array, weight: ArrayLike<number>, pinned: Uint8Array | undefined, nodes: number, predict: (node: Int32Array) => Prediction, o: SearchOptions): { moves: number; pred: Prediction } {
  const t0 = performance.now();
  let best = o.start ?? predict(node), moves = 0, replays = 1;
  const spent = (): boolean => replays >= o.replays || performance.now() - t0 > o.budgetMs;
  const order = Int32Array.from({ length: node.length }, (_, c) => c).sort((a, b) => weight[b]! - weight[a]! || a - b);
  const lengths: number[] = [1];
  if (o.chain) for (let L = 2; L <= SEGMENT_MAX; L *= 2) lengths.push(L);
  const seg: number[] = [];
  /** the segment from `c` along the chain, on node `src`, up to `len` CFs (none pinned) */
  const segment = (c: number, src: number, len: number): number => {
    seg.length = 0;
    for (let x = c; x >= 0 && seg.length < len && node[x] === src && !pinned?.[x]; x = o.chain ? o.chain[x]! : -1) seg.push(x);
    return seg.length;
  };
  for (;;) {
    if (spent()) break;
    // the node whose last CF ends last, and the nodes by how little they work
    const end = new Float64Array(nodes);
    for (let c = 0; c < node.length; c++) if (best.finish[c]! > end[node[c]!]!) end[node[c]!] = best.finish[c]!;
    const src = end.indexOf(Math.max(...end));
    const dsts = Array.from({ length: nodes }, (_, k) => k).filter((k) => k !== src).sort((a, b) => best.busy[a]! - best.busy[b]!).slice(0, 3);
    let found = false;
    for (const len of lengths) {
      let tried = 0;
      for (let k = 0; k < order.length && tried < o.tries && !found; k++) {
        const c = order[k]!;
        if (node[c] !== src || pinned?.[c]) continue;
        // a longer segment only where the chain goes on (else it is a shorter length's move)
        if (len > 1 && segment(c, src, len) <= len / 2) continue;
        if (len === 1) segment(c, src, 1);
        tried++;
        for (const dst of dsts) {
          for (const x of seg) node[x] = dst;
          const r = predict(node);
          replays++;
          if (r.makespan < best.makespan * (1 - 1e-4)) { best = r; moves += seg.length; found = true; break; }
          for (const x of seg) node[x] = src;
        }
        if (spent()) break;
      }
      if (found || spent()) break;
    }
    if (!found) break;
  }
  return { moves, pred: best };
}

/** Per CF, the CF that reads its largest output first (the chain its bulk data flows along), -1: none. */
export function heaviestChains(p: { n: number; depStart: ArrayLike<number>; depFrom: ArrayLike<number>; depDf: ArrayLike<number>; dfBytes: ArrayLike<number> }): Int32Array {
  const next = new Int32Array(p.n).fill(-1), bytes = new Float64Array(p.n).fill(-1);
  for (let c = 0; c < p.n; c++) {
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) {
      const w = p.depFrom[k]!, b = p.dfBytes[p.depDf[k]!]!;
      if (b > bytes[w]!) { bytes[w] = b; next[w] = c; }
    }
  }
  return next;
}
