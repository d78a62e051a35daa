// The DF store of one node: the DFs this node owns, with the protocol of the original runtime
// (single assignment, request counts, destroy, push). It is pure bookkeeping: operations return
// who must receive a value; the caller delivers it (to a local CF or over the network). Errors
// are RunFaults without a fragment; the caller names the CF that caused them. Two mistakes are
// traced to their author here: the first writer of a DF assigned twice is remembered (its spawn
// site and node, two small numbers per DF), and a post that finds more readers waiting than its
// req_count allows serves the first ones in request order and names the first reader too many.
import { displayDf, pushedDf, type DfKey } from '../../core/dfkey.js';
import { valueSize, type DfValue } from '../../ucode/value.js';
import type { Cf } from './fragment.js';
import { RequestRefused, RunFault } from './fault.js';
import { FreedKeys, foundCol, foundRow, inFamily, type Family, type FreedPlace } from './freed.js';

export { FreedKeys } from './freed.js';

/** A DF held or awaited here; where its key goes once freed (FreedPlace) found when it was made. */
interface Entry extends FreedPlace {
  v: DfValue | undefined;
  /**
   * the value's bytes (valueSize), taken at its post and given back at its free: a value never
   * changes once posted, and liveBytes must lose what it gained even if a buffer the value
   * holds was detached meanwhile
   */
  bytes: number;
  /** remaining requests; -1 = unlimited */
  count: number;
  /** local CFs waiting for the value, in request order */
  waiters: Cf[] | null;
  /** remote requesters, one node per request, in request order */
  remote: number[] | null;
  /** per remote request, how many local waiters came before it (the order across both lists) */
  remoteAfter: number[] | null;
  /** a destroy arrived before the post */
  destroyedEarly: boolean;
  /** who posted the value: spawn site id and node (-1: unknown) */
  bySite: number;
  byNode: number;
  /** nodes that keep a copy of the value for their other readers: told when it is freed */
  holders: number[] | null;
}

/** Who gets a value that was just posted (each one request, already counted). */
export interface Delivery {
  waiters: Cf[] | null;
  /** nodes to send the value to: one per request, so a node may appear more than once (send once) */
  remote: number[] | null;
  /** the value outlives these requests: the nodes may keep a copy for their later readers */
  keep?: boolean;
  /** requests the value may still serve after these (-1: unlimited) */
  left?: number;
  /**
   * More requests were waiting than the req_count allows: the first one too many (a local CF, or
   * the node that asked), with the message. The requests before it are served.
   */
  excess?: { cf?: Cf; node?: number; message: string };
}

/** A spawn site and node as a message names them (the first writer of a DF assigned twice). */
export type DescribeWriter = (site: number, node: number) => string;

const NOBODY: Delivery = { waiters: null, remote: null };

/**
 * A value served to another node: how many of its requests it serves (`granted`), how many the
 * value may still serve anywhere after them (`left`, -1: unlimited), and whether that node may
 * keep a copy for its later readers (each of their reads counted at the owner, `reads`).
 */
export interface Served { v: DfValue; granted: number; left: number; keep: boolean }

/**
 * A planned loop's output kept inside it (read only by the loop's own later steps,
 * loop-inline.ts): at iteration t, the key of `family` at row ar·t + br and last index ac·t + bc;
 * kept at the iterations whose readers, `d` iterations later at most, are all in the loop.
 */
export interface KeptForm { readonly family: Family; readonly ar: number; readonly br: number; readonly ac: number; readonly bc: number; readonly d: number }

/**
 * A planned loop's kept outputs (one form each) over iterations [from, last], recorded as spent
 * by numbers (spentIn) while the store watches that no entry exists for one of their keys.
 */
export interface KeptKeys {
  readonly forms: readonly KeptForm[];
  from: number;
  last: number;
  /** an entry was made for one of the keys while watched: they go key by key from then on */
  hit: boolean;
  /** the store's count of entries made when the last watch of these ended clean (-1: never) */
  made: number;
}

