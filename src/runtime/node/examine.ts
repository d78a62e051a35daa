// The interpreter of fragments on the system thread: examining a CF decides what it can do now —
// wait for DFs, migrate to its node, run (structured CFs spawn their children here), or become
// a task for an executor (atomic CFs with every input present). Expressions are closures
// compiled by src/program; they read DFs through the EvalFrame, which requests what is missing,
// so one evaluation pass discovers everything a CF needs at this level.
import type { CallSite, ForSite, IfSite, Site, SubCallSite, WhileSite } from '../../program/compile.js';
import { argValue, dfValueOf, truthy, type CDfRef, type CExpr, type Frame } from '../../program/expr.js';
import { blockPrefix, childGid } from '../../core/cfid.js';
import { displayDf, familyKey, pushKey, type DfKey } from '../../core/dfkey.js';
import { T_INT, type DfValue } from '../../ucode/value.js';
import type { Forward, Task } from '../exec/protocol.js';
import { Cf, OUT_DROP, OUT_PUSH, OUT_UNLIMITED, QUEUED, READY, WAITING, type AfterAction } from './fragment.js';
import { RunFault } from './fault.js';
import type { NodeState } from './state.js';
import { Placer, type Spread } from './spread.js';
import { placeOf } from './place.js';
import { ConditionFrame, decidable } from './fold-if.js';

/**
 * The outputs of a CF that has none (shared: a waiting CF costs what it must hold, no more).
 * Empty, yet of the elements kind the filled ones have (`new Array(n)` then written: holey, of
 * strings; of small ints), so that every CF's arrays share one hidden class: `[]` was another,
 * and the run's last CF, which has no outputs, deoptimised the optimised completion ("wrong map").
 */
const NO_KEYS: DfKey[] = emptyOfKind<DfKey>('');
const NO_OWNERS: number[] = emptyOfKind<number>(0);

function emptyOfKind<T>(sample: T): T[] {
  const a = new Array<T>(1);
  a[0] = sample;
  a.length = 0;
  return a;
}

/** Where a batch's output comes from (see BatchOutputs.producer). */
type Produced = { task: number; out: number; lane?: number; batch?: number };

/** Whether two of the `n` arguments `at` lists have the same key (one DF read twice). */
function duplicateKey(keys: readonly string[], at: readonly number[], n: number): boolean {
  for (let a = 1; a < n; a++) for (let b = 0; b < a; b++) if (keys[at[a]!] === keys[at[b]!]) return true;
  return false;
}

/**
 * Argument `arg` forwarded from producer `p`: a member of the batch (no lane) or of a batch in
 * flight on another lane. One shape for both (lane and batch always present), which the encoder
 * and the feed requests read at one site.
 */
function forwardOf(arg: number, p: Produced): Forward {
  return { arg, task: p.task, out: p.out, lane: p.lane, batch: p.batch };
}

/**
 * Whether `batch` produces every input `cf` still waits for. A function of its own: the arrow
 * written in call() made every call() allocate a context for `batch`, fed batch or not.
 */
function allProduced(cf: Cf, batch: BatchOutputs): boolean {
  return cf.everyPending((k) => !!batch.producer(k));
}

/** What examining a CF led to. */
export const WAIT = 0, MIGRATED = 1, DONE = 2, TASK = 3, BLOCKED = 4;
export type Outcome = typeof WAIT | typeof MIGRATED | typeof DONE | typeof TASK | typeof BLOCKED;

/** The outputs of the batch being built, as the interpreter sees them (see batch.ts). */
export interface BatchOutputs {
  /** undefined: not produced by the batch; null: produced but only when the batch ends (`>>` flags) */
  producer(key: DfKey): Produced | null | undefined;
  /** tasks already in the batch */
  readonly size: number;
  /** built while an earlier batch of the lane still runs */
  readonly ahead: boolean;
}

/** The evaluation context of the CF being examined (the Frame that compiled closures see). */
class EvalFrame implements Frame {
  env: unknown[] = [];
  missing = false;
  located = 0;
  /** a DF was missing where an expression needed it (an index, a rule, a scalar argument) */
  indirect = false;
  /** a value the batch being built will produce is needed: decide after the batch */
  blocked = false;
  cf!: Cf;
  batch: BatchOutputs | null = null;
  readonly size: number;
  readonly self: number;

  constructor(private readonly st: NodeState) {
    this.size = st.size;
    this.self = st.self;
  }

  read(key: string, owner: number): DfValue | undefined {
    const cf = this.cf;
    const got = cf.gotValue(key);
    if (got !== undefined) return got;
    if (this.batch !== null && this.batch.producer(key) !== undefined) { this.blocked = true; this.missing = true; return undefined; }
    return this.readStored(key, owner, false);
  }

