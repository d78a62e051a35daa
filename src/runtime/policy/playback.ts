// Trace playback (seed 003 §3.2): a run records where each atomic fragment ran and in which
// order on its lane; a later run of the same program replays that schedule — placement without
// evaluating locators, each fragment to its recorded lane, ready fragments in recorded order.
// What the record does not know (the graph changed: other arguments, another program) falls
// back to the default policy, and the first such fragment is reported.
import { DefaultPolicy, type DefaultPolicyOptions } from './default.js';
import type { FragmentView, LanesView, ProfileSample, SchedulingPolicy } from './types.js';

/** A recorded schedule: per node, its atomic CFs in execution order with their lanes. */
export interface Schedule {
  program: string;
  args: string[];
  nodes: number;
  threads: number;
  /** per node: [global id, lane] in the order they ran (per lane, the order is its order) */
  order: [string, number][][];
}

/** Records the schedule of this node through the profiling callback of the policy it wraps. */
export class Recorder {
  readonly order: [string, number][] = [];
  constructor(readonly inner: SchedulingPolicy) {}

  /** The policy to run with: `inner`, whose profiling callback also records. */
  policy(): SchedulingPolicy {
    const inner = this.inner, order = this.order;
    const wrapped = Object.create(inner) as SchedulingPolicy & { profile(s: ProfileSample): void };
    wrapped.profile = (s: ProfileSample) => {
      order.push([s.cf.gid, s.lane]);
      inner.profile?.(s);
    };
    return wrapped;
  }
}

export interface ReplayStats {
  /** fragments that followed the record */
  replayed: number;
  /** fragments the record did not know */
  unknown: number;
  /** the first of them (where the replay stopped applying) */
  firstUnknown?: { gid: string; label: string; at: string };
}

export class PlaybackPolicy extends DefaultPolicy {
  override readonly name = 'replay';
  private readonly node = new Map<string, number>();
  private readonly seq = new Map<string, number>();
  private readonly lane = new Map<string, number>();
  readonly stats: ReplayStats = { replayed: 0, unknown: 0 };

  constructor(s: Schedule, self: number, o: DefaultPolicyOptions = {}) {
    super(o);
    s.order.forEach((list, n) => {
      list.forEach(([gid, lane], i) => {
        this.node.set(gid, n);
        if (n === self) { this.seq.set(gid, i); this.lane.set(gid, lane); }
      });
    });
  }

  place(cf: FragmentView): number | undefined {
    if (cf.site.kind !== 'call') return undefined; // structured CFs are not recorded: their locators decide
    return this.node.get(cf.gid);
  }

  /** Recorded order first; unknown fragments after every recorded one (by their own priority). */
  priority(cf: FragmentView & { readonly priority: number }): number {
    const i = this.seq.get(cf.gid);
    return i === undefined ? -1e15 + cf.priority : -i;
  }

  override chooseLane(lanes: LanesView, next?: FragmentView): number {
    const want = next ? this.lane.get(next.gid) : undefined;
    if (want !== undefined && want < lanes.count && lanes.inflight[want]! < 2) return want;
    return super.chooseLane(lanes);
  }

  profile(s: ProfileSample): void {
    if (this.seq.has(s.cf.gid)) { this.stats.replayed++; return; }
    if (this.stats.unknown++ === 0) {
      const o = s.cf.site.origin;
      this.stats.firstUnknown = { gid: s.cf.gid, label: s.cf.site.label, at: `${o.file}:${o.line}:${o.col}` };
    }
  }
}