/**
 * A copy of another node's DF: its value, the reads it may still serve here as far as this node
 * knows (`budget`, -1: unlimited; the owner counts exactly and refuses what others used up), and
 * the last CF that read it (named if the owner refuses a read).
 */
interface Copy { v: DfValue; bytes: number; owner: number; budget: number; lastReader: Cf | null }

export class DfStore {
  private readonly entries = new Map<DfKey, Entry>();
  /** DFs freed because their req_count was served: a later request is "too many requests" */
  private readonly exhausted = new FreedKeys();
  /** values pushed (afterpush) by push key, and the CF waiting for each */
  private readonly pushed = new Map<string, DfValue>();
  private readonly pushWait = new Map<string, Cf>();
  /** local CFs waiting for DFs requested from other nodes, per key in request order, and the node asked */
  private readonly remoteWait = new Map<DfKey, Cf[]>();
  private readonly remoteOwner = new Map<DfKey, number>();
  /**
   * Copies of DFs owned by other nodes, kept for this node's later readers: a DF read by several
   * CFs here crosses once (a stencil's border block is read by up to 9 CFs of the other node).
   * Each read still counts at the owner (`reads`), which says when the copy may go (`drop`).
   */
  private readonly copies = new Map<DfKey, Copy>();
  private copyBytes = 0;
  /**
   * Bytes of copies kept at most; past it the oldest go (a reader of a dropped copy requests the
   * value again, counted as before). A DF without a req_count is never freed by its owner, so
   * without a bound its copies would double such a program's memory.
   */
  copyLimitBytes = 256 * 1024 * 1024;
  /** A copy of another node's value is kept here from now on (set by the caller; `onFree` when it goes). */
  onKeep: (v: DfValue) => void = () => {};
  /** The owner freed `key` while `nodes` kept copies of it (set by the caller: it tells them). */
  onDrop: (key: DfKey, nodes: number[]) => void = () => {};
  /** bytes of the values held */
  liveBytes = 0;
  /**
   * Entries made so far: a planned loop's kept keys are checked against the entries again only
   * when some were made since its last turn (watchKept).
   */
  private made = 0;
  /** the kept keys of the planned loop whose turn runs now: an entry made for one is a hit */
  private kept: KeptKeys | null = null;

  /**
   * `onFree(v)`: a value left the store (freed by its count or destroyed). `node`: this node's
   * number, named in messages when the run has several nodes. `describeWriter`: names a writer.
   */
  constructor(
    private readonly onFree: (v: DfValue) => void = () => {},
    private readonly node?: number,
    private readonly describeWriter: DescribeWriter = (site, node) => `the CF of spawn site ${site} on node ${node}`,
  ) {}

  /** `DF x`, and on several nodes `DF x (held by node 2)`. */
  private df(key: DfKey): string {
    return this.node === undefined ? `DF ${displayDf(key)}` : `DF ${displayDf(key)} (held by node ${this.node})`;
  }

  // ------------------------------------------------------------------ reading

  /**
   * A local CF reads `key`, owned here: the value (one request served) or undefined after the CF
   * was registered as a waiter. Throws when the DF can never come.
   */
  read(key: DfKey, cf: Cf): DfValue | undefined {
    const have = this.entries.get(key);
    if (have !== undefined && have.v !== undefined) {
      // consume(have, key, 1) written out for the usual counted read (a call fewer per read)
      const c = have.count;
      if (c > 1) have.count = c - 1;
      else if (c === 1) { have.count = 0; this.free(key, have); }
      else if (c === 0) this.consume(have, key, 1); // too many requests: it throws
      return have.v;
    }
    // an entry without a value is a DF still to come (or destroyed early, after a free too)
    if ((have === undefined || have.destroyedEarly) && this.exhausted.has(key)) throw new RunFault(this.freedMessage(key));
    this.wait(have ?? this.create(key), key, cf);
    return undefined;
  }

