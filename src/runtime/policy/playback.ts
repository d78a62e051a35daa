// Trace playback (seed 003 §3.2): a run records where each atomic fragment ran and in which
// order on its lane; a later run of the same program replays that schedule — placement without
// evaluating locators, each fragment to its recorded lane, ready fragments in recorded order.
// What the record does not know (the graph changed: other arguments, another program) falls
// back to the policy it wraps, and the first such fragment is reported.
import { LANE_DEPTH } from './default.js';
import { ForwardingPolicy } from './forward.js';
import { FragmentSlot, type CodeCost, type FragmentView, type InlineContext, type LanesView, type ProfileSample, type SchedulingPolicy } from './types.js';

/** One atomic CF of a recorded schedule: its global id, its lane, 1 when the system thread ran it. */
export type ScheduleEntry = [gid: string, lane: number, inline: number];

/** A recorded schedule: per node, its atomic CFs in execution order with their lanes. */
export interface Schedule {
  program: string;
  args: string[];
  nodes: number;
  threads: number;
  /** per node, the CFs in the order they ran (per lane, the order is its order) */
  order: ScheduleEntry[][];
}

export interface ReplayStats {
  /** fragments that followed the record */
  replayed: number;
  /** fragments the record did not know */
  unknown: number;
  /** the first of them (where the replay stopped applying) */
  firstUnknown?: { gid: string; label: string; at: string };
}

/** What the record says of one CF: its node; for this node's CFs, its place in the order, lane and executor. */
interface Plan {
  node: number;
  /** position in this node's order (-1: it ran on another node) */
  seq: number;
  lane: number;
  inline: boolean;
}

/**
 * Replays a schedule. The lighter path: each CF's plan is looked up once, by its global id, and
 * kept on the CF (its own FragmentSlot); placement comes from it without evaluating locators
 * (also where a spread loop decides what to spawn), the executor (system thread or the recorded
 * lane) without measuring costs, and the order from its place in the record.
 */
export class PlaybackPolicy extends ForwardingPolicy {
  override readonly name = 'replay';
  private readonly plans = new Map<string, Plan>();
  private readonly slot = new FragmentSlot<Plan | null>('replay plan');
  private readonly lookup = (cf: FragmentView): Plan | null => this.plans.get(cf.gid) ?? null;
  readonly stats: ReplayStats = { replayed: 0, unknown: 0 };

  constructor(s: Schedule, self: number, inner: SchedulingPolicy) {
    super(inner, { places: true, orders: true, profiles: true });
    s.order.forEach((list, n) => {
      list.forEach(([gid, lane, inline], i) => {
        this.plans.set(gid, n === self ? { node: n, seq: i, lane, inline: inline === 1 } : { node: n, seq: -1, lane: -1, inline: false });
      });
    });
  }

  private plan(cf: FragmentView): Plan | null {
    return cf.memo(this.slot, this.lookup);
  }

  override place(cf: FragmentView): number | undefined {
    // structured CFs are not recorded: their locators decide
    if (cf.site.kind !== 'call') return this.inner.place(cf);
    return this.plan(cf)?.node ?? this.inner.place(cf);
  }

  /** Recorded order first; unknown fragments after every recorded one (by their own priority). */
  override priority(cf: FragmentView & { readonly priority: number }): number {
    const p = this.plan(cf);
    return p === null || p.seq < 0 ? -1e15 + this.inner.priority(cf) : -p.seq;
  }

  /** A batch goes to the recorded lane of its first CF, waiting for it when it is full. */
  override chooseLane(lanes: LanesView, next?: FragmentView): number {
    const p = next ? this.plan(next) : null;
    if (p === null || p.seq < 0 || p.lane >= lanes.count) return this.inner.chooseLane(lanes, next);
    return lanes.inflight[p.lane]! < LANE_DEPTH ? p.lane : -1;
  }

  /**
   * Where the record ran it once the workers were up; while they start, and for what the record
   * does not know, as by default.
   */
  override runInline(cost: CodeCost, now: InlineContext, cf: FragmentView): boolean {
    const p = this.plan(cf);
    if (p !== null && p.seq >= 0 && (p.inline || now.workersReady)) return p.inline;
    return this.inner.runInline(cost, now, cf);
  }

  override profile(s: ProfileSample): void {
    this.count(s);
    this.inner.profile(s);
  }

  private count(s: ProfileSample): void {
    const p = this.plan(s.cf);
    if (p !== null && p.seq >= 0) { this.stats.replayed++; return; }
    if (this.stats.unknown++ === 0) {
      const o = s.cf.site.origin;
      this.stats.firstUnknown = { gid: s.cf.gid, label: s.cf.site.label, at: `${o.file}:${o.line}:${o.col}` };
    }
  }
}
