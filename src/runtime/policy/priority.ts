// Priorities: ready fragments run highest priority first. A priority is the program's
// `priority: e;` rule (inherited by what a structured statement spawns), or — with a table
// derived from a previous run's trace (`luna run --priorities-from`) — the fragment's bottom
// level there: the longest chain of CPU time from it to the end of the run, so the critical
// path goes first. With at most one batch per lane in flight and one ready CF per batch (plus
// its chain), or a few of one short code (batchSize): work queued on a lane ahead of time could
// not be overtaken by a fragment that becomes ready later with a higher priority, beyond the
// short batch. A node of one lane keeps one batch queued behind the running one (chooseLane).
// While no lane is idle, the next ready CFs wait on the node's ready board (boardAhead), each taken
// by whichever lane ends its batch first: no lane is committed to one ahead of time, and a CF that
// becomes ready later with a higher priority waits behind those posted CFs at most.
// Everything else is the wrapped policy's.
import { ForwardingPolicy } from './forward.js';
import { PRIORITY_BATCH_NS } from './default.js';
import { tuned } from '../tuning.js';
import type { BatchSizing, FragmentView, LanesView, SchedulingPolicy } from './types.js';

/**
 * Ready CFs kept on the board while no lane is idle (see PriorityPolicy.boardAhead): two, so a
 * lane that ends its CF just after the other took the one posted still finds one (the PIC at the
 * seed's size, C++, 1 × 2, 6 traced rounds at load 7.8–11.6 against one: the lanes' gaps with a
 * CF ready 400 → 362 ms, lower in 6 of 6; P_U 64.4 → 66.3 %, higher in 6 of 6).
 */
export const BOARD_AHEAD = 2;

export class PriorityPolicy extends ForwardingPolicy {
  override readonly name: string;
  override readonly batchOneCode = true;
  /**
   * Ready CFs on the board while every lane is busy: the lane that ends first takes one without
   * a round trip through the system thread (one CF a batch cost a round trip each, ~0.43 s of the
   * lanes' time a run in the PIC at the seed's size, C++, 1 × 2; docs/pic.md, "The ready board").
   */
  override readonly boardAhead: number = tuned('LUNA_BOARD_AHEAD') ?? BOARD_AHEAD;

  private readonly batchNs: number;

  /** `table`: priority by CF global id (from a trace); fragments it lacks keep their rule's priority; `batchNs`: see batchSize */
  constructor(inner: SchedulingPolicy, private readonly table?: ReadonlyMap<string, number>, batchNs?: number) {
    super(inner, { orders: true });
    this.name = table ? 'priority (critical path from a trace)' : 'priority';
    const us = tuned('LUNA_PRIORITY_BATCH_US');
    this.batchNs = batchNs ?? (us !== undefined ? us * 1000 : PRIORITY_BATCH_NS);
  }

  override priority(cf: FragmentView & { priority: number }): number {
    if (this.table) {
      const p = this.table.get(cf.gid);
      if (p !== undefined) return p;
    }
    return cf.priority;
  }

  override chooseLane(lanes: LanesView): number {
    const f = lanes.inflight;
    // one lane: every ready CF runs there, so a second batch queued behind the running one costs
    // no balance, and the lane goes on to it without waiting for the system thread (the PIC at
    // the seed's size, C++, 2 × 1: a node's gaps between two CFs with the next ready 0.6 → 0.26 s;
    // 1 × 1 faster in 6 of 8 alternated pairs, 3.20 → 2.51 s at load 7–10; docs/pic.md, "2 × 1 profiled")
    if (lanes.count === 1) return f[0]! < 2 ? 0 : -1;
    let w = -1;
    for (let i = 0; i < lanes.count; i++) if (f[i] === 0) { w = i; break; }
    return w;
  }

  /**
   * One ready CF per batch (its chain may follow it as continuations): the next batch takes the
   * best CF then ready. A code measured shorter than PRIORITY_BATCH_NS goes in batches of its own
   * CFs as ready (batchOneCode) worth that much at most: each CF alone cost a round trip through
   * the system thread longer than its work, and a CF that becomes ready later with a higher
   * priority waits at most that long behind them.
   */
  override batchSize(s: BatchSizing): number {
    const ns = s.headNs ?? 0;
    return ns > 0 && ns < this.batchNs ? Math.floor(this.batchNs / ns) : 1;
  }
}
