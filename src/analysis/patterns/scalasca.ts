// Scalasca's wait-state formulas for the patterns it shares with seed 001, computed on the same
// collective instances as the engine so that both can be compared on one trace (`luna analyze
// patterns --compare`, and the tests). Scalasca charges each waiting process
//   Wait at Barrier, Wait at N×N:  max(0, min(latest enter, own exit) − own enter)
//   Late Broadcast (non-roots):     max(0, min(root enter, own exit) − own enter)
//   Early Reduce (the root):        max(0, min(latest enter of the others, root exit) − root enter)
//   Barrier Completion:             own exit − first exit
// (Scalasca's pattern documentation, "Performance properties"). The seed's formulas clamp at the
// latest enter rather than at the own exit: both agree whenever no rank leaves before the last
// one entered, which a synchronising operation guarantees.

export type Times = ArrayLike<number>;

export function waitAtBarrier(enter: Times, exit: Times, out: Float64Array): Float64Array {
  let last = -Infinity;
  for (let r = 0; r < enter.length; r++) if (enter[r]! > last) last = enter[r]!;
  for (let r = 0; r < enter.length; r++) out[r] = Math.max(0, Math.min(last, exit[r]!) - enter[r]!);
  return out;
}

export function lateBroadcast(enter: Times, exit: Times, root: number, out: Float64Array): Float64Array {
  const rt = enter[root]!;
  for (let r = 0; r < enter.length; r++) out[r] = r === root ? 0 : Math.max(0, Math.min(rt, exit[r]!) - enter[r]!);
  return out;
}

export function earlyReduce(enter: Times, exit: Times, root: number, out: Float64Array): Float64Array {
  let last = -Infinity;
  for (let r = 0; r < enter.length; r++) if (r !== root && enter[r]! > last) last = enter[r]!;
  out.fill(0);
  out[root] = Math.max(0, Math.min(last, exit[root]!) - enter[root]!);
  return out;
}

export function barrierCompletion(exit: Times, out: Float64Array): Float64Array {
  let first = Infinity;
  for (let r = 0; r < exit.length; r++) if (exit[r]! < first) first = exit[r]!;
  for (let r = 0; r < exit.length; r++) out[r] = exit[r]! - first;
  return out;
}

/** Seed pattern → the Scalasca pattern computing the same waiting. */
export const SCALASCA_PEER = {
  wait_at_barrier: 'Wait at Barrier',
  nxn_entry_sync: 'Wait at N×N',
  entry_sync: 'Wait at N×N',
  late_broadcast: 'Late Broadcast',
  early_gather: 'Early Reduce',
  barrier_completion: 'Barrier Completion',
} as const;
export type SharedPattern = keyof typeof SCALASCA_PEER;
