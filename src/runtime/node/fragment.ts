// A computation fragment instance on one node: a spawn site applied to an environment, with
// what it has received and, once it is an atomic CF ready to run, its outputs and rules.
import type { Site } from '../../program/compile.js';
import { childGid } from '../../core/cfid.js';
import type { DfKey } from '../../core/dfkey.js';
import type { DfValue } from '../../ucode/value.js';
import type { Task } from '../exec/protocol.js';
import type { FragmentSlot } from '../policy/types.js';

/** Life cycle: NEW → (WAITING ↔ QUEUED) → READY → DISPATCHED → DONE; MIGRATED leaves the node. */
export const NEW = 0, WAITING = 1, QUEUED = 2, READY = 3, DISPATCHED = 4, DONE = 5;

const PLACED = 1, BEGUN = 2, CHAINED = 4;
/** above the flags in `bits`: the CF's slot in its node's waiting list plus one (0: not parked) */
const SLOT_SHIFT = 3, FLAGS = (1 << SLOT_SHIFT) - 1;

/**
 * From this many inputs on, a CF finds its received values and pending keys by hash, not by
 * scanning: below it a scan of a few short keys is cheaper than hashing a fresh key string.
 */
export const MANY = 8;

export class Cf {
  declare state: number;
  /**
   * keys requested and not yet arrived: one key alone (the common case: a pending fragment is
   * the bulk of a run's memory, and an array costs ~56 bytes more), an array of a few, or a set
   * of many (a scan of an array compares fresh key strings char by char: with 27 inputs, as a
   * particle-in-cell cell has, the scans cost more than the rest of examining it)
   */
  declare private pend: DfKey | DfKey[] | PendingMany | null;
  /**
   * The first value received for this CF and its key, in fields: most CFs get one or two, and
   * an array for them cost ~64 bytes a CF.
   */
  declare private got0Key: DfKey | null;
  declare private got0: DfValue | null;
  /** the values received after the first: flat [key, value, key, value, …] (few inputs per CF) */
  declare private gotList: (DfKey | DfValue)[] | null;
  /** with many inputs, where each key's value is in gotList (built once it is long) */
  declare private gotAt: Map<DfKey, number> | null;
  /** the flags below and the slot in the waiting list in one small integer (a field costs a pointer each) */
  declare private bits: number;
  /**
   * What few CFs hold (loop counters, replicated outputs, after-actions, policies' memos, where a
   * migrated CF came from), apart: a field costs every CF 8 bytes, and a chain makes one a link.
   */
  declare private rare: CfRare | null;
  /** atomic CFs, once ready: what the executor runs */
  declare task: Task | null;
  /**
   * An atomic CF that waits only for direct inputs: its task, prepared when it was examined,
   * with those inputs left undefined. Once they arrived it is ready without being examined
   * again (the inputs are filled in from `got`); anything else re-examines it in full.
   */
  declare armed: Task | null;
  /** atomic CFs, filled when ready: output keys and the node each is posted to (-1: replicas) */
  declare outKeys: DfKey[] | null;
  declare outOwners: number[] | null;
  /** per output its publication rule (see OutRule); null = all published with no count */
  declare outRules: number[] | null;
  /** order among ready CFs: higher first (0 unless a priority policy says otherwise) */
  declare priority: number;
  declare private gidOwn: string | null;

  /** node-local number */
  declare readonly id: number;
  declare readonly site: Site;
  declare readonly env: unknown[];
  /** global id of the parent's block (see core/cfid.ts) */
  declare private readonly gidPrefix: string;
  /** loop iteration the CF was spawned in (-1 outside loop bodies) */
  declare readonly iter: number;

  /**
   * Every field is set here, in one order, rather than by field initialisers and parameter
   * properties: those run as a function of their own (V8's instance-members initialiser), a call
   * per CF in unoptimised code and one more function for the optimising compiler, and a CF is
   * made for every fragment.
   */
  constructor(id: number, site: Site, env: unknown[], gidPrefix: string, iter: number) {
    this.id = id;
    this.site = site;
    this.env = env;
    this.gidPrefix = gidPrefix;
    this.iter = iter;
    this.state = NEW;
    this.pend = null;
    this.got0Key = null;
    this.got0 = null;
    this.gotList = null;
    this.gotAt = null;
    this.bits = 0;
    this.rare = null;
    this.task = null;
    this.armed = null;
    this.outKeys = null;
    this.outOwners = null;
    this.outRules = null;
    this.priority = 0;
    this.gidOwn = null;
  }

