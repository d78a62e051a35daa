// A worker's side of feeding values across lanes: a CF whose inputs are made by CFs that other
// workers run (or will run) is sent before those exist, and the producers' workers send the
// values straight to its worker, so a step of dependent tasks on several workers does not wait
// for the system thread to wake, complete and examine in between.
//
// Ints and reals go through shared feed slots (slots.ts), other values as messages on the
// pair's port; either way the consumer's inbox count moves and a sleeping consumer is woken.
//
// Deadlock-free: a fed input always comes from a CF the system thread decided earlier, every
// lane runs its CFs in the order they were decided, and a worker waiting for a value keeps
// answering feed requests — so the earliest-decided unfinished CF can always run.
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { DfValue } from '../../ucode/value.js';
import { feedsFlag, inboxFlag, processedFlag, seenFlag, wakeLane } from './protocol.js';
import { FeedSlots } from './slots.js';

/**
 * The exchange that drains its slots now, and the lane it drains: what keepDrained keeps for.
 * One function for every exchange, not a closure each: the rehearsal's exchange and the run's are
 * different objects, and a closure of one (per lane, made on first use) met in the span
 * deoptimised `receive` and `take` on both workers at the span's start ('wrong map' on the
 * closures' array, then 'wrong call target'; `take` re-compiled in the span, 4–194 ms of TurboFan
 * job each, --trace-opt --trace-deopt; docs/benchmarks.md, "The span's deoptimisations at METG sizes").
 */
let draining: Exchange | null = null;
let drainingFrom = 0;
function keepDrained(batch: number, task: number, out: number, v: DfValue | null): void {
  draining!.keep(drainingFrom, batch, task, out, v);
}

/** A fed value as it travels between workers. */
interface FedValue { b: number; t: number; o: number; from: number; v: DfValue | null }

export class Exchange {
  /** outputs of this worker's batches (the running one filling up), until the system thread processed them */
  private readonly kept = new Map<number, (DfValue | null)[][]>();
  /**
   * requests for tasks that have not run yet, by batch and then by task: [out, lane, …]. By task
   * an array, not a Map keyed by task: the running batch's (`cur`) is looked up by index before
   * each task (prepare), where a Map's get and delete were two builtins more on the path after a
   * kernel, cold (docs/benchmarks.md, "The hand-off's clocks and look-ups after a kernel")
   */
  private readonly wanted = new Map<number, (number[] | undefined)[]>();
  /** the running batch's requests by task (its entry in `wanted`, if any) */
  private cur: (number[] | undefined)[] | undefined;
  /**
   * The task prepared last, and whether requests were made to wait (`want`) since: for that task,
   * only then can one wait for it, and `ran` look it up after it ran (most tasks: none did)
   */
  private prepBatch = -1;
  private prepTask = -1;
  private waitedSince = false;
  /** values fed here and not yet used, with how many uses are still due */
  private readonly got = new Map<string, { v: DfValue | null; n: number }>();
  private feedsSeen = 0;
  /** whether take()'s last miss still stands, the inbox count then, and what it asked for */
  private missed = false;
  private missSeen = 0;
  private missLane = -1;
  private missBatch = -1;
  private missTask = -1;
  private missOut = -1;
  private inboxSeen = 0;
  /** values taken from the feed slots and from the ports since the start (with inboxSeen: whether a message is due) */
  private fromSlots = 0;
  private fromPorts = 0;
  /** the batch running (its outputs fill up as its tasks run) */
  private current: (DfValue | null)[][] | undefined;
  private currentId = -1;
  /** the requests for the task about to run, taken out of `wanted` before it runs (prepare), and which task */
  private due: number[] | undefined;
  private dueBatch = -1;
  private dueTask = -1;
  /** take()'s value while it receives: the one it waits for, handed over without the map (see keep) */
  private wantLane = -1;
  private wantBatch = -1;
  private wantTask = -1;
  private wantOut = -1;
  private hit = false;
  private hitValue: DfValue | null = null;
  private readonly FEEDS: number;
  private readonly INBOX: number;
  private readonly PROCESSED: number;
  private readonly SEEN: number;

  constructor(
    private readonly flags: Int32Array,
    private readonly me: number,
    private readonly lanes: number,
    private readonly ctl: MessagePort,
    private readonly peers: (MessagePort | null)[],
    private readonly slots?: FeedSlots,
  ) {
    this.FEEDS = feedsFlag(lanes, me);
    this.INBOX = inboxFlag(lanes, me);
    this.PROCESSED = processedFlag(lanes, me);
    this.SEEN = seenFlag(lanes, me);
  }

  /** Batch `id` starts; `outs` fills as its tasks run. */
  begin(id: number, outs: (DfValue | null)[][]): void {
    this.release();
    // the batch before has run: every request for its tasks was answered as they ran
    if (this.currentId >= 0) this.wanted.delete(this.currentId);
    this.kept.set(id, outs);
    this.current = outs;
    this.currentId = id;
    this.cur = this.wanted.get(id);
  }

