// Building a batch for an executor lane. A batch is a list of ready atomic CFs; it grows with
// continuations: a CF that waits only for outputs of earlier members (and is their sole local
// consumer) joins it with those inputs forwarded, so a chain runs on one executor without a
// round trip through the system thread per CF. The next batch of a lane can be built while the
// previous one still runs (LaneTail): a chain longer than one batch continues in it, and with
// one thread the FIFO queue keeps the worker fed while the system thread does its bookkeeping.
import type { DfKey } from '../../core/dfkey.js';
import type { Task } from '../exec/protocol.js';
import { inPreviousBatch } from '../exec/protocol.js';
import { Cf, isPushRule, OUT_DROP, WAITING } from './fragment.js';
import { TASK, type BatchOutputs, type Interpreter } from './examine.js';
import type { NodeState } from './state.js';
import type { CallSite } from '../../program/compile.js';

/**
 * An output of a batch member: task index (negative: the lane's previous batch) and output
 * number; with `lane`, of task `task` of batch `batch` running on that lane (fed across lanes).
 */
export interface Producer {
  task: number;
  out: number;
  lane?: number;
  batch?: number;
}

/** What a lane's last batch produces, for a chain that continues in the next one. */
export interface LaneTail {
  batch: number;
  cfs: Cf[];
  /** its members' outputs and the `>>` flags it or a batch before it sets (BatchBuilder.out) */
  out: Map<DfKey, Producer | null>;
  /** those flags (the null entries of `out`) */
  flags: readonly DfKey[];
}

export class BatchBuilder implements BatchOutputs {
  readonly tasks: Task[] = [];
  readonly cfs: Cf[] = [];
  /**
   * outputs of the members; null: produced only when the batch ends (`>>` flags, the lane's
   * earlier batches' too)
   */
  readonly out = new Map<DfKey, Producer | null>();
  /** the keys `out` holds as null */
  readonly flags: DfKey[] = [];
  /**
   * the outputs of the lane's previous batch, still running (its `out`), looked up when asked:
   * a batch built behind another copied all of them, and a chain's continuation is tried (and
   * built) after every pass over the ready CFs
   */
  private readonly prevOut: ReadonlyMap<DfKey, Producer | null> | null;

  /** built while the lane's previous batch still runs (its outputs are forwarded from it) */
  readonly ahead: boolean;

  /**
   * The last member may wait for its node (its import says `: WAITS`): nothing is queued behind
   * it, since what it waits for may be a CF that would otherwise wait behind it on its worker.
   */
  closed = false;

  /**
   * `prev`: the lane's last batch, still running (a chain continues from it); `fed`: outputs of
   * the batches running on any lane, which workers can feed to this one.
   */
  constructor(private readonly st: NodeState, prev?: LaneTail, private readonly fed?: ReadonlyMap<DfKey, Producer>) {
    this.ahead = prev !== undefined;
    this.prevOut = prev ? prev.out : null;
    if (!prev) return;
    // a `>>` flag of the previous batch exists only once it ended: its readers wait for that
    const flags = prev.flags;
    for (let i = 0; i < flags.length; i++) this.flag(flags[i]!);
  }

  private flag(k: DfKey): void {
    this.out.set(k, null);
    this.flags.push(k);
  }

  /** Whether the batch or the lane's previous one produces `key` (or sets it as a flag). */
  private has(key: DfKey): boolean {
    return this.out.has(key) || (this.prevOut !== null && this.prevOut.has(key));
  }

  get size(): number {
    return this.tasks.length;
  }

  /**
   * Whether `cf` may join the batch: a ucode that may wait for its node starts a batch of its
   * own. The outputs of the members before it would leave — to other nodes, to the system
   * thread, to other lanes — only when the batch ends, so after its wait, and what it waits for
   * (another node's block, held by a CF that needs one of them) may wait for them.
   */
  admits(cf: Cf): boolean {
    return this.tasks.length === 0 || !mayWaitForNode(cf);
  }

