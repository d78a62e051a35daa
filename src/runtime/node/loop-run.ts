// Running a planned loop (loop-plan.ts): its steps go to the lanes as tasks, a window of
// iterations at a time, one batch per lane and window, every input an earlier step makes
// forwarded (in the batch, or fed by the producing lane's worker as fed batches are); the
// results are booked per batch — only the outputs that escape the loop reach the store, the
// rest are let go where they were read. No fragment, store entry or feed candidate per step:
// those stages are what the system thread's ~19 µs a fed CF went to (docs/benchmarks.md).
import type { CallSite, ForSite } from '../../program/compile.js';
import type { DfValue } from '../../ucode/value.js';
import { T_RAW } from '../../ucode/value.js';
import { ARG_IN, ARG_INT, ARG_OUT, ARG_VAL, type Forward, type Task, type WirePlan, type WireWindow } from '../exec/protocol.js';
import { rawFreed, rawLet, rawPosted } from '../exec/shm.js';
import { displayDf } from '../../core/dfkey.js';
import { affineAt, escapes, KEPT_SCAN_FLOOR, keptForms, KeyFrame, split, type LoopPlan } from './loop-plan.js';
import type { KeptKeys } from './store.js';
import type { Producer } from './batch.js';
import { Cf } from './fragment.js';
import { RunFault } from './fault.js';
import type { NodeState } from './state.js';
import type { LoopTrace } from './loop-trace.js';

/** What a planned loop needs of the runtime: batch numbers and sending. */
export interface PlanHost {
  /** a fresh batch number */
  batchId(): number;
  /** send `tasks` as batch `id` to lane `lane` (feed requests first, as a fed batch) */
  sendPlanned(lane: number, id: number, tasks: Task[], run: LoopRun, its: Int32Array, sites: Int32Array): void;
  /**
   * Whether lanes `lanes` build the steps themselves from a plan sent once (exec/plan-steps.ts):
   * worker lanes of a pool that feeds, in untraced runs; a fresh plan number then, else -1
   */
  rangePlan(lanes: readonly number[]): number;
  /** send the plan to lane `lane` (before its first window); false: that lane takes tasks only (the system lane) */
  sendPlan(lane: number, plan: WirePlan): boolean;
  /** send window `w` (batch `w.id`) to lane `lane`: its tasks' iterations and sites, and their ucodes */
  sendWindow(lane: number, w: WireWindow, run: LoopRun, its: Int32Array, sites: Int32Array, imps: readonly { imp: number }[]): void;
  /** batch `id` of lane `lane` makes these outputs that leave the loop (task and output in the batch): CFs waiting for them may be fed from it */
  promise(lane: number, id: number, out: ReadonlyMap<string, Producer>): void;
}

/** the largest window (MAX_BATCH in the policy): the position ring holds this many iterations past the depth */
const MAX_WINDOW = 512;

export class LoopRun {
  /** the next iteration to emit */
  private next: number;
  /** tasks booked so far (done at `total`) */
  private booked = 0;
  private readonly total: number;
  /** windows emitted and not yet booked whole, with their batches left */
  private readonly windowsLeft: number[] = [];
  private readonly windowOf = new Map<number, number>();
  private readonly site: ForSite;
  private readonly frame: KeyFrame;
  private readonly nSites: number;
  /** per iteration in the ring and site: the batch and task index that make it */
  private readonly ring: number;
  private readonly posBatch: Int32Array;
  private readonly posTask: Int32Array;
  /** the values read from the store for the first steps (the inputs before the loop), by step, site and argument */
  private readonly outside = new Map<string, DfValue>();
  /** every outside value is here (the loop's CF waited for those still to come, in the store) */
  private outsideDone = false;
  /** the CF number of the first step (the steps' numbers are reserved as a block) */
  private readonly firstCf: number;
  /** traced runs: writes the steps' records (loop-trace.ts) */
  tracer: LoopTrace | undefined;