  /**
   * Task `task` of the batch running is about to run: the requests already waiting for it are
   * looked up now, so that when it has run (`ran`) its values go out first, before anything
   * else touches memory. On this host a thread's code and data come back cold after a kernel of
   * a millisecond, and every step between a producer's end and its values leaving costs
   * microseconds (docs/benchmarks.md, "The hand-off between lanes, split on this machine").
   */
  prepare(id: number, task: number): void {
    this.waitedSince = false;
    if (this.due !== undefined) this.undue();
    // (a task of another batch than the running one is not looked up: ran does)
    this.prepBatch = id === this.currentId ? id : -1;
    this.prepTask = task;
    const a = this.cur;
    if (id !== this.currentId || a === undefined) return;
    const w = a[task];
    if (w === undefined) return;
    a[task] = undefined;
    this.due = w;
    this.dueBatch = id;
    this.dueTask = task;
  }

  /** Requests taken out for a task that did not run after all (its ucode failed) wait again. */
  private undue(): void {
    if (this.due === undefined) return;
    this.want(this.dueBatch, this.dueTask, this.due);
    this.due = undefined;
  }

  /** Task `task` of batch `id` ran: answer the requests that waited for it. */
  ran(id: number, task: number): void {
    const due = this.due;
    if (due !== undefined && id === this.dueBatch && task === this.dueTask && id === this.currentId) {
      this.due = undefined;
      const outs = this.current![task]!;
      for (let i = 0; i < due.length; i += 2) this.send(due[i + 1]!, id, task, due[i]!, outs[due[i]!] ?? null);
    } else if (due !== undefined) this.undue();
    // serve and undue called only when there is something for them: each call is one more piece
    // of code, cold after the kernel, between its end and the next start (docs/benchmarks.md,
    // "The hand-off's clocks and look-ups after a kernel")
    if (Atomics.load(this.flags, this.FEEDS) !== this.feedsSeen) this.serve();
    // requests that came for it while it ran (the ones before were taken by prepare, if it was prepared)
    const since = this.waitedSince;
    this.waitedSince = false;
    if ((!since && id === this.prepBatch && task === this.prepTask) || this.wanted.size === 0) return;
    const a = id === this.currentId ? this.cur : this.wanted.get(id);
    const w = a?.[task];
    if (w === undefined) return;
    a![task] = undefined;
    const outs = this.kept.get(id)![task]!;
    for (let i = 0; i < w.length; i += 2) this.send(w[i + 1]!, id, task, w[i]!, outs[w[i]!] ?? null);
  }

  /** Something arrived that this worker has not looked at (for the check before it sleeps). */
  pending(): boolean {
    return Atomics.load(this.flags, this.FEEDS) !== this.feedsSeen || Atomics.load(this.flags, this.INBOX) !== this.inboxSeen;
  }

  /** Feed requests arrived that this worker has not answered (for the check before a lane without a batch sleeps). */
  requested(): boolean {
    return Atomics.load(this.flags, this.FEEDS) !== this.feedsSeen;
  }

  /** Answer the feed requests that arrived. */
  serve(): void {
    const n = Atomics.load(this.flags, this.FEEDS);
    if (n === this.feedsSeen) return;
    this.feedsSeen = n;
    for (let m = receiveMessageOnPort(this.ctl); m !== undefined; m = receiveMessageOnPort(this.ctl)) {
      const q = m.message as number[];
      for (let i = 0; i < q.length; i += 4) {
        const id = q[i]!, task = q[i + 1]!, out = q[i + 2]!, to = q[i + 3]!;
        const outs = this.kept.get(id);
        const o = outs?.[task];
        if (o !== undefined) { this.send(to, id, task, out, o[out] ?? null); continue; }
        this.want(id, task, [out, to]);
      }
    }
  }

  /**
   * Output `out` of task `task` of batch `batch` (this lane's, not run yet) goes to lane `lane`
   * as the task ends: a planned loop's reader in another batch (plan-steps.ts), promised by
   * the producer itself instead of a feed request of the system thread.
   */
  promise(batch: number, task: number, out: number, lane: number): void {
    this.want(batch, task, [out, lane]);
  }

  /** Requests `w` ([out, lane, …]) wait for task `task` of batch `batch` to run. */
  private want(batch: number, task: number, w: number[]): void {
    this.waitedSince = true;
    let a = this.wanted.get(batch);
    if (a === undefined) {
      a = [];
      this.wanted.set(batch, a);
      if (batch === this.currentId) this.cur = a;
    }
    const had = a[task];
    if (had) for (const x of w) had.push(x); else a[task] = w;
  }

