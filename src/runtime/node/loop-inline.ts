// A planned loop run on the system thread (loop-plan.ts's plan, with no worker lane): where the
// runtime runs a loop's tiny CFs inline one by one (one lane, or several while no worker is up),
// each step costs a fragment, a store entry, an examination and a run-queue round. Here the
// steps run in the order unrolling would run them, each ucode called at once with its inputs
// taken from the earlier steps' outputs kept in a ring, the outputs that leave the loop posted to
// the store as they are let go. No state outlives a call: a run that stops (the turn's time is
// up, or the inline rule no longer holds for a code) hands the outputs its remaining steps read
// to the store, with the counts those reads take, and moves the loop's counter on; the loop then
// continues as any loop does — unrolled, or planned again from there.
import type { CallSite, ForSite } from '../../program/compile.js';
import type { CDfRef } from '../../program/expr.js';
import { T_RAW, type DfValue } from '../../ucode/value.js';
import type { Task } from '../exec/protocol.js';
import { rawFreed, rawHeld, rawLet, rawPosted } from '../exec/shm.js';
import { displayDf } from '../../core/dfkey.js';
import { KEPT_SCAN_FLOOR, keptForms, KeyFrame, planLoop, split, type LoopPlan } from './loop-plan.js';
import type { KeptForm, KeptKeys } from './store.js';
import { Cf } from './fragment.js';
import { RunFault } from './fault.js';
import type { NodeState } from './state.js';
import type { DirectForm } from '../../ucode/cpp/native.js';
import { LP_CALLS, LP_S, LP_STATUS, LP_T, LP_TICK, LP_TIMED, LP_TIMES, ESCAPING_RING, nativeLoop, STOP_OTHER, STOP_TIME, type NativeLoop } from './loop-native.js';

/** What running a loop's steps here needs of the runtime. */
export interface InlineHost {
  /** whether CFs of call site `site` run on this thread now (the runtime's inline rule), `cf` one of them */
  runsHere(site: CallSite, cf: Cf): boolean;
  /** run task `t` of call site `site` here, measured as an inline CF is; its outputs, or a RunFault naming `cf()` */
  call(site: CallSite, t: Task, cf: () => Cf): (DfValue | null)[];
  /** the pump's turn is over (the clock is read every few calls) */
  timeUp(): boolean;
  /** counts the measurements of codes: the inline rule's answer changes only with them during a run */
  measured(): number;
  /** how the ucodes called here name their DFs' keys (numbers: a planned step's outputs); null: as before */
  nameKeys(nameOf: ((key: string | number) => string) | null): void;
  /** the direct C++ form of site `site`'s code on this thread, if it has one */
  direct(site: CallSite): DirectForm | undefined;
  /** whether `site`'s calls are timed 1 in 16 now (not each, nor profiled): they may be stepped natively */
  sampled(site: CallSite): boolean;
  /**
   * step a planned loop natively (loop-native.ts) from step (t, 0) to (last, n - 1) at most, as
   * `call` runs a step; `tick[0]` in and out the runtime's count of inline calls; a fault a
   * RunFault naming `failed()`'s step; `onTimed()` after an iteration with timed calls (false:
   * stop after it)
   */
  stepOn(buffer: ArrayBuffer, from: number, t: number, last: number, step: () => void, nameOf: (param: string | number) => string, tick: Int32Array, failed: () => [CallSite, Cf], onTimed: () => boolean): void;
  /** the step numbered `id` of site `site` runs now (its ucode asks its context) */
  enter(id: number, site: CallSite): void;
  /** `calls` natively stepped calls of `site` ran, the last of them timed `ns` (-1: none timed) */
  stepped(site: CallSite, calls: number, ns: number): void;
}

/** A site of the plan, prepared for calling: where each argument comes from. */
interface Prepared {
  readonly site: CallSite;
  /** per argument: 0 a value, 1 an input, 2 an output */
  readonly kinds: Int8Array;
  /** value arguments: an int a·t + b (`ints`), or the value itself */
  readonly vals: unknown[];
  readonly ints: (readonly [number, number] | null)[];
  /** input arguments by argument: the producer (site, output, distance), and the reference (read before the loop) */
  readonly from: ({ site: number; out: number; d: number; ref: CDfRef } | null)[];
  /** output arguments in order of the outputs */
  readonly outArgs: readonly number[];
  readonly outRefs: readonly CDfRef[];
  /** the task handed to the ucode, reused step after step (the call is synchronous) */
  readonly task: Task;
}

