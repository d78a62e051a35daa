// The critical path of the execution graph: CFs weighted by their CPU time, edges = DF
// dependencies (producer → consumer). Computed in the same streaming pass: a CF's path ends at
// (longest path among its inputs' producers) + its own CPU time. Paths are persistent linked lists
// shared by all consumers; to keep memory bounded, every CHECKPOINT-th node folds everything
// before it into per-code/per-label totals and drops its back link, so a live path costs at most
// CHECKPOINT nodes plus one small aggregate (the tail listing therefore shows ≤ CHECKPOINT steps).

const CHECKPOINT = 256;

export interface Agg { cfs: number; byCode: Map<number, number>; byLabel: Map<string, number> }

export class PathNode {
  prev: PathNode | null;
  readonly depth: number;
  /** totals of this node and everything before it; set only on checkpoints */
  agg: Agg | null = null;
  constructor(readonly len: number, readonly ns: number, readonly code: number, readonly label: string,
    readonly gid: string,
    /** the fragment's finish number in the model (Fragment.seq): other listeners' key to it */
    readonly seq: number,
    prev: PathNode | null) {
    this.depth = prev ? prev.depth + 1 : 1;
    this.prev = prev;
    if (this.depth % CHECKPOINT === 0) { this.agg = collect(this); this.prev = null; }
  }
}

/** Aggregate of a whole path ending at `end` (walks back to the nearest checkpoint). */
export function collect(end: PathNode): Agg {
  if (end.agg) return end.agg;
  const out: Agg = { cfs: 0, byCode: new Map(), byLabel: new Map() };
  for (let n: PathNode | null = end; n; n = n.prev) {
    if (n.agg) {
      out.cfs += n.agg.cfs;
      for (const [k, v] of n.agg.byCode) out.byCode.set(k, (out.byCode.get(k) ?? 0) + v);
      for (const [k, v] of n.agg.byLabel) out.byLabel.set(k, (out.byLabel.get(k) ?? 0) + v);
      break;
    }
    out.cfs++;
    out.byCode.set(n.code, (out.byCode.get(n.code) ?? 0) + n.ns);
    out.byLabel.set(n.label, (out.byLabel.get(n.label) ?? 0) + n.ns);
  }
  return out;
}