  constructor(readonly loop: Cf, readonly plan: LoopPlan, private readonly st: NodeState, private readonly host: PlanHost) {
    this.site = loop.site as ForSite;
    this.next = plan.first;
    this.nSites = plan.sites.length;
    this.total = (plan.last - plan.first + 1) * this.nSites;
    this.frame = new KeyFrame(loop.env.slice(), st.size, st.self);
    this.ring = plan.depth + MAX_WINDOW + 1;
    this.posBatch = new Int32Array(this.ring * this.nSites);
    this.posTask = new Int32Array(this.ring * this.nSites);
    this.firstCf = st.reserveIds(this.total);
    this.kept = keptForms(plan);
  }

  /** the outputs the loop keeps inside, as the store records them spent by numbers */
  private readonly kept: ReturnType<typeof keptForms>;

  /** Whether every task was booked. */
  get done(): boolean {
    return this.booked === this.total;
  }

  /** Iterations sent and not yet booked whole. */
  get iterationsInFlight(): number {
    return this.next - this.plan.first - Math.floor(this.booked / this.nSites);
  }

  /** Windows in flight. */
  get inFlight(): number {
    return this.windowsLeft.length;
  }

  /** Whether every step was sent. */
  get emitted(): boolean {
    return this.next > this.plan.last;
  }

  /**
   * Read what the first steps take from before the loop, each read counted once in the store;
   * true once all of them are here (a value still to come wakes nobody: the loop's CF waits for
   * it, and the pump asks again at its next turn).
   */
  outsideReady(): boolean {
    if (this.outsideDone) return true;
    const p = this.plan, f = this.frame, loop = this.loop;
    let missing = 0;
    for (let t = p.first; t <= Math.min(p.last, p.first + p.depth - 1); t++) {
      f.env[this.site.varSlot] = t;
      for (let s = 0; s < this.nSites; s++) {
        const ps = p.sites[s]!;
        for (const inp of ps.inputs) {
          if (t - inp.from.d >= p.first) continue;
          const id = `${t}/${s}/${inp.arg}`;
          if (this.outside.has(id)) continue;
          const key = inp.ref.ref.at(f);
          if (loop.isPending(key)) { missing++; continue; }
          // a value that came for this read (it was pending): taken once
          const got = this.waitedFor.get(key);
          if (got !== undefined && got > 0) {
            this.waitedFor.set(key, got - 1);
            this.outside.set(id, loop.gotValue(key)!);
            continue;
          }
          const v = this.st.read(loop, key, this.st.self);
          if (v === undefined) { this.waitedFor.set(key, (this.waitedFor.get(key) ?? 0) + 1); missing++; continue; }
          this.outside.set(id, v);
        }
      }
    }
    if (missing > 0) return false;
    this.outsideDone = true;
    this.waitedFor.clear();
    return true;
  }

  /** keys the loop's CF waits for in the store, with the reads each wait stands for (one: the store serves a waiter once) */
  private readonly waitedFor = new Map<string, number>();

  /** the plan's number on the lanes that build its steps (-1: the steps go as tasks); undefined until the first window */
  private range: number | undefined;
  /** per site, its ucode (what a window's flight and buffers are counted by) */
  private siteImps: { imp: number }[] | undefined;

  /** The CF number of step `t` of site `s`. */
  cfOf(t: number, s: number): number {
    return this.firstCf + (t - this.plan.first) * this.nSites + s;
  }

  /**
   * Emit the next window of `w` iterations (one batch per lane that has sites). Call only once
   * outsideReady() said true.
   */
  emit(w: number): void {
    if (this.range === undefined) {
      const lanes: number[] = [];
      const spread = this.plan.spread ?? 0;
      if (spread > 0) for (let l = 0; l < spread; l++) lanes.push(l);
      else for (const ps of this.plan.sites) if (!lanes.includes(ps.lane)) lanes.push(ps.lane);
      // traced runs write each step as a CF when sent (loop-trace.ts): from the tasks
      this.range = this.tracer === undefined ? this.host.rangePlan(lanes) : -1;
      if (this.range >= 0 && !this.sendPlans(lanes)) this.range = -1;
    }
    // a spread loop's window is cut in blocks, one a lane: each as long as a window would be
    const spread = this.plan.spread ?? 0;
    const iters = spread > 0 ? Math.min(MAX_WINDOW, w * spread) : w;
    if (this.range >= 0) this.emitRange(iters); else this.emitTasks(iters);
  }