  /**
   * read() once the CF's own values and the batch were looked at; `direct`: a call's direct
   * input, whose absence only delays the call (an argument, not a field set and cleared per read)
   */
  readStored(key: string, owner: number, direct: boolean): DfValue | undefined {
    const cf = this.cf;
    const v = cf.isPending(key) ? undefined : this.storedFor(cf, key, owner);
    // One store site for both kinds of absence: a pending key first comes when optimised code is
    // already running, and a store there that never ran deoptimised call() (and readStored) at
    // the PIC's first fed step ("insufficient type feedback"), for a second 90 ms compile.
    if (v === undefined) { this.missing = true; if (!direct) this.indirect = true; }
    return v;
  }

  private storedFor(cf: Cf, key: string, owner: number): DfValue | undefined {
    const policy = this.st.policy;
    return this.st.read(cf, key, policy.caps.ownsDfs ? policy.dfOwner(key, owner) : owner);
  }
}

/** A frame that only looks at what a CF already received (labels in reports: never requests). */
class PeekFrame implements Frame {
  missing = false;
  located = 0;
  constructor(readonly env: unknown[], private readonly cf: Cf, readonly size: number, readonly self: number) {}
  read(key: string): DfValue | undefined {
    const v = this.cf.gotValue(key);
    if (v === undefined) throw new Error('not received');
    return v;
  }
}

export class Interpreter {
  /** CFs examined in full (an armed CF made ready or fed from its prepared task is not) */
  examined = 0;
  private readonly f: EvalFrame;
  private readonly placer: Placer;
  /** decides the `if`s a spawner may (fold-if.ts); null: none is decided here */
  private readonly conditions: ConditionFrame | null;

  constructor(private readonly st: NodeState) {
    this.f = new EvalFrame(st);
    this.placer = new Placer(st.size, st.self, st.policy);
    // only where an `if` would stay: every `if` without a locator runs on node 0 unless the
    // policy places it (and not in FIFO order: spawnInto)
    this.conditions = st.size === 1 || (st.self === 0 && !st.policy.caps.places) ? new ConditionFrame(st.size, st.self) : null;
  }

  /**
   * Examine `cf`. With `batch`, a batch is being built: CFs whose inputs it produces may join
   * it (forwarded inputs), anything else that needs its values is BLOCKED until it ran.
   */
  examine(cf: Cf, batch: BatchOutputs | null = null, ahead = false): Outcome {
    const f = this.f, st = this.st;
    const armed = cf.armed;
    if (armed !== null) {
      cf.armed = null;
      if (cf.pendingCount === 0) return this.fire(cf, armed);
      if (batch !== null && cf.state === WAITING && (cf.site as CallSite).waits.length === 0 && this.fireFed(cf, armed, batch)) return TASK;
    }
    this.examined++;
    this.frameFor(cf, batch);
    const site = cf.site;
    try {
      if (!cf.placed) {
        const target = placeOf(st.policy, cf, f);
        if (f.blocked) return BLOCKED;
        if (f.missing) return this.park(cf);
        if (target !== st.self) {
          // it leaves at once, also past batches queued ahead of it in FIFO order: the order
          // across nodes is free, and the CFs behind it keep this node's worker busy
          st.waiting.delete(cf);
          st.migrate(cf, target);
          return MIGRATED;
        }
        cf.placed = true;
      }
      // (indexed loops on the per-fragment path: unoptimised code pays an iterator per for-of)
      const reqs = site.requests;
      for (let i = 0; i < reqs.length; i++) this.readRef(reqs[i]!);
      if (site.kind === 'call') return this.call(cf, site);
      // Structured CFs spawn children: in FIFO order they must not overtake a pending batch. A
      // loop already unrolling only spawns its next iterations behind the batch (its bounds are
      // known): holding it back would drain the worker every chunk.
      const continuing = site.kind === 'for' && cf.begun;
      if ((st.fifo && !continuing && !ahead && batch !== null && (batch.size > 0 || batch.ahead)) || f.blocked) return BLOCKED;
      switch (site.kind) {
        case 'subcall': return this.subCall(cf, site);
        case 'for': return this.forLoop(cf, site);
        case 'while': return this.whileLoop(cf, site);
        case 'if': return this.ifStmt(cf, site);
      }
    } catch (e) {
      throw RunFault.blame(e, cf);
    } finally {
      f.batch = null;
    }
  }

