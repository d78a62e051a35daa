// A lane's worker builds the steps of a planned loop itself (node/loop-plan.ts, loop-run.ts):
// the plan comes once a loop, and then each window is a few integers — its steps, and each
// lane's batch for it. The worker makes each step's arguments, its forwarded inputs (from its
// own batch, or fed by the lane that makes them) and the feed promises of its outputs: a value
// another batch reads is pushed to that batch's lane as its task ends, with no feed request from
// the system thread. Building a window's tasks there cost the system thread ~60 % of its 6–7 µs
// of CPU a planned task (docs/benchmarks.md, "Where a planned stencil's span goes at METG sizes").
import { indexKey } from '../../core/dfkey.js';
import { T_INT, type DfValue } from '../../ucode/value.js';
import type { DecodedTask } from './codec.js';
import { ARG_IN, ARG_INT, ARG_OUT, ARG_VAL, type Forward, type WirePlan, type WireWindow } from './protocol.js';

/** The windows of a loop a lane's worker remembers: its own, and the batches of the other lanes for them. */
interface Win { first: number; last: number; ids: number[] }

/** Called per output a batch of another lane, or a later batch of this one, reads: out, reader's lane. */
export type Promised = (task: number, out: number, lane: number) => void;

export class LanePlan {
  /** this lane's sites, in the body's order */
  private readonly mine: number[] = [];
  /** per site, its place among its lane's sites */
  private readonly rank: number[] = [];
  /** per lane, how many sites it runs */
  private readonly perLane: number[] = [];
  /** the windows back to the plan's depth (a step reads steps at most that far back) */
  private readonly wins: Win[] = [];
  /** the widest site's arguments: a key number is task·width + argument */
  readonly width: number;

  constructor(readonly plan: WirePlan, readonly lane: number) {
    let width = 1;
    for (let s = 0; s < plan.sites.length; s++) {
      const l = plan.sites[s]!.lane;
      while (this.perLane.length <= l) this.perLane.push(0);
      this.rank.push(this.perLane[l]!++);
      if (l === lane) this.mine.push(s);
      width = Math.max(width, plan.sites[s]!.kinds.length);
    }
    this.width = width;
  }

  /** Whether window `w` is the loop's last (the worker forgets the plan after it). */
  isLast(w: WireWindow): boolean {
    return w.last >= this.plan.last;
  }

  /** The batch and the task in it that make step `u` of site `s` (a window of it was seen). */
  private where(u: number, s: number): { batch: number; task: number } {
    const wins = this.wins;
    let k = wins.length - 1;
    while (k > 0 && wins[k]!.first > u) k--;
    const win = wins[k]!, l = this.plan.sites[s]!.lane;
    return { batch: win.ids[l]!, task: (u - win.first) * this.perLane[l]! + this.rank[s]! };
  }

  /**
   * The tasks of window `w` on this lane, in the order the system thread books them (by step,
   * then site); `promise` learns every output a task of another batch reads (pushed to it as
   * the task ends).
   */
  build(w: WireWindow, promise: Promised): DecodedTask[] {
    const p = this.plan, mine = this.mine, k = mine.length, n = p.sites.length, width = this.width;
    // the windows a step of this one may read from: back to `depth` steps before it
    const wins = this.wins;
    wins.push({ first: w.first, last: w.last, ids: w.ids });
    let drop = 0;
    while (drop < wins.length - 1 && wins[drop]!.last < w.first - p.depth) drop++;
    if (drop > 0) wins.splice(0, drop);
    const out: DecodedTask[] = new Array((w.last - w.first + 1) * k);
    let ti = 0;
    for (let t = w.first; t <= w.last; t++) {
      for (let j = 0; j < k; j++, ti++) {
        const s = mine[j]!, ps = p.sites[s]!, kinds = ps.kinds, m = kinds.length;
        const args = new Array<unknown>(m), keys = new Array<number>(m);
        let fwd: Forward[] | null = null;
        let ii = 0, oo = 0;
        for (let i = 0; i < m; i++) {
          keys[i] = ps.names[i] === null ? -1 : ti * width + i;
          const kind = kinds[i]!;
          if (kind === ARG_INT) { args[i] = (ps.a[i]! * t + ps.b[i]!) | 0; continue; }
          if (kind === ARG_VAL) { args[i] = ps.vals[i]; continue; }
          args[i] = null;
          if (kind === ARG_OUT) {
            // its readers in other batches: this lane's later windows, or other lanes
            const rd = ps.readers[oo]!;
            for (let r = 0; r < rd.length; r += 2) {
              const v = t + rd[r + 1]!, rl = p.sites[rd[r]!]!.lane;
              if (v > p.last || (rl === this.lane && v <= w.last)) continue;
              promise(ti, oo, rl);
            }
            oo++;
            continue;
          }
          if (kind !== ARG_IN) continue;
          const from = ps.inputs[3 * ii]!, o = ps.inputs[3 * ii + 1]!, u = t - ps.inputs[3 * ii + 2]!;
          ii++;
          if (u < p.first) { args[i] = this.outside(w, t, s, i); continue; }
          const fl = p.sites[from]!.lane;
          if (fl === this.lane && u >= w.first) {
            (fwd ??= []).push({ arg: i, task: (u - w.first) * k + this.rank[from]!, out: o });
            continue;
          }
          const at = this.where(u, from);
          (fwd ??= []).push({ arg: i, lane: fl, batch: at.batch, task: at.task, out: o });
        }
        out[ti] = { cf: p.firstCf + (t - p.first) * n + s, imp: ps.imp, args, keys, fwd };
      }
    }
    return out;
  }

