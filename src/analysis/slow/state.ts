// Per-fragment state of the streaming analysis. A DfRec lives while some node still holds the DF
// (interned and not deleted); a CfRec from its creation/arrival on a node until it finishes there
// (then, briefly, in a bounded "recently finished" table for outputs announced after the finish).

import type { PathNode } from './critical.js';

export class DfRec {
  /** nodes holding the DF (named there, not deleted) + copies in flight */
  refs = 0;
  /** nodes where it is named */
  nodes: number[] = [];
  /** the number maps that point at this record: [map, df, node, …] (removed on deletion) */
  entries: (Map<number, DfRec> | number)[] = [];
  home = -1;
  computedAt = NaN;
  /** producer's finish time (NaN while unknown or still running) */
  finish = NaN;
  prod: CfRec | null = null;
  path: PathNode | null = null;
  /** per node: arrival time, first-hop send time of the copy that arrived, sender */
  arrive: Float64Array | null = null;
  firstSend: Float64Array | null = null;
  from: Int32Array | null = null;
  /** (from·N + to) → first-hop send time of a transfer in flight */
  sendPend: Map<number, number> | null = null;
  constructor(readonly name: string) {}

  /** When the value came into existence: the earlier of producer finish and computed time. */
  readyAt(): number {
    const f = this.finish, c = this.computedAt;
    if (f === f) return c === c && c < f ? c : f;
    return c === c ? c : -Infinity;
  }
}

export class CfRec {
  inputs: DfRec[] = [];
  /** inputs named by cfInput before their dfName was seen (events tying in time across threads) */
  unresolved = 0;
  started = false;
  slot = -1;
  startT = NaN;
  startCpu = NaN;
  /** start of the idle interval that this CF ended */
  A = NaN;
  B = -Infinity;
  bRec: DfRec | null = null;
  G = -Infinity;
  C = -Infinity;
  gRec: DfRec | null = null;
  cpIn: PathNode | null = null;
  finishT = NaN;
  path: PathNode | null = null;
  /** outputs announced while the CF was still running */
  outs: DfRec[] | null = null;
  constructor(readonly node: number, public code: number, public label: string, public gid: string) {}
}

/** Key of a node-local CF or DF number. */
export function key(node: number, local: number): number {
  return node * 4294967296 + local;
}

/** "x[3][4]" → "x": DF names aggregated over indices. */
export function baseName(name: string): string {
  const i = name.indexOf('[');
  return i > 0 ? name.slice(0, i) : name;
}