  /** The value fed for output `out` of task `task` of batch `batch` on lane `lane`, if it came. */
  take(lane: number, batch: number, task: number, out: number): DfValue | null | undefined {
    // a spinning consumer asks again and again: while nothing arrived since its last miss, the
    // answer is the same, without a key string made per try (Task Bench stencil_1d 1×2, C++,
    // 4 000 steps at 2^13, load 9: the workers' scavenges per second of fed waits 31–72 → 23–27)
    const seen = Atomics.load(this.flags, this.INBOX);
    if (this.missed && seen === this.missSeen && lane === this.missLane && batch === this.missBatch && task === this.missTask && out === this.missOut) return undefined;
    // the value that came while this lane ran is most often the next one in its producer's ring:
    // taken from there, without a pass over every ring and the keeping of what it holds (the
    // first steps of a lane whose own task ended last, on code gone cold in the task)
    const slots = this.slots;
    if (slots !== undefined && seen !== this.inboxSeen && lane !== this.me) {
      const v = slots.takeHead(lane, batch, task, out);
      if (v !== undefined) {
        this.fromSlots = (this.fromSlots + 1) | 0;
        // (as receive: a lane waiting for this one's next value learns that this one is on a CPU)
        Atomics.store(this.flags, this.SEEN, seen);
        this.missed = false;
        return v;
      }
    }
    // what arrives for this very input is handed over as it is drained, without a key or the map
    // (keep): the first steps a consumer takes when its value comes, on code gone cold meanwhile
    this.wantLane = lane; this.wantBatch = batch; this.wantTask = task; this.wantOut = out;
    this.receive();
    this.wantLane = -1;
    if (this.hit) { this.hit = false; const v = this.hitValue; this.hitValue = null; return v; }
    const k = `${lane}:${batch}:${task}:${out}`;
    const g = this.got.get(k);
    if (g === undefined) {
      // (the count read before receive(): a value that arrives after it moves the count)
      this.missed = true; this.missSeen = seen; this.missLane = lane; this.missBatch = batch; this.missTask = task; this.missOut = out;
      return undefined;
    }
    if (--g.n === 0) this.got.delete(k);
    return g.v;
  }

  private receive(): void {
    const n = Atomics.load(this.flags, this.INBOX);
    if (n === this.inboxSeen) return;
    this.inboxSeen = n;
    // a lane waiting for this one's next value learns that this one is on a CPU (protocol.ts starved)
    Atomics.store(this.flags, this.SEEN, n);
    const slots = this.slots;
    for (let from = 0; from < this.peers.length; from++) {
      const p = this.peers[from];
      if (p === null || p === undefined) continue;
      if (slots) {
        draining = this;
        drainingFrom = from;
        this.fromSlots = (this.fromSlots + slots.drain(from, keepDrained)) | 0;
        draining = null;
      }
    }
    // the ports only while the count says a value came as a message (each value fed here moved
    // it by one, after its slot or message was written): polling every peer's port cost each
    // value fed through the slots a few microseconds more, cold, on its way to its consumer
    if (((n - this.fromSlots - this.fromPorts) | 0) <= 0) return;
    for (let from = 0; from < this.peers.length; from++) {
      const p = this.peers[from];
      if (p === null || p === undefined) continue;
      for (let m = receiveMessageOnPort(p); m !== undefined; m = receiveMessageOnPort(p)) {
        const f = m.message as FedValue;
        this.fromPorts = (this.fromPorts + 1) | 0;
        this.keep(f.from, f.b, f.t, f.o, f.v);
      }
    }
  }

  /** (called by keepDrained too) */
  keep(lane: number, batch: number, task: number, out: number, v: DfValue | null): void {
    this.missed = false; // (a value this worker fed itself moves no count)
    if (!this.hit && lane === this.wantLane && batch === this.wantBatch && task === this.wantTask && out === this.wantOut) {
      this.hit = true;
      this.hitValue = v;
      return;
    }
    const k = `${lane}:${batch}:${task}:${out}`;
    const g = this.got.get(k);
    if (g) g.n++; else this.got.set(k, { v, n: 1 });
  }

  private send(to: number, batch: number, task: number, out: number, v: DfValue | null): void {
    if (to === this.me) { this.keep(to, batch, task, out, v); return; }
    if (this.slots === undefined || !FeedSlots.fits(v) || !this.slots.put(to, batch, task, out, v)) {
      const msg: FedValue = { b: batch, t: task, o: out, from: this.me, v };
      this.peers[to]!.postMessage(msg);
    }
    Atomics.add(this.flags, inboxFlag(this.lanes, to), 1);
    if (wakeLane(this.flags, to)) this.woke++;
  }

  /** Visit every value this exchange holds: outputs kept to feed other lanes, values fed here. */
  forEachHeld(f: (v: DfValue | null | undefined) => void): void {
    for (const outs of this.kept.values()) for (const o of outs) if (o !== undefined) for (const v of o) f(v);
    for (const g of this.got.values()) f(g.v);
  }

  /** Sleeping lanes this worker woke with values it fed them (the worker reports and resets it). */
  woke = 0;

  /**
   * Forget the outputs of batches whose results the system thread processed: it names no
   * processed batch in a request it sends later, and those it sent before are answered first.
   */
  private release(): void {
    if (this.kept.size === 0) return;
    const done = Atomics.load(this.flags, this.PROCESSED);
    this.serve();
    for (const id of this.kept.keys()) {
      if (id > done) break;
      this.kept.delete(id);
    }
  }
}