  /** A spread loop's lane of iteration `t` in the window `from`..`to` (blocks in lane order). */
  private blockLane(t: number, from: number, to: number): number {
    return Math.floor(((t - from) * this.plan.spread!) / (to - from + 1));
  }

  /** The lane of step `t` of site `s` in the window `from`..`to`. */
  private laneOf(t: number, s: number, from: number, to: number): number {
    return (this.plan.spread ?? 0) > 0 ? this.blockLane(t, from, to) : this.plan.sites[s]!.lane;
  }

  /** The plan as the lanes' workers build steps from it, to each lane with sites; false when a lane takes tasks only. */
  private sendPlans(lanes: readonly number[]): boolean {
    const p = this.plan, env = this.loop.env, varSlot = this.site.varSlot;
    const name = (r: { base: string; a: readonly number[]; b: readonly number[] }): { base: string; a: number[]; b: number[] } => ({ base: r.base, a: [...r.a], b: [...r.b] });
    const sites = p.sites.map((ps) => {
      const sargs = ps.site.args, kinds: number[] = [], a: number[] = [], b: number[] = [], vals: unknown[] = [], names: WirePlan['sites'][number]['names'] = [];
      let ii = 0, oo = 0;
      for (let i = 0; i < sargs.length; i++) {
        const x = sargs[i]!;
        a.push(0); b.push(0); vals.push(undefined);
        if (x.kind === 'val') {
          names.push(null);
          if (x.type === 'int') { const ab = split(x.expr.lin, env, varSlot)!; kinds.push(ARG_INT); a[i] = ab[0]; b[i] = ab[1]; }
          else { kinds.push(ARG_VAL); vals[i] = env[x.expr.plain!]; }
          continue;
        }
        if (x.kind === 'out') { kinds.push(ARG_OUT); names.push(name(ps.outs[oo++]!.ref)); continue; }
        kinds.push(ARG_IN);
        names.push(name(ps.inputs[ii++]!.ref));
      }
      const inputs: number[] = [];
      for (const inp of ps.inputs) inputs.push(inp.from.site, inp.from.out, inp.from.d);
      return { imp: ps.site.imp.index, lane: ps.lane, kinds, a, b, vals, inputs, readers: ps.readers.map((rd) => rd.flatMap((r) => [r.site, r.d])), names };
    });
    const plan: WirePlan = { plan: this.range!, first: p.first, last: p.last, depth: p.depth, firstCf: this.firstCf, sites };
    // spread: every site is on the lane the plan goes to (its windows are its blocks of iterations)
    for (const l of lanes) if (!this.host.sendPlan(l, (p.spread ?? 0) > 0 ? { ...plan, sites: sites.map((x) => ({ ...x, lane: l })) } : plan)) return false;
    this.siteImps = p.sites.map((ps) => ({ imp: ps.site.imp.index }));
    return true;
  }

