// The patterns the engine searches for: the twelve of seed 001 §4 (SPMD/PGAS programs, with the
// seed's wasted-time formulas) and five of fragmented programs, which the same result tree
// holds. Append, never reorder: the JSON names patterns by id, and tables index them by number.

export interface PatternDef {
  readonly id: string;
  readonly title: string;
  /** whose traces it applies to */
  readonly model: 'spmd' | 'fragmented';
  /** the operations and modes it applies to, and who is charged */
  readonly where: string;
  /** the wasted time, as the engine computes it */
  readonly formula: string;
  /** Scalasca's pattern computing the same waiting, when there is one */
  readonly scalasca?: string;
  /** what to change when it dominates */
  readonly advice: string;
}

export const PATTERNS = [
  {
    id: 'lock_contention', title: 'Lock contention', model: 'spmd',
    where: 'lock acquisitions (Alock) whose lock was held when the rank asked for it; charged to the acquiring rank at its lock call',
    formula: 'r = a.lockptr (the release before), e = a.enterptr (its lock enter); wasted = r.time − e.time when e.time < r.time',
    advice: 'shorten the critical section, split the lock, or give ranks private data they merge later',
  },
  {
    id: 'entry_sync', title: 'Synchronisation at entry to a collective', model: 'spmd',
    where: 'collectives with IN_ALLSYNC; every rank',
    formula: 'E2 = coll(last).enterptr; wasted = Σ_{e ∈ E2} max(E2.time) − e.time',
    advice: 'balance the work before the collective, or use IN_MYSYNC / IN_NOSYNC when the data allow it',
  },
  {
    id: 'exit_sync', title: 'Synchronisation at exit from a collective', model: 'spmd',
    where: 'collectives with OUT_ALLSYNC; every rank',
    formula: 'E1 = coll(last); wasted = Σ_{e ∈ E1} max(E1.time) − e.time',
    advice: 'use OUT_MYSYNC or OUT_NOSYNC when the data after the collective allow it',
  },
  {
    id: 'wait_at_barrier', title: 'Wait at barrier', model: 'spmd',
    where: 'barrier (enters), and the wait of a split-phase barrier against the last notify; every rank',
    formula: 'barrier: wasted = Σ_e max(E2.time) − e.time; wait: Σ_r max(0, min(last notify enter, own exit) − own wait enter)',
    scalasca: 'Wait at Barrier: max(0, min(latest enter, own exit) − own enter)',
    advice: 'balance the work between barriers, drop barriers the data do not need, or split them (notify early, wait late)',
  },
  {
    id: 'barrier_completion', title: 'Barrier completion', model: 'spmd',
    where: 'barrier and wait (exits); every rank',
    formula: 'E1 = coll(last); wasted = Σ_{e ∈ E1} max(E1.time) − e.time',
    scalasca: 'Barrier Completion: own exit − first exit (the same skew, charged to the ranks that left last)',
    advice: 'exits should be simultaneous: look for interference (other processes, oversubscribed cores) on the late ranks',
  },
  {
    id: 'late_broadcast', title: 'Late broadcast', model: 'spmd',
    where: 'broadcast and scatter with IN_MYSYNC; the ranks that entered before the root',
    formula: 'r = enter of last.root; wasted = Σ_{e ∈ E2, e.time < r.time} r.time − e.time',
    scalasca: 'Late Broadcast: max(0, min(root enter, own exit) − own enter)',
    advice: 'make the root reach the broadcast earlier (move its extra work after it, or to other ranks)',
  },
  {
    id: 'early_gather', title: 'Early gather', model: 'spmd',
    where: 'gather and reduce with IN_MYSYNC; the root, when it entered before the ranks it gathers from',
    formula: 'r = enter of last.root; wasted = max(0, max(E2.time) − r.time)',
    scalasca: 'Early Reduce: max(0, min(latest enter, root exit) − root enter)',
    advice: 'give the root work to do before the gather, or balance the senders',
  },
  {
    id: 'early_prefix_reduction', title: 'Early prefix reduction', model: 'spmd',
    where: 'prefix_reduce with IN_MYSYNC; each rank waiting for a lower rank',
    formula: 'wasted = Σ_{e ∈ E2} max(0, max(ltloc(E2, e.loc).time) − e.time)',
    advice: 'the lower ranks are late: balance them, or reverse the ranks\' order of the data',
  },
  {
    id: 'nxn_entry_sync', title: 'Many-to-many synchronisation at entry', model: 'spmd',
    where: 'gather_all and exchange with IN_MYSYNC; every rank',
    formula: 'wasted = Σ_{e ∈ E2} max(E2.time) − e.time (an upper bound: exchanges with ranks already in are useful)',
    scalasca: 'Wait at N×N: max(0, min(latest enter, own exit) − own enter)',
    advice: 'balance the work before the exchange',
  },
  {
    id: 'nxn_exit_sync', title: 'Many-to-many synchronisation at exit', model: 'spmd',
    where: 'gather_all and exchange with OUT_MYSYNC; every rank',
    formula: 'wasted = Σ_{e ∈ E1} max(E1.time) − e.time',
    advice: 'use OUT_NOSYNC when the data after the exchange allow it',
  },
  {
    id: 'wait_inside_collective', title: 'Wait inside a collective', model: 'spmd',
    where: 'broadcast, scatter, gather and reduce with IN_MYSYNC; the root',
    formula: 'wasted = |[root enter, root exit] − ∪_{other ranks} [enter, exit]| (the time the root is alone in the operation)',
    advice: 'the root is alone in the collective: align its arrival with the others, or shorten its own part',
  },
  {
    id: 'wait_in_all_alloc', title: 'Wait in collective allocation', model: 'spmd',
    where: 'all_alloc; the ranks that entered before rank 0 (which allocates)',
    formula: 'r = enter of rank 0 (last.root); wasted = Σ_{e ∈ E2, e.time < r.time} r.time − e.time',
    advice: 'allocate once outside the loop, or make rank 0 reach the allocation earlier',
  },
  {
    id: 'late_producer', title: 'Late producer', model: 'fragmented',
    where: 'idle time of a worker before a CF, until its last input was produced (SLOW\'s S of the interval); charged to the CF that waited, at its lane',
    formula: 'wasted = B − A (seed 003 §4.2, after waits were taken out)',
    advice: 'the producer is on the critical path: raise its priority, split it, or start it earlier',
  },
  {
    id: 'slow_transfer', title: 'Slow transfer', model: 'fragmented',
    where: 'idle time while the input that arrived last travelled (SLOW\'s L of the interval)',
    formula: 'wasted = max(B, G) − max(B, C)',
    advice: 'place the consumer with its big inputs (distribution), or make the data smaller',
  },
  {
    id: 'system_delay', title: 'System delay before start', model: 'fragmented',
    where: 'idle time with every input produced but not yet sent, or present but the CF not started (SLOW\'s O of the interval)',
    formula: 'wasted = (max(B, C) − B) + (D − max(B, G))',
    advice: 'the runtime is the bottleneck: coarser fragments, fewer tiny CFs, fewer worker threads per core',
  },
  {
    id: 'imbalance_in_quantum', title: 'Imbalance within a time quantum', model: 'fragmented',
    where: 'per time quantum (seed 004 §2.2), each node less loaded than the most loaded one',
    formula: 'wasted = Σ_n W_max,i − W_n,i (quantized CF load W_n,i = Σ |x_i ∩ [t_b, t_e]|)',
    advice: 'move fragments from the most loaded node (luna analyze balance writes a distribution for the next run)',
  },
  {
    id: 'oversubscribed_cores', title: 'Oversubscribed cores', model: 'fragmented',
    where: 'CF executions on machines running more worker threads than CPUs: wall time the thread was not on a CPU (SLOW\'s pre-emption O)',
    formula: 'wasted = (finish − start) − CPU time − waits',
    advice: 'run fewer worker threads per machine (--threads) or more machines',
  },
] as const satisfies readonly PatternDef[];

export type PatternId = (typeof PATTERNS)[number]['id'];
export const PATTERN_INDEX = Object.fromEntries(PATTERNS.map((p, i) => [p.id, i])) as Record<PatternId, number>;
export const P = PATTERN_INDEX;