  private get more(): CfRare { return (this.rare ??= new CfRare()); }
  /** `while`: the current counter; `for`: the next iteration to spawn */
  get counter(): number { return this.rare === null ? 0 : this.rare.counter; }
  set counter(v: number) { this.more.counter = v; }
  /** `for`: the last iteration */
  get counterEnd(): number { return this.rare === null ? 0 : this.rare.counterEnd; }
  set counterEnd(v: number) { this.more.counterEnd = v; }
  /** replicated outputs: the nodes each gets posted to (indexed like outKeys) */
  get replicas(): number[][] | null { return this.rare === null ? null : this.rare.replicas; }
  set replicas(v: number[][] | null) { if (v !== null || this.rare !== null) this.more.replicas = v; }
  /** `>>` and `-->`/`delete` targets, run after the call (see AfterAction) */
  get after(): AfterAction[] | null { return this.rare === null ? null : this.rare.after; }
  set after(v: AfterAction[] | null) { if (v !== null || this.rare !== null) this.more.after = v; }
  /** node this CF came from when it migrated here (-1 = spawned here) */
  get from(): number { return this.rare === null ? -1 : this.rare.from; }
  set from(v: number) { if (v !== -1 || this.rare !== null) this.more.from = v; }

  /** placement decided (locator evaluated, migration done) */
  get placed(): boolean { return (this.bits & PLACED) !== 0; }
  set placed(v: boolean) { this.bits = v ? this.bits | PLACED : this.bits & ~PLACED; }
  /** `for`/`while` evaluated its bounds or start value (it may be examined again later) */
  get begun(): boolean { return (this.bits & BEGUN) !== 0; }
  set begun(v: boolean) { this.bits = v ? this.bits | BEGUN : this.bits & ~BEGUN; }
  /** executed by a worker as the continuation of an earlier CF of its batch */
  get chained(): boolean { return (this.bits & CHAINED) !== 0; }
  set chained(v: boolean) { this.bits = v ? this.bits | CHAINED : this.bits & ~CHAINED; }

  /** the CF's slot in its node's WaitList, -1 when it is not parked there */
  get waitSlot(): number { return (this.bits >>> SLOT_SHIFT) - 1; }
  set waitSlot(v: number) { this.bits = (this.bits & FLAGS) | ((v + 1) << SLOT_SHIFT); }

  /** Stable global id: computed on first use (structured CFs need it for their children). */
  get gid(): string {
    return (this.gidOwn ??= this.site.id < 0 ? this.gidPrefix : childGid(this.gidPrefix, this.iter, this.site.spawnNo));
  }

  /** A policy's value for this CF in `slot`, made on first use (see FragmentView.memo). */
  memo<T>(slot: FragmentSlot<T>, make: (cf: Cf) => T): T {
    const m = this.rare === null ? null : this.rare.memos;
    if (m !== null) for (let i = 0; i < m.length; i += 2) if (m[i] === slot) return m[i + 1] as T;
    const v = make(this);
    if (m === null) this.more.memos = [slot, v]; else m.push(slot, v);
    return v;
  }

  /** A migrated CF keeps the id it had where it was spawned. */
  setGid(gid: string): void {
    this.gidOwn = gid;
  }

  /** values received for this CF: flat [key, value, key, value, …] (a fresh array: migration, traces) */
  get got(): readonly (DfKey | DfValue)[] | null {
    if (this.got0Key === null) return null;
    const first = [this.got0Key, this.got0!];
    return this.gotList === null ? first : first.concat(this.gotList);
  }

  /** How many values this CF received (read with gotKeyAt without building the `got` array). */
  get gotCount(): number {
    return this.got0Key === null ? 0 : 1 + (this.gotList === null ? 0 : this.gotList.length / 2);
  }

  /** The key of received value i (0 ≤ i < gotCount), in the order they came. */
  gotKeyAt(i: number): DfKey {
    return (i === 0 ? this.got0Key : this.gotList![2 * (i - 1)]) as DfKey;
  }

  /** Drop the values received (finished, or a `while` fetching its condition anew). */
  clearGot(): void {
    this.got0Key = null;
    this.got0 = null;
    this.gotList = null;
    this.gotAt = null;
  }

  gotValue(key: DfKey): DfValue | undefined {
    if (this.got0Key === key) return this.got0!;
    const g = this.gotList;
    if (g === null) return undefined;
    const at = this.gotAt;
    if (at !== null) {
      const i = at.get(key);
      return i === undefined ? undefined : g[i + 1] as DfValue;
    }
    for (let i = 0; i < g.length; i += 2) if (g[i] === key) return g[i + 1] as DfValue;
    return undefined;
  }

  addGot(key: DfKey, v: DfValue): void {
    if (this.got0Key === null) { this.got0Key = key; this.got0 = v; return; }
    // literals hold what they get; pushing to a full array reserves 16 more slots
    const g = this.gotList;
    if (g === null) { this.gotList = [key, v]; return; }
    if (g.length === 2) { this.gotList = [g[0]!, g[1]!, key, v]; return; }
    const at = this.gotAt;
    if (at !== null) { if (!at.has(key)) at.set(key, g.length); }
    else if (g.length >= 2 * MANY) {
      const m = new Map<DfKey, number>();
      for (let i = g.length - 2; i >= 0; i -= 2) m.set(g[i] as DfKey, i); // the first value of a key wins, as in a scan
      if (!m.has(key)) m.set(key, g.length);
      this.gotAt = m;
    }
    g.push(key, v);
  }