/**
 * What `run` did: not planned here (the caller goes on as before); ran to the loop's end; stopped
 * at the turn's end (the loop goes on at the next turn); stopped because a code no longer runs
 * here (the loop goes on unrolled).
 */
export const NOT_PLANNED = 0, FINISHED = 1, TIME_UP = 2, NOT_HERE = 3;
export type InlineOutcome = typeof NOT_PLANNED | typeof FINISHED | typeof TIME_UP | typeof NOT_HERE;

export class InlineLoops {
  /** loops the plan refused (never asked again: the reasons do not change as the loop runs) */
  private readonly refused = new WeakSet<Cf>();
  /** per loop, its plan (from the iteration it was first planned at), prepared sites and the arrays its turns reuse */
  private readonly plans = new WeakMap<Cf, Planned>();
  /** the step running now, for who-am-I questions of its ucode (running()): loop, iteration, site, CF number */
  private curLoop: Cf | null = null;
  private curT = 0;
  private curS = 0;
  private curId = -1;
  /** names the step running now (made once: a closure a step would be an allocation a step) */
  private readonly who = (): Cf => standIn(this.curLoop!, this.curT, this.curS, this.curId);
  /** the loop whose turn runs now and its frame: what spells a step's output key when asked (keyAt) */
  private curPlanned: Planned | null = null;
  private frame: KeyFrame | null = null;
  /**
   * Names a ucode's DF: a planned step's outputs are numbers (their ring slot and output: tokenKey),
   * spelled only if the ucode asks for a name; other DFs are keys.
   */
  private readonly nameOf = (k: string | number): string => displayDf(typeof k === 'number' ? this.tokenKey(k) : k);
  constructor(private readonly st: NodeState, private readonly host: InlineHost) {}

  /** The stand-in of the step numbered `id` if it is running now (its ucode asks who it is). */
  runningStep(id: number): Cf | undefined {
    return this.curLoop !== null && this.curId === id ? this.who() : undefined;
  }