  /**
   * What examine does first, alone: place `cf` and, when its node is another, send it there now.
   * True when it left. A CF that stays is marked placed (its examination later skips the step);
   * one whose place needs DFs not here yet, or a woken one, is left as it was.
   */
  leavesNow(cf: Cf): boolean {
    if (cf.placed || cf.armed !== null) return false;
    const f = this.frameFor(cf, null), st = this.st;
    try {
      const target = placeOf(st.policy, cf, f);
      if (f.blocked || f.missing) return false;
      if (target === st.self) { cf.placed = true; return false; }
      st.waiting.delete(cf);
      st.migrate(cf, target);
      return true;
    } catch (e) {
      throw RunFault.blame(e, cf);
    }
  }

  /** The one evaluation frame, set for `cf` (and the batch being built, if any). */
  private frameFor(cf: Cf, batch: BatchOutputs | null): EvalFrame {
    const f = this.f;
    f.cf = cf;
    f.env = cf.env;
    f.missing = false;
    f.indirect = false;
    f.blocked = false;
    f.batch = batch;
    return f;
  }

  /**
   * One lane, a running batch that may wait for its node ahead: structured `cf` spawns its
   * children now, as examine will once the batch ended, so those due on other nodes can leave
   * meanwhile (a wait may need their work there). Its children go where examine would put them
   * (the tail; a loop's at its place when it comes round again), so the local order is the same.
   * BLOCKED when that is not sure: it reads the batch's outputs, it has `>>` or `-->` actions (the
   * batch's CFs would see them early), or it is a `while` (it posts its counter at its end).
   */
  expandAhead(cf: Cf, batch: BatchOutputs): Outcome {
    const site = cf.site;
    if (site.kind === 'call' || site.kind === 'while' || cf.armed !== null || site.setdfs.length > 0 || site.deletes.length > 0) return BLOCKED;
    return this.examine(cf, batch, true);
  }

  /** `label[i][j]` of a CF for messages (label indices evaluated without requesting anything). */
  labelOf(cf: Cf): string {
    const s = cf.site;
    if (s.labelIdx.length === 0) return s.label;
    const f = new PeekFrame(cf.env, cf, this.st.size, this.st.self);
    try {
      return s.label + s.labelIdx.map((e) => `[${String(argValue(e, 'int', f, s.pos))}]`).join('');
    } catch { return s.label + '[?]'; }
  }

  /** Label indices when they are plain values (no DF involved): recorded in traces. */
  labelIndices(cf: Cf): number[] | null {
    const idx = cf.site.labelIdx;
    if (idx.length === 0 || cf.site.labelReadsDf) return null;
    const f = new PeekFrame(cf.env, cf, this.st.size, this.st.self);
    try { return idx.map((e) => argValue(e, 'int', f, cf.site.pos) as number); } catch { return null; }
  }

  // ------------------------------------------------------------------ helpers

  private park(cf: Cf): Outcome {
    // a value the batch being built makes: decided after it, not waited for
    if (this.f.blocked) return BLOCKED;
    if (cf.state !== WAITING) this.st.park(cf);
    return WAIT;
  }

  private owner(ref: CDfRef): number {
    const o = ref.owner(this.f), policy = this.st.policy;
    return policy.caps.ownsDfs ? policy.dfOwner(ref.key(this.f), o) : o;
  }

  private readRef(r: CDfRef): void {
    const f = this.f;
    const was = f.missing;
    f.missing = false;
    const key = r.at(f);
    if (f.missing) return; // its index is a DF still to come
    f.missing = was;
    f.read(key, f.located);
  }

  private int(e: CExpr): number {
    return argValue(e, 'int', this.f, this.f.cf.site.pos) as number;
  }

  private labelKey(label: string, idx: CExpr[]): string {
    let s = label;
    for (const e of idx) s += `[${String(this.int(e))}]`;
    return s;
  }

  // ------------------------------------------------------------------ atomic CFs

