// Per-fragment state of the streaming analysis. A DfRec lives while some node still holds the DF
// (interned and not deleted); a CfRec from its creation/arrival on a node until it finishes there
// (then, briefly, in a bounded "recently finished" table for outputs announced after the finish).

import type { PathNode } from './critical.js';

export class DfRec {
  /** nodes holding the DF (named there, not deleted) + copies in flight */
  refs = 0;
  /** nodes where it is named: usually one or two, so a scalar before an array */
  node0 = -1;
  moreNodes: number[] | null = null;

  home = -1;
  computedAt = NaN;
  /** producer's finish time (NaN while unknown or still running) */
  finish = NaN;
  prod: CfRec | null = null;
  path: PathNode | null = null;
  /** copies that arrived on other nodes (a short list: typed arrays per DF cost too much GC) */
  copies: Copy | null = null;
  /** transfers in flight: (from·N + to) → first-hop send time */
  pend: Pend | null = null;
  /** (node, thread ≥ 1) number maps that point at this record: [map, df, node, …] */
  entries: (Map<number, DfRec> | number)[] | null = null;
  constructor(readonly name: string) {}

  /** record that it is named on `node`; false if it already was */
  addNode(node: number): boolean {
    if (this.node0 === node || this.moreNodes?.includes(node)) return false;
    if (this.node0 < 0) this.node0 = node; else (this.moreNodes ??= []).push(node);
    return true;
  }

  /** forget `node`; false if it was not there */
  removeNode(node: number): boolean {
    if (this.node0 === node) { this.node0 = this.moreNodes?.pop() ?? -1; return true; }
    const i = this.moreNodes ? this.moreNodes.indexOf(node) : -1;
    if (i < 0) return false;
    this.moreNodes!.splice(i, 1);
    return true;
  }

  copyAt(node: number): Copy | null {
    for (let c = this.copies; c; c = c.next) if (c.node === node) return c;
    return null;
  }

  takePend(k: number): number | undefined {
    for (let p = this.pend, prev: Pend | null = null; p; prev = p, p = p.next) {
      if (p.k !== k) continue;
      if (prev) prev.next = p.next; else this.pend = p.next;
      return p.first;
    }
    return undefined;
  }

  /** When the value came into existence: the earlier of producer finish and computed time. */
  readyAt(): number {
    const f = this.finish, c = this.computedAt;
    if (f === f) return c === c && c < f ? c : f;
    return c === c ? c : -Infinity;
  }
}

export interface Copy { node: number; arrive: number; firstSend: number; from: number; next: Copy | null }
export interface Pend { k: number; first: number; next: Pend | null }

export class CfRec {
  inputs: DfRec[] | null = null;
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