  /** Register `cf` as waiting for the local DF `key` without reading it (forwarded inputs). */
  expect(key: DfKey, cf: Cf): void {
    this.wait(this.entry(key), key, cf);
  }

  private freedMessage(key: DfKey): string {
    return `too many requests for ${this.df(key)}: it was freed after its req_count requests were served (Too many requests)`;
  }

  private wait(e: Entry, key: DfKey, cf: Cf): void {
    if (e.destroyedEarly) throw new RunFault(`${this.df(key)} is requested after it was destroyed (before it was computed)`);
    // the second waiter in a literal of two: a push to a full array reserves 16 more slots, and
    // most DFs have one or two readers (a stencil's, two)
    const w = e.waiters;
    if (w === null) e.waiters = [cf];
    else if (w.length === 1) e.waiters = [w[0]!, cf];
    else w.push(cf);
    cf.addPending(key);
  }

  /**
   * `n` requests from node `from`: the value to send now, or undefined (queued until the post).
   * Throws RequestRefused when the DF can never be served to it: that node reports the fault.
   */
  readRemote(key: DfKey, from: number, n = 1): Served | undefined {
    const have = this.entries.get(key);
    if ((have === undefined || have.v === undefined) && this.exhausted.has(key)) throw new RequestRefused(this.freedMessage(key), undefined, from);
    const e = have ?? this.create(key);
    if (e.destroyedEarly) throw new RequestRefused(`${this.df(key)} is requested after it was destroyed (before it was computed)`, undefined, from);
    if (e.v !== undefined) {
      const v = e.v;
      this.consumeFor(e, key, n, from);
      const keep = this.entries.get(key) === e;
      if (keep) this.hold(e, from);
      return { v, granted: n, left: keep ? e.count : 0, keep };
    }
    for (let i = 0; i < n; i++) {
      (e.remote ??= []).push(from);
      (e.remoteAfter ??= []).push(e.waiters === null ? 0 : e.waiters.length);
    }
    return undefined;
  }

  /**
   * Node `from` read `key` `n` more times from the copy it keeps (or will get: its request is
   * queued here): counted like requests, with nothing to send. Throws RequestRefused when these
   * are requests too many.
   */
  reads(key: DfKey, from: number, n: number): void {
    const e = this.entries.get(key);
    if (e !== undefined && e.v === undefined) { this.readRemote(key, from, n); return; }
    if (e === undefined) throw new RequestRefused(this.exhausted.has(key) ? this.freedMessage(key) : `internal: ${this.df(key)} read from a copy it never sent`, undefined, from);
    this.consumeFor(e, key, n, from);
  }

  /** consume() for node `from`: too many requests are its fault, reported there. */
  private consumeFor(e: Entry, key: DfKey, n: number, from: number): void {
    try { this.consume(e, key, n); } catch (err) {
      if (err instanceof RunFault) throw new RequestRefused(err.message, undefined, from);
      throw err;
    }
  }

  private hold(e: Entry, node: number): void {
    if (e.holders === null) e.holders = [node];
    else if (!e.holders.includes(node)) e.holders.push(node);
  }

  // ------------------------------------------------------------------ writing

  /**
   * Store the value of `key` with `count` requests (-1 unlimited), written by the CF of spawn
   * site `bySite` on node `byNode`; returns who must get it now.
   */
  post(key: DfKey, v: DfValue, count: number, bySite = -1, byNode = -1): Delivery {
    const have = this.entries.get(key);
    if (have !== undefined && have.v !== undefined) throw new RunFault(this.twiceMessage(key, have));
    if (have === undefined && this.exhausted.has(key)) throw new RunFault(this.twiceFreedMessage(key));
    const e = have ?? this.create(key);
    if (e.destroyedEarly) { this.entries.delete(key); return NOBODY; }
    e.v = v;
    e.count = count;
    e.bySite = bySite;
    e.byNode = byNode;
    e.bytes = valueSize(v);
    this.liveBytes += e.bytes;
    const waiters = e.waiters, remote = e.remote;
    e.waiters = null;
    e.remote = null;
    const n = (waiters ? waiters.length : 0) + (remote ? remote.length : 0);
    if (n === 0) {
      if (count === 0) this.free(key, e);
      return NOBODY;
    }
    if (count >= 0 && n > count) return this.overRequested(key, e, waiters, remote);
    e.remoteAfter = null;
    this.consume(e, key, n);
    if (remote === null) return { waiters, remote };
    const keep = this.keptBy(key, e, remote);
    return { waiters, remote, keep, left: keep ? e.count : 0 };
  }