  private call(cf: Cf, site: CallSite): Outcome {
    const f = this.f, st = this.st, batch = f.batch;
    // `wait x`: x arrives by push (afterpush), never by request — look for it first.
    const waits = site.waits;
    for (let i = 0; i < waits.length; i++) this.readPushed(cf, site, waits[i]!);
    // (read once into locals: until TurboFan's code arrives, every property read is a builtin call)
    const sargs = site.args, n = sargs.length, outCount = site.outCount;
    const args = new Array<unknown>(n);
    const keys = new Array<string>(n);
    let fwd: Forward[] | undefined;
    // sized at once: a pushed-to empty array reserves 16 slots
    const outKeys = outCount === 0 ? NO_KEYS : new Array<DfKey>(outCount);
    let outOwners = outCount === 0 ? NO_OWNERS : this.ownedHere(outCount);
    let o = 0;
    for (let i = 0; i < n; i++) {
      const a = sargs[i]!;
      keys[i] = '';
      if (a.kind === 'in') {
        const ref = a.expr.dfRef;
        if (!ref) { args[i] = dfValueOf(a.expr, f); continue; }
        // located with `missing` clear (stores only when it was set: each is a builtin call in baseline code)
        const was = f.missing;
        if (was) f.missing = false;
        const key = ref.at(f), owner = f.located;
        if (f.missing) continue; // its index is a DF still to come
        if (was) f.missing = true;
        keys[i] = key;
        // what read() would look at, each once: the CF's own values, the batch, then the store
        const got = cf.gotValue(key);
        const p = got === undefined && batch !== null ? batch.producer(key) : undefined;
        if (got !== undefined) args[i] = got;
        else if (p) {
          // produced earlier in the batch: the executor passes it along
          if (!cf.isPending(key)) st.store.expect(key, cf);
          (fwd ??= []).push(forwardOf(i, p));
          args[i] = null;
        } else if (p === null) {
          // produced only when the batch ends: decide after it
          f.blocked = true;
          f.missing = true;
          args[i] = undefined;
        } else {
          args[i] = f.readStored(key, owner, true);
        }
      } else if (a.kind === 'val') {
        args[i] = argValue(a.expr, a.type, f, site.pos);
      } else {
        args[i] = null;
        outOwners = this.outArg(cf, site, a.ref, keys, i, outKeys, outOwners, o++);
      }
    }
    return this.settle(cf, site, args, keys, fwd, outKeys, outOwners);
  }

  /**
   * Output `o` of `cf` (argument `i`, `ref`): its key and the node it is posted to; the owners
   * array, copied if it had to change. Out of call(), as settle() is: call() was 1 388 bytes of
   * bytecode, and TurboFan took ~90 ms (on its helper thread, at load 10) to compile it whole,
   * again after each deopt; each part now compiles, and deoptimises, alone.
   */
  private outArg(cf: Cf, site: CallSite, ref: CDfRef, keys: string[], i: number, outKeys: DfKey[], outOwners: number[], o: number): number[] {
    const f = this.f, st = this.st;
    // located with `missing` clear (a direct input missing before it still leaves it placed)
    const was = f.missing;
    if (was) f.missing = false;
    const key = ref.at(f);
    const spelled = !f.missing; // (an index that is a DF still to come leaves a placeholder key)
    if (was) f.missing = true;
    keys[i] = key;
    outKeys[o] = key;
    if (ref.replicas) {
      (cf.replicas ??= [])[o] = ref.replicas(f);
      return this.setOwner(outOwners, o, -1);
    }
    const policy = st.policy;
    const owner = policy.caps.ownsDfs ? policy.dfOwner(key, f.located) : f.located;
    const owners = outOwners[o] !== owner ? this.setOwner(outOwners, o, owner) : outOwners;
    // posted here unless the site drops or pushes some output: its entry made while the
    // key's indices are still numbers (DfStore.willPost)
    if (owner === st.self && spelled && site.drop.length === 0 && site.afterpush.length === 0) st.store.willPost(key);
    return owners;
  }

  /** call() once its arguments were looked at: the CF parks (armed if it can be), is blocked, or becomes a task. */
  private settle(cf: Cf, site: CallSite, args: unknown[], keys: string[], fwd: Forward[] | undefined, outKeys: DfKey[], outOwners: number[]): Outcome {
    const f = this.f, st = this.st;
    // Output rules and after-actions are evaluated now, while DFs can still be fetched.
    // (a site's constant rules are shared, and most sites have no after-actions: no call for either)
    const rules = site.sharedRules !== null ? site.sharedRules : this.outRules(cf, site, outKeys);
    const after = site.setdfs.length === 0 && site.deletes.length === 0 ? null : this.afterActions(site);
    const priority = site.priority ? this.int(site.priority) : cf.priority;
    if (f.blocked) return BLOCKED;
    if (f.missing) {
      if (fwd && cf.state !== WAITING) return BLOCKED; // partly fed by the batch, partly not: later
      if (!f.indirect && !fwd) {
        // only direct inputs are missing: everything else is known now
        this.prepare(cf, outKeys, outOwners, rules, after, priority);
        // (`fwd` declared: fireFed sets it, and a property added later grows the object a backing store)
        cf.armed = { cf: cf.id, imp: site.imp.index, args, keys, fwd: undefined };
      }
      return this.park(cf);
    }
    if (fwd && !allProduced(cf, f.batch!)) return BLOCKED;
    // (only a WAITING CF is among the waiting: most CFs are ready when first examined)
    if ((cf.state === WAITING && st.waiting.delete(cf)) || fwd) cf.chained = fwd !== undefined;
    this.prepare(cf, outKeys, outOwners, rules, after, priority);
    const task: Task = { cf: cf.id, imp: site.imp.index, args, keys, fwd };
    cf.task = task;
    cf.state = READY;
    if (st.tr) this.traceReady(cf, keys, site);
    return TASK;
  }

