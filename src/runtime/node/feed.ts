// Feeding across lanes, the system thread's side: what the batches in flight will produce, and
// the CFs waiting for it. Such a CF need not wait for its producers' results to come back
// through this thread: it is sent now to a lane the policy picks, and the producers' workers
// send it the values (exec/exchange.ts). A step of a stencil on two workers then costs a
// hand-off between the workers instead of two wake-ups of this thread.
import type { DfKey } from '../../core/dfkey.js';
import type { Cf } from './fragment.js';
import { WAITING } from './fragment.js';
import type { Producer } from './batch.js';
import type { DfStore } from './store.js';

/** the book producers() asks (set at each call: one closure for every CF of every book) */
let asking: FeedBook;
/**
 * One function for every book, not a closure per book: code optimised on one book's closure
 * (the --warm-start rehearsal's, node/rehearsal.ts) was deoptimised by the run's book at its
 * first call ('wrong call target').
 */
const producedInFlight = (k: DfKey): boolean => asking.inFlight(k);

export class FeedBook {
  /** outputs of the batches in flight, with the lane and batch that make them */
  readonly promised = new Map<DfKey, Producer>();
  /**
   * outputs of batches sent since the last look, the first `freshN`: their waiters are
   * candidates. Counted, not emptied by `length = 0`, which drops an array's storage: a fed
   * stencil step promises one key per look, and each look's first push reserved 17 slots again
   * (Task Bench stencil_1d 1×2: 78 bytes a fragment).
   */
  private fresh: DfKey[] = [];
  private freshN = 0;
  /**
   * CFs that parked while outputs were promised, the first `lateN`: candidates at the next look.
   * Without them a CF parked after the batch that makes its input had left (a loop's steps the
   * system thread unrolled while the lanes ran) was looked at only when that batch came back,
   * and the lanes ran dry meanwhile (Task Bench stencil_1d 1×2: docs/benchmarks.md).
   */
  private late: Cf[] = [];
  private lateN = 0;
  /** whether the CF take() is offered now parked after its producers left (counted by the runtime) */
  offeringLate = false;
  /** CFs of `late` that found no lane free: looked at again when a batch comes back */
  private lateDeferred: Cf[] = [];
  /** outputs whose waiters found no lane free: looked at again when a batch comes back */
  private deferred: DfKey[] = [];
  /** the list `fresh` takes turns with (candidates: none allocated per look) */
  private spare: DfKey[] = [];
  /**
   * the lanes of the CF candidates() looks at, `fromN` of them, handed to take() in `fromOf[n]`
   * (one array per count, reused: emptied by `length = 0`, an array's first push reserves 17
   * slots, for every fed CF)
   */
  private readonly from: number[] = [];
  private fromN = 0;
  private readonly fromOf: number[][] = [];

  /** Batch `id` went to lane `lane`; `out`: its members' outputs. */
  sent(lane: number, id: number, out: ReadonlyMap<DfKey, Producer | null>): void {
    for (const [k, p] of out) {
      if (p === null || p.task < 0 || p.lane !== undefined) continue;
      this.promised.set(k, { task: p.task, out: p.out, lane, batch: id });
      this.fresh[this.freshN++] = k;
    }
  }