  /** After serving `remote`: whether the value lives on, and then the nodes hold copies. */
  private keptBy(key: DfKey, e: Entry, remote: number[]): boolean {
    if (this.entries.get(key) !== e) return false;
    for (const node of remote) this.hold(e, node);
    return true;
  }

  /**
   * More requests waited for `key` than its count allows: serve the first `count` in the order
   * they came and name the next one.
   */
  private overRequested(key: DfKey, e: Entry, waiters: Cf[] | null, remote: number[] | null): Delivery {
    const after = e.remoteAfter;
    e.remoteAfter = null;
    const served: Delivery = { waiters: null, remote: null };
    let li = 0, ri = 0;
    const nl = waiters ? waiters.length : 0, nr = remote ? remote.length : 0;
    const message = `too many requests for ${this.df(key)}: its req_count ${e.count} was served to the requests that came first (Too many requests)`;
    for (let k = 0; ; k++) {
      // the next request in arrival order: a remote one that came before the next local waiter, or that waiter
      const remoteNext = ri < nr && (li >= nl || after![ri]! <= li);
      if (k === e.count) {
        const excess = remoteNext ? { node: remote![ri]!, message } : { cf: waiters![li]!, message };
        this.consume(e, key, e.count);
        return { ...served, excess };
      }
      if (remoteNext) (served.remote ??= []).push(remote![ri++]!);
      else (served.waiters ??= []).push(waiters![li++]!);
    }
  }

  /**
   * A CF examined here will post `key`, owned here: its entry is made now, just after the key
   * was located, while the freed keys can learn its indices as numbers (program/keys.ts
   * lastKey) rather than read them back out of the text at the post. Nothing when the entry
   * exists or the DF was freed (the post then reports the second assignment).
   */
  willPost(key: DfKey): void {
    if (this.entries.has(key) || this.exhausted.has(key)) return;
    this.create(key);
  }

  /**
   * `key` was made and all its requests served without the store (a planned loop's output read
   * only by its later steps, loop-run.ts): remembered as freed, as a DF whose readers were all
   * served is, so that a later request or post is reported as on the unplanned path. Throws
   * when it was assigned already; returns the message of a request too many when a reader
   * waits for it here (undefined: none).
   */
  spent(key: DfKey): string | undefined {
    const have = this.entries.get(key);
    if (have === undefined) {
      if (this.exhausted.has(key)) throw new RunFault(this.twiceFreedMessage(key));
      this.exhausted.add(key);
      return undefined;
    }
    if (have.v !== undefined) throw new RunFault(this.twiceMessage(key, have));
    // destroyed before it was made: a post drops it
    if (have.destroyedEarly) { this.entries.delete(key); return undefined; }
    if ((have.waiters !== null && have.waiters.length > 0) || (have.remote !== null && have.remote.length > 0)) return this.freedMessage(key);
    this.entries.delete(key);
    this.exhausted.addAt(key, have);
    return undefined;
  }

  /**
   * A planned loop's turn records the outputs it keeps by numbers (spentIn) from iteration
   * `k.from` on, not key by key (spent): true when none of their keys has an entry here (a
   * reader from outside waiting, a value posted, a destroy before the post: spent() tells each
   * apart), and from now until unwatchKept() an entry made for one is a hit. The entries are read
   * only when some were made since the last turn, and only when they are at most `budget` (what
   * the turn saves: past it, false and the keys go one by one).
   */
  watchKept(k: KeptKeys, budget: number): boolean {
    if (k.made !== this.made) {
      if (this.entries.size > budget) return false;
      for (const key of this.entries.keys()) if (keptKey(k, key)) return false;
    }
    k.hit = false;
    this.kept = k;
    return true;
  }