  /**
   * Run loop `loop` (begun, unrolled up to its counter, where its next iterations would run now)
   * planned on this thread from its counter on, until its end or until it must stop.
   */
  run(loop: Cf): InlineOutcome {
    if (this.refused.has(loop)) return NOT_PLANNED;
    let p = this.plans.get(loop);
    if (p === undefined) {
      // (two lanes asked for: the plan's lane numbers are not used here)
      const plan = planLoop(loop.site as ForSite, loop.env, loop.counter, loop.counterEnd, 2);
      if (typeof plan === 'string') {
        if (process.env.LUNA_LOOP_PLANS_WHY === '1') process.stderr.write(`luna: loop ${loop.site.label} not planned inline: ${plan}\n`);
        this.refused.add(loop);
        return NOT_PLANNED;
      }
      this.plans.set(loop, p = planned(plan, loop));
    }
    const { plan, sites, firsts, vals, its } = p;
    const from = loop.counter, last = loop.counterEnd, n = sites.length;
    // every site's code runs here now (the rule reads the code's figures: one CF stands for all of a site's)
    for (let s = 0; s < n; s++) firsts[s] = standIn(loop, from, s, -1);
    for (let s = 0; s < n; s++) if (!this.host.runsHere(sites[s]!.site, firsts[s]!)) return NOT_PLANNED;
    let seen = this.host.measured();
    const f = new KeyFrame(loop.env.slice(), this.st.size, this.st.self), env = f.env, varSlot = (loop.site as ForSite).varSlot;
    // what the first steps read from before `from` must be here: a step that would wait is left
    // to the unrolled path, which parks it in its place in the order
    const depth = plan.depth;
    for (let t = from; t <= Math.min(last, from + depth - 1); t++) {
      env[varSlot] = t;
      for (let s = 0; s < n; s++) {
        const fr = sites[s]!.from;
        for (let i = 0; i < fr.length; i++) { const x = fr[i]; if (x !== null && x !== undefined && t - x.d < from && !this.st.store.holds(x.ref.at(f))) return NOT_PLANNED; }
      }
    }
    // the ring (planned): outputs of the last depth + 1 iterations, and which iteration each slot holds
    const ring = depth + 1, W = p.width;
    for (let j = 0; j < vals.length; j++) vals[j] = null;
    const held: DfValue[] = [];
    let t = from, s0 = 0;
    this.beginTurn(p, f, from, last);
    try {
      for (; t <= last; t++) {
        env[varSlot] = t;
        let slot = ((t - from) % ring) * n;
        its[(t - from) % ring] = t;
        // the inline rule again, before the iteration (its figures change as calls are measured):
        // a stop leaves whole iterations to the unrolled path
        if (this.host.measured() !== seen) {
          seen = this.host.measured();
          for (let s = 0; s < n; s++) if (!this.host.runsHere(sites[s]!.site, firsts[s]!)) return this.stop(loop, p, t, vals, from, NOT_HERE);
        }
        // C++ steps of int and real values: stepped natively from here while they can be
        if (p.native !== null && t - from >= depth) {
          const u = this.stepNatively(loop, p, f, from, t);
          if (u >= 0) {
            // (t moves on too: the turn's steps, counted at its end, bound the next turns' reads of the store)
            if (this.stopped === STOP_TIME) { t = u; return this.stop(loop, p, u, vals, from, TIME_UP); }
            if (this.resume === 0) { t = u - 1; continue; }
            // iteration u's sites before `resume` ran natively: it goes on here
            t = u; env[varSlot] = t; slot = ((t - from) % ring) * n; s0 = this.resume;
          }
        }
        for (let s = s0; s < n; s++) {
          const ps = sites[s]!, task = ps.task, args = task.args, tk = task.keys, kinds = ps.kinds;
          // (keys are strings or numbers to the ucode's call: a step's outputs are numbers, tokenKey)
          const tks = tk as unknown as (string | number)[];
          let o = 0;
          for (let i = 0; i < kinds.length; i++) {
            const k = kinds[i]!;
            if (k === 0) { const ab = ps.ints[i]; args[i] = ab !== null && ab !== undefined ? (ab[0] * t + ab[1]) | 0 : ps.vals[i]; continue; }
            if (k === 2) { tks[i] = (slot + s) * W + o++; continue; }
            const x = ps.from[i]!, u = t - x.d;
            if (u >= from) {
              const at = ((u - from) % ring) * n + x.site;
              args[i] = vals[at]![x.out]!;
              tks[i] = at * W + x.out;
              continue;
            }
            // from before `from`: read from the store, one request, as the unrolled step's read
            const key = x.ref.at(f);
            let v: DfValue | undefined;
            try { v = this.st.store.read(key, standIn(loop, t, s, -1)); } catch (e) { throw RunFault.blame(e, standIn(loop, t, s, -1)); }
            if (v === undefined) throw new Error(`internal: ${displayDf(key)} was held and is not`);
            if (v.t === T_RAW) { rawHeld(v.v as Uint8Array); held.push(v); }
            args[i] = v;
            tk[i] = key;
          }
          const id = this.st.reserveIds(1);
          task.cf = id;
          this.curLoop = loop; this.curT = t; this.curS = s; this.curId = id;
          const out = this.host.call(ps.site, task, this.who);
          for (let k = 0; k < out.length; k++) {
            const v = out[k];
            if (v === null || v === undefined) throw new RunFault(`ucode ${ps.site.imp.symbol} did not set its output DF ${displayDf(this.keyAt(p, t, s, k))} (Posting an unset value)`, standIn(loop, t, s, id));
          }
          vals[slot + s] = out;
        }
        s0 = 0;
        if (held.length > 0) { for (const v of held) rawLet(v.v as Uint8Array); held.length = 0; }
        // the iteration `depth` back leaves the ring: every step inside that reads it has run
        if (t - depth >= from) this.letGo(loop, p, t - depth, vals, from, last + 1);
        if (t < last && this.host.timeUp()) return this.stop(loop, p, t + 1, vals, from, TIME_UP);
      }
      // the end: the last iterations' outputs go (read by every step inside), the loop is done
      for (let u = Math.max(from, last - depth + 1); u <= last; u++) this.letGo(loop, p, u, vals, from, last + 1);
    } finally {
      this.curLoop = null;
      for (const v of held) rawLet(v.v as Uint8Array);
      this.endTurn(p, t - from);
    }
    loop.counter = last + 1;
    this.st.unrolled(loop);
    this.st.finish(loop);
    return FINISHED;
  }