  /** `cf` joined batch `id` of lane `lane`, still being built: its outputs can feed others now. */
  added(lane: number, id: number, b: { readonly size: number; producer(k: DfKey): Producer | null | undefined }, cf: Cf): void {
    const keys = cf.outKeys;
    if (!keys) return;
    const task = b.size - 1;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const p = b.producer(k);
      if (!p || p.task !== task || p.lane !== undefined) continue;
      this.promised.set(k, { task, out: p.out, lane, batch: id });
      this.fresh[this.freshN++] = k;
    }
  }

  /** Batch `id` came back with these CFs: its outputs are in the store from now on. */
  returned(id: number, cfs: readonly Cf[]): void {
    for (let i = 0; i < cfs.length; i++) {
      const keys = cfs[i]!.outKeys;
      if (keys) for (let j = 0; j < keys.length; j++) if (this.promised.get(keys[j]!)?.batch === id) this.promised.delete(keys[j]!);
    }
    this.again();
  }

  /** A planned loop's batch `id` came back (node/loop-run.ts): the outputs it promised, `keys`, are in the store from now on. */
  returnedPlanned(id: number, keys: readonly DfKey[]): void {
    for (let j = 0; j < keys.length; j++) if (this.promised.get(keys[j]!)?.batch === id) this.promised.delete(keys[j]!);
    this.again();
  }

  /** A batch came back: what found no lane free is a candidate again. */
  private again(): void {
    if (this.deferred.length > 0) {
      for (let i = 0; i < this.deferred.length; i++) this.fresh[this.freshN++] = this.deferred[i]!;
      this.deferred.length = 0;
    }
    this.relate();
  }

  /** The late CFs that found no lane free are candidates again. */
  private relate(): void {
    const d = this.lateDeferred;
    if (d.length === 0) return;
    for (let i = 0; i < d.length; i++) this.late[this.lateN++] = d[i]!;
    d.length = 0;
  }

  /**
   * A lane is running low (a worker said so before its result): every output promised by a batch
   * in flight is looked at again now, so its waiters go out in the lane's next fed batch while its
   * current one still runs. Otherwise only those promised since the last look were candidates: a
   * CF a loop spawned after its input's batch left (the steps the system thread unrolled while
   * the lanes ran) waited for that batch to come back, and the lanes ran dry meanwhile.
   */
  retry(): void {
    for (const k of this.promised.keys()) this.fresh[this.freshN++] = k;
    this.deferred.length = 0;
    this.relate();
  }

  /** `cf` parked: a candidate at the next look while batches in flight promise outputs. */
  parked(cf: Cf): void {
    if (this.promised.size > 0 && cf.placed && cf.site.kind === 'call') this.late[this.lateN++] = cf;
  }

  /** Outputs were promised, or CFs parked, since the last look (nothing else can make a CF a candidate). */
  get hasCandidates(): boolean {
    return (this.freshN | this.lateN) > 0;
  }

  /**
   * Each waiting CF fed entirely by batches in flight (or by the store), with the lanes of its
   * producers, until `take` declines (-1: no lane free; the CF is tried again later).
   */
  candidates(store: DfStore, take: (cf: Cf, from: readonly number[]) => number): void {
    for (;;) {
      if (this.lateN > 0) this.lateOnes(take);
      if (this.freshN === 0) break;
      // the two lists take turns: what take() promises meanwhile goes to the other one
      const keys = this.fresh, n = this.freshN;
      this.fresh = this.spare;
      this.freshN = 0;
      for (let i = 0; i < n; i++) {
        const k = keys[i]!;
        keys[i] = ''; // (the list keeps its storage, not the keys)
        if (!this.promised.has(k)) continue;
        const ws = store.waitersOf(k);
        if (ws === null || ws.length === 0) continue;
        // by index over the live list up to its length now, as over a copy: take() may only
        // append to it (a CF examined into a batch waits for its forwarded inputs too)
        for (let j = 0, n = ws.length; j < n; j++) {
          const w = ws[j]!;
          if (w.state !== WAITING || w.chained || w.site.kind !== 'call' || !w.placed) continue;
          if (!this.producers(w)) continue;
          if (take(w, this.fromLanes()) < 0) { this.deferred.push(k); break; }
        }
      }
      this.spare = keys;
    }
  }

  /** The CFs parked since the last look (and those parking meanwhile: take() examines CFs). */
  private lateOnes(take: (cf: Cf, from: readonly number[]) => number): void {
    const late = this.late;
    for (let i = 0; i < this.lateN; i++) {
      const w = late[i]!;
      late[i] = undefined!; // (the list keeps its storage, not the CFs)
      // fed from one lane while its other inputs are here: the policy takes it for a chain of
      // that lane, and a stencil's steps so offered (one input back, the other still in flight)
      // all went to one lane and the stencil ran on one worker for good (stencil_1d 1×2, 2 of 5
      // traced runs): such a CF waits for the fresh outputs' look, as before
      if (w.state !== WAITING || w.chained || !this.producers(w) || this.fromN < 2) continue;
      // no lane free: looked at again when a batch comes back (by itself: the input that batch
      // returns is no longer promised, its others may still be)
      this.offeringLate = true;
      const lane = take(w, this.fromLanes());
      this.offeringLate = false;
      if (lane < 0) this.lateDeferred.push(w);
    }
    this.lateN = 0;
  }

  /** The lanes of `cf`'s missing inputs into `from`; false when some has no producer in flight. */
  private producers(cf: Cf): boolean {
    this.fromN = 0;
    asking = this;
    return cf.everyPending(producedInFlight) && this.fromN > 0;
  }

  /** Whether pending key `k` is promised by a batch in flight; its lane joins `from` (through producedInFlight). */
  inFlight(k: DfKey): boolean {
    const p = this.promised.get(k);
    if (p === undefined) return false;
    const lane = p.lane!, from = this.from, n = this.fromN;
    for (let i = 0; i < n; i++) if (from[i] === lane) return true;
    from[n] = lane;
    this.fromN = n + 1;
    return true;
  }

  /** The lanes producers() found, in an array of their count. */
  private fromLanes(): readonly number[] {
    const n = this.fromN;
    const a = (this.fromOf[n] ??= new Array<number>(n).fill(0));
    for (let i = 0; i < n; i++) a[i] = this.from[i]!;
    return a;
  }

  /**
   * Feed requests for a batch's tasks, per producing lane (lane → quadruples). Each lane's array
   * is made at its size (counted first): pushed, a fed batch of a stencil grew them by copies,
   * 106 bytes a fragment (Task Bench stencil_1d 1×2). Int32Arrays: posted to the producer, an
   * array of numbers is cloned a tagged write per number (Task Bench stencil_1d 1×2 under
   * callgrind: the system thread's serializer 1–2 k instructions a fragment → 0.2 k).
   */
  static requests(tasks: readonly { fwd?: readonly { lane?: number; batch?: number; task: number; out: number }[] }[], to: number): Map<number, Int32Array> | null {
    const counts = laneCounts;
    let lanes = 0;
    for (let i = 0; i < tasks.length; i++) {
      const fwd = tasks[i]!.fwd;
      if (!fwd) continue;
      for (let j = 0; j < fwd.length; j++) {
        const l = fwd[j]!.lane;
        if (l === undefined) continue;
        while (counts.length <= l) counts.push(0);
        if (counts[l]!++ === 0) lanes++;
      }
    }
    if (lanes === 0) return null;
    const m = new Map<number, Int32Array>();
    for (let l = 0; l < counts.length; l++) {
      if (counts[l] === 0) continue;
      m.set(l, new Int32Array(4 * counts[l]!));
      counts[l] = 0; // from here on: where the lane's next quadruple goes
    }
    for (let i = 0; i < tasks.length; i++) {
      const fwd = tasks[i]!.fwd;
      if (!fwd) continue;
      for (let j = 0; j < fwd.length; j++) {
        const f = fwd[j]!;
        if (f.lane === undefined) continue;
        const q = m.get(f.lane)!;
        let at = counts[f.lane]!;
        q[at++] = f.batch!; q[at++] = f.task; q[at++] = f.out; q[at++] = to;
        counts[f.lane] = at;
      }
    }
    for (let l = 0; l < counts.length; l++) counts[l] = 0;
    return m;
  }
}

/** per lane, FeedBook.requests' count of quadruples, then the next free slot (zero between calls) */
const laneCounts: number[] = [];