  /**
   * Output owners all this node, shared by the CFs (read only): most CFs post here, and an array
   * per CF was 56 bytes of its ~1 KB. setOwner copies it before it differs.
   */
  private readonly here: number[][] = [];
  private ownedHere(n: number): number[] {
    return (this.here[n] ??= new Array<number>(n).fill(this.st.self));
  }
  private setOwner(owners: number[], o: number, node: number): number[] {
    if (owners[o] === node) return owners;
    const a = owners === this.here[owners.length] ? owners.slice() : owners;
    a[o] = node;
    return a;
  }

  private prepare(cf: Cf, outKeys: DfKey[], outOwners: number[], rules: number[] | null, after: AfterAction[] | null, priority: number): void {
    cf.outKeys = outKeys;
    cf.outOwners = outOwners;
    cf.outRules = rules;
    if (after !== null) cf.after = after; // (an accessor: most CFs have none, and a site always the same)
    cf.priority = priority;
    const policy = this.st.policy;
    if (policy.caps.orders) cf.priority = policy.priority(cf);
  }

  /**
   * An armed CF whose every pending input is a direct input that `batch` (a member, or a batch in
   * flight on another lane) produces joins the batch with those inputs forwarded, from the task
   * prepared when it parked: a fed step of a stencil is so examined once, not twice (keys, owners,
   * rules and arguments are not evaluated again). One pass finds each pending input's producer
   * (asked once: the question is two map look-ups), the second builds the forwards. False, with
   * nothing changed, when some pending key is not such an input (the CF is examined in full).
   */
  private fireFed(cf: Cf, task: Task, batch: BatchOutputs): boolean {
    const args = task.args, keys = task.keys, at = this.fedAt, prods = this.fedProds;
    let n = 0;
    for (let i = 0; i < args.length; i++) {
      if (args[i] !== undefined || keys[i] === '') continue;
      const key = keys[i]!;
      if (!cf.isPending(key)) continue;
      const p = batch.producer(key);
      if (!p) { prods.fill(null, 0, n); return false; }
      at[n] = i;
      prods[n++] = p;
    }
    // every pending key must be one of them: counted (distinct keys, the common case), else asked
    if (n === 0 || (n !== cf.pendingCount || duplicateKey(keys, at, n)) && !this.feedable(cf, task)) { prods.fill(null, 0, n); return false; }
    const fwd = new Array<Forward>(n);
    let k = 0;
    for (let i = 0; i < args.length; i++) {
      if (args[i] !== undefined || keys[i] === '') continue;
      if (k < n && at[k] === i) {
        const p = prods[k]!;
        prods[k] = null;
        fwd[k++] = forwardOf(i, p);
        args[i] = null;
      } else args[i] = cf.gotValue(keys[i]!); // arrived since it parked
    }
    this.st.waiting.delete(cf);
    cf.chained = true;
    task.fwd = fwd;
    cf.task = task;
    cf.state = READY;
    if (this.st.tr) this.traceReady(cf, keys, cf.site as CallSite);
    return true;
  }

  /** fireFed's scratch: the arguments it forwards and their producers (no array per CF) */
  private readonly fedAt: number[] = [];
  private readonly fedProds: (Produced | null)[] = [];

  /** Whether every pending key of `cf` is a direct input of `task` still missing (fireFed's slow check). */
  private feedable(cf: Cf, task: Task): boolean {
    this.fedTask = task;
    const ok = cf.everyPending(this.fedInput);
    this.fedTask = null;
    return ok;
  }

  /** the armed task feedable() asks about (read by fedInput: no closure per CF) */
  private fedTask: Task | null = null;
  /** Whether pending key `k` is a direct input of fedTask still missing. */
  private readonly fedInput = (k: DfKey): boolean => {
    const keys = this.fedTask!.keys, args = this.fedTask!.args;
    for (let i = 0; i < keys.length; i++) if (keys[i] === k && args[i] === undefined) return true;
    return false;
  };