  /** The turn is over: entries made from now on are read at the next turn's watchKept. */
  unwatchKept(): void {
    const k = this.kept;
    if (k === null) return;
    this.kept = null;
    k.made = k.hit ? -1 : this.made;
  }

  /**
   * Kept output `f` of iteration `t` was made and read up inside the loop: remembered as freed,
   * as spent(key) would, its key never spelled. False when it must go by spent(key) instead:
   * no watch, an entry was made for one of the kept keys, or it was freed already (assigned twice).
   */
  spentIn(f: KeptForm, t: number): boolean {
    const k = this.kept;
    if (k === null || k.hit || !this.exhausted.addIn(f.family, f.ar * t + f.br, f.ac * t + f.bc)) return false;
    this.keptByNumbers++;
    return true;
  }

  /**
   * spentIn() of every form of `k` (the watched turn's) at every iteration from `t0` to `t1`, all
   * or none: false, nothing recorded, where one of them would be false (then each goes as it
   * would alone). The forms must be of distinct families, each key a different one a step.
   */
  spentRange(k: KeptKeys, t0: number, t1: number): boolean {
    if (this.kept !== k || k.hit) return false;
    const fs = k.forms, x = this.exhausted;
    for (let j = 0; j < fs.length; j++) { const f = fs[j]!; if (x.anyIn(f.family, t0, t1, f.ar, f.br, f.ac, f.bc)) return false; }
    for (let j = 0; j < fs.length; j++) { const f = fs[j]!; x.addRangeIn(f.family, t0, t1, f.ar, f.br, f.ac, f.bc); }
    this.keptByNumbers += fs.length * (t1 - t0 + 1);
    return true;
  }

  /** kept outputs recorded by numbers (spentIn): --timing's plannedKept */
  keptByNumbers = 0;

  private twiceMessage(key: DfKey, have: Entry): string {
    return `${this.df(key)} is assigned twice (Duplicate id in post)${have.bySite >= 0 ? `: it already holds the value of ${this.describeWriter(have.bySite, have.byNode)}` : ''}`;
  }

  private twiceFreedMessage(key: DfKey): string {
    return `${this.df(key)} is assigned twice (Duplicate id in post): it was assigned before, and freed after its req_count requests were served`;
  }

  /** Destroy `key` (`-->`, `delete`): freed now, or remembered when it is not posted yet. */
  destroy(key: DfKey): void {
    const e = this.entries.get(key);
    if (!e) { this.entry(key).destroyedEarly = true; return; }
    if (e.v === undefined) {
      if ((e.waiters && e.waiters.length > 0) || (e.remote && e.remote.length > 0)) {
        throw new RunFault(`${this.df(key)} is destroyed while CFs still wait for it (Request(s) present at destroy)`);
      }
      e.destroyedEarly = true;
      return;
    }
    if (e.count > 0) throw new RunFault(`attempting to destroy ${this.df(key)} with ${e.count} request(s) still expected (positive requests count)`);
    this.free(key, e);
  }

  private entry(key: DfKey): Entry {
    return this.entries.get(key) ?? this.create(key);
  }

  /**
   * A new entry for `key`, which has none (one map operation where a lookup just missed), with
   * the freed keys' place of it when they were just asked about it.
   */
  private create(key: DfKey): Entry {
    // (a literal of constants is copied whole: a computed field costs unoptimised code more)
    const e: Entry = { v: undefined, bytes: 0, count: -1, waiters: null, remote: null, remoteAfter: null, destroyedEarly: false, bySite: -1, byNode: -1, holders: null, fam: null, frow: 0, fcol: 0 };
    const x = this.exhausted;
    if (x.seenKey === key && x.seenFam !== null) { e.fam = x.seenFam; e.frow = x.row; e.fcol = x.col; }
    this.entries.set(key, e);
    this.made++;
    if (this.kept !== null && keptKey(this.kept, key)) this.kept.hit = true;
    return e;
  }