  /** The value step `t` of site `s` reads from before the loop as argument `arg`. */
  private outside(w: WireWindow, t: number, s: number, arg: number): DfValue {
    const o = w.outside!;
    for (let i = 0; i < o.length; i += 3) if (o[i] === t && o[i + 1] === s && o[i + 2] === arg) return w.outsideVals![i / 3]!;
    throw new Error(`internal: planned step ${t} of site ${s} has no value for argument ${arg + 1}`);
  }

  /** The DF key of key number `no` of window `w`'s tasks (getName, messages), '?' for none. */
  key(w: WireWindow, no: number): string {
    if (no < 0) return '?';
    const i = no % this.width, ti = (no - i) / this.width, k = this.mine.length;
    const t = w.first + Math.floor(ti / k), s = this.mine[ti % k]!;
    const name = this.plan.sites[s]?.names[i];
    if (name === null || name === undefined) return '?';
    let key = name.base;
    for (let j = 0; j < name.a.length; j++) key = indexKey(key, (name.a[j]! * t + name.b[j]!) | 0);
    return key;
  }
}

/**
 * A lane's rehearsal of building planned steps (--warm-start): windows of stand-in plans of a
 * two-column stencil, each plan and window through `clone` (the worker's structuredClone, as the
 * real ones come through a port), handed to `build` until `until` (performance.now ms). Cold, a
 * 512-step window's build cost 14–20 µs a step on this host (a window ~7–10 ms on the lane's
 * critical path), ~0.1–0.7 once optimised.
 *
 * First SHORT_PLANS plans of SHORT_WINDOWS windows of 4 steps: every path of build — a plan's
 * first window (its first steps read values from before the loop, its window list starts
 * empty), a window that drops the ones before it — runs again after V8 has given build its
 * feedback (only after a function's first calls), before a long window makes it hot. Rehearsed
 * on one plan only, build was optimised without the feedback of those paths and deoptimised at
 * the real plan's first window or first drop ('insufficient type feedback'), and TurboFan
 * compiled it again in the span, on a helper thread, 38–118 ms on the lanes' cores, in both
 * workers (--trace-opt --trace-deopt-verbose, stencil_1d 1 × 2, C++ kernels, 2^16 iterations:
 * in 3 runs of 5, none in 8 after).
 */
export function rehearsePlanSteps(build: (lp: LanePlan, w: WireWindow) => void, until: number, clone: <T>(x: T) => T): void {
  // every kind of argument: an int a·t + b, a value, two inputs, an output
  const site = (x: number): WirePlan['sites'][number] => ({
    imp: 0, lane: x, kinds: [ARG_INT, ARG_VAL, ARG_IN, ARG_IN, ARG_OUT], a: [0, 0, 0, 0, 0], b: [1, 0, 0, 0, 0], vals: [undefined, 0.5, undefined, undefined, undefined],
    inputs: [0, 0, 1, 1, 0, 1], readers: [[0, 1, 1, 1]],
    names: [null, null, { base: 'v#', a: [1, 0], b: [-1, 0] }, { base: 'v#', a: [1, 0], b: [-1, 1] }, { base: 'v#', a: [1, 0], b: [0, x] }],
  });
  const plan = (steps: number): LanePlan => new LanePlan(clone({ loopPlan: { plan: -1, first: 1, last: steps, depth: 1, firstCf: 0, sites: [site(0), site(1)] } }).loopPlan, 0);
  const windows = (lp: LanePlan, n: number, steps: number): void => {
    for (let k = 0, first = 1; k < n && performance.now() < until; k++, first += steps) {
      const w: WireWindow = clone({ window: -1, id: -2 - 2 * k, first, last: first + steps - 1, ids: [-2 - 2 * k, -3 - 2 * k], outside: k === 0 ? [1, 0, 2, 1, 0, 3] : undefined, outsideVals: k === 0 ? [{ t: T_INT, v: 1 }, { t: T_INT, v: 2 }] as DfValue[] : undefined, recycled: undefined });
      build(lp, w);
    }
  };
  for (let r = 0; r < SHORT_PLANS && performance.now() < until; r++) windows(plan(4 * SHORT_WINDOWS), SHORT_WINDOWS, 4);
  windows(plan(LONG_WINDOWS * 512), LONG_WINDOWS, 512);
}
/** The rehearsal's short plans: V8 gives a function feedback after its first ~8 calls, and a plan's first window is one call in SHORT_WINDOWS. */
export const SHORT_PLANS = 6;
/** Windows of each short plan: the third is the first that drops one (depth 1). */
const SHORT_WINDOWS = 3;
/** The rehearsal's long windows (512 steps each), which make build hot. */
const LONG_WINDOWS = 8;