  /**
   * The next window as a range: each lane's worker builds its steps from the plan (a few
   * numbers a window, whatever its length), and only the values the first steps read from
   * before the loop go with it.
   */
  private emitRange(w: number): void {
    const p = this.plan, n = this.nSites;
    const from = this.next, to = Math.min(p.last, from + Math.min(MAX_WINDOW, Math.max(1, w)) - 1);
    const ids: number[] = [];
    const lanes: number[] = [];
    for (let t = from; t <= to; t++) {
      for (let s = 0; s < n; s++) {
        const l = this.laneOf(t, s, from, to);
        while (ids.length <= l) ids.push(-1);
        if (ids[l]! < 0) { ids[l] = this.host.batchId(); lanes.push(l); }
      }
      if ((p.spread ?? 0) === 0) break; // each site on its lane: the first iteration says which
    }
    // the first steps' inputs from before the loop, by lane
    let outside: Map<number, { at: number[]; vals: DfValue[] }> | undefined;
    if (from < p.first + p.depth) {
      outside = new Map();
      for (let t = from; t <= Math.min(to, p.first + p.depth - 1); t++) {
        for (let s = 0; s < n; s++) {
          const ps = p.sites[s]!;
          for (const inp of ps.inputs) {
            if (t - inp.from.d >= p.first) continue;
            let o = outside.get(ps.lane);
            if (o === undefined) outside.set(ps.lane, o = { at: [], vals: [] });
            o.at.push(t, s, inp.arg);
            o.vals.push(this.outside.get(`${t}/${s}/${inp.arg}`)!);
          }
        }
      }
    }
    this.next = to + 1;
    if (this.next > p.last) this.outside.clear();
    this.windowsLeft.push(lanes.length);
    const win = this.windowsLeft.length - 1 + this.windowBase;
    const imps = this.siteImps!;
    for (const l of lanes) {
      // its steps: of its sites, or, spread, its block of iterations
      let m = 0, lo = -1, hi = -1;
      for (let t = from; t <= to; t++) for (let s = 0; s < n; s++) if (this.laneOf(t, s, from, to) === l) { m++; if (lo < 0) lo = t; hi = t; }
      const its = new Int32Array(m), sites = new Int32Array(m), ti: { imp: number }[] = new Array(m);
      let q = 0;
      for (let t = lo; t <= hi; t++) for (let s = 0; s < n; s++) if (this.laneOf(t, s, from, to) === l) { its[q] = t; sites[q] = s; ti[q++] = imps[s]!; }
      const id = ids[l]!, o = outside?.get(l);
      this.windowOf.set(id, win);
      this.host.sendWindow(l, { window: this.range!, id, first: lo, last: hi, ids, outside: o?.at, outsideVals: o?.vals, recycled: undefined }, this, its, sites, ti);
      if (this.next > p.last) this.promiseEscaping(l, id, its, sites);
    }
  }

  /**
   * How a window's tasks get their inputs, counted as the tasks built here would be (stats
   * handWorker, handSystem): a task with an input from a step of the loop is handed over by a
   * worker, one with only inputs from before it by this thread; `fed`: some input comes from
   * another batch (another lane's, or an earlier window's), fed by its producer's worker.
   */
  handoffs(its: Int32Array, sites: Int32Array): { worker: number; system: number; fed: boolean } {
    const p = this.plan, first = its.length > 0 ? its[0]! : 0;
    let worker = 0, system = 0, fed = false;
    for (let i = 0; i < its.length; i++) {
      const ps = p.sites[sites[i]!]!, inputs = ps.inputs;
      let inner = false, outer = false;
      for (let j = 0; j < inputs.length; j++) {
        const u = its[i]! - inputs[j]!.from.d;
        if (u < p.first) { outer = true; continue; }
        inner = true;
        if (u < first || p.sites[inputs[j]!.from.site]!.lane !== ps.lane) fed = true;
      }
      if (inner) worker++; else if (outer) system++;
    }
    return { worker, system, fed };
  }