  isPending(key: DfKey): boolean {
    const p = this.pend;
    if (p === key) return true;
    if (p === null || typeof p === 'string') return false;
    return Array.isArray(p) ? p.includes(key) : p.has(key);
  }

  addPending(key: DfKey): void {
    const p = this.pend;
    if (p === null) this.pend = key;
    else if (typeof p === 'string') this.pend = [p, key];
    else if (!Array.isArray(p)) p.add(key);
    else if (p.length < MANY) p.push(key);
    else { const m = new PendingMany(p); m.add(key); this.pend = m; }
  }

  /** Remove `key` from the pending keys; true when nothing is pending any more. */
  arrived(key: DfKey): boolean {
    const p = this.pend;
    if (p === null) return true;
    if (typeof p === 'string') {
      if (p === key) this.pend = null;
      return this.pend === null;
    }
    if (!Array.isArray(p)) return p.arrived(key);
    const i = p.indexOf(key);
    if (i >= 0) { p[i] = p[p.length - 1]!; p.pop(); }
    return p.length === 0;
  }

  /** Number of keys requested and not yet arrived. */
  get pendingCount(): number {
    const p = this.pend;
    return p === null ? 0 : typeof p === 'string' ? 1 : Array.isArray(p) ? p.length : p.size;
  }

  /** Whether every key requested and not yet arrived passes `test` (no array built). */
  everyPending(test: (key: DfKey) => boolean): boolean {
    const p = this.pend;
    if (p === null) return true;
    if (typeof p === 'string') return test(p);
    if (Array.isArray(p)) return p.every(test);
    return p.every(test);
  }

  /** The keys requested and not yet arrived (a fresh array). */
  pendingKeys(): DfKey[] {
    const p = this.pend;
    return p === null ? [] : typeof p === 'string' ? [p] : Array.isArray(p) ? p.slice() : p.keys();
  }

  /** Forget what is pending (the CF finished or left the node). */
  clearPending(): void {
    this.pend = null;
  }
}

/**
 * The pending keys of a CF with many inputs, by hash, in the order a Set keeps. An arrival marks
 * its key arrived rather than deleting it: a Set's deletes shrank and rehashed its table several
 * times per CF as the inputs of a particle-in-cell cell (27) came in.
 */
export class PendingMany {
  /** key → still pending (false: arrived) */
  private readonly m: Map<DfKey, boolean>;
  size: number;

  constructor(keys: readonly DfKey[]) {
    // from an array of pairs the table is made for them at once (added one by one, an empty map
    // grew twice more: the Map/Set table work under store.wait was ~6 us a CF against ~2 with a Set)
    this.m = new Map(keys.map((k) => [k, true]));
    this.size = this.m.size;
  }

  has(key: DfKey): boolean { return this.m.get(key) === true; }

  add(key: DfKey): void {
    const was = this.m.get(key);
    if (was === true) return;
    // a key pending again after it arrived goes last, as a Set's delete and add put it
    if (was === false) this.m.delete(key);
    this.m.set(key, true);
    this.size++;
  }

  /** `key` arrived; true when nothing is pending any more. */
  arrived(key: DfKey): boolean {
    if (this.m.get(key) === true) { this.m.set(key, false); this.size--; }
    return this.size === 0;
  }

  every(test: (key: DfKey) => boolean): boolean {
    for (const [k, p] of this.m) if (p && !test(k)) return false;
    return true;
  }

  keys(): DfKey[] {
    const out: DfKey[] = [];
    for (const [k, p] of this.m) if (p) out.push(k);
    return out;
  }
}

/** The fields of a Cf that few CFs use (see Cf.rare). */
class CfRare {
  counter = 0;
  counterEnd = 0;
  replicas: number[][] | null = null;
  after: AfterAction[] | null = null;
  from = -1;
  /** what policies worked out for this CF: flat [slot, value, …] (see FragmentView.memo; one or two policies keep any) */
  memos: unknown[] | null = null;
}

/**
 * Publication rule of an atomic CF's output (Cf.outRules): a request count ≥ 0 (`req_count`),
 * or one of the negative codes below. Small integers keep the per-CF record compact.
 */
export const OUT_UNLIMITED = -1;
export const OUT_DROP = -2;
/** `afterpush` rule k of the site is encoded as OUT_PUSH - k */
export const OUT_PUSH = -3;
export const isPushRule = (r: number): boolean => r <= OUT_PUSH;
export const pushRuleIndex = (r: number): number => OUT_PUSH - r;

/** What a CF does after its call: set a `>>` flag DF to int 1, or destroy a DF (`-->`, `delete`). */
export interface AfterAction {
  op: 'set' | 'destroy';
  key: DfKey;
  owner: number;
}