  /** the way the last natively stepped run stopped (loop-native.ts STOP_*), and the site its last iteration goes on at in JavaScript (0: none) */
  private stopped = 0;
  private resume = 0;
  /** the natively stepped run in progress: its loop's buffer, and its first step's number */
  private curNative: NativeLoop | null = null;
  private curFirst = 0;
  /** makes the natively stepped step running now the one a who-am-I question or a context names */
  private readonly sync = (): void => {
    const H = this.curNative!.H;
    this.curT = H[LP_T]!; this.curS = H[LP_S]!; this.curId = this.curFirst + H[LP_CALLS]!;
    this.host.enter(this.curId, this.curPlanned!.sites[this.curS]!.site);
  };
  /** the display name of the DF of parameter `param` of the natively stepped step running now */
  private readonly nameOfParam = (param: string | number): string => {
    this.sync();
    const p = this.curPlanned!, ps = p.sites[this.curS]!, f = this.frame!, i = Number(param);
    const o = ps.outArgs.indexOf(i);
    if (o >= 0) return displayDf(this.keyAt(p, this.curT, this.curS, o));
    const env = f.env, was = env[p.varSlot];
    env[p.varSlot] = this.curT;
    try {
      const x = ps.from[i];
      return displayDf(x !== null && x !== undefined ? x.ref.at(f) : String(ps.task.args[i]));
    } finally { env[p.varSlot] = was; }
  };
  /**
   * An iteration stepped natively had timed calls: they are measured now, and the inline rule
   * asked again, as before a JavaScript iteration after a measurement (false: stepping stops
   * after this iteration, and the loop's next iteration finds the rule changed). An error here
   * is the runtime's, kept for after the addon returns (`timedError`).
   */
  private readonly onTimed = (): boolean => {
    try {
      const p = this.curPlanned!, H = this.curNative!.H, sites = p.sites, timed = H[LP_TIMED]!;
      for (let j = 0; j < timed; j++) {
        const s = H[LP_TIMES + 2 * j]!;
        this.host.stepped(sites[s]!.site, 1, H[LP_TIMES + 2 * j + 1]!);
        p.counted![s]!++;
      }
      for (let s = 0; s < sites.length; s++) if (!this.host.runsHere(sites[s]!.site, p.firsts[s]!)) return false;
      return true;
    } catch (e) { this.timedError = e; return false; }
  };
  private timedError: unknown = undefined;
  private readonly failedStep = (): [CallSite, Cf] => {
    const H = this.curNative!.H, s = H[LP_S]!;
    return [this.curPlanned!.sites[s]!.site, standIn(this.curLoop!, H[LP_T]!, s, this.curFirst + H[LP_CALLS]!)];
  };