  /** The next window as tasks, built here (traced runs, and lanes that take tasks only). */
  private emitTasks(w: number): void {
    const p = this.plan, n = this.nSites, lanesUsed = new Map<number, { id: number; tasks: Task[]; its: number[]; sites: number[] }>();
    const from = this.next, to = Math.min(p.last, from + Math.min(MAX_WINDOW, Math.max(1, w)) - 1);
    for (let t = from; t <= to; t++) {
      for (let s = 0; s < n; s++) {
        const lane = this.laneOf(t, s, from, to);
        if (!lanesUsed.has(lane)) lanesUsed.set(lane, { id: this.host.batchId(), tasks: [], its: [], sites: [] });
      }
      if ((p.spread ?? 0) === 0) break;
    }
    const f = this.frame, varSlot = this.site.varSlot, env = f.env;
    let cfNo = this.firstCf + (from - p.first) * n;
    for (let t = from; t <= to; t++) {
      env[varSlot] = t;
      const slot = ((t - p.first) % this.ring) * n;
      for (let s = 0; s < n; s++) {
        const ps = p.sites[s]!, site = ps.site, b = lanesUsed.get(this.laneOf(t, s, from, to))!;
        const sargs = site.args, m = sargs.length;
        const args = new Array<unknown>(m), keys = new Array<string>(m);
        let fwd: Forward[] | undefined;
        let ii = 0;
        for (let i = 0; i < m; i++) {
          const a = sargs[i]!;
          if (a.kind === 'val') { args[i] = a.type === 'int' ? affineAt(a.expr, env, varSlot, t) : env[a.expr.plain!]; keys[i] = ''; continue; }
          if (a.kind === 'out') { keys[i] = a.ref.at(f); args[i] = null; continue; }
          const inp = ps.inputs[ii++]!;
          keys[i] = inp.ref.ref.at(f);
          const u = t - inp.from.d;
          if (u < p.first) { args[i] = this.outside.get(`${t}/${s}/${i}`)!; continue; }
          const at = ((u - p.first) % this.ring) * n + inp.from.site;
          const batch = this.posBatch[at]!, task = this.posTask[at]!, lane = p.sites[inp.from.site]!.lane;
          args[i] = null;
          (fwd ??= []).push(batch === b.id ? { arg: i, task, out: inp.from.out, lane: undefined, batch: undefined } : { arg: i, task, out: inp.from.out, lane, batch });
        }
        this.posBatch[slot + s] = b.id;
        this.posTask[slot + s] = b.tasks.length;
        b.tasks.push({ cf: cfNo++, imp: site.imp.index, args, keys, fwd });
        b.its.push(t);
        b.sites.push(s);
      }
    }
    this.next = to + 1;
    if (this.next > p.last) { this.outside.clear(); }
    this.windowsLeft.push(lanesUsed.size);
    const win = this.windowsLeft.length - 1 + this.windowBase;
    for (const [lane, b] of lanesUsed) {
      this.windowOf.set(b.id, win);
      const its = Int32Array.from(b.its), sites = Int32Array.from(b.sites);
      this.host.sendPlanned(lane, b.id, b.tasks, this, its, sites);
      if (this.next > p.last) this.promiseEscaping(lane, b.id, its, sites);
    }
  }

  /**
   * The last window's outputs that leave the loop are promised as a fed batch's are: the CFs
   * after the loop that wait only for them (a last step written out, a check) go to a lane
   * while the window runs, fed by its worker. Else they became ready only once the window's
   * results had come back through this thread, and went out to lanes asleep by then.
   */
  private promiseEscaping(lane: number, id: number, its: Int32Array, sites: Int32Array): void {
    const p = this.plan, f = this.frame, env = f.env, varSlot = this.site.varSlot;
    let out: Map<string, Producer> | undefined;
    for (let q = 0; q < its.length; q++) {
      const t = its[q]!, s = sites[q]!, ps = p.sites[s]!;
      env[varSlot] = t;
      for (let k = 0; k < ps.outs.length; k++) {
        if (escapes(p, s, k, t) === -2) continue;
        (out ??= new Map()).set(ps.outs[k]!.ref.ref.at(f), { task: q, out: k, lane: undefined, batch: undefined });
      }
    }
    if (out !== undefined) this.host.promise(lane, id, out);
  }

  /** windows booked whole and dropped from the front of windowsLeft */
  private windowBase = 0;

