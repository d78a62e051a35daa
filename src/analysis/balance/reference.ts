// Reference strategies on the same input as the seed's algorithm (whole-run weights: a CF's
// execution time), for comparison in the experiments:
//   greedy — LPT: CFs in decreasing weight, each to the least loaded node (a map rebuilt from
//            scratch: it ignores where CFs ran and what they exchange);
//   refine — Charm++'s GreedyRefine rule: CFs in decreasing weight; a CF stays on its node if
//            that node's load stays under tolerance × the greedy max load, else it goes to the
//            least loaded node (tolerance 1.0 by default);
//   bound  — no placement can end sooner than max(total work / lanes, the longest dependent chain).

/** Weights of CFs and where they are. */
export interface Weighted {
  readonly n: number;
  readonly weight: ArrayLike<number>;
}

function byWeight(w: Weighted): Int32Array {
  return Int32Array.from({ length: w.n }, (_, i) => i).sort((a, b) => w.weight[b]! - w.weight[a]! || a - b);
}

/** The least loaded node (lowest index on ties). */
function least(load: Float64Array): number {
  let m = 0;
  for (let k = 1; k < load.length; k++) if (load[k]! < load[m]!) m = k;
  return m;
}

/** LPT over `nodes` nodes: the new node of every CF, and the max load reached. */
export function greedyLpt(w: Weighted, nodes: number): { node: Int32Array; maxLoad: number } {
  const node = new Int32Array(w.n), load = new Float64Array(nodes);
  for (const c of byWeight(w)) { const m = least(load); node[c] = m; load[m] += w.weight[c]!; }
  return { node, maxLoad: Math.max(...load) };
}

/** GreedyRefine from the placement `current` (not modified): the new node of every CF. */
export function greedyRefine(w: Weighted, current: ArrayLike<number>, nodes: number, tolerance = 1.0): Int32Array {
  const limit = tolerance * greedyLpt(w, nodes).maxLoad;
  const node = new Int32Array(w.n), load = new Float64Array(nodes);
  for (const c of byWeight(w)) {
    const here = current[c]!;
    const m = here < nodes && load[here]! + w.weight[c]! <= limit ? here : least(load);
    node[c] = m;
    load[m] += w.weight[c]!;
  }
  return node;
}

/** max(total work / lanes, the longest chain of dependent CFs), ns (deps in CSR by consumer, producers first). */
export function lowerBound(w: Weighted, lanes: number, depStart: ArrayLike<number>, depFrom: ArrayLike<number>): { bound: number; work: number; chain: number } {
  let work = 0, chain = 0;
  const longest = new Float64Array(w.n);
  for (let c = 0; c < w.n; c++) {
    work += w.weight[c]!;
    let before = 0;
    for (let k = depStart[c]!; k < depStart[c + 1]!; k++) if (longest[depFrom[k]!]! > before) before = longest[depFrom[k]!]!;
    longest[c] = before + w.weight[c]!;
    if (longest[c]! > chain) chain = longest[c]!;
  }
  return { bound: Math.max(work / lanes, chain), work, chain };
}