  /**
   * Steps (t, 0) on natively (loop-native.ts), as far as they go: the iteration to go on at in
   * JavaScript, with `stopped` and `resume` saying why and where (-1: not stepped now: a site's
   * calls are all timed yet, or a value in the ring is neither int nor real). The stepped
   * iterations' outputs are taken into the ring (their keys unspelled, as a JavaScript step's)
   * and the iterations `depth` back let go, as the JavaScript steps do.
   */
  private stepNatively(loop: Cf, p: Planned, f: KeyFrame, from: number, t: number): number {
    const sites = p.sites, n = sites.length, depth = p.plan.depth, last = loop.counterEnd;
    let nl = p.native;
    if (nl === undefined) {
      // The addon's ring keeps the last depth + 1 iterations, all that the steps read. An output
      // that leaves the loop from every iteration (its count beyond its readers inside, or
      // unlimited) is posted from it after the run: such a loop gets a ring of ESCAPING_RING
      // iterations and runs no longer than that, or a later step would have overwritten the value
      // (near the loop's end outputs leave too, from iterations still in the ring).
      p.escapes = p.plan.sites.some((ps) => ps.rules.some((rule, k) => rule < 0 || rule !== ps.readers[k]!.length));
      const forms = sites.map((ps) => this.host.direct(ps.site));
      nl = p.native = nativeLoop(sites, p.escapes ? Math.max(depth + 1, ESCAPING_RING) : depth + 1, forms);
      if (nl === null) return -1;
      p.direct = forms as DirectForm[];
      p.tick = nl.H.subarray(LP_TICK, LP_TICK + 1);
      p.counted = new Int32Array(n);
    }
    if (nl === null) return -1;
    for (let s = 0; s < n; s++) if (!this.host.sampled(sites[s]!.site)) return -1;
    for (let u = t - depth; u < t; u++) if (!nl.put(u, from, p.vals, depth + 1)) return -1;
    const runLast = p.escapes ? Math.min(last, t + nl.ring - 1) : last;
    const H = nl.H, first = this.st.reserveIds(0), counted = p.counted!;
    counted.fill(0);
    this.curNative = nl; this.curFirst = first; this.curLoop = loop;
    try {
      this.host.stepOn(nl.buf, from, t, runLast, this.sync, this.nameOfParam, p.tick!, this.failedStep, this.onTimed);
    } catch (e) {
      // the steps called count, the failing one too, as a JavaScript step counts before its call
      const tf = H[LP_T]!, sf = H[LP_S]!;
      for (let s = 0; s < n; s++) { const k = tf - t + (s <= sf ? 1 : 0) - counted[s]!; if (k > 0) this.host.stepped(sites[s]!.site, k, -1); }
      throw e;
    } finally { this.curNative = null; }
    if (this.timedError !== undefined) { const e = this.timedError; this.timedError = undefined; throw e; }
    const calls = H[LP_CALLS]!, status = H[LP_STATUS]!, tEnd = H[LP_T]!, sEnd = H[LP_S]!;
    this.st.reserveIds(calls);
    this.stopped = status;
    // whole iterations t … uEnd, and with a hand-back the sites of tEnd up to sEnd
    const uEnd = status === STOP_OTHER ? tEnd - 1 : tEnd;
    const vals = p.vals, its = p.its, ring = depth + 1;
    // the calls counted (less those onTimed counted), the sampled ones of the last iteration
    // that onTimed did not take measured, a site at a time
    const timed = H[LP_TIMED]!;
    for (let s = 0; s < n; s++) {
      let ns = -1;
      for (let j = 0; j < timed; j++) if (H[LP_TIMES + 2 * j] === s) ns = H[LP_TIMES + 2 * j + 1]!;
      const k = uEnd - t + 1 + (status === STOP_OTHER && s <= sEnd ? 1 : 0) - counted[s]!;
      if (k > 0) this.host.stepped(sites[s]!.site, k, ns);
    }
    // The stepped iterations whose outputs the loop's own steps read up, all of them run, are
    // recorded spent at once (DfStore.spentRange), their values never taken out of the addon's
    // ring: a chain's or a stencil's thousands of steps a run, each an array and a value object
    // and a letGo in unoptimised code over a short run's first turns (docs/benchmarks.md, "A
    // natively stepped run's iterations spent at once"). Iterations before `t` still go one by one.
    let bHi = -1;
    if (p.bulk) {
      const hi = Math.min(uEnd - depth, last - p.maxD);
      if (hi >= t && this.st.store.spentRange(p.kept!, t, hi)) bHi = hi;
    }
    for (let u = t; u <= bHi; u++) if (u - depth >= from && u - depth < t) this.letGo(loop, p, u - depth, vals, from, last + 1);
    for (let u = Math.max(t, bHi + 1); u <= tEnd; u++) {
      const slot = ((u - from) % ring) * n, sn = u <= uEnd ? n : sEnd + 1;
      its[(u - from) % ring] = u;
      for (let s = 0; s < sn; s++) {
        const ps = sites[s]!, m = ps.outArgs.length;
        const out = new Array<DfValue | null>(m);
        if (u === tEnd && s === sEnd && status === STOP_OTHER) {
          // its outputs are in the scratch: taken as the direct form takes them
          p.direct![s]!.takeOuts(NO_VALUES, out);
          for (let k = 0; k < m; k++) if (out[k] === null || out[k] === undefined) throw new RunFault(`ucode ${ps.site.imp.symbol} did not set its output DF ${displayDf(this.keyAt(p, u, s, k))} (Posting an unset value)`, standIn(loop, u, s, first + calls - 1));
        } else for (let k = 0; k < m; k++) out[k] = nl.value(u, s, k, from);
        vals[slot + s] = out;
      }
      if (u <= uEnd && u - depth >= from && u - depth > bHi) this.letGo(loop, p, u - depth, vals, from, last + 1);
    }
    if (status === STOP_OTHER) {
      // a value neither int nor real: the loop is stepped in JavaScript from here on
      p.native = null;
      this.resume = sEnd + 1;
      if (this.resume === n) { this.resume = 0; if (tEnd - depth >= from) this.letGo(loop, p, tEnd - depth, vals, from, last + 1); return tEnd + 1; }
      return tEnd;
    }
    this.resume = 0;
    return tEnd + 1;
  }

