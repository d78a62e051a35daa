// Moves of affinity groups: CFs joined by bulk data — DFs whose crossing costs more for their
// bytes than for the message (more than twice an empty DF's) — move together, with their data. A domain decomposition's block is such a group
// (test_3: a block's data, 1 MB, flows through every sweep of every step on its node): moving one
// of its CFs carries its block across twice, moving the whole block carries only the small faces
// its neighbours exchange. The strategies and the CF-level search move CFs one by one (or short
// chains), so on test_3 every move that evens the load paid for megabytes of transfers; moving
// whole blocks evens it for a few hundred kilobytes.
import type { PlacementResult as Prediction } from '../sim/placement.js';
import type { Profile } from './profile-type.js';

/** Groups of CFs (CSR: members of group g are cf[at[g] .. at[g+1])), only those of 2 CFs or more. */
export interface Groups { at: Int32Array; cf: Int32Array; weight: Float64Array }

/**
 * Join the writer and the reader of every dependence whose DF is bulk data: its crossing (`hop`)
 * costs more than twice an empty DF's. Not "more than the reader's work": the messages' latency
 * would then join every light CF to its neighbours (test_3's checks, through their 4-byte
 * results, into one group of 55 apart from their blocks). Pinned CFs stay out of every group.
 */
export function affinityGroups(p: Pick<Profile, 'n' | 'depStart' | 'depFrom' | 'depDf' | 'dfBytes'>, weight: ArrayLike<number>, pinned: Uint8Array | undefined, hop: (bytes: number) => number): Groups {
  const bulk = 2 * hop(0);
  const parent = new Int32Array(p.n);
  for (let c = 0; c < p.n; c++) parent[c] = c;
  const find = (x: number): number => {
    while (parent[x] !== x) { parent[x] = parent[parent[x]!]!; x = parent[x]!; }
    return x;
  };
  for (let c = 0; c < p.n; c++) {
    if (pinned?.[c]) continue;
    for (let k = p.depStart[c]!; k < p.depStart[c + 1]!; k++) {
      const w = p.depFrom[k]!;
      if (pinned?.[w] || !(hop(p.dfBytes[p.depDf[k]!]!) > bulk)) continue;
      const a = find(c), b = find(w);
      if (a !== b) parent[a] = b;
    }
  }
  const size = new Int32Array(p.n);
  for (let c = 0; c < p.n; c++) if (!pinned?.[c]) size[find(c)]++;
  const id = new Int32Array(p.n).fill(-1);
  let G = 0;
  for (let c = 0; c < p.n; c++) if (!pinned?.[c] && size[find(c)]! >= 2 && id[find(c)]! < 0) id[find(c)] = G++;
  const at = new Int32Array(G + 1), gw = new Float64Array(G);
  for (let c = 0; c < p.n; c++) if (!pinned?.[c] && id[find(c)]! >= 0) { at[id[find(c)]! + 1]++; gw[id[find(c)]!] += weight[c]!; }
  for (let g = 0; g < G; g++) at[g + 1] += at[g]!;
  const fill = at.slice(0, G), cf = new Int32Array(at[G]!);
  for (let c = 0; c < p.n; c++) if (!pinned?.[c] && id[find(c)]! >= 0) cf[fill[id[find(c)]!]!++] = c;
  return { at, cf, weight: gw };
}

/**
 * Improve `node` in place by moving whole groups: each group (heaviest first) is tried on every
 * other node, and a move stays when the predicted end of the run comes sooner; rounds until none
 * does or `replays` are spent. A group's members are moved to one node even when they ran on
 * several. Returns the CFs moved and the last prediction.
 */
export function searchGroups(node: Int32Array, g: Groups, nodes: number, predict: (node: Int32Array) => Prediction, o: { replays: number; start?: Prediction }): { moves: number; pred: Prediction } {
  const G = g.weight.length;
  let best = o.start ?? predict(node), replays = o.start ? 0 : 1, moves = 0;
  if (G === 0 || nodes < 2) return { moves, pred: best };
  const order = Int32Array.from({ length: G }, (_, i) => i).sort((a, b) => g.weight[b]! - g.weight[a]! || a - b);
  const was = new Int32Array(g.cf.length);
  for (let improved = true; improved && replays < o.replays;) {
    improved = false;
    for (const x of order) {
      const a = g.at[x]!, b = g.at[x + 1]!;
      for (let i = a; i < b; i++) was[i] = node[g.cf[i]!]!;
      for (let to = 0; to < nodes && replays < o.replays; to++) {
        let same = true;
        for (let i = a; i < b && same; i++) if (was[i] !== to) same = false;
        if (same) continue;
        for (let i = a; i < b; i++) node[g.cf[i]!] = to;
        const r = predict(node);
        replays++;
        if (r.makespan < best.makespan * (1 - 1e-4)) {
          for (let i = a; i < b; i++) if (was[i] !== to) moves++;
          best = r; improved = true;
          break;
        }
        for (let i = a; i < b; i++) node[g.cf[i]!] = was[i]!;
      }
      if (replays >= o.replays) break;
    }
  }
  return { moves, pred: best };
}