  /**
   * Book batch `id`'s outputs: escaping ones posted to the store with what is left of their
   * counts, the others let go (the readers were forwarded them); throws a fault naming the step.
   * `fin`: when each task ended on its worker (traced runs: the outputs' time of computation).
   */
  book(id: number, its: Int32Array, sites: Int32Array, outs: readonly (readonly (DfValue | null)[])[], fin: ArrayLike<number> | undefined): void {
    const p = this.plan, st = this.st, tracer = this.tracer, f = this.frame, env = f.env, varSlot = this.site.varSlot;
    // untraced, the outputs kept inside go by numbers where no store entry stands for one (a
    // traced run names each in the trace: key by key)
    const kept = tracer === undefined ? this.watchKept(its, outs.length) : null;
    try {
      for (let i = 0; i < outs.length; i++) {
        const t = its[i]!, s = sites[i]!, ps = p.sites[s]!, o = outs[i]!, at = fin !== undefined ? fin[i]! : 0;
        const cf = this.cfOf(t, s);
        env[varSlot] = t;
        for (let k = 0; k < ps.outs.length; k++) {
          const v = o[k];
          // (keys spelled here, from the reference as the unplanned path would: the tasks may have been built on a worker)
          if (v === null || v === undefined) throw this.fault(`ucode ${ps.site.imp.symbol} did not set its output DF ${displayDf(ps.outs[k]!.ref.ref.at(f))} (Posting an unset value)`, t, s, cf);
          const left = escapes(p, s, k, t);
          if (left === -2) {
            // read only by the loop's steps, forwarded: posted and freed at once, as a store entry
            // whose readers were all served would be (the buffer waits for the batches reading it)
            if (v.t === T_RAW) { const raw = v.v as Uint8Array; rawPosted(raw); rawLet(raw); rawFreed(raw); }
            const form = this.kept.forms[s]![k];
            if (kept !== null && form !== null && form !== undefined && st.store.spentIn(form, t)) continue;
            const key = ps.outs[k]!.ref.ref.at(f);
            if (tracer !== undefined) tracer.computed(at, key, cf, v);
            this.spent(key, t, s, k, cf);
            continue;
          }
          st.post(ps.outs[k]!.ref.ref.at(f), st.self, v, left, this.standIn(t, s, cf), at);
        }
      }
    } finally {
      if (kept !== null) st.store.unwatchKept();
    }
    this.booked += outs.length;
    const win = this.windowOf.get(id)!;
    this.windowOf.delete(id);
    const w = win - this.windowBase;
    this.windowsLeft[w]!--;
    while (this.windowsLeft.length > 0 && this.windowsLeft[0] === 0) { this.windowsLeft.shift(); this.windowBase++; }
  }

  /**
   * The store watches the kept keys of the iterations from the batch's first on (`its`, booked
   * in any order: the earlier ones' are freed already) while `tasks` tasks are booked; null when
   * the loop keeps none. Its entries are read up to the outputs these tasks keep.
   */
  private watchKept(its: Int32Array, tasks: number): KeptKeys | null {
    const kept = this.kept.kept;
    if (kept === null) return null;
    let from = its[0]!;
    for (let i = 1; i < its.length; i++) if (its[i]! < from) from = its[i]!;
    kept.from = from;
    kept.last = this.plan.last;
    this.st.store.watchKept(kept, Math.max(KEPT_SCAN_FLOOR, Math.ceil(this.kept.per * tasks / this.nSites)));
    return kept;
  }

  /**
   * The store learns that output `k` of step `t` of site `s` (CF `id`) was made and read up:
   * a later read or post of it from outside the loop is then the fault it is unplanned. A
   * reader from outside already waiting for it is the request too many: unplanned, it was
   * served first and the loop's own reader came too late, so that reader is named.
   */
  private spent(key: string, t: number, s: number, k: number, id: number): void {
    let excess: string | undefined;
    try { excess = this.st.store.spent(key); } catch (e) { throw RunFault.blame(e, this.standIn(t, s, id)); }
    if (excess === undefined) return;
    const p = this.plan, n = this.nSites;
    let first: { site: number; d: number } | undefined;
    for (const r of p.sites[s]!.readers[k]!) if (t + r.d <= p.last && (first === undefined || r.d < first.d || (r.d === first.d && r.site < first.site))) first = r;
    const u = t + first!.d;
    throw this.fault(excess, u, first!.site, this.firstCf + (u - p.first) * n + first!.site);
  }

  /** The fragment of step `t` of site `s` (made only to name it: a fault, a post's writer). */
  standIn(t: number, s: number, id: number): Cf {
    const env = this.loop.env.slice();
    env[this.site.varSlot] = t;
    return new Cf(id, this.plan.sites[s]!.site as CallSite, env, this.loop.gid, t);
  }

  /** A fault of step `t` of site `s`, naming it. */
  fault(message: string, t: number, s: number, id: number): RunFault {
    return new RunFault(message, this.standIn(t, s, id));
  }

  /** Iterations whose steps read outputs of step `t` at the latest (what must be sent before `t` is booked). */
  readersUpTo(t: number): number {
    return Math.min(this.plan.last, t + this.plan.depth);
  }

  /** The next iteration to emit. */
  get nextIteration(): number {
    return this.next;
  }
}