  /**
   * A turn of `p` from iteration `from` begins (frame `f`): its ucodes name the steps' outputs by
   * the numbers they are given, and its kept outputs go by numbers where no store entry stands
   * for one of their keys (DfStore.watchKept).
   */
  private beginTurn(p: Planned, f: KeyFrame, from: number, last: number): void {
    this.curPlanned = p;
    this.frame = f;
    this.host.nameKeys(this.nameOf);
    const kept = p.kept;
    if (kept === null) return;
    kept.from = from;
    kept.last = last;
    this.st.store.watchKept(kept, p.turnMax === 0 ? p.keptPer * (last - from + 1) : Math.max(KEPT_SCAN_FLOOR, p.keptPer * p.turnMax));
  }

  /** The turn of `p` is over, after `steps` iterations. */
  private endTurn(p: Planned, steps: number): void {
    if (p.kept !== null) this.st.store.unwatchKept();
    if (steps > p.turnMax) p.turnMax = steps;
    this.host.nameKeys(null);
    this.curPlanned = null;
    this.frame = null;
  }

  /** The key of output `k` of step (u, s) of the loop whose turn runs now, spelled from its reference. */
  private keyAt(p: Planned, u: number, s: number, k: number): string {
    const f = this.frame!, env = f.env, slot = p.varSlot, t = env[slot];
    env[slot] = u;
    const key = p.sites[s]!.outRefs[k]!.at(f);
    env[slot] = t;
    return key;
  }

  /** The key a token of a planned step names: ring slot (iteration, site) · width + output. */
  private tokenKey(token: number): string {
    const p = this.curPlanned;
    if (p === null) return String(token); // (a ucode that kept a DF handle past its call)
    const n = p.sites.length, r = Math.floor(token / p.width), s = r % n;
    return this.keyAt(p, p.its[(r - s) / n]!, s, token - r * p.width);
  }

  /**
   * Stop before iteration `t`: the outputs the steps from `t` on still read go to the store with
   * the reads left, and the loop's counter moves to `t`.
   */
  private stop(loop: Cf, p: Planned, t: number, vals: ((DfValue | null)[] | null)[], from: number, why: InlineOutcome): InlineOutcome {
    const depth = p.plan.depth;
    // the outputs posted now are of iterations before t: the store watches the kept keys from t on
    if (p.kept !== null) p.kept.from = t;
    // iterations still in the ring, whole: those before t
    for (let u = Math.max(from, t - depth); u < t; u++) this.letGo(loop, p, u, vals, from, t);
    loop.counter = t;
    return why;
  }

