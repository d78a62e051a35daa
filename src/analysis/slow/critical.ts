// The critical path of the execution graph: CFs weighted by their CPU time, edges = DF
// dependencies (producer → consumer). Computed in the same streaming pass: a CF's path ends at
// (longest path among its inputs' producers) + its own CPU time. Paths are persistent linked lists
// shared by all consumers, so the whole chain of the longest path is there at the end, step by
// step. Every CHECKPOINT-th node also holds the totals of everything up to it, so totals by code
// and label cost a walk of < CHECKPOINT steps whatever the length. Memory is what the live paths
// hold (~100 bytes a step); past `whole` steps the earliest ones are folded into those totals
// (their back link dropped), which bounds a path at 1.5 × `whole` nodes.

const CHECKPOINT = 256;
/** steps of a path kept whole by default: longer paths keep their last 2^20..2^20 + 2^19 steps */
export const WHOLE_STEPS = 1 << 20;

export interface Agg { cfs: number; byCode: Map<number, number>; byLabel: Map<string, number> }

export class PathNode {
  prev: PathNode | null;
  readonly depth: number;
  /** totals of this node and everything before it; set only on checkpoints */
  agg: Agg | null = null;
  /** its number in the run's graph (sim/run-graph.ts: -1 none) */
  idx = -1;
  constructor(readonly len: number, readonly ns: number, readonly code: number, readonly label: string,
    readonly gid: string,
    /** the fragment's finish number in the model (Fragment.seq): other listeners' key to it */
    readonly seq: number,
    readonly labelIdx: readonly number[] | null, prev: PathNode | null, whole = WHOLE_STEPS) {
    this.depth = prev ? prev.depth + 1 : 1;
    this.prev = prev;
    if (this.depth % CHECKPOINT === 0) this.agg = collect(this);
    // past `whole` steps, every half of it: fold the steps before the last `whole` into totals
    const half = Math.max(CHECKPOINT, whole >> 1);
    if (this.depth > whole && (this.depth - whole) % half === 0) fold(this, whole);
  }
}

/** Drop the back link `whole` steps before `end` (at a checkpoint, whose totals cover the rest). */
function fold(end: PathNode, whole: number): void {
  let n: PathNode | null = end;
  for (let k = 0; n && k < whole; k++) n = n.prev;
  // back to a checkpoint: its totals include everything before it
  while (n && !n.agg) n = n.prev;
  if (n) n.prev = null;
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

/** The steps of the path ending at `end` that are still linked, earliest first. */
export function pathSteps(end: PathNode | null): PathNode[] {
  const out: PathNode[] = [];
  for (let n = end; n; n = n.prev) out.push(n);
  return out.reverse();
}