  /** An armed CF whose inputs all arrived: its inputs filled in, it is ready. */
  private fire(cf: Cf, task: Task): Outcome {
    const args = task.args, keys = task.keys;
    for (let i = 0; i < args.length; i++) if (args[i] === undefined && keys[i] !== '') args[i] = cf.gotValue(keys[i]!);
    this.st.waiting.delete(cf);
    cf.chained = false;
    cf.task = task;
    cf.state = READY;
    if (this.st.tr) this.traceReady(cf, keys, cf.site as CallSite);
    return TASK;
  }

  private traceReady(cf: Cf, keys: string[], site: CallSite): void {
    const tr = this.st.tr!;
    if (!cf.chained) tr.cfReady(this.st.host.now(), cf.id); // a continuation is ready when its executor reaches it
    for (let i = 0; i < keys.length; i++) {
      if (!keys[i]) continue;
      // outputs are interned now too: their dfComputed is stamped back to the executor's finish
      const df = tr.dfName(keys[i]!);
      if (site.args[i]!.kind === 'in') tr.cfInput(cf.id, df);
    }
    // DFs read through expressions (an int argument, an index, a rule) are inputs too: the CF
    // waited for them, and a balancer replaying the graph must know it
    for (let k = 0, n = cf.gotCount; k < n; k++) {
      const key = cf.gotKeyAt(k);
      if (!keys.includes(key)) tr.cfInput(cf.id, tr.dfName(key));
    }
  }

  /** Per output its publication rule (fragment.ts OUT_*), or null when all are published unlimited. */
  private outRules(cf: Cf, site: CallSite, outKeys: DfKey[]): number[] | null {
    if (site.reqCount.length === 0 && site.drop.length === 0 && site.afterpush.length === 0) return null;
    if (site.sharedRules !== null) return site.sharedRules;
    const f = this.f;
    const rules = new Array<number>(outKeys.length).fill(OUT_UNLIMITED);
    for (const r of site.reqCount) {
      const n = this.int(r.expr);
      // the compiler matched most rules to their output; the others are matched by key
      const i = r.out >= 0 ? r.out : outKeys.indexOf(r.ref.key(f));
      if (!f.missing && n < 0) throw new RunFault(`req_count of ${displayDf(outKeys[i] ?? r.ref.key(f))} is negative (${n})`, cf);
      if (i >= 0) rules[i] = n;
    }
    for (const r of site.drop) { const i = outKeys.indexOf(r.key(f)); if (i >= 0) rules[i] = OUT_DROP; }
    for (let k = 0; k < site.afterpush.length; k++) { const i = outKeys.indexOf(site.afterpush[k]!.ref.key(f)); if (i >= 0) rules[i] = OUT_PUSH - k; }
    if (site.rulesConstant) site.sharedRules = rules; // every CF of the site has these (read only)
    return rules;
  }

  /** `>>` targets (set to int 1) and `-->`/`delete` targets (destroyed), run after the call. */
  private afterActions(site: Site): AfterAction[] | null {
    if (site.setdfs.length === 0 && site.deletes.length === 0) return null;
    const out: AfterAction[] = [];
    for (const r of site.setdfs) out.push({ op: 'set', key: r.key(this.f), owner: this.owner(r) });
    for (const r of site.deletes) out.push({ op: 'destroy', key: r.key(this.f), owner: this.owner(r) });
    return out;
  }

  private readPushed(cf: Cf, site: CallSite, ref: CDfRef): void {
    const f = this.f;
    const key = ref.key(f);
    if (cf.gotValue(key) !== undefined) return;
    const v = this.st.store.takePushed(pushKey(this.labelKey(site.label, site.labelIdx), key), cf);
    if (v !== undefined) { cf.addGot(key, v); return; }
    f.missing = true;
    f.indirect = true; // a pushed value is not a request: the CF is examined again when it comes
  }

  /** The push key under which output `key` of `cf` goes to its afterpush target. */
  pushTarget(cf: Cf, rule: number, key: DfKey): { key: string; owner: number } {
    const site = cf.site as CallSite;
    const r = site.afterpush[OUT_PUSH - rule]!;
    const f = this.f;
    f.cf = cf;
    f.env = cf.env;
    f.missing = false;
    return { key: pushKey(this.labelKey(r.label, r.labelIdx), key), owner: r.owner(f) };
  }

  // ------------------------------------------------------------------ structured CFs