  /**
   * Iteration `u`'s outputs leave the ring: the steps before iteration `next` read them (each
   * read one request); the rest of their count goes to the store (an output that escapes the
   * loop, or one that steps from `next` on read from there), or, with nothing left, the store
   * learns it was made and read up: by numbers (DfStore.spentIn) for a kept output while the
   * store watches, else by its key (DfStore.spent). A key is spelled only for the store.
   */
  private letGo(loop: Cf, p: Planned, u: number, vals: ((DfValue | null)[] | null)[], from: number, next: number): void {
    const plan = p.plan, n = p.sites.length, ring = plan.depth + 1, last = loop.counterEnd, store = this.st.store;
    const slot = ((u - from) % ring) * n;
    for (let s = 0; s < n; s++) {
      const out = vals[slot + s];
      if (out === null || out === undefined) continue;
      vals[slot + s] = null;
      const ps = plan.sites[s]!, forms = p.forms[s]!;
      const id = loop.id; // (a post's writer is named by its site: the stand-in's number is not read)
      for (let k = 0; k < out.length; k++) {
        const v = out[k]!, rule = ps.rules[k]!;
        // (indexed: a for-of is an iterator object a call in the unoptimised code of a short run)
        let served = 0;
        const rs = ps.readers[k]!;
        for (let j = 0; j < rs.length; j++) { const d = rs[j]!.d; if (u + d < next && u + d <= last) served++; }
        const count = rule < 0 ? -1 : rule - served;
        if (count === 0) {
          if (v.t === T_RAW) { const raw = v.v as Uint8Array; rawPosted(raw); rawLet(raw); rawFreed(raw); }
          const form = forms[k];
          if (form !== null && form !== undefined && store.spentIn(form, u)) continue;
          this.spent(loop, plan, this.keyAt(p, u, s, k), u, s, k);
          continue;
        }
        this.st.post(this.keyAt(p, u, s, k), this.st.self, v, count, standIn(loop, u, s, id), 0);
      }
    }
  }

  /** DfStore.spent for output `k` of step (u, s), a fault naming the step as on the unplanned path. */
  private spent(loop: Cf, plan: LoopPlan, key: string, u: number, s: number, k: number): void {
    let excess: string | undefined;
    try { excess = this.st.store.spent(key); } catch (e) { throw RunFault.blame(e, standIn(loop, u, s, -1)); }
    if (excess === undefined) return;
    // a reader from outside waits for it: unplanned it was served first, and the loop's own
    // first reader came too late (that reader is named)
    let first: { site: number; d: number } | undefined;
    for (const r of plan.sites[s]!.readers[k]!) if (u + r.d <= loop.counterEnd && (first === undefined || r.d < first.d || (r.d === first.d && r.site < first.site))) first = r;
    throw new RunFault(excess, standIn(loop, u + first!.d, first!.site, -1));
  }
}

const NO_VALUES: unknown[] = [];

/** The fragment step `t` of site `s` would be unplanned (made only to name it). */
function standIn(loop: Cf, t: number, s: number, id: number): Cf {
  const site = loop.site as ForSite;
  const env = loop.env.slice();
  env[site.varSlot] = t;
  return new Cf(id, site.body.stmts[s] as CallSite, env, loop.gid, t);
}

/**
 * A loop's plan, its sites prepared, and the arrays every turn of it reuses. Made once a loop, so
 * that a turn's set-up allocates no array: `firsts` was `sites.map(…)` each turn, and the array
 * TurboFan's inlined map made had another map than the builtin's, so the loop's optimised body
 * deoptimised ('wrong map') at the first turn it ran (--trace-deopt, stencil_1d 2 000 steps).
 */