  /** `n` requests of `key` were served: count down, free at zero. */
  private consume(e: Entry, key: DfKey, n: number): void {
    if (e.count < 0) return;
    if (n > e.count) throw new RunFault(`too many requests for ${this.df(key)} (req_count exhausted: Too many requests)`);
    e.count -= n;
    if (e.count === 0) this.free(key, e);
  }

  private free(key: DfKey, e: Entry): void {
    this.entries.delete(key);
    if (e.count === 0) this.exhausted.addAt(key, e);
    if (e.v !== undefined) {
      this.liveBytes -= e.bytes;
      this.onFree(e.v);
    }
    if (e.holders !== null) { const h = e.holders; e.holders = null; this.onDrop(key, h); }
  }

  // ------------------------------------------------------------------ push (afterpush / wait)

  /** A pushed value arrived: the CF waiting for it, or undefined after keeping the value. */
  push(key: string, v: DfValue): Cf | undefined {
    const cf = this.pushWait.get(key);
    if (cf) { this.pushWait.delete(key); return cf; }
    this.pushed.set(key, v);
    return undefined;
  }

  /** `wait X`: the pushed value if it came, else undefined after registering `cf` for it. */
  takePushed(key: string, cf: Cf): DfValue | undefined {
    const v = this.pushed.get(key);
    if (v !== undefined) { this.pushed.delete(key); return v; }
    const df = pushedDf(key);
    if (!cf.isPending(df)) { cf.addPending(df); this.pushWait.set(key, cf); }
    return undefined;
  }

  // ------------------------------------------------------------------ requests to other nodes

  /**
   * `cf` waits for `key` owned by `owner`. True for the first such CF: the caller requests the
   * value; for the others a request is on its way, and the caller only counts their reads at the
   * owner (`reads`): the one value that comes back serves them all.
   */
  awaitRemote(key: DfKey, owner: number, cf: Cf): boolean {
    cf.addPending(key);
    const list = this.remoteWait.get(key);
    if (list) { list.push(cf); return false; }
    this.remoteWait.set(key, [cf]);
    this.remoteOwner.set(key, owner);
    return true;
  }

  /**
   * A value requested from another node arrived (or the request was refused): the CFs waiting for
   * it, in the order they asked. With `keep`, the value stays here for later readers until the
   * owner drops it.
   */
  remoteArrived(key: DfKey, served: Served): Cf[] {
    const list = this.remoteWait.get(key) ?? [];
    const owner = this.remoteOwner.get(key) ?? -1;
    // the requests it was granted for, then the readers that joined them while it travelled, as
    // many as the value may still serve: the owner refuses the others (their reads were sent)
    const n = served.left < 0 ? list.length : Math.min(list.length, served.granted + served.left);
    const budget = served.left < 0 ? -1 : served.left - Math.max(0, n - served.granted);
    let now = list;
    if (n === list.length) { this.remoteWait.delete(key); this.remoteOwner.delete(key); } else now = list.splice(0, n);
    if (served.keep && !this.copies.has(key)) {
      const b = valueSize(served.v);
      this.copies.set(key, { v: served.v, bytes: b, owner, budget, lastReader: null });
      this.onKeep(served.v);
      this.liveBytes += b;
      this.copyBytes += b;
      // oldest first (a Map iterates in insertion order)
      for (const old of this.copies.keys()) {
        if (this.copyBytes <= this.copyLimitBytes || old === key) break;
        this.dropCopy(old);
      }
    }
    return now;
  }

  /** The owner refused this node a read of `key`: the CF to blame (the first still waiting, else the last that read the copy). */
  refusedRead(key: DfKey): Cf | undefined {
    const list = this.remoteWait.get(key);
    this.remoteWait.delete(key);
    this.remoteOwner.delete(key);
    return list?.[0] ?? this.copies.get(key)?.lastReader ?? undefined;
  }

