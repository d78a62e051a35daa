// Critical-path priorities from a run's trace (`luna run --priorities-from TRACE`): each CF's
// bottom level — its own CPU time plus the longest chain of CPU time among the CFs that
// (transitively) consume its outputs. Running ready CFs in decreasing bottom level puts the
// critical path first (HEFT's upward rank, with execution times measured instead of estimated).
// CFs are keyed by their stable global id, so the table applies to the next run of the same
// program whatever its placement.
import { readModel } from '../../trace/read.js';

export interface PriorityTable {
  /** bottom level in ns of CPU time, by CF global id */
  priorities: Map<string, number>;
  /** the longest chain in the trace (the critical path's length), ns */
  criticalPath: number;
  cfs: number;
  warnings: string[];
}

export function prioritiesFromTrace(dir: string): PriorityTable {
  // every executed CF in finish order: consumers finish after their producers
  const gids: string[] = [];
  const cpu: number[] = [];
  const index = new Map<string, number>();
  const consumers: number[][] = [];
  const read = readModel(dir, (model) => model.listen({
    finish(f, inputs) {
      const i = gids.length;
      gids.push(f.gid);
      cpu.push(f.cpu);
      index.set(f.gid, i);
      consumers.push([]);
      for (const x of inputs) {
        const p = x.producer ? index.get(x.producer.gid) : undefined;
        if (p !== undefined && p !== i) consumers[p]!.push(i);
      }
    },
  }));
  const bl = new Float64Array(gids.length);
  let critical = 0;
  for (let i = gids.length - 1; i >= 0; i--) {
    let below = 0;
    for (const c of consumers[i]!) if (bl[c]! > below) below = bl[c]!;
    bl[i] = cpu[i]! + below;
    if (bl[i]! > critical) critical = bl[i]!;
  }
  const priorities = new Map<string, number>();
  for (let i = 0; i < gids.length; i++) priorities.set(gids[i]!, bl[i]!);
  return { priorities, criticalPath: critical, cfs: gids.length, warnings: read.warnings() };
}