interface Planned {
  readonly plan: LoopPlan;
  readonly sites: Prepared[];
  /** per site, the stand-in the inline rule is asked with (made again each turn) */
  readonly firsts: Cf[];
  /** the ring: outputs of the last depth + 1 iterations, by iteration, site (null between turns) */
  readonly vals: ((DfValue | null)[] | null)[];
  /**
   * the iteration each of the ring's slots holds. An output's key is not spelled a step: a step's
   * ucode gets a number for it (the ring's slot and site · width + output), named if it asks,
   * and the store gets the key only when the value goes there (posted, or spent key by key)
   */
  readonly its: Int32Array;
  /** outputs a site has at most: a token's multiplier */
  readonly width: number;
  readonly varSlot: number;
  /** per site and output, its form when the loop may keep it (recorded by numbers), else null */
  readonly forms: (KeptForm | null)[][];
  /** the forms together, as the store watches them (null: none) */
  readonly kept: KeptKeys | null;
  /** how many forms */
  readonly keptPer: number;
  /** the most steps a turn ran (0: none ran yet): what bounds reading the store's entries */
  turnMax: number;
  /** natively stepped (loop-native.ts): the loop's buffer, null when it cannot be, undefined until asked */
  native: NativeLoop | null | undefined;
  /** some output leaves the loop from every iteration (set with `native`): runs of ESCAPING_RING steps at most */
  escapes: boolean;
  /**
   * every output is kept (a form each, of families of their own, a different key each
   * iteration): natively stepped iterations are recorded spent in runs (DfStore.spentRange)
   */
  readonly bulk: boolean;
  /** the farthest any step reads back (an iteration's outputs are all read up inside once maxD later ones ran) */
  readonly maxD: number;
  /** its sites' direct forms, and the buffer's word of the runtime's inline call count */
  direct: DirectForm[] | undefined;
  tick: Int32Array | undefined;
  /** per site, its calls of the natively stepped run in progress already counted (by onTimed) */
  counted: Int32Array | undefined;
}

function planned(plan: LoopPlan, loop: Cf): Planned {
  const sites = prepare(plan, loop), n = sites.length, ring = plan.depth + 1;
  const firsts = new Array<Cf>(n);
  for (let s = 0; s < n; s++) firsts[s] = standIn(loop, loop.counter, s, -1);
  const vals = new Array<(DfValue | null)[] | null>(ring * n).fill(null);
  let width = 1;
  for (let s = 0; s < n; s++) width = Math.max(width, sites[s]!.outArgs.length);
  const { forms, kept, per } = keptForms(plan);
  let maxD = 0;
  for (const ps of plan.sites) for (const rs of ps.readers) for (const r of rs) maxD = Math.max(maxD, r.d);
  const flat = forms.flat();
  const bulk = kept !== null && flat.every((f) => f !== null && (f.ac !== 0 || (f.family.rows && f.ar !== 0)))
    && new Set(flat.map((f) => `${f!.family.rows}:${f!.family.fam}`)).size === flat.length;
  return {
    bulk, maxD, plan, sites, firsts, vals, its: new Int32Array(ring), width, varSlot: (loop.site as ForSite).varSlot, forms, kept, keptPer: per, turnMax: 0, native: undefined, escapes: false, direct: undefined, tick: undefined, counted: undefined };
}

/** The plan's sites ready for calling: each argument's source found once. */
function prepare(plan: LoopPlan, loop: Cf): Prepared[] {
  const varSlot = (loop.site as ForSite).varSlot, env = loop.env;
  return plan.sites.map((ps) => {
    const site = ps.site, m = site.args.length;
    const kinds = new Int8Array(m), vals = new Array<unknown>(m).fill(undefined), ints = new Array<readonly [number, number] | null>(m).fill(null);
    const from = new Array<Prepared['from'][number]>(m).fill(null);
    for (let i = 0; i < m; i++) {
      const a = site.args[i]!;
      if (a.kind === 'val') {
        if (a.type === 'int') ints[i] = split(a.expr.lin, env, varSlot);
        else vals[i] = env[a.expr.plain!];
        continue;
      }
      kinds[i] = a.kind === 'out' ? 2 : 1;
    }
    for (const inp of ps.inputs) from[inp.arg] = { ...inp.from, ref: inp.ref.ref };
    // shaped as the tasks examine.ts makes (the ucode's call sees one kind of task, not two)
    const task: Task = { cf: 0, imp: site.imp.index, args: new Array<unknown>(m), keys: new Array<string>(m), fwd: undefined };
    for (let i = 0; i < m; i++) { task.args[i] = null; task.keys[i] = ''; }
    return { site, kinds, vals, ints, from, outArgs: ps.outs.map((o) => o.arg), outRefs: ps.outs.map((o) => o.ref.ref), task };
  });
}