  /** Spawn the statements of `block` as children of `parent` (fresh DFs for its `df` names). */
  spawnBlock(parent: Cf, block: { dfs: { slot: number; name: string }[]; stmts: Site[] }, env: unknown[], iter: number, copy: boolean): void {
    const st = this.st;
    let e = env;
    // The block's id prefix, made (and in a deep recursion folded) once for its DFs and all its
    // children: a child of prefix `id` outside a loop (-1) has the id childGid(parent.gid, iter, …)
    // would give it, since a prefix is never longer than what blockPrefix folds.
    const id = blockPrefix(parent.gid, iter);
    if (block.dfs.length > 0) {
      if (copy) e = env.slice();
      for (let k = 0; k < block.dfs.length; k++) { const d = block.dfs[k]!; e[d.slot] = familyKey(d.name, id); }
    }
    const stmts = block.stmts;
    const out = this.spawnedScratch;
    for (let k = 0; k < stmts.length; k++) this.spawnInto(out, stmts[k]!, e, id, -1, parent);
    for (let k = 0; k < out.length; k++) st.enqueue(out[k]!);
    out.length = 0;
  }

  /** spawnBlock's CFs before they are queued (reused: spawnInto never spawns a block) */
  private readonly spawnedScratch: Cf[] = [];

  /**
   * The CFs statement `stmt` of a block with id prefix `prefix` (iteration `iter`, -1: not a
   * loop's) becomes, appended to `out`: itself, or, for an `if` decided here (fold-if.ts), the
   * CFs of its body when its condition holds (with the ids, environment and parent the `if` would
   * give them), none when it does not.
   */
  private spawnInto(out: Cf[], stmt: Site, env: unknown[], prefix: string, iter: number, parent: Cf): void {
    // (in FIFO order an `if` spawns its body at the queue's tail when its turn comes, which the
    // spawner cannot do in its place)
    const c = this.conditions;
    if (c !== null && !this.st.fifo && decidable(stmt)) {
      const go = c.decide(stmt, env);
      if (go === false) return;
      if (go === true) {
        // the block id the `if` CF would have: its own id (core/cfid.ts)
        const id = blockPrefix(childGid(prefix, iter, stmt.spawnNo), -1);
        const body = stmt.body.stmts;
        for (let k = 0; k < body.length; k++) this.spawnInto(out, body[k]!, env, id, -1, parent);
        return;
      }
    }
    out.push(this.st.newCf(stmt, env, prefix, iter, parent));
  }

  private subCall(cf: Cf, site: SubCallSite): Outcome {
    const f = this.f;
    const t = site.target;
    const env = new Array<unknown>(t.frameSize);
    for (let i = 0; i < site.args.length; i++) {
      const a = site.args[i]!, p = t.params[i]!;
      env[p.slot] = a.kind === 'name' ? a.ref.key(f) : argValue(a.expr, a.type, f, site.pos);
    }
    for (const nf of site.nf) env[nf.slot] = this.int(nf.expr);
    if (site.priority) cf.priority = this.int(site.priority);
    const after = this.afterActions(site);
    if (f.missing) return this.park(cf);
    this.st.waiting.delete(cf);
    this.spawnBlock(cf, t.body, env, -1, false);
    this.runAfter(after, cf);
    this.st.finish(cf);
    return DONE;
  }

  private forLoop(cf: Cf, site: ForSite): Outcome {
    const f = this.f, st = this.st;
    if (!cf.begun) {
      const first = this.int(site.first);
      const last = this.int(site.last);
      if (site.priority) cf.priority = this.int(site.priority);
      if (f.missing) return this.park(cf);
      st.waiting.delete(cf);
      // the loop is unrolled a chunk at a time (see unroll): memory stays bounded
      cf.begun = true;
      cf.counter = first;
      cf.counterEnd = last;
      if (first > last) { st.finish(cf); return DONE; }
      if (st.remote && st.policy.spreadLoop(last - first + 1, st.size)) this.spread(cf);
      if (!st.fifo) {
        // planned whole, from its first iteration; else the first chunk now (as far as the
        // policy allows), the rest when the pump asks
        st.loops.push(cf);
        if (st.owner.planLoop(cf)) return DONE;
        const chunk = st.unrollChunk(last - first + 1, false, cf);
        return chunk > 0 ? this.unroll(cf, chunk) : DONE;
      }
      // FIFO: the loop takes the place its children would take at the tail of the queue
      st.enqueue(cf);
      return DONE;
    }
    return this.unroll(cf, st.unrollChunk(cf.counterEnd - cf.counter + 1, true, cf));
  }

  /** Send every other node a copy of loop `cf` to unroll there (see Spread). */
  private spread(cf: Cf): void {
    const st = this.st;
    const s: Spread = { origin: st.self };
    st.spreads.set(cf, s);
    for (let n = 0; n < st.size; n++) if (n !== st.self) st.remote!.spread(cf, n, s);
  }