  producer(key: DfKey): Producer | null | undefined {
    const p = this.out.get(key);
    if (p !== undefined) return p;
    if (this.prevOut !== null) {
      // a member of the previous batch: the worker forwards it from there (its flags are in `out`)
      const q = this.prevOut.get(key);
      if (q) return { task: inPreviousBatch(q.task), out: q.out, lane: undefined, batch: undefined };
    }
    return this.fed === undefined ? undefined : this.fed.get(key);
  }

  add(cf: Cf): void {
    const imp = cf.site.kind === 'call' ? (cf.site as CallSite).imp : null;
    if (imp !== null && imp.waits) this.closed = true;
    const i = this.tasks.length;
    this.tasks.push(cf.task!);
    this.cfs.push(cf);
    const keys = cf.outKeys, owners = cf.outOwners;
    // `>>` flags of the batch are produced by it too, but only at its completion: a CF that
    // reads one must wait for the batch.
    const after = cf.after;
    if (after !== null) for (let k = 0; k < after.length; k++) { const a = after[k]!; if (a.op === 'set' && !this.has(a.key)) this.flag(a.key); }
    // a ucode that says it may wait and holds no block may leave outputs for its node to set
    // (ucode/dda.ts): nobody reads them from the worker, they are theirs once the CF completes
    if (!keys || !owners || (imp !== null && imp.waits && !imp.params.includes('block'))) return;
    const rules = cf.outRules;
    // The first producer wins: a second one is a double assignment, reported at its post, and
    // no reader may see its value — neither in the batch nor after a value already posted.
    const store = this.st.store;
    for (let o = 0; o < keys.length; o++) {
      // dropped and pushed outputs are never published: nobody may read them from the batch
      if (owners[o] !== this.st.self || this.has(keys[o]!) || (rules && (rules[o] === OUT_DROP || isPushRule(rules[o]!)))) continue;
      if (store.posted(keys[o]!)) continue;
      // (one shape with the fed producers: the examination reads both kinds at one site)
      this.out.set(keys[o]!, { task: i, out: o, lane: undefined, batch: undefined });
    }
  }

  /**
   * Append the CFs that wait only for outputs of the batch and are their producer's sole local
   * consumer, up to `limit` tasks: they become continuations (those `take` accepts, if given).
   */
  extend(interp: Interpreter, limit: number, from = 0, take?: (cf: Cf) => boolean): void {
    for (let i = from; i < this.cfs.length && this.tasks.length < limit && !this.closed; i++) {
      const succ = this.soleWaiter(this.cfs[i]!);
      if (succ === null || succ.site.kind !== 'call' || !this.admits(succ) || (take !== undefined && !take(succ))) continue;
      if (interp.examine(succ, this) === TASK) this.add(succ);
    }
  }

  /** The one local CF waiting for the outputs of `cf`, if there is exactly one and nobody remote. */
  soleWaiter(cf: Cf): Cf | null {
    return BatchBuilder.soleWaiter(this.st, cf);
  }

  /** soleWaiter before a batch is built (building one behind a lane's tail copies the tail's outputs). */
  static soleWaiter(st: NodeState, cf: Cf): Cf | null {
    const keys = cf.outKeys;
    if (!keys) return null;
    const store = st.store;
    let found: Cf | null = null;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const ws = store.waitersOf(k);
      if (ws) {
        for (let j = 0; j < ws.length; j++) {
          const w = ws[j]!;
          if (w.chained || w.state !== WAITING) continue;
          if (found && found !== w) return null;
          found = w;
        }
      }
      if (store.hasRemoteWaiters(k)) return null;
    }
    return found;
  }
}

/** Whether `cf` calls a ucode that may wait for its node (`: WAITS`, or a block parameter). */
export function mayWaitForNode(cf: Cf): boolean {
  return cf.site.kind === 'call' && (cf.site as CallSite).imp.waits;
}
