// Priorities: ready fragments run highest priority first. A priority is the program's
// `priority: e;` rule (inherited by what a structured statement spawns), or — with a table
// derived from a previous run's trace (`luna run --priorities-from`) — the fragment's bottom
// level there: the longest chain of CPU time from it to the end of the run, so the critical
// path goes first. With at most one batch per lane in flight and one ready CF per batch (plus
// its chain): work queued on a lane ahead of time could not be overtaken by a fragment that
// becomes ready later with a higher priority. Everything else is the wrapped policy's.
import { ForwardingPolicy } from './forward.js';
import type { BatchSizing, FragmentView, LanesView, SchedulingPolicy } from './types.js';

export class PriorityPolicy extends ForwardingPolicy {
  override readonly name: string;

  /** `table`: priority by CF global id (from a trace); fragments it lacks keep their rule's priority */
  constructor(inner: SchedulingPolicy, private readonly table?: ReadonlyMap<string, number>) {
    super(inner, { orders: true });
    this.name = table ? 'priority (critical path from a trace)' : 'priority';
  }

  override priority(cf: FragmentView & { priority: number }): number {
    if (this.table) {
      const p = this.table.get(cf.gid);
      if (p !== undefined) return p;
    }
    return cf.priority;
  }

  override chooseLane(lanes: LanesView): number {
    let w = -1;
    const f = lanes.inflight;
    for (let i = 0; i < lanes.count; i++) if (f[i] === 0) { w = i; break; }
    return w;
  }

  /** One ready CF per batch (its chain may follow it as continuations): the next batch takes the best CF then ready. */
  override batchSize(_s: BatchSizing): number {
    return 1;
  }
}