  /**
   * Spawn the next `chunk` iterations of a `for`. With one lane the loop is at the head of the
   * run queue when this runs: its children go to the head, followed by the loop itself, so the
   * order is that of spawning every iteration at once where the loop stood.
   */
  unroll(cf: Cf, chunk: number): Outcome {
    const st = this.st, site = cf.site as ForSite;
    const end = Math.min(cf.counterEnd, cf.counter + Math.max(1, chunk) - 1);
    const prefix = cf.gid;
    const spawned: Cf[] = [];
    const sp = st.spreads.size > 0 ? st.spreads.get(cf) : undefined;
    const body = site.body, dfs = body.dfs, stmts = body.stmts;
    if (sp === undefined) {
      for (let i = cf.counter; i <= end; i++) {
        const env = cf.env.slice();
        env[site.varSlot] = i;
        if (dfs.length > 0) {
          const id = blockPrefix(prefix, i);
          for (let k = 0; k < dfs.length; k++) env[dfs[k]!.slot] = familyKey(dfs[k]!.name, id);
        }
        for (let k = 0; k < stmts.length; k++) this.spawnInto(spawned, stmts[k]!, env, prefix, i, cf);
      }
    } else {
      // spread: only what runs here, and what nobody can place yet where the loop began; the
      // iterations are placed in one scratch environment, copied only for those that spawn here
      // (with N nodes most of them spawn elsewhere)
      const scratch = cf.env.slice();
      for (let i = cf.counter; i <= end; i++) {
        scratch[site.varSlot] = i;
        if (body.dfs.length > 0) {
          const id = blockPrefix(prefix, i);
          for (const d of body.dfs) scratch[d.slot] = familyKey(d.name, id);
        }
        let env: unknown[] | null = null;
        for (const s of body.stmts) {
          const at = this.placer.place(s, scratch, prefix, i);
          if (at < 0 ? sp.origin !== st.self : at !== st.self) continue;
          const c = st.newCf(s, env ??= scratch.slice(), prefix, i, cf);
          if (at >= 0) c.placed = true;
          spawned.push(c);
        }
      }
    }
    cf.counter = end + 1;
    const more = cf.counter <= cf.counterEnd;
    if (!st.fifo && more && spawned.length > 0) st.frontier.set(cf, spawned[0]!);
    if (st.fifo) {
      if (more) { cf.state = QUEUED; st.run.pushFront(cf); }
      for (let k = spawned.length - 1; k >= 0; k--) { spawned[k]!.state = QUEUED; st.run.pushFront(spawned[k]!); }
      st.owner.schedule();
    } else for (let k = 0; k < spawned.length; k++) st.enqueue(spawned[k]!);
    if (!more) {
      if (!st.fifo) { st.loops.splice(st.loops.indexOf(cf), 1); st.frontier.delete(cf); }
      st.unrolled(cf);
      if (sp) st.spreads.delete(cf);
      st.finish(cf);
    }
    return DONE;
  }

  private whileLoop(cf: Cf, site: WhileSite): Outcome {
    const f = this.f, st = this.st;
    if (!cf.begun) {
      const start = this.int(site.start);
      if (site.priority) cf.priority = this.int(site.priority);
      if (f.missing) return this.park(cf);
      cf.counter = start;
      cf.begun = true;
    }
    const env = cf.env.slice();
    env[site.varSlot] = cf.counter;
    f.env = env;
    const go = truthy(site.cond, f);
    if (f.missing) return this.park(cf);
    st.waiting.delete(cf);
    cf.clearGot(); // the condition is fetched anew every round
    if (go) {
      this.spawnBlock(cf, site.body, env, cf.counter, false);
      cf.counter++;
      st.enqueue(cf);
      return DONE;
    }
    f.env = cf.env;
    this.st.post(site.out.key(f), this.owner(site.out), { t: T_INT, v: cf.counter }, -1, cf, st.host.now());
    st.finish(cf);
    return DONE;
  }

  private ifStmt(cf: Cf, site: IfSite): Outcome {
    const f = this.f;
    const go = truthy(site.cond, f);
    if (site.priority) cf.priority = this.int(site.priority);
    if (f.missing) return this.park(cf);
    this.st.waiting.delete(cf);
    if (go) this.spawnBlock(cf, site.body, cf.env, -1, true);
    this.st.finish(cf);
    return DONE;
  }

  /** Run a CF's `>>` and `-->` actions. */
  runAfter(after: AfterAction[] | null, cf: Cf): void {
    if (!after) return;
    const st = this.st;
    for (let k = 0; k < after.length; k++) {
      const a = after[k]!;
      if (a.op === 'set') st.post(a.key, a.owner, { t: T_INT, v: 1 }, -1, cf, st.host.now());
      else st.destroy(a.key, a.owner, cf);
    }
  }
}
