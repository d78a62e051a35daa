// The resolved records of the trace model: fragments (CFs with their identity, lane and times)
// and DFs (with their producer, where copies arrived and when). Records live while the run
// still refers to them, which keeps the model's memory bounded on any run length.
import { displayCf } from '../../core/cfid.js';
import { dfFamily, displayDf } from '../../core/dfkey.js';
import type { WaitKind } from '../schema.js';

/** A CF as the trace knows it, on the node where it ran. */
export class Fragment {
  /** lane slot (node · threads + lane − 1) it ran on; -1 until started */
  slot = -1;
  lane = 0;
  created = NaN;
  ready = NaN;
  start = NaN;
  cpuStart = NaN;
  finish = NaN;
  /** thread CPU ns of the execution (clamped into [0, finish − start]) */
  cpu = NaN;
  /**
   * inputs named by cfInput, resolved to DFs: the first `inputCount` entries (a reused record's
   * array keeps its length and is written over: emptying an array drops its store, and it was
   * allocated again for nearly every CF)
   */
  inputs: DfRec[] | null = null;
  inputCount = 0;
  /** inputs named before their dfName was merged (records that tie in time across threads) */
  unresolved = 0;
  /** outputs announced while the CF was still running */
  outs: DfRec[] | null = null;
  /** its number in the order fragments finished (-1: not finished) */
  seq = -1;
  /** values of the listeners' slots (TraceModel.slot): the first one, then the others by number */
  slot0: unknown = undefined;
  slots: unknown[] | null = null;

  constructor(
    /** (node and cf change only when a recycling model reuses the record for another CF) */
    public node: number,
    /** node-local CF number */
    public cf: number,
    public site: number,
    public code: number,
    /** base label (`link`, `_l12`) */
    public label: string,
    public gid: string,
    public labelIdx: readonly number[] | null,
  ) {}

  /**
   * The record made over for another CF, as the constructor leaves a new one (a recycling model:
   * no object per CF). Its inputs array is kept for the next CF's inputs, written over from the start.
   */
  reuse(node: number, cf: number, site: number, code: number, label: string, gid: string, labelIdx: readonly number[] | null): this {
    this.node = node; this.cf = cf; this.site = site; this.code = code; this.label = label; this.gid = gid; this.labelIdx = labelIdx;
    this.slot = -1; this.lane = 0;
    this.created = NaN; this.ready = NaN; this.start = NaN; this.cpuStart = NaN; this.finish = NaN; this.cpu = NaN;
    this.inputCount = 0;
    this.unresolved = 0; this.outs = null; this.seq = -1;
    this.slot0 = undefined; this.slots = null;
    return this;
  }

  /** Add an input. */
  addInput(r: DfRec): void {
    const a = (this.inputs ??= []);
    if (this.inputCount < a.length) a[this.inputCount] = r; else a.push(r);
    this.inputCount++;
  }

  /** `link[5]`: the CF as the program names it. */
  get name(): string {
    return displayCf(this.label, this.labelIdx);
  }
}

export interface Copy { node: number; arrive: number; firstSend: number; from: number; next: Copy | null }
export interface Pend { k: number; first: number; next: Pend | null }

/** A DF, from its first naming to its deletion on every node that held it. */
export class DfRec {
  /** nodes holding the DF (named there, not deleted) + copies in flight */
  refs = 0;
  /** nodes where it is named: usually one or two, so two scalars before an array (a DF named on two nodes made one per DF) */
  node0 = -1;
  node1 = -1;
  moreNodes: number[] | null = null;
  home = -1;
  computedAt = NaN;
  /** producer's finish time (NaN while unknown or still running) */
  finish = NaN;
  bytes = 0;
  producer: Fragment | null = null;
  /** copies that arrived on other nodes */
  copies: Copy | null = null;
  /** transfers in flight: (from·N + to) → first-hop send time */
  pend: Pend | null = null;
  /** (node, thread ≥ 1) number maps that point at this record: [map, df, node, …] */
  entries: (Map<number, DfRec> | number)[] | null = null;
  /**
   * The number an export gave the DF's name while the record lives (-1: none yet): the OTF2
   * export defines each DF's name once without keeping a map of every name of the run.
   */
  exportId = -1;

  constructor(readonly key: string) {}

  private shown: string | null = null;
  /** `b[2]`: the DF as the program names it (made once: exports name a DF per input and per transfer). */
  get name(): string { return (this.shown ??= displayDf(this.key)); }
  /** `b`: its family (base name). */
  get family(): string { return dfFamily(this.key); }

  addNode(node: number): boolean {
    if (this.node0 === node || this.node1 === node || this.moreNodes?.includes(node)) return false;
    if (this.node0 < 0) this.node0 = node;
    else if (this.node1 < 0) this.node1 = node;
    else (this.moreNodes ??= []).push(node);
    return true;
  }

  removeNode(node: number): boolean {
    if (this.node0 === node) { this.node0 = this.node1; this.node1 = this.moreNodes?.pop() ?? -1; return true; }
    if (this.node1 === node) { this.node1 = this.moreNodes?.pop() ?? -1; return true; }
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

  /** When the value was present on `node` (-Infinity: not known): arrival()'s `at`, without its object. */
  presentAt(node: number): number {
    if (this.home === node || this.home < 0) return this.readyAt();
    const cp = this.copyAt(node);
    return cp ? cp.arrive : -Infinity;
  }

  /** When the value was present on `node` (local: computed), and when the copy that brought it was first sent. */
  arrival(node: number): { at: number; sent: number; from: number } | null {
    if (this.home === node || this.home < 0) {
      const g = this.computedAt === this.computedAt ? this.computedAt : -Infinity;
      return { at: g, sent: g, from: node };
    }
    const cp = this.copyAt(node);
    return cp ? { at: cp.arrive, sent: cp.firstSend, from: cp.from } : null;
  }
}

/** A DF transfer between nodes, complete when it arrived. */
export interface Transfer {
  df: DfRec;
  from: number;
  to: number;
  bytes: number;
  /** when this hop started to send */
  sendStart: number;
  /** when the first hop of the chain that brought the value here started */
  firstSend: number;
  arrive: number;
}

/** A thread that waited for a resource (a wait record, resolved). */
export interface Wait {
  node: number;
  /** the thread that wrote the record (0: the system thread) */
  thread: number;
  /** lane slot (node · T + lane − 1) of the thread that waited; -1: not a worker lane */
  slot: number;
  /** the CF it waited in (null: outside any CF, e.g. an SPMD rank, or a CF the trace lost) */
  fragment: Fragment | null;
  /** the SPMD rank that waited (-1: none) */
  rank: number;
  kind: WaitKind | `kind#${number}`;
  resource: string;
  start: number;
  end: number;
  /** thread CPU ns spent while waiting (spinning); NaN: not measured */
  cpu: number;
}