  /**
   * `cf` reads the copy kept here of `key`, owned by another node: its value, and whether the
   * read must be counted there; undefined without a copy. Throws when this node has used up the
   * reads the owner said were left (`too many requests`, named here before anything runs).
   */
  readCopy(key: DfKey, cf: Cf): { v: DfValue; counted: boolean } | undefined {
    if (this.copies.size === 0) return undefined;
    const c = this.copies.get(key);
    if (c === undefined) return undefined;
    if (c.budget < 0) return { v: c.v, counted: false };
    if (c.budget === 0) throw new RunFault(`too many requests for DF ${displayDf(key)} (held by node ${c.owner}): its req_count was served to the requests that came first (Too many requests)`, cf);
    c.budget--;
    c.lastReader = cf;
    return { v: c.v, counted: true };
  }

  /** The owner freed `key`: no reader here may use the copy any more. */
  dropCopy(key: DfKey): void {
    const c = this.copies.get(key);
    if (c === undefined) return;
    this.copies.delete(key);
    this.liveBytes -= c.bytes;
    this.copyBytes -= c.bytes;
    this.onFree(c.v);
  }

  /** Copies of other nodes' DFs kept here. */
  get copiesKept(): number {
    return this.copies.size;
  }

  // ------------------------------------------------------------------ introspection

  /** `key` has been posted here (held, or freed after its requests): another post is a double assignment. */
  posted(key: DfKey): boolean {
    const e = this.entries.get(key);
    return e !== undefined ? e.v !== undefined : this.exhausted.has(key);
  }

  /** `key`'s value is here to be read (a read of it would not wait). */
  holds(key: DfKey): boolean {
    const e = this.entries.get(key);
    return e !== undefined && e.v !== undefined;
  }

  /** The local CFs waiting for `key` (for chaining consumers into a producer's batch). */
  waitersOf(key: DfKey): readonly Cf[] | null {
    return this.entries.get(key)?.waiters ?? null;
  }

  /** Some other node asked for `key` and waits. */
  hasRemoteWaiters(key: DfKey): boolean {
    const r = this.entries.get(key)?.remote;
    return r !== undefined && r !== null && r.length > 0;
  }

  /** Where a missing DF was expected to come from (hang reports). */
  expectedFrom(key: DfKey, self: number, nodes: number): string {
    const remote = this.remoteOwner.get(key);
    if (remote !== undefined) return ` (requested from node ${remote})`;
    if (this.entries.has(key)) return nodes > 1 ? ` (owned by node ${self}, never posted)` : '';
    return ' (by push, afterpush never came)';
  }

  /** DFs held (values posted and not freed). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The values still held whose req_count was not reached (at the end of a run: a count above the
   * reads the program made, which kept each value from its post to the end), in posting order,
   * with the requests that never came and the value's bytes. A DF without a req_count is not one:
   * it is kept by design.
   */
  unspent(): { key: DfKey; left: number; bytes: number }[] {
    const out: { key: DfKey; left: number; bytes: number }[] = [];
    for (const [key, e] of this.entries) if (e.v !== undefined && e.count > 0) out.push({ key, left: e.count, bytes: e.bytes });
    return out;
  }
}

/** Whether `key` is one of `k`'s kept keys of iterations [k.from, k.last] (an output that escapes at t is not). */
function keptKey(k: KeptKeys, key: DfKey): boolean {
  for (let j = 0; j < k.forms.length; j++) {
    const f = k.forms[j]!;
    if (!inFamily(key, f.family)) continue;
    const row = foundRow, col = foundCol;
    let t: number;
    if (f.ar !== 0) { t = (row - f.br) / f.ar; if (f.ac * t + f.bc !== col) continue; }
    else { if (row !== f.br) continue; t = (col - f.bc) / f.ac; }
    if (Number.isInteger(t) && t >= k.from && t + f.d <= k.last) return true;
  }
  return false;
}
